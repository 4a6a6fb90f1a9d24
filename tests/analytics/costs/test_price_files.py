"""Price files: Fleetscope's format in JSON and YAML, LiteLLM's map, the shipped list."""

from datetime import date
from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from django.core.management import call_command

from analytics.costs.models import ModelPrice
from analytics.costs.price_files import SHIPPED_PRICES, load_shipped_prices, read_price_file
from analytics.costs.pricing import PriceBook
from lib.errors import ParameterError

LITELLM = {
    "sample_spec": {"input_cost_per_token": 0, "output_cost_per_token": 0},
    "claude-haiku-4-5": {
        "input_cost_per_token": 1e-06,
        "output_cost_per_token": 5e-06,
        "cache_read_input_token_cost": 1e-07,
        "cache_creation_input_token_cost": 1.25e-06,
        "cache_creation_input_token_cost_above_1hr": 2e-06,
        "litellm_provider": "anthropic",
        "mode": "chat",
    },
    "claude-opus-4-6": {
        "input_cost_per_token": 5e-06,
        "output_cost_per_token": 2.5e-05,
        "cache_read_input_token_cost": 5e-07,
        "cache_creation_input_token_cost": 6.25e-06,
        "cache_creation_input_token_cost_above_1hr": 1e-05,
        "provider_specific_entry": {"us": 1.1, "fast": 6.0},
        "mode": "chat",
    },
    "claude-sonnet-4-5": {
        "input_cost_per_token": 3e-06,
        "output_cost_per_token": 1.5e-05,
        "input_cost_per_token_above_200k_tokens": 6e-06,
        "cache_read_input_token_cost_above_200k_tokens": 6e-07,
        "cache_creation_input_token_cost_above_200k_tokens": 7.5e-06,
        "cache_creation_input_token_cost_above_1hr_above_200k_tokens": 1.2e-05,
        "output_cost_per_token_above_200k_tokens": 2.25e-05,
        "mode": "chat",
    },
    "text-embedding-3-small": {
        "input_cost_per_token": 2e-08,
        "output_cost_per_token": 0,
        "mode": "embedding",
    },
}


def test_litellms_map_is_read_per_million_tokens(tmp_path: Path) -> None:
    path = tmp_path / "model_prices_and_context_window.json"
    path.write_bytes(orjson.dumps(LITELLM))
    row, opus, long_tier = read_price_file(path, date(2026, 1, 1))
    assert row.model == "claude-haiku-4-5" and row.provider == "anthropic"
    assert row.prices["input_per_mtok"] == Decimal("1.000000")
    assert row.prices["cached_input_per_mtok"] == Decimal("0.100000")
    assert row.prices["cache_write_per_mtok"] == Decimal("1.250000")
    assert row.prices["cache_write_1h_per_mtok"] == Decimal("2.000000")
    assert row.prices["output_per_mtok"] == Decimal("5.000000")
    assert row.valid_from == date(2026, 1, 1)
    assert row.prices["fast_input_per_mtok"] is None  # no fast mode
    # Fast mode is six times each price: 5e-06 x 1,000,000 x 6 = 30 per million, ...
    assert {k: v for k, v in opus.prices.items() if k.startswith("fast_")} == {
        "fast_input_per_mtok": Decimal("30.000000"),
        "fast_cached_input_per_mtok": Decimal("3.000000"),
        "fast_cache_write_per_mtok": Decimal("37.500000"),
        "fast_cache_write_1h_per_mtok": Decimal("60.000000"),
        "fast_output_per_mtok": Decimal("150.000000"),
    }
    # Above 200k tokens: 6e-06 x 1,000,000 = 6 per million, and so on.
    assert {k: v for k, v in long_tier.prices.items() if k.startswith("long_")} == {
        "long_input_per_mtok": Decimal("6.000000"),
        "long_cached_input_per_mtok": Decimal("0.600000"),
        "long_cache_write_per_mtok": Decimal("7.500000"),
        "long_cache_write_1h_per_mtok": Decimal("12.000000"),
        "long_output_per_mtok": Decimal("22.500000"),
    }


def test_yaml_in_fleetscopes_format_loads_through_the_command(tmp_path: Path, db: None) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(
        "- model: acme-coder\n  aliases: [acme]\n  input_per_mtok: 2\n  output_per_mtok: 8\n"
        "  valid_from: 2026-02-01\n"
    )
    call_command("load_prices", str(path))
    row = ModelPrice.objects.get(model="acme-coder")
    assert (row.input_per_mtok, row.aliases, row.valid_from) == (
        Decimal(2),
        ["acme"],
        date(2026, 2, 1),
    )


def test_a_price_without_output_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(
        orjson.dumps([{"model": "x", "input_per_mtok": 1, "valid_from": "2026-01-01"}])
    )
    with pytest.raises(ParameterError, match="output_per_mtok is required"):
        read_price_file(path, date(2026, 1, 1))


def test_the_shipped_prices_match_dated_names(db: None) -> None:
    # What a new database holds is checked where `migrate` makes one (test_migrate.py);
    # here the list is loaded again, as a live-server test before this one on the same
    # worker may have flushed every table.
    shipped = read_price_file(SHIPPED_PRICES, date(2026, 1, 1))
    assert load_shipped_prices() == len(shipped) > 20
    book = PriceBook.load()
    haiku = book.price("claude-haiku-4-5-20251001", date(2026, 2, 12))
    assert haiku is not None and (haiku.input, haiku.output) == (1.0, 5.0)
    assert book.price("gpt-5.2", date(2026, 1, 14)) is not None
    # Opus 4.6's fast mode at six times 5 / 0.5 / 6.25 / 10 / 25.
    opus = book.price("claude-opus-4-6", date(2026, 2, 12))
    assert opus is not None
    assert opus.rates(fast=True) == (30.0, 3.0, 37.5, 60.0, 150.0)
