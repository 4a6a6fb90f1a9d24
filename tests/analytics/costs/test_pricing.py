"""Price rules: name matching, valid-from history, and the arithmetic to the cent."""

import math
from datetime import date
from decimal import Decimal

import pytest

from analytics.costs.models import MTOK_PRICE_MAX, ModelPrice
from analytics.costs.pricing import (
    Price,
    PriceBook,
    StoredPrice,
    Usage,
    cache_savings_usd,
    candidate_names,
    cost_usd,
    price_from_row,
)
from lib.bounds import COUNT_LIMIT

HAIKU = Price("claude-haiku-4-5", date(2025, 10, 15), 1.0, 0.1, 1.25, 2.0, 5.0)
HAIKU_LATER = Price("claude-haiku-4-5", date(2026, 3, 1), 2.0, 0.2, 2.5, 4.0, 10.0)
SONNET = Price("claude-sonnet-4-5", date(2025, 9, 29), 3.0, 0.3, 3.75, 6.0, 15.0, 6.0, 0.6, 22.5)
SONNET_LONG_WRITES = Price(
    "claude-sonnet-4-5", date(2025, 9, 29), 3.0, 0.3, 3.75, 6.0, 15.0, 6.0, 0.6, 22.5, 7.5, 12.0
)


def test_date_suffixes_and_provider_prefixes_are_dropped_for_matching() -> None:
    assert candidate_names("anthropic/claude-haiku-4-5-20251001") == [
        "anthropic/claude-haiku-4-5-20251001",
        "claude-haiku-4-5-20251001",
        "anthropic/claude-haiku-4-5",
        "claude-haiku-4-5",
    ]
    assert candidate_names("gpt-4o-2024-08-06")[-1] == "gpt-4o"
    assert candidate_names("claude-sonnet-4-5@20250929")[-1] == "claude-sonnet-4-5"


def test_a_date_suffixed_name_gets_its_base_models_price() -> None:
    book = PriceBook([HAIKU])
    assert book.price("claude-haiku-4-5-20251001", date(2026, 1, 1)) == HAIKU
    assert book.canonical("Claude-Haiku-4-5") == "claude-haiku-4-5"


def test_aliases_match() -> None:
    book = PriceBook([HAIKU], {"haiku": "claude-haiku-4-5"})
    assert book.price("haiku", date(2026, 1, 1)) == HAIKU


def test_a_price_change_does_not_rewrite_history() -> None:
    book = PriceBook([HAIKU_LATER, HAIKU])
    assert book.price("claude-haiku-4-5", date(2026, 2, 28)) == HAIKU
    assert book.price("claude-haiku-4-5", date(2026, 3, 1)) == HAIKU_LATER


def test_unknown_models_and_days_before_any_price_have_no_price() -> None:
    book = PriceBook([HAIKU])
    assert book.price("mystery-model", date(2026, 1, 1)) is None
    assert book.price("claude-haiku-4-5", date(2025, 1, 1)) is None
    assert book.price(None, date(2026, 1, 1)) is None


def test_every_token_kind_is_priced_at_its_own_rate() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        cached_input_tokens=2_000_000,
        cache_write_tokens=3_000_000,
        cache_write_1h_tokens=1_000_000,
        output_tokens=500_000,
    )
    # 1 + 2 x 0.1 + 2 x 1.25 (5-minute) + 1 x 2 (1-hour) + 0.5 x 5
    assert cost_usd(HAIKU, usage) == pytest.approx(8.2)
    assert cache_savings_usd(HAIKU, usage) == pytest.approx(2 * 0.9)


def test_long_context_calls_use_the_long_prices() -> None:
    usage = Usage(
        input_tokens=300_000,
        output_tokens=1_000,
        long_input_tokens=300_000,
        long_output_tokens=1_000,
    )
    assert cost_usd(SONNET, usage) == pytest.approx(0.3 * 6 + 0.001 * 22.5)


def test_a_row_without_a_1_hour_price_charges_1_hour_writes_twice_the_input_price() -> None:
    row = ModelPrice(
        model="acme",
        input_per_mtok=Decimal(3),
        cache_write_per_mtok=Decimal("3.75"),
        output_per_mtok=Decimal(15),
        valid_from=date(2026, 1, 1),
    )
    usage = Usage(cache_write_tokens=1_000_000, cache_write_1h_tokens=1_000_000)
    # 1,000,000 one-hour writes x (2 x 3) per million = 6, not the 5-minute 3.75.
    assert cost_usd(price_from_row(row), usage) == pytest.approx(6.0)


def test_a_long_context_call_pays_long_context_rates_for_its_cache_writes_too() -> None:
    usage = Usage(
        input_tokens=10_000,
        cached_input_tokens=150_000,
        cache_write_tokens=100_000,
        cache_write_1h_tokens=40_000,
        output_tokens=2_000,
        long_input_tokens=10_000,
        long_cached_input_tokens=150_000,
        long_cache_write_tokens=100_000,
        long_cache_write_1h_tokens=40_000,
        long_output_tokens=2_000,
    )
    # 10,000 x 6 + 150,000 x 0.6 + 60,000 x 7.5 (5-minute) + 40,000 x 12 (1-hour)
    # + 2,000 x 22.5 = 60,000 + 90,000 + 450,000 + 480,000 + 45,000 = 1,125,000 per million.
    assert cost_usd(SONNET_LONG_WRITES, usage) == pytest.approx(1.125)


def test_a_long_context_tier_without_cache_write_prices_derives_them_from_its_input() -> None:
    row = ModelPrice(
        model="acme",
        input_per_mtok=Decimal(3),
        output_per_mtok=Decimal(15),
        long_input_per_mtok=Decimal(6),
        valid_from=date(2026, 1, 1),
    )
    price = price_from_row(row)
    # The long-context input price for 5-minute writes, twice it for 1-hour writes.
    assert (price.long_cache_write_5m, price.long_cache_write_1h) == (6.0, 12.0)
    no_tier = ModelPrice(
        model="acme",
        input_per_mtok=Decimal(3),
        output_per_mtok=Decimal(15),
        valid_from=date(2026, 1, 1),
    )
    price = price_from_row(no_tier)
    assert (price.long_cache_write_5m, price.long_cache_write_1h) == (None, None)


def test_fast_mode_prices_left_empty_are_the_standard_ones_times_the_fast_multiplier() -> None:
    row = ModelPrice(
        model="acme",
        input_per_mtok=Decimal(5),
        cached_input_per_mtok=Decimal("0.5"),
        cache_write_per_mtok=Decimal("6.25"),
        output_per_mtok=Decimal(25),
        fast_input_per_mtok=Decimal(30),
        fast_output_per_mtok=Decimal(140),
        valid_from=date(2026, 1, 1),
    )
    price = price_from_row(row)
    usage = Usage(
        input_tokens=1_000_000,
        cached_input_tokens=1_000_000,
        cache_write_tokens=2_000_000,
        cache_write_1h_tokens=1_000_000,
        output_tokens=1_000_000,
    )
    # Fast multiplier 30 / 5 = 6: cache reads 0.5 x 6 = 3, 5-minute writes 6.25 x 6 = 37.5,
    # 1-hour writes (2 x 5) x 6 = 60; output is its own 140.
    # 30 + 3 + 37.5 + 60 + 140 = 270.5
    assert cost_usd(price, usage, fast=True) == pytest.approx(270.5)
    # The same usage at standard speed: 5 + 0.5 + 6.25 + 10 + 25 = 46.75
    assert cost_usd(price, usage) == pytest.approx(46.75)


def test_a_fast_call_past_200k_pays_the_long_context_prices_times_the_fast_multiplier() -> None:
    # Opus 4.6 at 5 / 25 with a long-context tier of 10 / 37.5 and fast mode at 30 / 150.
    price = Price(
        "claude-opus-4-6",
        date(2026, 2, 5),
        5.0,
        0.5,
        6.25,
        10.0,
        25.0,
        long_input=10.0,
        long_output=37.5,
        fast_input=30.0,
        fast_output=150.0,
    )
    usage = Usage(
        input_tokens=300_000,
        output_tokens=10_000,
        long_input_tokens=300_000,
        long_output_tokens=10_000,
    )
    # 300,000 x (10 x 6) + 10,000 x (37.5 x 6) = 18,000,000 + 2,250,000 per million.
    assert cost_usd(price, usage, fast=True) == pytest.approx(20.25)


def test_a_row_without_fast_mode_prices_fast_calls_at_its_standard_prices() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000)
    # 1 x 1 + 0.1 x 5 = 1.5 either way.
    assert cost_usd(HAIKU, usage, fast=True) == cost_usd(HAIKU, usage) == pytest.approx(1.5)


def test_the_dearest_price_times_the_largest_count_stays_a_finite_exact_figure() -> None:
    top = float(MTOK_PRICE_MAX)
    dearest = Price("dear", date(2026, 1, 1), top, top, top, top, top, top, top, top, top, top)
    most = COUNT_LIMIT - 1
    usage = Usage(
        input_tokens=most,
        cached_input_tokens=most,
        cache_write_tokens=most,
        output_tokens=most,
        long_input_tokens=most,
        long_cached_input_tokens=most,
        long_cache_write_tokens=most,
        long_output_tokens=most,
    )
    # Four kinds of token at the one price (long-context adds nothing at the same price):
    # 4 x (10^18 - 1) x 999,999,999.999999 / 10^6, about 4 x 10^21 USD.
    expected = float(4 * most * MTOK_PRICE_MAX / 1_000_000)
    total = cost_usd(dearest, usage, fast=True)
    assert math.isfinite(total) and total == pytest.approx(expected, rel=1e-12)


def test_an_unusable_row_leaves_its_period_unpriced() -> None:
    unusable = StoredPrice("claude-haiku-4-5", date(2026, 3, 1), [], None, "why")
    book = PriceBook([HAIKU], unusable=[unusable])
    assert book.price("claude-haiku-4-5", date(2026, 2, 28)) == HAIKU
    assert book.price("claude-haiku-4-5", date(2026, 3, 1)) is None
    assert book.problems == ["claude-haiku-4-5 from 2026-03-01: why; not used"]
