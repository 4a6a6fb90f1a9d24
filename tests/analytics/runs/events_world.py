"""A small hand-made run for the events explorer's tests, every event listed here with
its number (E1..E14, in the order written), so each test names the rows it expects.

Run `explore` (2026-02-10, UTC): root -> p1 -> w1; root -> w2; w3 names p1 as its parent
on its first event but its spawn says w2 (the spawn wins). Ties on ts: E1/E2 at 09:00:00,
E3/E4 at 09:00:05, E5/E6 at 09:01:00, E13/E14 at 10:30:00. Run `other`: one event.
`acme-coder` is priced by the test (PRICE): E5 costs 1000*3 + 2000*0.3 + 500*15 per
million = 0.0111 USD; E10's model has no price (null, never 0); E14 logged 0.5 USD.
"""

from decimal import Decimal
from typing import Any

import orjson

from analytics.costs.models import ModelPrice
from ingest.pipelines.agent_events import ingest_body

RUN = "explore"
XSS = "<script>alert(1)</script>"
FORMULA = '=HYPERLINK("http://evil")'


def _event(ts: str, agent: str, event: str, **extra: Any) -> dict[str, Any]:
    return {"ts": f"2026-02-10T{ts}Z", "run": RUN, "agent": agent, "event": event, **extra}


EVENTS = {
    "E1": _event("09:00:00", "root", "spawn", role="root_planner"),
    "E2": _event("09:00:00", "p1", "spawn", role="planner", parent="root"),
    "E3": _event("09:00:05", "w1", "spawn", role="worker", parent="p1"),
    "E4": _event("09:00:05", "w2", "spawn", role="worker", parent="root"),
    "E5": _event(
        "09:01:00", "w1", "llm_call", model="acme-coder",
        usage={"input_tokens": 1000, "cached_input_tokens": 2000, "output_tokens": 500},
        attrs={"temperature": 0.2},
    ),
    "E6": _event("09:01:00", "w1", "tool_call", tool="cargo build", ok=False),
    "E7": _event("09:02:00", "w1", "error", error={"kind": "build", "message": "E0308 100% off"}),
    "E8": _event("09:03:00", "w2", "tool_call", tool="rg", ok=True),
    "E9": _event(
        "09:04:00", "w2", "commit",
        commit={"sha": "abc123", "files": 2, "insertions": 10, "deletions": 1,
                "message": f"{FORMULA}\n\nthe body"},
    ),
    "E10": _event(
        "09:05:00", "w1", "llm_call", model="mystery-model",
        usage={"input_tokens": 10, "output_tokens": 5},
    ),
    "E11": _event(
        "09:06:00", "p1", "handoff", task="t-1",
        handoff={"to": "root", "status": "done", "notes": "parsed a_b fully"},
    ),
    "E12": _event("10:30:00", "w3", "tool_call", tool="rg", parent="p1", ok=True),
    "E13": _event("10:30:00", "w3", "spawn", role="worker", parent="w2"),
    "E14": _event(
        "10:30:00", "root", "llm_call", model="acme-coder", cost_usd=0.5,
        usage={"input_tokens": 1, "output_tokens": 1},
    ),
    "E15": _event("10:45:00", "root", "error", error={"kind": "other", "message": XSS}),
}  # fmt: skip
OTHER = {"ts": "2026-02-10T09:30:00Z", "run": "other", "agent": "x", "event": "error"}
E5_USD = (1000 * 3 + 2000 * 0.3 + 500 * 15) / 1_000_000


def load_world() -> None:
    lines = [orjson.dumps(e) for e in [*EVENTS.values(), OTHER]]
    summary = ingest_body(b"\n".join(lines) + b"\n", source="explore.jsonl")
    assert (summary.accepted, summary.quarantined) == (len(EVENTS) + 1, 0)
    ModelPrice.objects.create(
        model="acme-coder",
        valid_from="2026-01-01",
        input_per_mtok=Decimal(3),
        cached_input_per_mtok=Decimal("0.3"),
        output_per_mtok=Decimal(15),
    )
