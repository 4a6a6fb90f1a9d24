"""Domain errors that API handlers and pages turn into 403, 404, 413 and 422 answers."""

from lib.bounds import MAX_BODY_BYTES


class NotFoundError(LookupError):
    """An unknown run, instance or other named thing."""


class ForbiddenError(PermissionError):
    """The user's role or the token's scope does not allow this (403)."""


class ParameterError(ValueError):
    """A query parameter that cannot be understood (a bad duration, an inverted range)."""


class BodyTooLarge(ValueError):
    """A request body past lib.bounds.MAX_BODY_BYTES (413)."""

    def __init__(self) -> None:
        super().__init__(f"body larger than {MAX_BODY_BYTES >> 20} MiB; split it")
