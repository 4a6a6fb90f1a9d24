"""The token tax arithmetic, the one definition every page and endpoint uses.

The tax of a language under an encoding is the mean over content ids of
tokens(language) / tokens(baseline), the baseline being English (contract/requests.md).
Pure: rows in, table out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

BASELINE = "en"


@dataclass(frozen=True)
class ParallelCount:
    """One parallel text counted under one encoding."""

    id: str
    language: str
    chars: int
    bytes: int
    tokens: int


@dataclass(frozen=True)
class LanguageTax:
    language: str
    texts: int  # texts of this language counted in tokens/chars/bytes
    samples: int  # ids that also have a baseline text: the ones the tax averages over
    tokens: int
    chars: int
    bytes: int
    tokens_per_char: float | None
    tokens_per_byte: float | None
    tax: float | None  # None when no id of this language has a baseline text


def build_tax_table(counts: Iterable[ParallelCount], baseline: str = BASELINE) -> list[LanguageTax]:
    """Per language: totals and the mean per-id ratio to the baseline, highest tax first."""
    by_language: dict[str, list[ParallelCount]] = defaultdict(list)
    for count in counts:
        by_language[count.language].append(count)
    baseline_tokens = {c.id: c.tokens for c in by_language.get(baseline, []) if c.tokens > 0}
    table = []
    for language, rows in by_language.items():
        ratios = [c.tokens / baseline_tokens[c.id] for c in rows if c.id in baseline_tokens]
        tokens = sum(c.tokens for c in rows)
        chars = sum(c.chars for c in rows)
        size = sum(c.bytes for c in rows)
        table.append(
            LanguageTax(
                language=language,
                texts=len(rows),
                samples=len(ratios),
                tokens=tokens,
                chars=chars,
                bytes=size,
                tokens_per_char=tokens / chars if chars else None,
                tokens_per_byte=tokens / size if size else None,
                tax=sum(ratios) / len(ratios) if ratios else None,
            )
        )
    table.sort(key=lambda row: (row.tax is None, -(row.tax or 0.0), row.language))
    return table
