"""The parallel set shipped with Fleetscope (analytics/data/parallel/<language>.jsonl),
written for this project: the Tokens page's default view before anyone ingests their own.

Counted in memory on first use (a few hundred short texts: milliseconds per encoding);
never written to the warehouse, so its ids cannot collide with a user's parallel set.
"""

from __future__ import annotations

import functools
from pathlib import Path

import orjson

from analytics.tokens.counting import count_tokens
from analytics.tokens.tax import ParallelCount

PARALLEL_DIR = Path(__file__).resolve().parent.parent / "data" / "parallel"


@functools.cache
def shipped_texts() -> tuple[tuple[str, str, str], ...]:
    """(id, language, text) of every shipped parallel text, in file order."""
    rows = []
    for path in sorted(PARALLEL_DIR.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            if line.strip():
                record = orjson.loads(line)
                rows.append((record["id"], record["language"], record["text"]))
    return tuple(rows)


@functools.cache
def shipped_counts(encoding: str) -> tuple[ParallelCount, ...]:
    texts = shipped_texts()
    tokens = count_tokens([text for _, _, text in texts], encoding)
    return tuple(
        ParallelCount(
            id=id_, language=language, chars=len(text), bytes=len(text.encode()), tokens=n or 0
        )
        for (id_, language, text), n in zip(texts, tokens, strict=True)
    )
