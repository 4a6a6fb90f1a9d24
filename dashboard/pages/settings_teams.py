"""Settings > Teams (admins only): create, edit and delete teams (name, run patterns,
source patterns, daily budget) and choose their members; the list as CSV
(`?format=csv&table=teams`).

Views and forms only: a team is analytics.costs.models.Team, its members are the
Access rows that name it (analytics.access.models.Access.teams); what a member then sees
is analytics.access.visibility's to work out.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from analytics.access.models import Access
from analytics.costs.models import Team
from dashboard.pages.settings import admin_required, settings_context
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.bounds import name_problem

MAX_PATTERNS = 200


class PatternsField(forms.CharField):
    """Shell-style patterns, one a line (blank lines dropped), as a list."""

    widget = forms.Textarea(attrs={"rows": 3})

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        patterns = [line.strip() for line in text.splitlines() if line.strip()]
        if len(patterns) > MAX_PATTERNS:
            raise forms.ValidationError(f"at most {MAX_PATTERNS} patterns")
        for pattern in patterns:
            problem = name_problem(pattern, "a pattern")
            if problem:
                raise forms.ValidationError(problem)
        return patterns

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list) else value


class TeamForm(forms.ModelForm):
    run_patterns = PatternsField(
        required=False, help_text="one a line: run names or patterns, e.g. browser-*"
    )
    source_patterns = PatternsField(
        required=False, help_text="one a line: log files the events came from, e.g. /logs/infra/*"
    )
    members = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="members see this team's data",
    )

    class Meta:
        model = Team
        fields = ["name", "run_patterns", "source_patterns", "daily_budget_usd"]
        labels = {"daily_budget_usd": "Daily budget (USD)"}

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        problem = name_problem(name, "a team name")
        if problem:
            raise forms.ValidationError(problem)
        return name


def _save(form: TeamForm) -> Team:
    with transaction.atomic():
        team = form.save()
        wanted = set(form.cleaned_data.get("members") or [])
        current = {a.user for a in Access.objects.filter(teams=team).select_related("user")}
        for user in wanted - current:
            access, _ = Access.objects.get_or_create(user=user)
            access.teams.add(team)
        for access in Access.objects.filter(teams=team, user__in=current - wanted):
            access.teams.remove(team)
    return team


TEAM_HEADER = ("team", "run_patterns", "source_patterns", "daily_budget_usd", "members")


def _team_rows() -> list[dict[str, Any]]:
    teams = Team.objects.order_by("name").prefetch_related("members__user")
    return [{"team": t, "members": sorted(a.user.get_username() for a in t.members.all())}
            for t in teams]  # fmt: skip


def _teams_csv(request: HttpRequest) -> StreamingHttpResponse:
    """The list as the page shows it (patterns and members comma-separated)."""

    def rows() -> list[list[Any]]:
        return [
            [
                r["team"].name,
                ", ".join(r["team"].run_patterns),
                ", ".join(r["team"].source_patterns),
                r["team"].daily_budget_usd,
                ", ".join(r["members"]),
            ]
            for r in _team_rows()
        ]

    return table_csv(request, "settings", {"teams": CsvTable(TEAM_HEADER, rows)})


@admin_required
def teams_page(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """GET: the teams and an empty form (`?format=csv&table=teams`: the list). POST:
    create a team."""
    if request.method == "GET" and wants_csv(request) is not None:
        return _teams_csv(request)
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        _save(form)
        return redirect("settings-teams")
    rows = _team_rows()
    return render(
        request,
        "settings/teams.html",
        settings_context(request, "settings-teams", form=form, rows=rows),
        status=422 if form.is_bound else 200,
    )


@admin_required
def team_edit(request: HttpRequest, team_id: int) -> HttpResponse:
    team = get_object_or_404(Team, pk=team_id)
    members = [a.user for a in Access.objects.filter(teams=team).select_related("user")]
    form = TeamForm(request.POST or None, instance=team, initial={"members": members})
    if request.method == "POST" and form.is_valid():
        _save(form)
        return redirect("settings-teams")
    return render(
        request,
        "settings/team_edit.html",
        settings_context(request, "settings-teams", form=form, team=team),
        status=422 if form.is_bound else 200,
    )


@admin_required
@require_POST
def team_delete(request: HttpRequest, team_id: int) -> HttpResponse:
    get_object_or_404(Team, pk=team_id).delete()
    return redirect("settings-teams")
