"""The lines ingest set aside (the quarantine table, written by ingest/pipelines/loading.py
for every source: agent events, requests, Claude Code, Codex, parallel texts), as a run's
page and the API list them: file, line, reason and the raw text, newest first, a page at
a time.

A line belongs to a run when its raw text is an agent event naming that run, or, naming
none (it may not even be JSON), when it came from a file that fed the run's events. A
line of no run is found by its source. Reads only; must not write the quarantine.

A reader sees the lines of the runs its `seen` (lib.access.Seen) sees: a run it does not
see has no quarantine (the same NotFoundError as a run that does not exist), and the
by-source list of a reader who does not see everything holds only the lines that the
quarantine of a run it sees would list (a line naming another run is not among them, even
from a file both runs came from).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import warehouse
from analytics.runs.paging import Paging
from analytics.runs.queries import ensure_run
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen

# The run an agent-event line names, when its raw text is a JSON object saying one.
_NAMED_RUN = """
CASE WHEN q.source_kind = 'agent-events' AND json_valid(q.raw)
     THEN json_extract_string(q.raw, '$.run') END
"""

_RUN_LINES = f"""
WITH fed AS (SELECT DISTINCT source_kind, source FROM events WHERE run = $run),
lines AS (
    SELECT q.*, {_NAMED_RUN} AS named_run FROM quarantine AS q
)
SELECT l.* FROM lines AS l
WHERE l.named_run = $run
   OR (l.named_run IS NULL
       AND EXISTS (SELECT 1 FROM fed AS f
                   WHERE f.source_kind = l.source_kind AND f.source = l.source))
"""

_SOURCE_LINES = """
SELECT q.* FROM quarantine AS q
WHERE ($source::VARCHAR IS NULL OR q.source = $source)
  AND ($source_kind::VARCHAR IS NULL OR q.source_kind = $source_kind)
"""

# The by-source lines for a reader who does not see every run: those of its runs only.
_SEEN_SOURCE_LINES = f"""
WITH fed AS (
    SELECT DISTINCT source_kind, source FROM events WHERE list_contains($seen_runs, run)
),
lines AS (
    SELECT q.*, {_NAMED_RUN} AS named_run FROM quarantine AS q
    WHERE ($source::VARCHAR IS NULL OR q.source = $source)
      AND ($source_kind::VARCHAR IS NULL OR q.source_kind = $source_kind)
)
SELECT l.* FROM lines AS l
WHERE list_contains($seen_runs, l.named_run)
   OR (l.named_run IS NULL
       AND EXISTS (SELECT 1 FROM fed AS f
                   WHERE f.source_kind = l.source_kind AND f.source = l.source))
"""

# Newest first: the latest load, then the file's last lines first.
_PAGE = """
SELECT source_kind, source, line_no, byte_offset, reason, raw, ingested_at
FROM ({lines})
ORDER BY ingested_at DESC, source, line_no DESC NULLS LAST, byte_offset DESC NULLS LAST
LIMIT $limit OFFSET $offset
"""
_COUNT = "SELECT count(*) AS lines FROM ({lines})"

RUN_QUARANTINE_SQL = _PAGE.format(lines=_RUN_LINES)
RUN_QUARANTINE_COUNT_SQL = _COUNT.format(lines=_RUN_LINES)
SOURCE_QUARANTINE_SQL = _PAGE.format(lines=_SOURCE_LINES)
SOURCE_QUARANTINE_COUNT_SQL = _COUNT.format(lines=_SOURCE_LINES)
SEEN_SOURCE_QUARANTINE_SQL = _PAGE.format(lines=_SEEN_SOURCE_LINES)
SEEN_SOURCE_QUARANTINE_COUNT_SQL = _COUNT.format(lines=_SEEN_SOURCE_LINES)


@dataclass(frozen=True)
class QuarantinedLine:
    source_kind: str  # agent-events, requests, claude-code, codex, parallel
    source: str  # the file (or the upload's name) the line came from
    line_no: int | None  # 1-based, where the source counts lines
    byte_offset: int | None  # where the line starts in the file
    reason: str
    raw: str | None  # as read, cut at 64 KiB
    ingested_at: datetime


@dataclass(frozen=True)
class QuarantinePage:
    total: int  # every line that matches, not only this page's
    limit: int
    offset: int
    lines: list[QuarantinedLine]

    @property
    def last(self) -> int:
        """The 1-based number of the page's last line."""
        return self.offset + len(self.lines)


def _line(row: dict[str, Any]) -> QuarantinedLine:
    return QuarantinedLine(**{**row, "ingested_at": row["ingested_at"].astimezone(UTC)})


def _page(page_sql: str, count_sql: str, params: dict[str, Any], paging: Paging) -> QuarantinePage:
    rows = warehouse.fetch_all(page_sql, {**params, **paging.params()})
    counted = warehouse.fetch_one(count_sql, params)
    lines = [_line(row) for row in rows]
    total = int(counted["lines"]) if counted else 0
    return QuarantinePage(total, paging.limit, paging.offset, lines)


def run_quarantine(run: str, paging: Paging, *, seen: Seen = SYSTEM_VIEW) -> QuarantinePage:
    """The quarantined lines of a run (see the module's docstring), newest first."""
    ensure_run(run, seen)
    return _page(RUN_QUARANTINE_SQL, RUN_QUARANTINE_COUNT_SQL, {"run": run}, paging)


def every_run_line(run: str, *, seen: Seen = SYSTEM_VIEW) -> list[QuarantinedLine]:
    """Every quarantined line of a run, newest first, as run_quarantine pages them (a
    table's CSV)."""
    ensure_run(run, seen)
    rows = warehouse.fetch_all(RUN_QUARANTINE_SQL, {"run": run, "limit": None, "offset": 0})
    return [_line(row) for row in rows]


def source_quarantine(
    source: str | None, source_kind: str | None, paging: Paging, *, seen: Seen = SYSTEM_VIEW
) -> QuarantinePage:
    """Quarantined lines by where they came from (every line when neither is given):
    the way to a line whose run is unknown; only the lines of `seen`'s runs."""
    params: dict[str, Any] = {"source": source, "source_kind": source_kind}
    if seen.everything:
        return _page(SOURCE_QUARANTINE_SQL, SOURCE_QUARANTINE_COUNT_SQL, params, paging)
    params["seen_runs"] = seen.run_list()
    return _page(SEEN_SOURCE_QUARANTINE_SQL, SEEN_SOURCE_QUARANTINE_COUNT_SQL, params, paging)
