"""A small hand-made harness log whose every figure is known, for the runs pages' tests.

Run `tiny` (times 2026-01-14, UTC): root -> p1 -> w1, w2 and an agent whose name is an
HTML payload. Commits a1 10:10, b2 10:30 (logged again 10:31), c3 11:40; the gap
10:30-11:40 (70 min) had a tool call in it: one stall of 30 min or more. The last event
(12:30) is 50 minutes after the last commit: stalled now. Hourly: 10:00 2 commits, 6
attempts, 2 errors; 11:00 1 commit, 2 attempts; 12:00 0 commits, 1 attempt.
Run `done`: a root that spawned, committed once and stopped: finished.
"""

from typing import Any

import orjson

from ingest.pipelines.agent_events import ingest_body

XSS = "<script>alert(1)</script>"


def _event(ts: str, agent: str, event: str, **extra: Any) -> dict[str, Any]:
    return {
        "ts": f"2026-01-14T{ts}Z",
        "run": extra.pop("run", "tiny"),
        "agent": agent,
        "event": event,
        **extra,
    }


TINY = [
    _event("10:00:00", "root", "spawn", role="root_planner"),
    _event("10:00:10", "p1", "spawn", role="planner", parent="root"),
    _event("10:01:00", "w1", "spawn", role="worker", parent="p1"),
    _event("10:02:00", "w2", "spawn", role="worker", parent="p1"),
    _event("10:03:00", XSS, "spawn", role="worker", parent="p1"),
    _event("10:04:00", XSS, "tool_call", tool="rg", ok=True),
    _event(
        "10:05:00",
        "w1",
        "llm_call",
        model="gpt-5.2",
        usage={"input_tokens": 100, "output_tokens": 50},
    ),
    _event("10:10:00", "w1", "commit", commit={"sha": "a1"}),
    _event("10:10:30", "w1", "push", ok=True, push={"conflict": False}),
    _event("10:20:00", "w2", "tool_call", tool="cargo build", ok=False),
    _event("10:20:01", "w2", "error", error={"kind": "build", "message": "E0308"}),
    _event("10:30:00", "w2", "commit", commit={"sha": "b2"}),
    _event("10:31:00", "w2", "commit", commit={"sha": "b2"}),
    _event("11:30:00", "w1", "tool_call", tool="cargo test", ok=True),
    _event("11:40:00", "w1", "commit", commit={"sha": "c3"}),
    _event(
        "12:30:00",
        "w2",
        "llm_call",
        model="gpt-5.2",
        usage={"input_tokens": 10, "output_tokens": 5},
    ),
]
DONE = [
    _event("08:00:00", "root", "spawn", run="done", role="root_planner"),
    _event("08:10:00", "root", "commit", run="done", commit={"sha": "d1"}),
    _event("08:20:00", "root", "stop", run="done"),
]


def load_runs() -> None:
    body = b"".join(orjson.dumps(e) + b"\n" for e in TINY + DONE)
    summary = ingest_body(body)
    assert (summary.accepted, summary.quarantined) == (len(TINY) + len(DONE), 0)
