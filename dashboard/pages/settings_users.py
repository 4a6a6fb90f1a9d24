"""Settings > Users (admins only): the list with each user's role, teams, all-teams flag,
whether active and their last login (`?format=csv&table=users`: the list, never a
password hash); creating a user (the password checked by Django's
AUTH_PASSWORD_VALIDATORS, each reason shown) and editing a user's role, teams, all-teams
flag and whether active. No change may leave Fleetscope without an active admin.

Views and forms only: a user's role and teams are analytics.access.models.Access, read
back through analytics.access.visibility.role_for_user like everywhere else.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import AbstractUser
from django.db import transaction
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from analytics.access.models import Access
from analytics.access.visibility import role_for_user, sees_all_teams
from analytics.costs.models import Team
from dashboard.pages.settings import admin_required, settings_context
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Role

ROLE_CHOICES = [
    (Role.VIEWER.value, "viewer: reads"),
    (Role.EDITOR.value, "editor: also changes rules, channels, silences, targets, prices"),
    (Role.ADMIN.value, "admin: also users, teams and tokens; sees every team"),
]


class AccessFields(forms.Form):
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial=Role.VIEWER.value)
    teams = forms.ModelMultipleChoiceField(
        queryset=Team.objects.order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="the user sees these teams' runs, instances, costs, rules and channels",
    )
    all_teams = forms.BooleanField(
        label="All teams", required=False, help_text="sees every team's data (admins always do)"
    )


class UserCreateForm(AccessFields):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(label="E-mail", required=False)
    password = forms.CharField(widget=forms.PasswordInput, strip=False)

    field_order = ["username", "email", "password", "role", "teams", "all_teams"]

    def clean_username(self) -> str:
        name: str = self.cleaned_data["username"].strip()
        if get_user_model().objects.filter(username__iexact=name).exists():
            raise forms.ValidationError(f"a user named {name} already exists")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "password" in data:
            candidate = get_user_model()(
                username=data.get("username", ""), email=data.get("email", "")
            )
            try:
                password_validation.validate_password(data["password"], candidate)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class UserEditForm(AccessFields):
    email = forms.EmailField(label="E-mail", required=False)
    is_active = forms.BooleanField(
        label="Active", required=False, help_text="an inactive user cannot sign in"
    )

    field_order = ["email", "role", "teams", "all_teams", "is_active"]

    def __init__(self, *args: Any, subject: AbstractUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subject = subject

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        stays_admin = data.get("role") == Role.ADMIN.value or self.subject.is_superuser
        if (
            _is_admin(self.subject)
            and (not stays_admin or not data.get("is_active"))
            and active_admins().count() <= 1
        ):
            raise forms.ValidationError(
                f"{self.subject.get_username()} is the last active admin: make another admin first"
            )
        return data


def _is_admin(user: Any) -> bool:
    return role_for_user(user) is Role.ADMIN


def active_admins() -> Any:
    """The active users with the admin role (superusers included)."""
    from django.db.models import Q

    return get_user_model().objects.filter(
        Q(is_superuser=True) | Q(access__role=Role.ADMIN.value), is_active=True
    )


def _access_row(user: Any) -> dict[str, Any]:
    access = Access.objects.filter(user=user).prefetch_related("teams").first()
    teams = sorted(t.name for t in access.teams.all()) if access is not None else []
    return {
        "user": user,
        "role": role_for_user(user) or (Role(access.role) if access else Role.VIEWER),
        "teams": teams,
        "all_teams": sees_all_teams(user) if user.is_active else bool(access and access.all_teams),
    }


def _save_access(user: Any, data: dict[str, Any]) -> None:
    access, _ = Access.objects.get_or_create(user=user)
    if access.role != data["role"] or access.all_teams != bool(data.get("all_teams")):
        access.role = data["role"]
        access.all_teams = bool(data.get("all_teams"))
        access.save()
    wanted = set(data.get("teams") or [])
    if set(access.teams.all()) != wanted:
        access.teams.set(wanted)


USER_HEADER = (
    "username",
    "email",
    "role",
    "teams",
    "all_teams",
    "active",
    "superuser",
    "last_login",
)


def _users_csv(request: HttpRequest) -> StreamingHttpResponse:
    """The list as the page shows it (teams comma-separated)."""

    def rows() -> list[list[Any]]:
        listed = [_access_row(u) for u in get_user_model().objects.order_by("username")]
        return [
            [
                r["user"].get_username(),
                r["user"].email,
                r["role"],
                ", ".join(r["teams"]),
                r["all_teams"],
                r["user"].is_active,
                r["user"].is_superuser,
                r["user"].last_login,
            ]
            for r in listed
        ]

    return table_csv(request, "settings", {"users": CsvTable(USER_HEADER, rows)})


@admin_required
def users_page(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """GET: the list and an empty form (`?format=csv&table=users`: the list). POST:
    create a user."""
    if request.method == "GET" and wants_csv(request) is not None:
        return _users_csv(request)
    form = UserCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with transaction.atomic():
            user = get_user_model().objects.create_user(
                data["username"], data.get("email", ""), data["password"]
            )
            _save_access(user, data)
        return redirect("settings-users")
    users = get_user_model().objects.order_by("username")
    return render(
        request,
        "settings/users.html",
        settings_context(
            request,
            "settings-users",
            form=form,
            rows=[_access_row(u) for u in users],
            password_rules=password_validation.password_validators_help_texts(),
        ),
        status=422 if form.is_bound else 200,
    )


@admin_required
def user_edit(request: HttpRequest, user_id: int) -> HttpResponse:
    subject = get_object_or_404(get_user_model(), pk=user_id)
    access = Access.objects.filter(user=subject).first()
    initial = {
        "email": subject.email,
        "role": access.role if access else Role.VIEWER.value,
        "teams": list(access.teams.all()) if access else [],
        "all_teams": access.all_teams if access else False,
        "is_active": subject.is_active,
    }
    form = UserEditForm(request.POST or None, initial=initial, subject=subject)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with transaction.atomic():
            if subject.email != data.get("email", "") or subject.is_active != data["is_active"]:
                subject.email = data.get("email", "")
                subject.is_active = data["is_active"]
                subject.save(update_fields=["email", "is_active"])
            _save_access(subject, data)
        return redirect("settings-users")
    return render(
        request,
        "settings/user_edit.html",
        settings_context(request, "settings-users", form=form, subject=subject),
        status=422 if form.is_bound else 200,
    )
