"""Costs where tokens are shown (analytics.costs.calls): one call, and calls grouped by a
key through the warehouse, each checked against prices worked out by hand."""

from datetime import UTC, date, datetime
from pathlib import Path

import orjson
import pytest

import warehouse
from analytics.costs.calls import call_usd, grouped_usage_sql, priced_groups, usage_params
from analytics.costs.pricing import Price, PriceBook
from ingest.pipelines.agent_events import ingest_body

HAIKU = Price("claude-haiku-4-5", date(2025, 10, 15), 1.0, 0.1, 1.25, 2.0, 5.0)
# Long-context rates: input 6, cache reads 0.6, output 22.5 per MTok.
SONNET = Price("claude-sonnet-4-5", date(2025, 9, 29), 3.0, 0.3, 3.75, 6.0, 15.0, 6.0, 0.6, 22.5)
BOOK = PriceBook([HAIKU, SONNET])
TS = datetime(2026, 1, 14, 10, tzinfo=UTC)


def _call(model: str, **tokens: int) -> dict[str, object]:
    return {"event": "llm_call", "model": model, "ts": TS, "cost_usd": None, **tokens}


def test_one_call_is_priced_at_its_models_rates() -> None:
    row = _call(
        "claude-haiku-4-5-20251001",
        input_tokens=1000,
        cached_input_tokens=2000,
        cache_write_tokens=500,
        output_tokens=300,
    )
    # 1000 x 1.0 + 2000 x 0.1 + 500 x 1.25 + 300 x 5.0 = 3325 per million
    assert call_usd(row, BOOK) == pytest.approx(0.003325)


def test_a_long_context_call_is_priced_whole_in_its_tier() -> None:
    row = _call(
        "claude-sonnet-4-5", input_tokens=150_000, cached_input_tokens=60_000, output_tokens=1000
    )
    # prompt 210,000 > 200,000: 150,000 x 6 + 60,000 x 0.6 + 1000 x 22.5 = 958,500 per million
    assert call_usd(row, BOOK) == pytest.approx(0.9585)


def test_a_logged_cost_wins_and_unknowns_are_none() -> None:
    assert call_usd({**_call("claude-haiku-4-5", input_tokens=10), "cost_usd": 0.5}, BOOK) == 0.5
    assert call_usd(_call("no-such-model", input_tokens=10), BOOK) is None
    assert call_usd({"event": "tool_call", "ts": TS}, BOOK) is None


def test_grouped_costs_agree_with_the_hand_sum(lake: Path) -> None:
    def call(agent: str, model: str, inp: int, out: int, cost: float | None = None) -> bytes:
        event: dict[str, object] = {
            "ts": "2026-01-14T10:00:00Z",
            "run": "r",
            "agent": agent,
            "event": "llm_call",
            "id": f"{agent}-{model}-{inp}",
            "model": model,
            "usage": {"input_tokens": inp, "output_tokens": out},
        }
        if cost is not None:
            event["cost_usd"] = cost
        return orjson.dumps(event) + b"\n"

    body = (
        call("a", "claude-haiku-4-5", 1000, 100)  # 1000 + 500 = 1500 per million
        + call("a", "claude-haiku-4-5", 2000, 0)  # 2000
        + call("a", "claude-sonnet-4-5", 1000, 0, cost=0.25)  # logged
        + call("b", "mystery", 1000, 0)  # unpriced
    )
    assert ingest_body(body).accepted == 4
    rows = warehouse.fetch_all(
        grouped_usage_sql("agent", "run = $run"), {"run": "r", **usage_params()}
    )
    costs = priced_groups(rows, BOOK)
    assert costs["a"].calls == 3
    assert costs["a"].usd == pytest.approx(0.0035 + 0.25)
    assert costs["a"].unpriced_calls == 0
    assert (costs["b"].calls, costs["b"].usd, costs["b"].unpriced_calls) == (1, None, 1)
