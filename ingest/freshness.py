"""How far behind the write side is, for `GET /metrics` (dashboard/metrics.py): the newest
load of each source kind, the bytes of the tailed folders not read yet, the spools'
waiting files and the newest scrape attempt.

Owns reading these, each from what ingest already stores: read_positions (a load that
keeps a position commits it there, with `committed_at`, with its rows), the events'
`ingested_at` (every load stamps it), the tailed folders against those positions, the
spools' folders, the scrape targets. One bounded query per figure, never a scan of all
of `events`. Must not compute lag: /metrics gives
timestamps and Prometheus subtracts them from time() (README, "Watching Fleetscope").
Every figure is fleet-wide and operational: it names source kinds and spools, never a
run, a file, a user or a team.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Max

import warehouse
from analytics.serving.models import ScrapeTarget
from ingest.parsers import agent_events, claude_code, codex
from ingest.pipelines import otlp_spool, serving_spool
from ingest.pipelines.loading import read_positions
from ingest.pipelines.transcript_files import PATTERNS as TRANSCRIPT_PATTERNS
from ingest.pipelines.transcript_files import pending_bytes
from ingest.sources import files

# read_positions grows by one row per source per load, not per event: its newest commit per
# kind is one aggregate over that small table. It covers the loads that keep a position
# (files, tailed folders, git); HTTP bodies and OTLP keep none.
LAST_COMMIT_SQL = """
SELECT source_kind, max(committed_at) AS ingested_at
FROM read_positions
GROUP BY source_kind
"""

# Every load stamps its events' ingested_at; bounded to the last RECENT_HOURS, the lake
# reads only the files whose ingested_at range reaches it (DuckLake's file statistics), not
# the whole table. A kind quiet for longer is found by LAST_COMMIT_SQL, or not at all.
RECENT_HOURS = 24
RECENT_EVENTS_SQL = """
SELECT source_kind, max(ingested_at) AS ingested_at
FROM events
WHERE ingested_at >= ?
GROUP BY source_kind
"""

# (setting naming the folders the tail task reads, their source kind, the names it reads)
TAILED = (
    ("FLEETSCOPE_TAIL_AGENT_EVENTS", agent_events.SOURCE_KIND, files.PATTERNS),
    ("FLEETSCOPE_TAIL_CLAUDE_CODE", claude_code.SOURCE_KIND, TRANSCRIPT_PATTERNS),
    ("FLEETSCOPE_TAIL_CODEX", codex.SOURCE_KIND, TRANSCRIPT_PATTERNS),
)


def last_ingests(now: datetime | None = None) -> dict[str, datetime]:
    """Each source kind's newest load: its newest read position's commit, or the newest
    ingested_at of its events of the last RECENT_HOURS, whichever is later."""
    since = (now or datetime.now(UTC)) - timedelta(hours=RECENT_HOURS)
    newest: dict[str, datetime] = {}
    rows = warehouse.fetch_all(LAST_COMMIT_SQL) + warehouse.fetch_all(RECENT_EVENTS_SQL, [since])
    for row in rows:
        kind, at = row["source_kind"], row["ingested_at"]
        if kind not in newest or at > newest[kind]:
            newest[kind] = at
    return dict(sorted(newest.items()))


def unread_bytes() -> dict[str, int]:
    """Per tailed source kind with folders configured, the bytes its files hold past their
    stored read positions (a whole file not read yet counts whole; compressed files, read
    once and whole, count nothing). One read_positions query per kind; the files are
    listed and stat'ed, not read."""
    unread: dict[str, int] = {}
    for setting, source_kind, patterns in TAILED:
        folders = list(getattr(settings, setting, []))
        if not folders:
            continue
        try:
            logs = files.find_files(folders, patterns, failed=[])
        except files.SourceError:  # a folder gone: nothing of it to read
            logs = []
        unread[source_kind] = pending_bytes(logs, {}, read_positions(source_kind))
    return unread


@dataclass(frozen=True)
class SpoolDepth:
    files: int
    bytes: int


def _depth(folder: Path, waiting: Callable[[str], bool]) -> SpoolDepth:
    count, size = 0, 0
    for entry in os.scandir(folder):
        if not waiting(entry.name):
            continue
        try:
            size += entry.stat().st_size
        except FileNotFoundError:  # loaded and removed while we looked
            continue
        count += 1
    return SpoolDepth(count, size)


def spool_depths() -> dict[str, SpoolDepth]:
    """Files waiting in each spool, as each spool's loader would pick them up (temporary
    `.` names and the `rejected/` folder are not waiting)."""
    otlp = otlp_spool.depth()
    return {
        "otlp": SpoolDepth(otlp.files, otlp.bytes),
        "serving": _depth(
            serving_spool.spool_dir(),
            lambda name: name.endswith(".json") and not name.startswith("."),
        ),
    }


def last_scrape_attempt() -> datetime | None:
    """The newest attempt at any enabled scrape target (one aggregate over the targets)."""
    found: datetime | None = ScrapeTarget.objects.filter(enabled=True).aggregate(
        last=Max("last_attempt_at")
    )["last"]
    return found
