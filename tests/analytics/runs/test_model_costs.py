"""analytics/runs/model_costs.py: a run's USD per model and in total, from one grouped
query, against prices worked out by hand; unpriced calls are counted, never zero."""

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from analytics.costs.price_files import load_shipped_prices
from analytics.costs.pricing import Price, PriceBook
from analytics.runs.details import models
from analytics.runs.model_costs import priced_models, run_cost
from lib.window import TimeRange
from tests.dashboard.links_data import load_links

HAIKU = Price("claude-haiku-4-5", date(2025, 10, 15), 1.0, 0.1, 1.25, 2.0, 5.0)
BOOK = PriceBook([HAIKU])


@pytest.fixture
def run(lake: Path) -> str:
    load_links()
    return "links"


def test_each_model_and_the_run_cost_what_their_tokens_cost_by_hand(run: str) -> None:
    cost = run_cost(run, book=BOOK)
    haiku = cost.of("claude-haiku-4-5")
    # 1,000 in x 1 + 100 out x 5 = 1,500 per million
    assert (haiku.calls, haiku.usd, haiku.unpriced_calls) == (1, pytest.approx(0.0015), 0)
    sonnet = cost.of("claude-sonnet-4-5")  # no price, but its cost was logged
    assert (sonnet.calls, sonnet.usd, sonnet.unpriced_calls) == (1, 0.25, 0)
    mystery = cost.of("mystery-model")
    assert (mystery.calls, mystery.usd, mystery.unpriced_calls) == (1, None, 1)
    total = cost.total
    assert (total.calls, total.usd, total.unpriced_calls) == (3, pytest.approx(0.2515), 1)


def test_the_range_prices_only_its_calls(run: str) -> None:
    window = TimeRange(datetime(2026, 1, 14, 10, 10, tzinfo=UTC), None)
    cost = run_cost(run, window, book=BOOK)
    assert (cost.total.calls, cost.total.usd, cost.total.unpriced_calls) == (2, 0.25, 1)
    assert cost.of("claude-haiku-4-5").calls == 0


def test_the_models_table_rows_meet_their_costs(run: str) -> None:
    rows = priced_models(models(run), run_cost(run, book=BOOK))
    assert [(r.use.model, r.use.calls, r.cost.usd) for r in rows] == [
        ("claude-haiku-4-5", 1, pytest.approx(0.0015)),
        ("mystery-model", 1, None),
        ("claude-sonnet-4-5", 1, 0.25),
    ]


def test_the_shipped_prices_give_each_models_usd(run: str, db: None) -> None:
    """analytics/data/prices.json: haiku 4.5 at $1 in and $5 out per million tokens,
    sonnet 4.5 at $3 in (its call logged $0.25, which wins); mystery-model has no price."""
    load_shipped_prices()
    cost = run_cost(run)
    # 1,000 x $1 + 100 x $5 = $1,500 per million tokens
    assert cost.of("claude-haiku-4-5").usd == pytest.approx(1500 / 1_000_000)
    assert cost.of("claude-sonnet-4-5").usd == pytest.approx(0.25)
    assert (cost.of("mystery-model").usd, cost.of("mystery-model").unpriced_calls) == (None, 1)
    assert cost.total.usd == pytest.approx(0.25 + 0.0015)
