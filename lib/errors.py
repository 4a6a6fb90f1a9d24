"""Domain errors that API handlers and pages turn into 404 and 422 answers."""


class NotFoundError(LookupError):
    """An unknown run, instance or other named thing."""


class ParameterError(ValueError):
    """A query parameter that cannot be understood (a bad duration, an inverted range)."""
