"""Synthetic multi-agent harness runs for demos, tests and benchmarks.

`generate_run(spec, path, ...)` simulates a run (harness.py), writes it as agent-event
JSONL with the faults real logs have (writer.py) and returns its ground truth (truth.py),
so a test can ingest the file and compare every answer with what really happened.
"""

from __future__ import annotations

from pathlib import Path

from ingest.synthetic.harness import build_events
from ingest.synthetic.spec import ErrorTrend, Events, Role, RunSpec
from ingest.synthetic.truth import GroundTruth
from ingest.synthetic.writer import write_jsonl

__all__ = ["ErrorTrend", "Events", "GroundTruth", "Role", "RunSpec", "generate_run"]


def generate_run(
    spec: RunSpec,
    path: Path,
    *,
    malformed: int = 0,
    epoch_fraction: float = 0.0,
    partial_last_line: bool = False,
) -> GroundTruth:
    events = build_events(spec)
    written = write_jsonl(
        events,
        path,
        seed=spec.seed,
        malformed=malformed,
        epoch_fraction=epoch_fraction,
        partial_last_line=partial_last_line,
    )
    return GroundTruth(spec, events, written.accepted, written.quarantined, written.pending_bytes)
