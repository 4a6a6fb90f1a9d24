"""The daily_spend rule: token spend of the UTC day so far against a threshold in USD or
a team's daily budget, one finding for its scope (a run, a team, or everything), or with
`params.group_by` (`person` or `team`, the telemetry's columns) one finding per person or
team that spent that day. Spend comes from analytics.alerts.facts, priced as the cost
report prices it.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

from analytics.alerts.facts import Facts, epoch
from analytics.alerts.models import RuleKind
from analytics.alerts.rules.base import Finding, Rule, RuleError
from analytics.costs.models import Team

GROUPS = ("person", "team")


class DailySpend(Rule):
    kind = RuleKind.DAILY_SPEND
    subject_noun = "team"
    scopes = ("run", "team")
    known_params = ("group_by",)
    needs_threshold = False

    def configure(self) -> None:
        self.group_by = self.params.get("group_by")
        if self.group_by is not None and self.group_by not in GROUPS:
            raise RuleError(f"params.group_by must be person or team, got {self.group_by!r}")
        if self.group_by is not None and self.threshold is None:
            raise RuleError(f"daily_spend by {self.group_by} needs a threshold in USD")
        if self.threshold is None and "team" not in self.scope:
            raise RuleError("daily_spend needs a threshold in USD (or a team with a budget)")
        if self.threshold is not None and self.threshold < 0:
            raise RuleError("daily_spend threshold is USD and not negative")

    def horizon(self) -> timedelta:
        return timedelta(days=1)

    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        team = facts.team(self.scope["team"]) if "team" in self.scope else None
        budget = self.threshold
        if budget is None and team is not None and team.daily_budget_usd is not None:
            budget = float(team.daily_budget_usd)
        if budget is None or ("team" in self.scope and team is None):
            return []
        if self.group_by is not None:
            return self._by_group(facts, at, team, budget)
        now = epoch(at)
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

    def _by_group(
        self, facts: Facts, at: datetime, team: Team | None, budget: float
    ) -> list[Finding]:
        """A finding per person (or team name) with calls today in the rule's scope."""
        now = epoch(at)
        day = at.astimezone(UTC).date()
        spent: dict[str, float] = defaultdict(float)
        for hour_end, run, source, person, team_name, usd in facts.spend_by_person_hour(day):
            group = person if self.group_by == "person" else team_name
            if group is None or hour_end > now + 1e-3:
                continue
            if "run" in self.scope and run != self.scope["run"]:
                continue
            if team is not None and not facts.spend_in_team(team, run, source, team_name):
                continue
            spent[group] += usd
        return [
            Finding(
                group,
                usd > budget,
                round(usd, 6),
                f"{group}: ${usd:,.2f} spent on {day.isoformat()} (UTC) of a ${budget:,.2f} budget",
            )
            for group, usd in sorted(spent.items())
        ]
