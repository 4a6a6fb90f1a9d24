"""A run whose calls two scraped vLLM instances served, with exact KV usage and
preemption counters, for the "Serving under this run" section's query, figures and page
(times 2026-01-14, UTC).

Run `served`: a spawn 10:00:00; calls of org/model-a at 10:00:30 (a1) and 10:01:10 (a2),
a failed tool call 10:01:40, a call of org/model-b at 10:02:20 (b1), a commit 10:03:50.
With one-minute buckets it spans 10:00 to 10:04 (four buckets).

| instance  | model           | scrapes (time: KV usage, preemptions counter)             |
|-----------|-----------------|-----------------------------------------------------------|
| gpu-a     | org/model-a     | 10:00:15 0.25 0 · 10:00:45 0.75 0 · 10:01:15 0.5 3 ·      |
|           |                 | 10:01:45 1.0 5 · 10:02:15 0.625 5                         |
| gpu-b     | org/model-b     | 10:02:15 0.125 0 · 10:02:45 0.375 2                       |
| gpu-z     | org/elsewhere   | 10:01:15 0.5 0 · 10:01:45 0.5 9 (serves no model of the run) |

So per minute: gpu-a's KV 0.5 (10:00), 0.75 (10:01), 0.625 (10:02); its preemptions 0, 5
(3 + 2), 0 (a first scrape has no increase); gpu-b's KV 0.25 and preemptions 2 at 10:02.
Run `unserved`: one call of org/nobody at 10:00:00, served by no instance.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.vllm_text import EngineState, v1_text

T0 = datetime(2026, 1, 14, 10, tzinfo=UTC)
MODEL_A = "org/model-a"
MODEL_B = "org/model-b"
SCRAPES = {
    "gpu-a": (
        MODEL_A,
        [(15, 0.25, 0), (45, 0.75, 0), (75, 0.5, 3), (105, 1.0, 5), (135, 0.625, 5)],
    ),
    "gpu-b": (MODEL_B, [(135, 0.125, 0), (165, 0.375, 2)]),
    "gpu-z": ("org/elsewhere", [(75, 0.5, 0), (105, 0.5, 9)]),
}


def _event(ts: str, event: str, run: str = "served", **extra: Any) -> dict[str, Any]:
    return {"ts": f"2026-01-14T{ts}Z", "run": run, "agent": "w1", "event": event, **extra}


def _call(ts: str, model: str, call: str, run: str = "served") -> dict[str, Any]:
    usage = {"input_tokens": 100, "output_tokens": 10}
    return _event(ts, "llm_call", run, model=model, id=call, usage=usage)


EVENTS = [
    _event("10:00:00", "spawn", role="worker"),
    _call("10:00:30", MODEL_A, "a1"),
    _call("10:01:10", MODEL_A, "a2"),
    _event("10:01:40", "tool_call", tool="pytest", ok=False),
    _call("10:02:20", MODEL_B, "b1"),
    _event("10:03:50", "commit", commit={"sha": "s1"}),
    _call("10:00:00", "org/nobody", "n1", run="unserved"),
]


def load_served() -> None:
    """The runs' events and the three instances' scrapes (needs `lake`)."""
    summary = ingest_body(b"".join(orjson.dumps(e) + b"\n" for e in EVENTS))
    assert (summary.accepted, summary.quarantined) == (len(EVENTS), 0)
    load_scrapes(
        [
            PendingScrape(
                instance,
                T0 + timedelta(seconds=second),
                scrape=parse_scrape(v1_text({"0": EngineState(kv, preemptions=pre)}, model=model)),
            )
            for instance, (model, scrapes) in SCRAPES.items()
            for second, kv, pre in scrapes
        ]
    )
