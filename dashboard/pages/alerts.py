"""The Alerts pages: what is firing now, the channels (flagged when failing), silences
(and a form to add one), the history of state changes, the last evaluation, the rules;
and the rule editor with a preview of what a rule would have fired on over the last 24 h.

Views and forms only: rules are checked by analytics.alerts.rules.build_rule (durations
by analytics.alerts.api.read_seconds, as the API reads them); the lists come from
analytics.alerts.queries, the preview from analytics.alerts.preview and its timeline from
analytics.alerts.charts; the preview's `end` is read as lib.window reads a window. No SQL
here. Every list, form choice and object looked up by id is one the user's teams own
(analytics.alerts.ownership: another team's is a 404); viewers see no forms (the access
middleware refuses their POSTs anyway); a preview watches the rule's team's data only.
The alerts page's tables download as CSV (`?format=csv&table=firing|channels|silences|
history|rules`, dashboard.tables), each the rows the page lists, history the newest
HISTORY_CSV_ROWS.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST

from analytics import charts
from analytics.access.visibility import seen_for_team
from analytics.alerts import charts as alert_charts
from analytics.alerts import engine, ownership, rules
from analytics.alerts import preview as alert_preview
from analytics.alerts.api import read_seconds
from analytics.alerts.models import (
    AlertRule,
    AlertStateName,
    Evaluation,
    RuleKind,
    Silence,
)
from analytics.alerts.preview import Incident
from analytics.alerts.queries import alert_states, recent_transitions
from analytics.alerts.rules import Rule, RuleError, build_rule
from dashboard.tables import CsvTable, Tables, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Role, Seen, role_of, seen_of
from lib.durations import format_duration, format_time, parse_duration
from lib.errors import ParameterError
from lib.window import WindowQuery, read_window

PREVIEW = timedelta(hours=24)
HISTORY_ROWS = 50
HISTORY_CSV_ROWS = 100_000
# The beat schedule evaluates every minute; an older last evaluation means it is not.
STALE_EVALUATION = timedelta(minutes=5)
DEFAULT_REPEAT_S = 4 * 3600
SCOPES = [
    ("all", "everything"),
    ("run", "one run"),
    ("instance", "one instance"),
    ("team", "one team"),
]


def _with_code(text: str) -> SafeString:
    """Escaped, with the docstring's `name` spans as <code>."""
    return mark_safe(re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text)))  # noqa: S308  # escaped first


_KIND_HELP, _SCOPE_HELP = rules.descriptions()
KIND_HELP = {kind: _with_code(text) for kind, text in _KIND_HELP.items()}
SCOPE_HELP = _with_code(_SCOPE_HELP)


def _seconds_text(seconds: int, zero: str) -> str:
    return zero if seconds == 0 else format_duration(seconds)


def scope_text(scope: dict[str, Any]) -> str:
    if not scope:
        return "all"
    return ", ".join(f"{key} {value}" for key, value in scope.items())


# --- forms ------------------------------------------------------------------------------


class RuleForm(forms.ModelForm):
    """A rule as the editor spells it. `clean()` compiles it with build_rule, so an
    invalid rule is refused with build_rule's one-line reason, and a valid one can be
    previewed (`self.compiled`) without being saved."""

    scope_kind = forms.ChoiceField(label="Scope", choices=SCOPES, initial="all")
    scope_name = forms.CharField(
        label="Name", required=False, max_length=300, help_text="the run, instance or team"
    )
    for_duration = forms.CharField(
        label="For",
        required=False,
        initial="0",
        max_length=20,
        help_text="how long the condition must hold before it fires, e.g. 5m (0: at once)",
    )
    repeat = forms.CharField(
        label="Repeat every",
        required=False,
        initial="4h",
        max_length=20,
        help_text="remind while still firing, e.g. 4h (never: no reminders)",
    )
    end = forms.CharField(required=False, widget=forms.HiddenInput)

    field_order = [
        "name",
        "kind",
        "team",
        "scope_kind",
        "scope_name",
        "threshold",
        "for_duration",
        "params",
        "repeat",
        "channels",
        "enabled",
    ]

    class Meta:
        model = AlertRule
        fields = ["name", "kind", "team", "threshold", "params", "channels", "enabled"]
        widgets = {
            "channels": forms.CheckboxSelectMultiple,
            "params": forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
        }
        help_texts = {"params": 'a JSON object, e.g. {"window": "5m"}; {} for the defaults'}

    def __init__(self, *args: Any, seen: Seen, previewing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen = seen
        self.compiled: Rule | None = None
        team = self.fields["team"]
        team.queryset = ownership.choosable_teams(seen)  # type: ignore[attr-defined]
        team.required = not seen.everything
        team.empty_label = "no team (watches everything)"  # type: ignore[attr-defined]
        team.help_text = "whose rule: it watches only that team's runs and instances"
        channels = self.fields["channels"]
        channels.queryset = ownership.visible_channels(seen)  # type: ignore[attr-defined]
        # A preview needs no name: the rule is not saved.
        self.fields["name"].required = not previewing
        rule = self.instance
        if rule.pk is not None:
            scope = dict(rule.scope or {})
            kind, name = next(iter(scope.items()), ("all", ""))
            self.initial.update(
                scope_kind=kind,
                scope_name=name,
                for_duration=_seconds_text(rule.for_seconds, "0"),
                repeat=_seconds_text(rule.repeat_seconds, "never"),
            )
        elif not self.is_bound:
            self.initial.setdefault("params", {})
            self.initial.setdefault("team", ownership.default_team(seen))

    def clean_params(self) -> dict[str, Any]:
        params = self.cleaned_data.get("params")
        if params is None:
            return {}
        if not isinstance(params, dict):
            raise forms.ValidationError('params must be a JSON object, e.g. {"window": "5m"}')
        return params

    def clean_end(self) -> datetime | None:
        try:
            return WindowQuery(end=self.cleaned_data.get("end")).end_time()
        except ParameterError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        scope_kind, scope_name = cleaned.get("scope_kind"), cleaned.get("scope_name", "")
        if scope_kind and scope_kind != "all" and not scope_name:
            self.add_error("scope_name", f"name the {scope_kind} this rule watches")
        problem = ownership.channel_problem(
            self.seen, cleaned.get("team"), cleaned.get("channels") or []
        )
        if problem:
            self.add_error("channels", problem)
        if any(f in self.errors for f in ("kind", "threshold", "params", "scope_kind")):
            return cleaned
        scope: dict[str, Any] = {}
        if scope_kind != "all" and scope_name:
            scope[str(scope_kind)] = scope_name
        try:
            cleaned["for_seconds"] = read_seconds(cleaned.get("for_duration"), "for", 0)
            cleaned["repeat_seconds"] = read_seconds(
                cleaned.get("repeat"), "repeat", DEFAULT_REPEAT_S
            )
            self.compiled = build_rule(
                cleaned["kind"],
                cleaned.get("threshold"),
                scope,
                cleaned["params"],
                cleaned["for_seconds"],
            )
        except (RuleError, ParameterError) as exc:
            raise forms.ValidationError(str(exc)) from None
        cleaned["scope"] = scope
        return cleaned

    def save_rule(self, user: Any) -> AlertRule:
        rule: AlertRule = self.save(commit=False)
        rule.scope = self.cleaned_data["scope"]
        rule.for_seconds = self.cleaned_data["for_seconds"]
        rule.repeat_seconds = self.cleaned_data["repeat_seconds"]
        if rule.pk is None and user.is_authenticated:
            rule.created_by = user
        with transaction.atomic():
            rule.save()
            self.save_m2m()
        return rule


class SilenceForm(forms.Form):
    """A silence of one of the user's rules; of every rule only for all-teams users."""

    rule = forms.ModelChoiceField(
        queryset=AlertRule.objects.none(), required=False, empty_label="every rule"
    )
    subject = forms.CharField(
        required=False, max_length=300, help_text="a subject or a pattern, e.g. gpu-*; empty: all"
    )
    duration = forms.CharField(initial="1h", max_length=20, help_text="e.g. 30m, 2h, 1d")
    comment = forms.CharField(required=False, max_length=500)

    def __init__(self, *args: Any, seen: Seen, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        rule = self.fields["rule"]
        rule.queryset = ownership.visible_rules(seen).order_by("name")  # type: ignore[attr-defined]
        rule.required = not seen.everything  # a silence of every rule is all-teams only
        if rule.required:
            rule.empty_label = None  # type: ignore[attr-defined]

    def clean_duration(self) -> timedelta:
        try:
            return parse_duration(self.cleaned_data["duration"], name="duration")
        except ParameterError as exc:
            raise forms.ValidationError(str(exc)) from None


# --- the Alerts page --------------------------------------------------------------------


def can_edit(request: HttpRequest) -> bool:
    role = role_of(request)
    return role is not None and role.allows(Role.EDITOR)


def _alerts_context(request: HttpRequest, silence_form: SilenceForm) -> dict[str, Any]:
    now = timezone.now()
    seen = seen_of(request)
    alerts = [
        a
        for a in alert_states(seen=seen)
        if a.state in (AlertStateName.FIRING, AlertStateName.PENDING)
    ]
    alerts.sort(key=lambda a: a.state != AlertStateName.FIRING)  # firing first, then pending
    holding = list(
        Silence.objects.filter(starts_at__lte=now, ends_at__gt=now).select_related("rule")
    )
    mine = set(ownership.visible_silences(seen).values_list("pk", flat=True))
    silences = [s for s in holding if s.pk in mine]
    # (alert, whether a silence, maybe of every rule, holds its notifications back)
    active = [(a, engine.is_silenced(holding, a.rule_id, a.subject)) for a in alerts]
    evaluation = Evaluation.objects.first()
    rule_rows = (
        ownership.visible_rules(seen)
        .select_related("team")
        .prefetch_related("channels")
        .annotate(firing=Count("states", filter=Q(states__state=AlertStateName.FIRING)))
    )
    rule_list = list(rule_rows)
    channels = ownership.visible_channels(seen).select_related("team")
    # An evaluation covers every team's rules: others see its time, not its figures, and
    # only their own rules' errors.
    names = tuple(f"{r.name}: " for r in rule_list)
    errors = [e for e in (evaluation.errors if evaluation else []) if e.startswith(names)]
    return {
        "nav": "alerts",
        "active": active,
        "enabled_count": sum(r.enabled for r in rule_list),
        "firing_count": sum(a.state == AlertStateName.FIRING for a in alerts),
        "pending_count": sum(a.state == AlertStateName.PENDING for a in alerts),
        "channels": channels,
        "failing_channels": channels.filter(failing_since__isnull=False).count(),
        "silences": silences,
        "silence_form": silence_form,
        "history": recent_transitions(HISTORY_ROWS, seen=seen),
        "evaluation": evaluation,
        "evaluation_figures": seen.everything,
        "evaluation_errors": errors,
        "can_edit": can_edit(request),
        "evaluation_stale": evaluation is not None
        and evaluation.started_at < now - STALE_EVALUATION,
        "rules": [
            {
                "rule": r,
                "scope": scope_text(r.scope),
                "for": _seconds_text(r.for_seconds, "at once"),
                "repeat": _seconds_text(r.repeat_seconds, "never"),
            }
            for r in rule_list
        ],
    }


def _csv_tables(context: dict[str, Any], seen: Seen) -> Tables:
    """The page's tables, as its context lists them (history: the newest HISTORY_CSV_ROWS)."""

    def firing() -> list[list[Any]]:
        return [
            [a.rule, a.kind_label, a.subject, a.state, silenced, a.since, a.value, a.summary]
            for a, silenced in context["active"]
        ]

    def channels() -> list[list[Any]]:
        return [
            [
                c.name,
                c.team.name if c.team else None,
                c.get_kind_display(),
                c.target,
                c.enabled,
                c.failing_since,
                c.last_error or None,
            ]
            for c in context["channels"]
        ]

    def silences() -> list[list[Any]]:
        return [
            [s.rule.name if s.rule else None, s.subject or None, s.starts_at, s.ends_at, s.comment]
            for s in context["silences"]
        ]

    def history() -> list[list[Any]]:
        return [
            [t.at, t.rule, t.subject, t.from_state, t.to_state, t.summary, t.evaluation_started_at]
            for t in recent_transitions(HISTORY_CSV_ROWS, seen=seen)
        ]

    def rule_lines() -> list[list[Any]]:
        return [
            [
                r["rule"].name,
                r["rule"].team.name if r["rule"].team else None,
                r["rule"].get_kind_display(),
                r["scope"],
                r["rule"].threshold,
                r["rule"].for_seconds,
                r["rule"].repeat_seconds,
                ", ".join(c.name for c in r["rule"].channels.all()),
                r["rule"].firing,
                r["rule"].enabled,
            ]
            for r in context["rules"]
        ]

    return {
        "firing": CsvTable(
            ("rule", "kind", "subject", "state", "silenced", "since", "value", "summary"), firing
        ),
        "channels": CsvTable(
            ("channel", "team", "kind", "target", "enabled", "failing_since", "last_error"),
            channels,
        ),
        "silences": CsvTable(("rule", "subject", "starts_at", "ends_at", "comment"), silences),
        "history": CsvTable(
            ("at", "rule", "subject", "from_state", "to_state", "summary", "evaluated_at"),
            history,
        ),
        "rules": CsvTable(
            (
                "rule",
                "team",
                "kind",
                "scope",
                "threshold",
                "for_seconds",
                "repeat_seconds",
                "channels",
                "firing",
                "enabled",
            ),
            rule_lines,
        ),
    }


@login_required
def alerts_page(request: HttpRequest) -> HttpResponseBase:
    form = SilenceForm(seen=seen_of(request))
    context = _alerts_context(request, form)
    if wants_csv(request) is not None:
        return table_csv(request, "alerts", _csv_tables(context, seen_of(request)))
    return render(request, "alerts/alerts.html", context)


@login_required
@require_POST
def add_silence(request: HttpRequest) -> HttpResponse:
    form = SilenceForm(request.POST, seen=seen_of(request))
    if not form.is_valid():
        return render(request, "alerts/alerts.html", _alerts_context(request, form), status=422)
    Silence.objects.create(
        rule=form.cleaned_data["rule"],
        subject=form.cleaned_data["subject"],
        ends_at=timezone.now() + form.cleaned_data["duration"],
        comment=form.cleaned_data["comment"],
        created_by=request.user if request.user.is_authenticated else None,
    )
    return redirect(reverse("alerts") + "#silences")


@login_required
@require_POST
def end_silence(request: HttpRequest, silence_id: int) -> HttpResponse:
    now = timezone.now()
    active = ownership.visible_silences(seen_of(request)).filter(ends_at__gt=now)
    get_object_or_404(active, pk=silence_id)
    Silence.objects.filter(pk=silence_id).update(ends_at=now)
    return redirect(reverse("alerts") + "#silences")


@login_required
@require_POST
def set_rule_enabled(request: HttpRequest, rule_id: int) -> HttpResponse:
    rule = get_object_or_404(ownership.visible_rules(seen_of(request)), pk=rule_id)
    rule.enabled = request.POST.get("enabled") == "on"
    rule.save(update_fields=["enabled", "updated_at"])
    return redirect(reverse("alerts") + "#rules")


# --- the rule editor --------------------------------------------------------------------


def _preview(form: RuleForm) -> tuple[datetime, datetime, alert_preview.Preview]:
    """The compiled rule replayed over the preview range on its team's data."""
    assert form.compiled is not None
    start, end = _preview_range(form)
    seen = seen_for_team(form.cleaned_data.get("team"))
    return start, end, alert_preview.preview(form.compiled, start, end, seen=seen)


def _preview_range(form: RuleForm) -> tuple[datetime, datetime]:
    end = form.cleaned_data.get("end") or datetime.now(UTC).replace(microsecond=0)
    return end - PREVIEW, end


def _lasted(incident: Incident, end: datetime) -> str:
    """How long it fired, to the minute (at least 1m), counting one still firing to `end`."""
    fired = incident.fired_at
    lasted = ((incident.resolved_at or end) - fired).total_seconds() if fired else None
    return format_duration(round(lasted / 60) * 60 or 60) if lasted else ""


def _chart_query(request: HttpRequest, end: datetime) -> str:
    """The rule's fields as the chart URL carries them, so the chart replays the same rule
    over the same range as the table beside it."""
    keep = ("kind", "team", "threshold", "params", "scope_kind", "scope_name", "for_duration")
    return urlencode({**{k: request.POST.get(k, "") for k in keep}, "end": format_time(end) or ""})


@login_required
def rule_editor(request: HttpRequest, rule_id: int | None = None) -> HttpResponse:
    seen = seen_of(request)
    rules_seen = ownership.visible_rules(seen)
    rule = get_object_or_404(rules_seen, pk=rule_id) if rule_id is not None else None
    saved = {"name": rule.name, "kind": rule.get_kind_display()} if rule else None
    preview: dict[str, Any] | None = None
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "save")
        form = RuleForm(request.POST, instance=rule, seen=seen, previewing=action == "preview")
        valid = form.is_valid()
        if valid and action == "save":
            form.save_rule(request.user)
            return redirect("alerts")
        if valid and form.compiled is not None:
            start, end, found = _preview(form)
            preview = {
                "start": start,
                "end": end,
                "evaluations": found.evaluations,
                # (incident, how long it fired)
                "incidents": [(i, _lasted(i, end)) for i in found.incidents],
                "chart_src": reverse("alerts-preview-chart") + "?" + _chart_query(request, end),
            }
        else:
            status = 422
    else:
        initial = {"end": read_window(request.GET).end or ""}
        form = RuleForm(instance=rule, seen=seen, initial=initial)
    bound_kind = form["kind"].value()
    return render(
        request,
        "alerts/rule_editor.html",
        {
            "nav": "alerts",
            "form": form,
            "saved": saved,
            "preview": preview,
            "preview_hours": round(PREVIEW.total_seconds() / 3600),
            "kind_help": [
                {"kind": kind, "label": label, "help": KIND_HELP.get(kind, "")}
                for kind, label in RuleKind.choices
            ],
            "selected_kind": bound_kind,
            "scope_help": SCOPE_HELP,
            "can_edit": can_edit(request),
        },
        status=status,
    )


@login_required
def preview_chart(request: HttpRequest) -> HttpResponse:
    form = RuleForm(request.GET, seen=seen_of(request), previewing=True)
    if not form.is_valid() or form.compiled is None:
        errors = "; ".join(" ".join(str(m) for m in v) for v in form.errors.values())
        return HttpResponse(errors, status=422, content_type="text/plain; charset=utf-8")
    start, end, found = _preview(form)
    fig = alert_charts.preview_timeline_figure(found.incidents, start, end)
    return HttpResponse(charts.to_json(fig), content_type="application/json")
