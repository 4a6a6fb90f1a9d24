"""A small hand-made run whose agents' every figure is known, for the agent page's tests.

Run `crew` (2026-01-14, UTC): root -> p1 -> w1, w2 and `<b>x</b>`; w3 names `lead` as its
parent, and `lead` never logs; c1 and c2 name each other (a cycle: both are roots).

w1, after its spawn at 10:01:00: an llm_call of gpt-5 at 10:05 (1,000 in, 100 out), a tool
call at 10:06, a failed one at 10:07:00 and its error at 10:07:01, commit a1 at 10:10, a
push at 10:10:30, an llm_call of an unpriced model at 10:40 (500 in, 50 out), one with its
cost logged ($0.50; 10 in, 10 out) at 10:41, commit b2 at 10:50 (already logged by w2 at
10:45: not w1's), a handoff at 11:00. So w1 counts 10 events, 1 commit, 7 attempts (3
llm, 2 tool, a commit, a push), 2 errors; 1,510 input and 160 output tokens; gpt-5 at
$1.25 in / $10 out per MTok makes 1,000 x 1.25 + 100 x 10 = 2,250 per million = $0.00225,
plus the logged $0.50: $0.50225, with 1 call unpriced.
w2: a tool call at 10:20, commit b2 at 10:45, an llm_call of gpt-5 at 10:46 (2,000 in):
$0.0025. p1: an llm_call of gpt-5 at 10:30 (1,000 out): $0.01.
"""

from datetime import date
from decimal import Decimal
from typing import Any

import orjson

from analytics.costs.pricing import Price, PriceBook
from ingest.pipelines.agent_events import ingest_body

RUN = "crew"
XSS = "<b>x</b>"
GPT5 = Price("gpt-5", date(2025, 8, 7), 1.25, 0.125, 1.25, 2.5, 10.0)
BOOK = PriceBook([GPT5])
GPT5_ROW = {
    "model": "gpt-5",
    "input_per_mtok": Decimal("1.25"),
    "output_per_mtok": Decimal(10),
    "valid_from": date(2025, 8, 7),
}


def _event(ts: str, agent: str, event: str, **extra: Any) -> dict[str, Any]:
    return {"ts": f"2026-01-14T{ts}Z", "run": RUN, "agent": agent, "event": event, **extra}


def _llm(ts: str, agent: str, model: str, inp: int, out: int, **extra: Any) -> dict[str, Any]:
    usage = {"input_tokens": inp, "output_tokens": out}
    return _event(ts, agent, "llm_call", model=model, usage=usage, **extra)


CREW = [
    _event("10:00:00", "root", "spawn", role="root_planner"),
    _event("10:00:10", "p1", "spawn", role="planner", parent="root"),
    _event("10:01:00", "w1", "spawn", role="worker", parent="p1"),
    _event("10:02:00", "w2", "spawn", role="worker", parent="p1"),
    _event("10:03:00", XSS, "spawn", role="worker", parent="p1"),
    _event("10:03:30", "w3", "spawn", role="worker", parent="lead"),
    _event("10:03:40", "c1", "spawn", role="worker", parent="c2"),
    _event("10:03:50", "c2", "spawn", role="worker", parent="c1"),
    _event("10:04:00", XSS, "tool_call", tool="rg", ok=True),
    _llm("10:05:00", "w1", "gpt-5", 1000, 100),
    _event("10:06:00", "w1", "tool_call", tool="rg", ok=True),
    _event("10:07:00", "w1", "tool_call", tool="cargo build", ok=False),
    _event("10:07:01", "w1", "error", error={"kind": "build", "message": "E0308"}),
    _event("10:10:00", "w1", "commit", commit={"sha": "a1"}),
    _event("10:10:30", "w1", "push", ok=True, push={"conflict": False}),
    _event("10:20:00", "w2", "tool_call", tool="rg", ok=True),
    _llm("10:30:00", "p1", "gpt-5", 0, 1000),
    _llm("10:40:00", "w1", "mystery-1", 500, 50),
    _llm("10:41:00", "w1", "gpt-5", 10, 10, cost_usd=0.5),
    _event("10:45:00", "w2", "commit", commit={"sha": "b2"}),
    _llm("10:46:00", "w2", "gpt-5", 2000, 0),
    _event("10:50:00", "w1", "commit", commit={"sha": "b2"}),
    _event("11:00:00", "w1", "handoff", task="t-1", handoff={"to": "p1", "status": "done"}),
]


def load_crew() -> None:
    body = b"".join(orjson.dumps(e) + b"\n" for e in CREW)
    summary = ingest_body(body)
    assert (summary.accepted, summary.quarantined) == (len(CREW), 0)
