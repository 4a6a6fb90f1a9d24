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
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import yaml
from django.db import transaction

from analytics.costs.models import PRICE_FIELDS, ModelPrice, aliases_problem, price_problem
from lib.bounds import EVENT_YEARS, name_problem
from lib.errors import ParameterError

SHIPPED_PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.json"
_REQUIRED = ("input_per_mtok", "output_per_mtok")
_ENTRY_FIELDS = frozenset(("model", "valid_from", "aliases", "provider", *PRICE_FIELDS))
_PROVIDER_LENGTH = ModelPrice._meta.get_field("provider").max_length or 100
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
_SHOWN = 40  # characters of a refused value quoted in its error


@dataclass
class PriceRow:
    model: str
    valid_from: date
    prices: dict[str, Decimal | None]
    aliases: list[str] = field(default_factory=list)
    provider: str = ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _decimal(value: Any, name: str, where: str, *, scale: int = 1) -> Decimal | None:
    """A price in models.price_problem's range, times `scale` (LiteLLM's per-token prices:
    1,000,000), to 6 places; None when absent. Numbers only: a string or a boolean is
    refused, not read."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise ParameterError(f"{where}: {name} must be a number, got {_shown(value)}")
    number = Decimal(value) if isinstance(value, int | Decimal) else Decimal(repr(value))
    number *= scale
    problem = price_problem(number)
    if problem:
        raise ParameterError(f"{where}: {name} {problem}, got {_shown(value)}")
    return number.quantize(_SIX_PLACES)


def _date(value: Any, where: str) -> date:
    if isinstance(value, date) and not isinstance(value, datetime):
        day = value
    elif isinstance(value, str):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise ParameterError(
                f"{where}: valid_from must be YYYY-MM-DD, got {_shown(value)}"
            ) from None
    else:
        raise ParameterError(f"{where}: valid_from must be YYYY-MM-DD, got {_shown(value)}")
    if not EVENT_YEARS.holds_date(day):
        raise ParameterError(f"{where}: valid_from {day} is {EVENT_YEARS.reason()}")
    return day


def _text(value: Any, name: str, where: str, limit: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > limit:
        raise ParameterError(f"{where}: {name} must be a string of at most {limit} characters")
    return value


def _model(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ParameterError(f"{where}: `model` must be a string")
    model = value.strip()
    problem = name_problem(model, "`model`")
    if problem:
        raise ParameterError(f"{where}: {problem}")
    return model


def parse_price_entry(entry: Any, position: int = 1) -> PriceRow:
    """One entry of Fleetscope's format -> a PriceRow; ParameterError (one line naming the
    entry by its position from 1, its model and the field) when it is not one."""
    where = f"entry {position}"
    if not isinstance(entry, dict):
        raise ParameterError(f"{where}: a price is an object, got {_shown(entry)}")
    model = _model(entry.get("model"), where)
    where = f"entry {position} ({model})"
    unknown = sorted(repr(k) for k in entry if k not in _ENTRY_FIELDS)
    if unknown:
        raise ParameterError(f"{where}: unknown field {unknown[0]}")
    prices = {name: _decimal(entry.get(name), name, where) for name in PRICE_FIELDS}
    for name in _REQUIRED:
        if prices[name] is None:
            raise ParameterError(f"{where}: {name} is required")
    if entry.get("valid_from") is None:
        raise ParameterError(f"{where}: valid_from is required")
    aliases = [] if entry.get("aliases") is None else entry["aliases"]
    problem = aliases_problem(aliases)
    if problem:
        raise ParameterError(f"{where}: aliases {problem}")
    return PriceRow(
        model=model,
        valid_from=_date(entry["valid_from"], where),
        prices=prices,
        aliases=aliases,
        provider=_text(entry.get("provider"), "provider", where, _PROVIDER_LENGTH),
    )


def parse_litellm(document: dict[Any, Any], valid_from: date) -> list[PriceRow]:
    """LiteLLM's map: every text-model entry with per-token input and output prices."""
    rows = []
    for model, spec in document.items():
        if model == "sample_spec" or not isinstance(spec, dict):
            continue
        mode = spec.get("mode")
        if not (mode is None or isinstance(mode, str)) or mode not in _LITELLM_MODES:
            continue
        if spec.get("input_cost_per_token") is None or spec.get("output_cost_per_token") is None:
            continue
        name = _model(model, f"entry {_shown(model)}")
        where = f"entry {name}"
        prices: dict[str, Decimal | None] = dict.fromkeys(PRICE_FIELDS)
        for theirs, ours in _LITELLM_FIELDS.items():
            prices[ours] = _decimal(spec.get(theirs), theirs, where, scale=1_000_000)
        specific = spec.get("provider_specific_entry")
        fast = specific.get("fast") if isinstance(specific, dict) else None
        multiplier = _decimal(fast, "provider_specific_entry.fast", where)
        if multiplier is not None:
            for standard, ours in _FAST_OF.items():
                price = prices[standard]
                prices[ours] = None if price is None else _decimal(price * multiplier, ours, where)
        provider = _text(spec.get("litellm_provider"), "litellm_provider", where, _PROVIDER_LENGTH)
        rows.append(PriceRow(model=name, valid_from=valid_from, prices=prices, provider=provider))
    return rows


def _per_token_value(entry: Any) -> bool:
    return isinstance(entry, dict) and "input_cost_per_token" in entry


def _refuse_duplicates(rows: list[PriceRow]) -> None:
    """Two rows for one model and day: which one the file means is unknowable."""
    seen: dict[tuple[str, date], int] = {}
    for position, row in enumerate(rows, start=1):
        key = (row.model.lower(), row.valid_from)
        if key in seen:
            raise ParameterError(
                f"entry {position} ({row.model}): the same model and valid_from"
                f" ({row.valid_from}) as entry {seen[key]}"
            )
        seen[key] = position


def parse_price_entries(entries: list[Any]) -> list[PriceRow]:
    """Entries of Fleetscope's format (a file's list, POST /api/prices' body), all checked
    before any is returned; two for one model and day are refused."""
    rows = [parse_price_entry(entry, n) for n, entry in enumerate(entries, start=1)]
    _refuse_duplicates(rows)
    return rows


def parse_price_document(document: Any, valid_from: date) -> list[PriceRow]:
    """Either format, told apart by shape: LiteLLM's is keyed by model with per-token
    costs. Every entry is checked before any is returned: a file loads whole or not at
    all (ParameterError, one line naming the entry, the field and why)."""
    if isinstance(document, dict) and "prices" in document:
        document = document["prices"]
    if isinstance(document, dict) and any(_per_token_value(v) for v in document.values()):
        rows = parse_litellm(document, valid_from)
    elif isinstance(document, list):
        return parse_price_entries(document)
    elif document is None:
        raise ParameterError("empty: no prices in it")
    else:
        raise ParameterError(
            'a price file is a list of prices, {"prices": [...]}, or LiteLLM\'s map'
        )
    _refuse_duplicates(rows)
    return rows


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read_document(raw: bytes, yaml_file: bool) -> Any:
    """The file's document; ParameterError (one line) when it is not JSON or YAML."""
    if not yaml_file:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParameterError(f"not JSON: {_one_line(str(exc))}") from None
    try:
        return yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ParameterError(f"not YAML: {_one_line(exc.problem or str(exc))}{at}") from None
    except yaml.YAMLError as exc:
        raise ParameterError(f"not YAML: {_one_line(str(exc))}") from None
    except RecursionError:
        raise ParameterError("not YAML we read: nested too deeply") from None
    except ValueError as exc:
        # A value YAML recognises but Python refuses: 2026-02-30, a 5,000-digit integer.
        raise ParameterError(f"not YAML we read: {_one_line(str(exc))}") from None


def read_price_file(path: Path, valid_from: date) -> list[PriceRow]:
    """A JSON or YAML file (by extension) of either format; ParameterError, one line
    starting with the file's path, when it cannot be read or any entry is refused."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ParameterError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        document = _read_document(raw, path.suffix.lower() in (".yaml", ".yml"))
        return parse_price_document(document, valid_from)
    except ParameterError as exc:
        raise ParameterError(f"{path}: {exc}") from None


def save_prices(rows: list[PriceRow], source: str) -> int:
    """Insert or replace each (model, valid_from) row, all in one statement batch and one
    transaction; returns how many were saved."""
    objects = [
        ModelPrice(
            model=row.model,
            valid_from=row.valid_from,
            aliases=row.aliases,
            provider=row.provider,
            source=source[:200],
            **row.prices,
        )
        for row in rows
    ]
    with transaction.atomic():
        ModelPrice.objects.bulk_create(
            objects,
            update_conflicts=True,
            unique_fields=["model", "valid_from"],
            update_fields=[*PRICE_FIELDS, "aliases", "provider", "source", "updated_at"],
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
