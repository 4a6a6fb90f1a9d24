"""A page of a long list (the quarantine, the agents of a run of a thousand workers): how
many rows from where, and the orders an agent list may be sorted by. Checked here, once,
for the API and the pages alike; a bad value is a ParameterError (422, one line).

Pure: no queries; the SQL that pages and sorts lives with its question.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from lib.bounds import count_problem
from lib.errors import ParameterError

DEFAULT_LIMIT = 50  # what a page shows: a screen or two
MAX_LIMIT = 1000


@dataclass(frozen=True)
class Paging:
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int):
            raise ParameterError("limit is not an integer")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ParameterError(f"limit must be between 1 and {MAX_LIMIT}")
        problem = count_problem(self.offset, "offset")
        if problem:
            raise ParameterError(problem)

    @classmethod
    def read(cls, offset: str | None, limit: int = DEFAULT_LIMIT) -> Paging:
        """A page's paging from its query string's offset (absent or empty: the first)."""
        if not offset:
            return cls(limit, 0)
        try:
            value = int(offset)
        except ValueError:
            raise ParameterError(f"offset {offset[:40]!r} is not an integer") from None
        return cls(limit, value)

    def params(self) -> dict[str, int]:
        return {"limit": self.limit, "offset": self.offset}

    def first(self) -> int:
        """The 1-based number of the page's first row."""
        return self.offset + 1

    def next_offset(self, total: int) -> int | None:
        after = self.offset + self.limit
        return after if after < total else None

    def previous_offset(self) -> int | None:
        return max(0, self.offset - self.limit) if self.offset else None


class AgentSort(StrEnum):
    """What a list of agents is sorted by: the figure, largest first (by name, A to Z)."""

    COMMITS = "commits"
    WORK = "work"
    CLAIMS = "claims"
    FILES = "files"
    INSERTIONS = "insertions"
    DELETIONS = "deletions"
    EVENTS = "events"
    ERRORS = "errors"
    TOKENS = "tokens"
    AGENT = "agent"

    @classmethod
    def read(cls, value: str | None, allowed: tuple[AgentSort, ...]) -> AgentSort:
        if not value:
            return allowed[0]
        for sort in allowed:
            if sort.value == value:
                return sort
        names = ", ".join(s.value for s in allowed)
        raise ParameterError(f"sort must be one of {names}")


# The sorts each agent list offers; the first is its default.
COMMIT_SORTS = (
    AgentSort.COMMITS,
    AgentSort.WORK,
    AgentSort.CLAIMS,
    AgentSort.FILES,
    AgentSort.INSERTIONS,
    AgentSort.DELETIONS,
    AgentSort.AGENT,
)
TREE_SORTS = (
    AgentSort.COMMITS,
    AgentSort.EVENTS,
    AgentSort.ERRORS,
    AgentSort.TOKENS,
    AgentSort.AGENT,
)
