"""The Settings area: its index, the section list by role, the admin-only guard (a 403
page for editors and viewers), and the API tokens page, where every user creates, lists
and revokes their own tokens (admins see and revoke everyone's).

Views and forms only: tokens are made by dashboard.models.ApiToken.issue, and the raw
value is put in the one response that follows its creation, never stored, logged nor
shown again (the list's CSV, `?format=csv&table=tokens`, has the prefix, never a hash). Users, teams and the audit log are settings_users, settings_teams and
settings_audit. Who may POST at all is dashboard.access's decision.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from functools import wraps
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from dashboard.models import ApiToken
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Role, Scope, role_of

View = Callable[..., HttpResponse | StreamingHttpResponse]
MAX_DAYS = 36500  # a hundred years: past that, "never" says it better
# (url name, label, role needed); the sub-navigation shows what the user's role reaches.
SECTIONS = (
    ("settings-tokens", "API tokens", Role.VIEWER),
    ("settings-users", "Users", Role.ADMIN),
    ("settings-teams", "Teams", Role.ADMIN),
    ("settings-audit", "Audit log", Role.ADMIN),
)
# The scopes a role may give its tokens: a token never does more than its user may, so a
# viewer's only useful token reads.
SCOPES_FOR_ROLE = {
    Role.VIEWER: (Scope.READ,),
    Role.EDITOR: (Scope.INGEST, Scope.READ, Scope.ADMIN),
    Role.ADMIN: (Scope.INGEST, Scope.READ, Scope.ADMIN),
}
SCOPE_HELP = {
    Scope.INGEST: "ingest: sends data (POST /api/ingest/…, OTLP's /v1/…); reads nothing",
    Scope.READ: "read: reads pages' data and the read API; changes nothing",
    Scope.ADMIN: "admin: everything your role allows",
}


def settings_context(request: HttpRequest, section: str, **context: Any) -> dict[str, Any]:
    role = role_of(request)
    sections = [
        {"name": name, "label": label, "current": name == section}
        for name, label, needed in SECTIONS
        if role is not None and role.allows(needed)
    ]
    return {"nav": "settings", "sections": sections, "section": section, **context}


def forbidden(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "settings/forbidden.html",
        settings_context(request, "", role=role_of(request)),
        status=403,
    )


def admin_required(view: View) -> View:
    """Signed in, then the admin role; others get the 403 page."""

    @login_required
    @wraps(view)
    def guarded(
        request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponse | StreamingHttpResponse:
        role = role_of(request)
        if role is None or not role.allows(Role.ADMIN):
            return forbidden(request)
        return view(request, *args, **kwargs)

    return guarded


@login_required
def settings_index(request: HttpRequest) -> HttpResponse:
    return redirect("settings-tokens")


# --- API tokens -------------------------------------------------------------------------


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="what it is for, e.g. laptop collector")
    scope = forms.ChoiceField(choices=[], widget=forms.RadioSelect)
    expires_days = forms.IntegerField(
        label="Expires in (days)", required=False, min_value=1, max_value=MAX_DAYS
    )
    expires_on = forms.DateField(
        label="or on (date, UTC)",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def __init__(self, *args: Any, role: Role, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        scopes = SCOPES_FOR_ROLE[role]
        field = self.fields["scope"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(s.value, SCOPE_HELP[s]) for s in scopes]
        field.initial = Scope.READ.value

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        days, on = data.get("expires_days"), data.get("expires_on")
        if days is not None and on is not None:
            raise forms.ValidationError("give the expiry in days or as a date, not both")
        if isinstance(on, date) and on <= timezone.now().date():
            self.add_error("expires_on", "the date must be after today (UTC)")
        return data

    def expires_at(self) -> datetime | None:
        """Days from now, or 00:00 UTC on the date; None for never."""
        days, on = self.cleaned_data.get("expires_days"), self.cleaned_data.get("expires_on")
        if days is not None:
            return timezone.now() + timedelta(days=days)
        if on is not None:
            return datetime.combine(on, time(0), tzinfo=UTC)
        return None


def token_state(token: ApiToken, now: datetime) -> str:
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at is not None and token.expires_at <= now:
        return "expired"
    return "live"


def _tokens(request: HttpRequest, everyone: bool) -> list[dict[str, Any]]:
    now = timezone.now()
    query = ApiToken.objects.select_related("user").order_by("-created_at", "-id")
    if not everyone:
        query = query.filter(user_id=int(request.user.pk or 0))
    return [{"token": t, "state": token_state(t, now)} for t in query]


def _tokens_page(
    request: HttpRequest, form: TokenForm, created: ApiToken | None, raw: str | None
) -> HttpResponse:
    role = role_of(request) or Role.VIEWER
    everyone = role.allows(Role.ADMIN)
    response = render(
        request,
        "settings/tokens.html",
        settings_context(
            request,
            "settings-tokens",
            form=form,
            tokens=_tokens(request, everyone),
            everyone=everyone,
            role=role,
            created=created,
            raw=raw,
        ),
    )
    # The page that shows a raw token must not be kept by the browser or a proxy.
    response["Cache-Control"] = "no-store"
    return response


TOKEN_HEADER = (
    "prefix",
    "name",
    "user",
    "scope",
    "created_at",
    "last_used_at",
    "expires_at",
    "state",
)


def _tokens_csv(request: HttpRequest, everyone: bool) -> StreamingHttpResponse:
    """The tokens the page lists (the user's own; an admin's: everyone's), as CSV: what
    the page shows, the prefix and never the hash."""

    def rows() -> list[list[Any]]:
        listed = [(row["token"], row["state"]) for row in _tokens(request, everyone)]
        return [
            [
                t.prefix,
                t.name,
                t.user.get_username(),
                t.scope,
                t.created_at,
                t.last_used_at,
                t.expires_at,
                state,
            ]
            for t, state in listed
        ]

    return table_csv(request, "settings", {"tokens": CsvTable(TOKEN_HEADER, rows)})


@login_required
def tokens_page(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """GET: the list and the form (`?format=csv&table=tokens`: the list). POST: create
    (the raw value is in this response only) or revoke (`revoke` = a token id: the
    user's own; an admin's: anyone's)."""
    role = role_of(request) or Role.VIEWER
    if request.method == "GET" and wants_csv(request) is not None:
        return _tokens_csv(request, role.allows(Role.ADMIN))
    if request.method == "POST" and "revoke" in request.POST:
        return _revoke(request, role)
    form = TokenForm(request.POST or None, role=role)
    if request.method == "POST" and form.is_valid():
        token, raw = ApiToken.issue(
            request.user,
            form.cleaned_data["name"],
            Scope(form.cleaned_data["scope"]),
            form.expires_at(),
        )
        return _tokens_page(request, TokenForm(role=role), token, raw)
    return _tokens_page(request, form, None, None)


def _revoke(request: HttpRequest, role: Role) -> HttpResponse:
    wanted = request.POST.get("revoke", "").strip()
    tokens = (
        ApiToken.objects.filter(pk=int(wanted)) if wanted.isdigit() else ApiToken.objects.none()
    )
    if not role.allows(Role.ADMIN):
        tokens = tokens.filter(user_id=int(request.user.pk or 0))
    token = tokens.first()
    if token is None:
        return render(
            request,
            "settings/problem.html",
            settings_context(request, "settings-tokens", problem="no such token"),
            status=404,
        )
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return redirect("settings-tokens")
