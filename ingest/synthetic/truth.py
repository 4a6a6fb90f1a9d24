"""Ground truth of a synthetic run, computed from the generated events themselves.

Owns an independent reading of the contract's definitions (docs/
agent-events.md): commits deduplicated by sha at their first logging, attempts, errors,
stalls, the current stall, the agent tree. Tests compare the API with these numbers, so
nothing here may call the warehouse or analytics/runs/queries.py (the kinds that are
attempts are the contract's, from warehouse/schema/events.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import numpy as np

from ingest.synthetic.spec import KIND, Events, RunSpec
from lib.durations import format_time
from warehouse.schema.events import ATTEMPT_KINDS, EventKind

_ATTEMPT_CODES = [KIND[k] for k in ATTEMPT_KINDS]
# A run that logged within 15 minutes is still logging (the runs list's `active`).
STILL_LOGGING_MS = 15 * 60_000


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@dataclass
class GroundTruth:
    spec: RunSpec
    events: Events
    accepted: int  # lines the ingest must load
    quarantined: int  # malformed lines it must quarantine
    pending_bytes: int  # an unterminated last line it must leave for later

    @property
    def _counted(self) -> np.ndarray:
        """Rows the dashboard counts: every event except a commit's second logging."""
        return ~self.events.duplicate

    @property
    def _commit_ms(self) -> np.ndarray:
        e = self.events
        landed = (e.kind == KIND[EventKind.COMMIT]) & (e.ok != 0) & self._counted
        return np.sort(e.ts_ms[landed])

    @property
    def commits(self) -> int:
        return len(self._commit_ms)

    @property
    def first_ts(self) -> datetime:
        return _utc(int(self.events.ts_ms[self._counted].min()))

    @property
    def last_ts(self) -> datetime:
        return _utc(int(self.events.ts_ms[self._counted].max()))

    def _buckets(self, bucket_seconds: int) -> np.ndarray:
        """Epoch-aligned bucket starts (seconds) from the first event to the last."""
        ms = self.events.ts_ms[self._counted]
        width = bucket_seconds * 1000
        return np.arange(ms.min() // width * width, ms.max() // width * width + 1, width) // 1000

    def commits_per_bucket(self, bucket_seconds: int = 3600) -> dict[datetime, int]:
        buckets = self._buckets(bucket_seconds)
        counts = np.bincount(
            (self._commit_ms // 1000 // bucket_seconds * bucket_seconds - buckets[0])
            // bucket_seconds,
            minlength=len(buckets),
        )
        return {_utc(int(b) * 1000): int(c) for b, c in zip(buckets, counts, strict=True)}

    def errors_per_bucket(self, bucket_seconds: int = 3600) -> dict[datetime, tuple[int, int]]:
        """(attempts, errors) per bucket."""
        e = self.events
        counted = self._counted
        attempt = np.isin(e.kind, _ATTEMPT_CODES) & counted
        error = ((e.kind == KIND[EventKind.ERROR]) | (attempt & (e.ok == 0))) & counted
        buckets = self._buckets(bucket_seconds)
        index = (e.ts_ms // 1000 // bucket_seconds * bucket_seconds - buckets[0]) // bucket_seconds
        attempts = np.bincount(index[attempt], minlength=len(buckets))
        errors = np.bincount(index[error], minlength=len(buckets))
        return {
            _utc(int(b) * 1000): (int(a), int(x))
            for b, a, x in zip(buckets, attempts, errors, strict=True)
        }

    def stalls(self, min_gap: timedelta) -> list[tuple[datetime, datetime]]:
        """Gaps of at least min_gap between consecutive commits with other events inside."""
        commits = self._commit_ms
        e = self.events
        landed = (e.kind == KIND[EventKind.COMMIT]) & (e.ok != 0)
        others = np.sort(e.ts_ms[~landed & self._counted])
        gap_ms = min_gap.total_seconds() * 1000
        found = []
        for start, end in pairwise(commits.tolist()):
            if end - start >= gap_ms:
                inside = np.searchsorted(others, end, "left") - np.searchsorted(
                    others, start, "right"
                )
                if inside > 0:
                    found.append((_utc(int(start)), _utc(int(end))))
        return found

    def current_stall(self, min_gap: timedelta, now: datetime | None = None) -> datetime | None:
        """Since when the run has gone without landing anything while still logging, if
        for min_gap or more by `now` (the log's last event when not given: the moment
        it was written): not finished, something logged after the last commit and within
        STILL_LOGGING_MS of now."""
        e = self.events
        counted = e.ts_ms[self._counted]
        commits = self._commit_ms
        last_ms = int(counted.max())
        now_ms = last_ms if now is None else round(now.timestamp() * 1000)
        since = int(commits[-1]) if len(commits) else int(counted.min())
        # The root (agents[0], no parent) logged `stop`: the run finished.
        stopped = bool(((e.kind == KIND[EventKind.STOP]) & (e.agent == 0) & self._counted).any())
        still_logging = not stopped and last_ms > since
        still_logging = still_logging and now_ms - last_ms <= STILL_LOGGING_MS
        if still_logging and now_ms - since >= min_gap.total_seconds() * 1000:
            return _utc(since)
        return None

    def roles(self) -> dict[str, str]:
        return {a.name: str(a.role) for a in self.events.agents}

    def parents(self) -> dict[str, str | None]:
        return {a.name: a.parent for a in self.events.agents}

    def summary(self, min_gap: timedelta = timedelta(minutes=30)) -> dict[str, Any]:
        """The headline numbers, JSON-ready (times as RFC 3339 UTC)."""

        def text(value: datetime) -> str:
            return str(format_time(value))

        per_hour = self.commits_per_bucket(3600)
        current = self.current_stall(min_gap)
        return {
            "run": self.spec.run,
            "accepted": self.accepted,
            "quarantined": self.quarantined,
            "pending_bytes": self.pending_bytes,
            "duplicate_commits": int(self.events.duplicate.sum()),
            "agents": len(self.events.agents),
            "commits": self.commits,
            "peak_commits_per_hour": max(per_hour.values(), default=0),
            "commits_per_hour": {text(t): n for t, n in per_hour.items()},
            "error_trend": str(self.spec.error_trend),
            "stalls": [
                {"start": text(s), "end": text(e), "minutes": (e - s).total_seconds() / 60}
                for s, e in self.stalls(min_gap)
            ],
            "current_stall_since": text(current) if current else None,
        }
