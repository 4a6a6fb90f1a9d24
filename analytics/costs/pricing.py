"""Which price applies to a model on a day, and what a set of token counts costs.

Owns name matching (provider prefixes and date suffixes such as
`claude-haiku-4-5-20251001` -> `claude-haiku-4-5`) and the arithmetic. Reads the price
table once per PriceBook; never touches the warehouse.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import NamedTuple

from analytics.costs.models import ModelPrice

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


def _f(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def _or(value: Decimal | None, default: float) -> float:
    return default if value is None else float(value)


def price_from_row(row: ModelPrice) -> Price:
    """A row's prices with its empty ones filled in: cache reads and 5-minute writes at the
    input price, 1-hour writes at twice it (never at the 5-minute price); in the
    long-context tier the same from the long-context input price."""
    input_price = float(row.input_per_mtok)
    long_input = _f(row.long_input_per_mtok)
    long_5m = _f(row.long_cache_write_per_mtok)
    long_1h = _f(row.long_cache_write_1h_per_mtok)
    if long_input is not None:
        long_5m = long_input if long_5m is None else long_5m
        long_1h = CACHE_WRITE_1H_MULTIPLIER * long_input if long_1h is None else long_1h
    return Price(
        model=row.model,
        valid_from=row.valid_from,
        input=input_price,
        cached_input=_or(row.cached_input_per_mtok, input_price),
        cache_write_5m=_or(row.cache_write_per_mtok, input_price),
        cache_write_1h=_or(row.cache_write_1h_per_mtok, CACHE_WRITE_1H_MULTIPLIER * input_price),
        output=float(row.output_per_mtok),
        long_input=long_input,
        long_cached_input=_f(row.long_cached_input_per_mtok),
        long_output=_f(row.long_output_per_mtok),
        long_cache_write_5m=long_5m,
        long_cache_write_1h=long_1h,
        fast_input=_f(row.fast_input_per_mtok),
        fast_cached_input=_f(row.fast_cached_input_per_mtok),
        fast_cache_write_5m=_f(row.fast_cache_write_per_mtok),
        fast_cache_write_1h=_f(row.fast_cache_write_1h_per_mtok),
        fast_output=_f(row.fast_output_per_mtok),
    )


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
    """Every price row, indexed by lower-case name and alias, sorted by valid_from."""

    def __init__(self, prices: list[Price], aliases: dict[str, str] | None = None) -> None:
        self._by_model: dict[str, list[Price]] = {}
        for price in sorted(prices, key=lambda p: p.valid_from):
            self._by_model.setdefault(price.model.lower(), []).append(price)
        self._aliases = {k.lower(): v.lower() for k, v in (aliases or {}).items()}
        self._resolved: dict[str, str | None] = {}

    @classmethod
    def load(cls) -> PriceBook:
        rows = list(ModelPrice.objects.all())
        aliases = {alias: row.model for row in rows for alias in row.aliases or []}
        return cls([price_from_row(row) for row in rows], aliases)

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
        """The price valid on that UTC day, or None (unknown model, or not yet priced)."""
        if not model:
            return None
        name = self.canonical(model)
        if name is None:
            return None
        history = self._by_model[name]
        index = bisect_right([p.valid_from for p in history], day)
        return history[index - 1] if index else None
