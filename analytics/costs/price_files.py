"""Price files -> price table rows: Fleetscope's own format (JSON or YAML) and LiteLLM's
`model_prices_and_context_window.json`.

Owns parsing and saving. Fleetscope's format is a list (or `{"prices": [...]}`) of
objects with `model`, `input_per_mtok`, `output_per_mtok`, `valid_from` and optional
`cached_input_per_mtok`, `cache_write_per_mtok`, `cache_write_1h_per_mtok`,
`long_*_per_mtok` (long context), `fast_*_per_mtok` (fast mode), `aliases`, `provider`.
LiteLLM's is an object keyed by model name with USD per token (fast mode as a multiplier
of them); it carries no dates, so its prices are valid from the day given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson
import yaml
from django.db import transaction

from analytics.costs.models import MTOK_PRICE_INTEGER_DIGITS, ModelPrice
from lib.errors import ParameterError

SHIPPED_PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.json"
_PRICE_FIELDS = (
    "input_per_mtok",
    "cached_input_per_mtok",
    "cache_write_per_mtok",
    "cache_write_1h_per_mtok",
    "output_per_mtok",
    "long_input_per_mtok",
    "long_cached_input_per_mtok",
    "long_cache_write_per_mtok",
    "long_cache_write_1h_per_mtok",
    "long_output_per_mtok",
    "fast_input_per_mtok",
    "fast_cached_input_per_mtok",
    "fast_cache_write_per_mtok",
    "fast_cache_write_1h_per_mtok",
    "fast_output_per_mtok",
)
_REQUIRED = ("input_per_mtok", "output_per_mtok")
# LiteLLM field (USD per token) -> ours (USD per million tokens).
_LITELLM_FIELDS = {
    "input_cost_per_token": "input_per_mtok",
    "cache_read_input_token_cost": "cached_input_per_mtok",
    "cache_creation_input_token_cost": "cache_write_per_mtok",
    "cache_creation_input_token_cost_above_1hr": "cache_write_1h_per_mtok",
    "output_cost_per_token": "output_per_mtok",
    "input_cost_per_token_above_200k_tokens": "long_input_per_mtok",
    "cache_read_input_token_cost_above_200k_tokens": "long_cached_input_per_mtok",
    "cache_creation_input_token_cost_above_200k_tokens": "long_cache_write_per_mtok",
    "cache_creation_input_token_cost_above_1hr_above_200k_tokens": "long_cache_write_1h_per_mtok",
    "output_cost_per_token_above_200k_tokens": "long_output_per_mtok",
}
# LiteLLM gives fast mode as a multiplier of the standard prices
# (`provider_specific_entry: {"fast": 6.0}`): ours are those prices times it.
_FAST_OF = {
    "input_per_mtok": "fast_input_per_mtok",
    "cached_input_per_mtok": "fast_cached_input_per_mtok",
    "cache_write_per_mtok": "fast_cache_write_per_mtok",
    "cache_write_1h_per_mtok": "fast_cache_write_1h_per_mtok",
    "output_per_mtok": "fast_output_per_mtok",
}
_LITELLM_MODES = {"chat", "completion", "responses", None}
_SIX_PLACES = Decimal("0.000001")
_PRICE_LIMIT = Decimal(10) ** MTOK_PRICE_INTEGER_DIGITS  # what the price table can hold


@dataclass
class PriceRow:
    model: str
    valid_from: date
    prices: dict[str, Decimal | None]
    aliases: list[str] = field(default_factory=list)
    provider: str = ""


def _decimal(value: Any, name: str, model: str, *, scale: int = 1) -> Decimal | None:
    """A price >= 0 times `scale` (LiteLLM's per-token prices: 1,000,000), to 6 places."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ParameterError(f"{model}: {name} must be a number")
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise ParameterError(f"{model}: {name} must be a number, got {value!r}") from None
    if not number.is_finite() or number < 0:
        raise ParameterError(f"{model}: {name} must be a number >= 0, got {value!r}")
    number *= scale
    if number >= _PRICE_LIMIT:
        raise ParameterError(
            f"{model}: {name} must be under {_PRICE_LIMIT:,} USD per million tokens, got {value!r}"
        )
    return number.quantize(_SIX_PLACES)


def _date(value: Any, model: str) -> date:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ParameterError(f"{model}: valid_from must be YYYY-MM-DD, got {value!r}") from None


def parse_price_entry(entry: Any) -> PriceRow:
    """One entry of Fleetscope's format -> a PriceRow (ParameterError when invalid)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("model"), str):
        raise ParameterError("each price needs a `model` string")
    model = entry["model"].strip()
    if not model:
        raise ParameterError("each price needs a non-empty `model`")
    prices = {name: _decimal(entry.get(name), name, model) for name in _PRICE_FIELDS}
    for name in _REQUIRED:
        if prices[name] is None:
            raise ParameterError(f"{model}: {name} is required")
    if "valid_from" not in entry:
        raise ParameterError(f"{model}: valid_from is required")
    aliases = entry.get("aliases") or []
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise ParameterError(f"{model}: aliases must be a list of strings")
    return PriceRow(
        model=model,
        valid_from=_date(entry["valid_from"], model),
        prices=prices,
        aliases=aliases,
        provider=str(entry.get("provider") or ""),
    )


def parse_litellm(document: dict[str, Any], valid_from: date) -> list[PriceRow]:
    """LiteLLM's map: every text-model entry with per-token input and output prices."""
    rows = []
    for model, spec in document.items():
        if model == "sample_spec" or not isinstance(spec, dict):
            continue
        if spec.get("mode") not in _LITELLM_MODES:
            continue
        if spec.get("input_cost_per_token") is None or spec.get("output_cost_per_token") is None:
            continue
        prices: dict[str, Decimal | None] = dict.fromkeys(_PRICE_FIELDS)
        for theirs, ours in _LITELLM_FIELDS.items():
            prices[ours] = _decimal(spec.get(theirs), theirs, model, scale=1_000_000)
        specific = spec.get("provider_specific_entry")
        fast = specific.get("fast") if isinstance(specific, dict) else None
        multiplier = _decimal(fast, "provider_specific_entry.fast", model)
        if multiplier is not None:
            for standard, ours in _FAST_OF.items():
                price = prices[standard]
                prices[ours] = None if price is None else _decimal(price * multiplier, ours, model)
        rows.append(
            PriceRow(
                model=model,
                valid_from=valid_from,
                prices=prices,
                provider=str(spec.get("litellm_provider") or ""),
            )
        )
    return rows


def _per_token_value(entry: Any) -> bool:
    return isinstance(entry, dict) and "input_cost_per_token" in entry


def parse_price_document(document: Any, valid_from: date) -> list[PriceRow]:
    """Either format, told apart by shape: LiteLLM's is keyed by model with per-token costs."""
    if isinstance(document, dict) and "prices" in document:
        document = document["prices"]
    if isinstance(document, dict) and any(_per_token_value(v) for v in document.values()):
        return parse_litellm(document, valid_from)
    if not isinstance(document, list):
        raise ParameterError(
            'a price file is a list of prices, {"prices": [...]}, or LiteLLM\'s map'
        )
    return [parse_price_entry(entry) for entry in document]


def read_price_file(path: Path, valid_from: date) -> list[PriceRow]:
    """A JSON or YAML file (by extension) of either format."""
    raw = path.read_bytes()
    if path.suffix.lower() in (".yaml", ".yml"):
        document = yaml.safe_load(raw)
    else:
        try:
            document = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParameterError(f"{path}: not JSON: {exc}") from None
    return parse_price_document(document, valid_from)


def save_prices(rows: list[PriceRow], source: str) -> int:
    """Insert or replace each (model, valid_from) row; returns how many were saved."""
    with transaction.atomic():
        for row in rows:
            ModelPrice.objects.update_or_create(
                model=row.model,
                valid_from=row.valid_from,
                defaults={
                    **row.prices,
                    "aliases": row.aliases,
                    "provider": row.provider,
                    "source": source[:200],
                },
            )
    return len(rows)


def fill_shipped_prices(model_price: Any, fields: tuple[str, ...]) -> None:
    """For a migration that adds price fields: set them from the shipped list where
    still empty, on the rows it put in the table (`source` "shipped", the same model and
    day). `model_price` is the migration's ModelPrice."""
    for row in read_price_file(SHIPPED_PRICES, date.today()):
        for name in fields:
            if row.prices[name] is not None:
                model_price.objects.filter(
                    model=row.model,
                    valid_from=row.valid_from,
                    source="shipped",
                    **{f"{name}__isnull": True},
                ).update(**{name: row.prices[name]})


def load_shipped_prices() -> int:
    """The list prices shipped in analytics/data/prices.json."""
    return save_prices(read_price_file(SHIPPED_PRICES, date.today()), "shipped")
