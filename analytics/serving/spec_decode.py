"""Speculative decoding of a vLLM instance: drafts, draft tokens and accepted tokens per
bucket and over the window, the acceptance rate (accepted / draft tokens), the mean
acceptance length (1 + accepted / drafts: the tokens each verification step yields) and
the accepted tokens by draft position.

Reads the reset-adjusted counter increases through analytics/serving/series.py (the
per-position counter is stored split by `position`, see ingest/parsers/vllm.py); no SQL
of its own. V0 exports no drafts counter: its mean acceptance length is None.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from analytics.serving.instances import model_instances
from analytics.serving.series import Window, read_series

DRAFTS, DRAFT_TOKENS, ACCEPTED = "spec_drafts", "spec_draft_tokens", "spec_accepted_tokens"
BY_POSITION = "spec_accepted_by_position"


@dataclass(frozen=True)
class SpecDecodeTotals:
    drafts: float
    draft_tokens: float
    accepted_tokens: float
    acceptance_rate: float | None  # accepted / draft tokens; None without draft tokens
    mean_acceptance_length: float | None  # 1 + accepted / drafts; None without drafts


@dataclass(frozen=True)
class SpecDecodePoint(SpecDecodeTotals):
    t: datetime


@dataclass(frozen=True)
class PositionAcceptance:
    position: int
    accepted_tokens: float
    acceptance_rate: float | None  # accepted at this position / drafts


@dataclass(frozen=True)
class SpecDecode:
    points: list[SpecDecodePoint]
    overall: SpecDecodeTotals
    by_position: list[PositionAcceptance]


def totals(drafts: float, draft_tokens: float, accepted: float) -> SpecDecodeTotals:
    """The two rates of three increases (None where the divisor is 0)."""
    return SpecDecodeTotals(
        drafts,
        draft_tokens,
        accepted,
        accepted / draft_tokens if draft_tokens > 0 else None,
        1 + accepted / drafts if drafts > 0 else None,
    )


def spec_decode(
    instance: str | None, w: Window, engine: str | None = None, model: str | None = None
) -> SpecDecode:
    """Per bucket and over the window, summed over engines (and instances unless named)."""
    rows = read_series(
        (DRAFTS, DRAFT_TOKENS, ACCEPTED),
        instance,
        engine,
        w,
        split=(BY_POSITION,),
        only=model_instances(model),
        summed=True,
    )
    per: dict[datetime, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for slot, metric in enumerate((DRAFTS, DRAFT_TOKENS, ACCEPTED)):
        for r in rows[metric]:
            per[r.t][slot] += r.increase or 0.0
    points = [SpecDecodePoint(**vars(totals(*acc)), t=t) for t, acc in sorted(per.items())]
    whole = [sum(acc[i] for acc in per.values()) for i in range(3)]
    positions: dict[int, float] = defaultdict(float)
    for metric, metric_rows in rows.items():
        if metric.startswith(BY_POSITION + ":"):
            label = metric.split(":", 1)[1]
            if label.isdigit():
                positions[int(label)] += sum(r.increase or 0.0 for r in metric_rows)
    by_position = [
        PositionAcceptance(p, n, n / whole[0] if whole[0] > 0 else None)
        for p, n in sorted(positions.items())
    ]
    return SpecDecode(points, totals(*whole), by_position)
