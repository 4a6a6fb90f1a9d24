"""Calls of two teams across two UTC days, for tokens per day and the team filter.

gpt-5 at $1.25 per million input tokens, $0.125 per million cache reads, $1.5625 per
million cache writes, $10 per million output tokens (no long-context tier).

  alpha-1 (team `web` by its run pattern `alpha-*`):
    2026-01-13T23:30Z  1,000,000 in, 200,000 cache read, 50,000 cache write, 100,000 out
                       = 1.25 + 0.025 + 0.078125 + 1.00 = $2.353125
    2026-01-14T00:30Z    400,000 in = $0.50
  s-pair  (team `web` by a member's events: its call carries team `web`, person cy):
    2026-01-14T10:00Z  2,000,000 in = $2.50
  beta-1  (team `ops` by its run pattern `beta-*`):
    2026-01-14T11:00Z  3,000,000 in, 300,000 out = 3.75 + 3.00 = $6.75

Per UTC day, every team: 2026-01-13 one call, 1,000,000 in, 100,000 out, 200,000 cache
read, 50,000 cache write, $2.353125; 2026-01-14 three calls, 5,400,000 in, 300,000 out,
$9.75. Team `web` alone on 2026-01-14: two calls, 2,400,000 in, $3.00. In Asia/Tokyo
(UTC+9) both alpha-1 calls fall on 2026-01-14.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from analytics.costs.models import ModelPrice, Team
from tests.analytics.people.world import insert_events

DAY = date(2026, 1, 14)


@dataclass(frozen=True)
class Teams:
    web: Team
    ops: Team


def _call(run: str, ts: str, **tokens: int) -> dict[str, object]:
    return {"run": run, "ts": ts, "event": "llm_call", "model": "gpt-5", **tokens}


def load_team_calls() -> Teams:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="gpt-5",
        input_per_mtok=Decimal("1.25"),
        cached_input_per_mtok=Decimal("0.125"),
        cache_write_per_mtok=Decimal("1.5625"),
        output_per_mtok=Decimal(10),
        valid_from=date(2025, 8, 7),
    )
    insert_events(
        _call(
            "alpha-1",
            "2026-01-13T23:30:00Z",
            input_tokens=1_000_000,
            cached_input_tokens=200_000,
            cache_write_tokens=50_000,
            output_tokens=100_000,
        ),
        _call("alpha-1", "2026-01-14T00:30:00Z", input_tokens=400_000),
        {
            **_call("s-pair", "2026-01-14T10:00:00Z", input_tokens=2_000_000),
            "person": "cy@example.com",
            "team": "web",
        },
        _call("beta-1", "2026-01-14T11:00:00Z", input_tokens=3_000_000, output_tokens=300_000),
    )
    web = Team.objects.create(name="web", run_patterns=["alpha-*"])
    ops = Team.objects.create(name="ops", run_patterns=["beta-*"])
    return Teams(web, ops)
