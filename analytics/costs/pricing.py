"""Which price applies to a model on a day, and what a set of token counts costs.

Owns name matching (provider prefixes and date suffixes such as
`claude-haiku-4-5-20251001` -> `claude-haiku-4-5`) and the arithmetic. Reads the price
table once per PriceBook, checking each row against models.price_problem's range (a row
out of it prices nothing and is reported, never raised); never touches the warehouse.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple

from django.db.models import FloatField
from django.db.models.functions import Cast

from analytics.costs.models import PRICE_FIELDS, ModelPrice, aliases_problem, price_problem

PER_MTOK = 1_000_000
# A call whose prompt (input + cache reads + cache writes) exceeds this is long-context.
LONG_CONTEXT_TOKENS = 200_000
# A 1-hour cache write costs this many times the input price (Anthropic's multiplier):
# what a row without its own 1-hour price charges.
CACHE_WRITE_1H_MULTIPLIER = 2.0
# Date suffixes providers append to a model's name: -20251001, -2025-10-01, @20251001.
_DATE_SUFFIX = re.compile(r"(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$")
_VERSION_SUFFIXES = ("-latest",)


class Rates(NamedTuple):
    """USD per million tokens of each kind, in one tier."""

    input: float
    cached_input: float
    cache_write_5m: float
    cache_write_1h: float
    output: float


# The long-context prices in the same order; None where that kind has no tier.
LongRates = tuple[float | None, float | None, float | None, float | None, float | None]


@dataclass(frozen=True)
class Price:
    """USD per million tokens; cache prices already fall back as the table says. A long_*
    price of None: that kind of token has no long-context tier."""

    model: str
    valid_from: date
    input: float
    cached_input: float
    cache_write_5m: float
    cache_write_1h: float
    output: float
    long_input: float | None = None
    long_cached_input: float | None = None
    long_output: float | None = None
    long_cache_write_5m: float | None = None
    long_cache_write_1h: float | None = None
    # Fast mode: no fast_input, no fast mode (fast calls at the standard prices); any
    # other fast price left None is the standard one times the fast multiplier.
    fast_input: float | None = None
    fast_cached_input: float | None = None
    fast_cache_write_5m: float | None = None
    fast_cache_write_1h: float | None = None
    fast_output: float | None = None

    @property
    def fast_multiplier(self) -> float:
        """Fast input over input: what fast mode multiplies the row's other prices by
        (1 for a row without fast mode)."""
        if self.fast_input is None or self.input <= 0:
            return 1.0
        return self.fast_input / self.input

    def rates(self, *, fast: bool = False) -> Rates:
        """The prices of a call: fast mode's when `fast` and the row has it."""
        standard = Rates(
            self.input, self.cached_input, self.cache_write_5m, self.cache_write_1h, self.output
        )
        if not fast or self.fast_input is None:
            return standard
        m = self.fast_multiplier
        return Rates(
            self.fast_input,
            _given(self.fast_cached_input, standard.cached_input * m),
            _given(self.fast_cache_write_5m, standard.cache_write_5m * m),
            _given(self.fast_cache_write_1h, standard.cache_write_1h * m),
            _given(self.fast_output, standard.output * m),
        )

    def long_rates(self, *, fast: bool = False) -> LongRates:
        """The long-context prices; for a fast call the fast multiplier applies on top
        (the provider's modifiers stack)."""
        m = self.fast_multiplier if fast else 1.0
        return (
            _times(self.long_input, m),
            _times(self.long_cached_input, m),
            _times(self.long_cache_write_5m, m),
            _times(self.long_cache_write_1h, m),
            _times(self.long_output, m),
        )


def _times(price: float | None, multiplier: float) -> float | None:
    return None if price is None else price * multiplier


def _given(price: float | None, otherwise: float) -> float:
    return otherwise if price is None else price


@dataclass(frozen=True)
class Usage:
    """Token counts of one or more calls; cache writes split by lifetime where known."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    output_tokens: int = 0
    # The part of these tokens from calls whose prompt passed the long-context threshold.
    long_input_tokens: int = 0
    long_cached_input_tokens: int = 0
    long_output_tokens: int = 0
    long_cache_write_tokens: int = 0
    long_cache_write_1h_tokens: int = 0


PriceValue = Decimal | float | None


def _f(value: PriceValue) -> float | None:
    return None if value is None else float(value)


def _or(value: PriceValue, default: float) -> float:
    return default if value is None else float(value)


def price_from_values(model: str, valid_from: date, values: Mapping[str, PriceValue]) -> Price:
    """A row's prices (by field name, models.PRICE_FIELDS) with its empty ones filled in:
    cache reads and 5-minute writes at the input price, 1-hour writes at twice it (never at
    the 5-minute price); in the long-context tier the same from the long-context input
    price."""
    input_price = _or(values["input_per_mtok"], 0.0)
    long_input = _f(values["long_input_per_mtok"])
    long_5m = _f(values["long_cache_write_per_mtok"])
    long_1h = _f(values["long_cache_write_1h_per_mtok"])
    if long_input is not None:
        long_5m = long_input if long_5m is None else long_5m
        long_1h = CACHE_WRITE_1H_MULTIPLIER * long_input if long_1h is None else long_1h
    return Price(
        model=model,
        valid_from=valid_from,
        input=input_price,
        cached_input=_or(values["cached_input_per_mtok"], input_price),
        cache_write_5m=_or(values["cache_write_per_mtok"], input_price),
        cache_write_1h=_or(
            values["cache_write_1h_per_mtok"], CACHE_WRITE_1H_MULTIPLIER * input_price
        ),
        output=_or(values["output_per_mtok"], 0.0),
        long_input=long_input,
        long_cached_input=_f(values["long_cached_input_per_mtok"]),
        long_output=_f(values["long_output_per_mtok"]),
        long_cache_write_5m=long_5m,
        long_cache_write_1h=long_1h,
        fast_input=_f(values["fast_input_per_mtok"]),
        fast_cached_input=_f(values["fast_cached_input_per_mtok"]),
        fast_cache_write_5m=_f(values["fast_cache_write_per_mtok"]),
        fast_cache_write_1h=_f(values["fast_cache_write_1h_per_mtok"]),
        fast_output=_f(values["fast_output_per_mtok"]),
    )


def price_from_row(row: ModelPrice) -> Price:
    """A ModelPrice row as a Price (see price_from_values)."""
    return price_from_values(
        row.model, row.valid_from, {name: getattr(row, name) for name in PRICE_FIELDS}
    )


@dataclass(frozen=True)
class StoredPrice:
    """One row of the price table as read for pricing: its Price, or None and why not (a
    value out of models.price_problem's range, written before that range was checked)."""

    model: str
    valid_from: date
    aliases: list[str]
    price: Price | None
    problem: str | None = None


# Each price column read as a float: the ORM's Decimal conversion raises on a value wider
# than the column's digits, and one such row would take every cost query down.
_AS_FLOAT = {f"{name}__float": Cast(name, FloatField()) for name in PRICE_FIELDS}


def _stored_problem(values: Mapping[str, float | None], aliases: object) -> str | None:
    for name in PRICE_FIELDS:
        value = values[name]
        if value is None:
            if name in ("input_per_mtok", "output_per_mtok"):
                return f"{name} is empty"
            continue
        problem = price_problem(Decimal(repr(value)))
        if problem:
            return f"{name} {problem} ({value:g})"
    problem = aliases_problem(aliases)
    return f"aliases {problem}" if problem else None


def read_stored_prices() -> list[StoredPrice]:
    """Every row of the price table; a row out of range comes back without its Price and
    with the reason, so it prices nothing and is reported, never raised."""
    answer = []
    for typed in ModelPrice.objects.values("model", "valid_from", "aliases", **_AS_FLOAT):
        row: dict[str, Any] = dict(typed)
        values = {name: row[f"{name}__float"] for name in PRICE_FIELDS}
        problem = _stored_problem(values, row["aliases"])
        aliases = row["aliases"] if aliases_problem(row["aliases"]) is None else []
        price = None if problem else price_from_values(row["model"], row["valid_from"], values)
        answer.append(StoredPrice(row["model"], row["valid_from"], aliases, price, problem))
    return answer


def candidate_names(model: str) -> list[str]:
    """The logged name, then without a provider prefix, then without a date suffix."""
    names = [model.strip().lower()]
    if "/" in names[0]:
        names.append(names[0].rsplit("/", 1)[1])
    for name in list(names):
        for suffix in _VERSION_SUFFIXES:
            if name.endswith(suffix):
                names.append(name[: -len(suffix)])
        stripped = _DATE_SUFFIX.sub("", name)
        if stripped != name:
            names.append(stripped)
    return list(dict.fromkeys(names))


def cost_usd(price: Price, usage: Usage, *, fast: bool = False) -> float:
    """What the usage costs at this price, at its fast-mode prices when `fast` (calls
    served in fast mode). Cache writes not split by lifetime are priced as 5-minute writes
    (the default lifetime). A long-context call is billed whole in its tier, cache writes
    included: each kind of token at its long-context price where the row has one."""
    tokens = (
        usage.input_tokens,
        usage.cached_input_tokens,
        usage.cache_write_tokens - usage.cache_write_1h_tokens,
        usage.cache_write_1h_tokens,
        usage.output_tokens,
    )
    long_tokens = (
        usage.long_input_tokens,
        usage.long_cached_input_tokens,
        usage.long_cache_write_tokens - usage.long_cache_write_1h_tokens,
        usage.long_cache_write_1h_tokens,
        usage.long_output_tokens,
    )
    tiers = zip(
        tokens, long_tokens, price.rates(fast=fast), price.long_rates(fast=fast), strict=True
    )
    total = 0.0
    for count, long_count, rate, long_rate in tiers:
        total += count * rate
        # Long-context calls were counted at the base price: add the difference.
        if long_rate is not None:
            total += long_count * (long_rate - rate)
    return total / PER_MTOK


def cache_savings_usd(price: Price, usage: Usage, *, fast: bool = False) -> float:
    """What the cache reads would have cost at the input price, minus what they cost."""
    rates = price.rates(fast=fast)
    return usage.cached_input_tokens * (rates.input - rates.cached_input) / PER_MTOK


class PriceBook:
    """Every price row, indexed by lower-case name and alias, sorted by valid_from. A row
    that cannot be used (StoredPrice.problem) still starts its period, which is then
    unpriced: an older price never stands in for it silently. `problems` lists them."""

    def __init__(
        self,
        prices: list[Price],
        aliases: dict[str, str] | None = None,
        unusable: list[StoredPrice] | None = None,
    ) -> None:
        entries: list[tuple[str, date, Price | None]] = [(p.model, p.valid_from, p) for p in prices]
        entries += [(s.model, s.valid_from, None) for s in unusable or []]
        self._by_model: dict[str, list[tuple[date, Price | None]]] = {}
        for model, valid_from, price in sorted(entries, key=lambda e: e[1]):
            self._by_model.setdefault(model.lower(), []).append((valid_from, price))
        self._aliases = {k.lower(): v.lower() for k, v in (aliases or {}).items()}
        self._resolved: dict[str, str | None] = {}
        self.problems = [
            f"{s.model} from {s.valid_from}: {s.problem}; not used" for s in unusable or []
        ]

    @classmethod
    def load(cls) -> PriceBook:
        stored = read_stored_prices()
        aliases = {alias: s.model for s in stored for alias in s.aliases}
        prices = [s.price for s in stored if s.price is not None]
        return cls(prices, aliases, [s for s in stored if s.price is None])

    def canonical(self, model: str) -> str | None:
        """The price-table name a logged model name matches, or None."""
        if model not in self._resolved:
            found = None
            for name in candidate_names(model):
                name = self._aliases.get(name, name)
                if name in self._by_model:
                    found = name
                    break
            self._resolved[model] = found
        return self._resolved[model]

    def price(self, model: str | None, day: date) -> Price | None:
        """The price valid on that UTC day, or None (unknown model, not yet priced, or a
        row that cannot be used)."""
        if not model:
            return None
        name = self.canonical(model)
        if name is None:
            return None
        history = self._by_model[name]
        index = bisect_right([valid_from for valid_from, _ in history], day)
        return history[index - 1][1] if index else None
