"""A hand-made run whose buckets, stall, costs and tables are known, for the run page's
data links, USD and CSV tests (times 2026-01-14, UTC).

Run `links`: commits c1 10:01:15 and c2 10:01:45 (the 10:01 bucket), c3 10:40:00; between
c2 and c3 (38.25 min, a stall of 30 min or more) four events: a failed tool call 10:02:30
(the 10:02 bucket's one error), a haiku 4.5 call 10:03 (1,000 in, 100 out), a sonnet 4.5
call 10:20 with a logged cost of $0.25, a call of an unpriced model 10:25 (10 in, 10 out).
A tool named like a spreadsheet formula answers at 10:41. Two lines are set aside: an
event with a bad time naming the run, and a line that is not JSON.
Run `many`: 51 agents, a00 to a49 and `@cmd`, one commit each (a page shows 50).
"""

from datetime import date
from decimal import Decimal
from typing import Any

import orjson

from analytics.costs.models import ModelPrice
from ingest.pipelines.agent_events import ingest_body

FORMULA_TOOL = "=HYPERLINK(1)"


def _event(ts: str, agent: str, event: str, run: str = "links", **extra: Any) -> dict[str, Any]:
    return {"ts": f"2026-01-14T{ts}Z", "run": run, "agent": agent, "event": event, **extra}


def _call(ts: str, model: str, inp: int, out: int, **extra: Any) -> dict[str, Any]:
    usage = {"input_tokens": inp, "output_tokens": out}
    return _event(ts, "w1", "llm_call", model=model, usage=usage, **extra)


LINKS = [
    _event("10:00:00", "root", "spawn", role="root_planner"),
    _event("10:00:30", "w1", "spawn", role="worker", parent="root"),
    _event("10:01:15", "w1", "commit", commit={"sha": "c1"}),
    _event("10:01:45", "w1", "commit", commit={"sha": "c2"}),
    _event("10:02:30", "w1", "tool_call", tool="cargo build", ok=False),
    _call("10:03:00", "claude-haiku-4-5", 1000, 100),
    _call("10:20:00", "claude-sonnet-4-5", 10, 0, cost_usd=0.25),
    _call("10:25:00", "mystery-model", 10, 10),
    _event("10:40:00", "w1", "commit", commit={"sha": "c3"}),
    _event("10:41:00", "w1", "tool_call", tool=FORMULA_TOOL, ok=True),
]
MANY_AGENTS = [f"a{i:02d}" for i in range(50)] + ["@cmd"]
MANY = [
    _event(f"11:{i // 60:02d}:{i % 60:02d}", agent, "commit", run="many", commit={"sha": agent})
    for i, agent in enumerate(MANY_AGENTS)
]
BAD_LINES = [b'{"ts": "yesterday", "run": "links", "agent": "w1", "event": "commit"}', b"=1+1"]


def set_prices() -> None:
    """Haiku 4.5 at 1 in, 0.1 cache reads, 1.25 cache writes, 5 out per MTok; no other."""
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="claude-haiku-4-5",
        input_per_mtok=Decimal(1),
        cached_input_per_mtok=Decimal("0.1"),
        cache_write_per_mtok=Decimal("1.25"),
        output_per_mtok=Decimal(5),
        valid_from=date(2025, 10, 15),
    )


def load_links() -> None:
    body = b"".join(orjson.dumps(e) + b"\n" for e in LINKS + MANY) + b"\n".join(BAD_LINES)
    summary = ingest_body(body + b"\n")
    assert (summary.accepted, summary.quarantined) == (len(LINKS) + len(MANY), 2)
