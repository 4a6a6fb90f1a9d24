"""The daily_spend rule: token spend of the UTC day so far against a threshold in USD or
a team's daily budget, one finding for its scope (a run, a team, or everything). Spend
comes from analytics.alerts.facts, priced as the cost report prices it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analytics.alerts.facts import Facts, epoch
from analytics.alerts.models import RuleKind
from analytics.alerts.rules.base import Finding, Rule, RuleError


class DailySpend(Rule):
    kind = RuleKind.DAILY_SPEND
    subject_noun = "team"
    scopes = ("run", "team")
    needs_threshold = False

    def configure(self) -> None:
        if self.threshold is None and "team" not in self.scope:
            raise RuleError("daily_spend needs a threshold in USD (or a team with a budget)")
        if self.threshold is not None and self.threshold < 0:
            raise RuleError("daily_spend threshold is USD and not negative")

    def horizon(self) -> timedelta:
        return timedelta(days=1)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        now = epoch(at)
        team = facts.team(self.scope["team"]) if "team" in self.scope else None
        budget = self.threshold
        if budget is None and team is not None and team.daily_budget_usd is not None:
            budget = float(team.daily_budget_usd)
        if budget is None or ("team" in self.scope and team is None):
            return []
        subject = self.scope.get("team") or self.scope.get("run") or "all"
        day = at.astimezone(UTC).date()
        spent = 0.0
        for hour_end, run, source, usd in facts.spend_by_hour(day):
            if hour_end > now + 1e-3:
                continue
            if "run" in self.scope and run != self.scope["run"]:
                continue
            if team is not None and not facts.spend_in_team(team, run, source):
                continue
            spent += usd
        return [
            Finding(
                subject,
                spent > budget,
                round(spent, 6),
                f"${spent:,.2f} spent on {day.isoformat()} (UTC) of a ${budget:,.2f} budget",
            )
        ]
