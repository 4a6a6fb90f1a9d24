"""What a synthetic harness run is made of: the spec that describes it, its agents, and
the event columns it becomes.

Owns the data types and units (times in Unix milliseconds); no simulation here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import numpy as np

from warehouse.schema.events import EventKind

MINUTE_MS = 60_000
HOUR_MS = 3_600_000

# Event kinds as stored in Events.kind (index into KINDS).
KINDS = tuple(EventKind)
KIND: dict[str, int] = {name: code for code, name in enumerate(KINDS)}


class ErrorTrend(StrEnum):
    FLAT = "flat"
    RISING = "rising"


class Role(StrEnum):
    ROOT_PLANNER = "root_planner"
    PLANNER = "planner"
    WORKER = "worker"


@dataclass(frozen=True)
class RunSpec:
    """What to simulate. Hours are counted from `start`."""

    run: str = "synthetic"
    seed: int = 1
    start: datetime = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)
    hours: float = 12.0
    workers: int = 300
    planners: int = 8
    subplanners_per_planner: int = 2
    peak_commits_per_hour: float = 1000.0
    ramp_hours: float = 2.0
    # How much the commit rate falls from the end of the ramp to the end of the run
    # (Aero's fell from 1,388/h to about 300/h over a day).
    decay: float = 0.3
    stall_at: float | None = None
    stall_hours: float = 1.5
    error_trend: ErrorTrend = ErrorTrend.FLAT
    work_per_commit: float = 6.0  # llm and tool calls per commit at the same rate
    finished: bool = False  # everyone stops in the last 15 minutes
    duplicate_commits: int = 0  # commits logged a second time (same sha, a bit later)
    spawnless_fraction: float = 0.03  # workers whose spawn was not logged

    def __post_init__(self) -> None:
        if self.hours <= 0 or self.workers < 1 or self.planners < 1:
            raise ValueError("hours, workers and planners must be positive")
        if self.stall_at is not None and not 0 < self.stall_at < self.hours:
            raise ValueError(f"stall_at must be inside the run's {self.hours} hours")
        if self.start.tzinfo is None:
            raise ValueError("start must be timezone-aware")


@dataclass(frozen=True)
class Agent:
    name: str
    role: Role
    parent: str | None
    logs_spawn: bool = True


@dataclass
class Events:
    """One row per logged event, sorted by time. `duplicate` marks a commit logged again
    (same sha, later); `ok` is 1/0 where the event says, -1 where it does not."""

    run: str
    agents: list[Agent]
    ts_ms: np.ndarray  # int64, Unix milliseconds
    kind: np.ndarray  # int8 codes into KINDS
    agent: np.ndarray  # int32 index into agents
    ok: np.ndarray  # int8
    duplicate: np.ndarray  # bool
    extras: list[dict[str, Any]]  # the event's other fields, as the log spells them

    def __len__(self) -> int:
        return len(self.ts_ms)


@dataclass
class Rows:
    """Event columns being collected, block by block, before they are sorted."""

    ts: list[np.ndarray] = field(default_factory=list)
    kind: list[np.ndarray] = field(default_factory=list)
    agent: list[np.ndarray] = field(default_factory=list)
    ok: list[np.ndarray] = field(default_factory=list)
    duplicate: list[np.ndarray] = field(default_factory=list)
    extras: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        kind: str,
        ts: np.ndarray,
        agent: np.ndarray,
        extras: list[dict[str, Any]],
        ok: np.ndarray | None = None,
        duplicate: bool = False,
    ) -> None:
        n = len(ts)
        assert len(agent) == n and len(extras) == n
        self.ts.append(np.asarray(ts, np.int64))
        self.kind.append(np.full(n, KIND[kind], np.int8))
        self.agent.append(np.asarray(agent, np.int32))
        self.ok.append(np.full(n, -1, np.int8) if ok is None else np.asarray(ok, np.int8))
        self.duplicate.append(np.full(n, duplicate, bool))
        self.extras.extend(extras)
