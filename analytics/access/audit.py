"""The audit log, recorded in one place: Django's model signals for every setting a person
changes (alert rules, channels, silences, API tokens, prices, users and their access,
teams, scrape targets, report recipients), so a change through the API, a page, the
Django admin or a management command lands here alike.

Each entry says who (the request's user, set per request by dashboard.access through
`acting_for`; a command's name through `acting_as`; empty for the system), what (created,
changed, revoked, deleted), the kind and object, and the changed fields as
{field: [old, new]}. Secrets (a channel's secret, a token's hash, a password) are
recorded as "changed" without their values. Bookkeeping fields the system updates itself
(last login, last use, delivery failures) are not changes. This module must not decide
who may see what (analytics.access.visibility does) nor import the topics above it: models
are named by label, so the alerts app and the dashboard's ApiToken are reached lazily.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.db import models
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from analytics.access.models import AuditEntry

# What a secret field's change records instead of its values.
SECRET = "changed"  # noqa: S105 - a marker, not a password


@dataclass(frozen=True)
class Tracked:
    kind: str
    secret: frozenset[str] = frozenset()
    ignored: frozenset[str] = frozenset()


# Model label -> what to record of it.
TRACKED: dict[str, Tracked] = {
    "analytics.AlertRule": Tracked("alert rule", ignored=frozenset({"created_at", "updated_at"})),
    "analytics.Channel": Tracked(
        "channel",
        secret=frozenset({"secret"}),
        ignored=frozenset({"created_at", "failing_since", "last_error"}),
    ),
    "analytics.Silence": Tracked("silence"),
    "dashboard.ApiToken": Tracked(
        "api token",
        secret=frozenset({"token_hash"}),
        ignored=frozenset({"created_at", "last_used_at"}),
    ),
    "analytics.ModelPrice": Tracked("model price"),
    "analytics.GpuPrice": Tracked("gpu price"),
    "auth.User": Tracked(
        "user", secret=frozenset({"password"}), ignored=frozenset({"date_joined", "last_login"})
    ),
    "analytics.Access": Tracked("access"),
    "analytics.Team": Tracked("team"),
    "ingest.ScrapeTarget": Tracked(
        "scrape target", ignored=frozenset({"created_at", "last_attempt_at"})
    ),
    "analytics.ReportRecipient": Tracked("report recipient"),
}
# Many-to-many fields recorded as a change of the list: (model label, field, reverse name).
TRACKED_M2M = (
    ("analytics.Access", "teams", "members"),
    ("analytics.AlertRule", "channels", "rules"),
)


@dataclass(frozen=True)
class Actor:
    """Who is acting: a request (its user, read when the entry is written, so after the
    API's token authentication) or a name (a management command)."""

    request: Any = None
    name: str = ""


_actor: contextvars.ContextVar[Actor | None] = contextvars.ContextVar(
    "fleetscope_audit_actor", default=None
)


@contextmanager
def acting_for(request: Any) -> Iterator[None]:
    """Attribute the changes made inside to `request`'s user."""
    token = _actor.set(Actor(request=request))
    try:
        yield
    finally:
        _actor.reset(token)


@contextmanager
def acting_as(name: str) -> Iterator[None]:
    """Attribute the changes made inside to a command (`name`), not to the system."""
    token = _actor.set(Actor(name=name))
    try:
        yield
    finally:
        _actor.reset(token)


def _who() -> tuple[Any, str]:
    actor = _actor.get()
    if actor is None:
        return None, ""
    user = getattr(actor.request, "user", None) if actor.request is not None else None
    if user is not None and getattr(user, "is_authenticated", False):
        return user, user.get_username()
    return None, actor.name


def _plain(value: Any) -> Any:
    """A field value as JSON holds it (times in UTC as ISO 8601, decimals as text)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool | list | dict):
        return value
    return str(value)


def _fields(model: type[models.Model], tracked: Tracked) -> list[models.Field[Any, Any]]:
    return [
        f
        for f in model._meta.concrete_fields
        if not f.primary_key and f.name not in tracked.ignored
    ]


def _snapshot(instance: models.Model, tracked: Tracked) -> dict[str, Any]:
    return {f.name: getattr(instance, f.attname) for f in _fields(type(instance), tracked)}


def _shown(field: models.Field[Any, Any], value: Any) -> Any:
    """A foreign key as the object's name (its id when it is gone), others as JSON."""
    model = field.related_model
    if field.is_relation and value is not None and isinstance(model, type):
        related = model._default_manager.filter(pk=value).first()
        return str(related) if related is not None else value
    return _plain(value)


def _diff(
    model: type[models.Model], tracked: Tracked, old: dict[str, Any], new: dict[str, Any]
) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for f in _fields(model, tracked):
        before, after = old.get(f.name), new.get(f.name)
        if before == after or (f.name in tracked.secret and not before and not after):
            continue
        if f.name in tracked.secret:
            changes[f.name] = SECRET
        elif f.name in old or after not in (None, "", [], {}):
            changes[f.name] = [_shown(f, before), _shown(f, after)]
    return changes


def _team_id(instance: models.Model) -> int | None:
    if instance._meta.label == "analytics.Team":
        return int(instance.pk)
    return getattr(instance, "team_id", None)


def record(
    instance: models.Model, kind: str, action: str, changes: dict[str, Any], *, team: bool = True
) -> AuditEntry:
    user, username = _who()
    team_id = _team_id(instance) if team else None
    if (
        team_id is not None
        and not apps.get_model("analytics", "Team").objects.filter(pk=team_id).exists()
    ):
        team_id = None
    return AuditEntry.objects.create(
        user=user,
        username=username,
        action=action,
        kind=kind,
        object_id=str(instance.pk or ""),
        object_repr=str(instance)[:300],
        changes=changes,
        team_id=team_id,
    )


def _before_save(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    tracked = TRACKED[sender._meta.label]
    old = None
    if instance.pk is not None and not kwargs.get("raw"):
        saved = sender._default_manager.filter(pk=instance.pk).first()
        old = _snapshot(saved, tracked) if saved is not None else None
    instance._audit_old = old  # type: ignore[attr-defined]


def _after_save(
    sender: type[models.Model], instance: models.Model, created: bool, **kwargs: Any
) -> None:
    if kwargs.get("raw"):
        return
    tracked = TRACKED[sender._meta.label]
    old = getattr(instance, "_audit_old", None)
    changes = _diff(sender, tracked, old or {}, _snapshot(instance, tracked))
    if old is not None and not changes:
        return  # only bookkeeping fields moved
    action = "created" if created or old is None else "changed"
    if (
        old is not None
        and action == "changed"
        and list(changes) == ["revoked_at"]
        and old.get("revoked_at") is None
    ):
        action = "revoked"
    record(instance, tracked.kind, action, changes)
    instance._audit_old = _snapshot(instance, tracked)  # type: ignore[attr-defined]


def _after_delete(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    tracked = TRACKED[sender._meta.label]
    record(instance, tracked.kind, "deleted", {}, team=sender._meta.label != "analytics.Team")


def _names(manager: Any) -> list[str]:
    return sorted(str(o) for o in manager.all())


def _m2m_handler(field: str, reverse_name: str) -> Any:
    def handle(instance: models.Model, action: str, reverse: bool, **kwargs: Any) -> None:
        name = reverse_name if reverse else field
        if action in ("pre_add", "pre_remove", "pre_clear"):
            instance._audit_m2m = _names(getattr(instance, name))  # type: ignore[attr-defined]
            return
        if action not in ("post_add", "post_remove", "post_clear"):
            return
        before = getattr(instance, "_audit_m2m", None)
        after = _names(getattr(instance, name))
        if before is None or before == after:
            return
        kind = TRACKED[instance._meta.label].kind
        record(instance, kind, "changed", {name: [before, after]})

    return handle


_connected: list[Any] = []  # the m2m handlers, kept alive (signals hold weak references)


def connect() -> None:
    """Connect the handlers (analytics' AppConfig.ready calls this once)."""
    for label in TRACKED:
        model = apps.get_model(label)
        uid = f"audit:{label}"
        pre_save.connect(_before_save, sender=model, dispatch_uid=uid)
        post_save.connect(_after_save, sender=model, dispatch_uid=uid)
        post_delete.connect(_after_delete, sender=model, dispatch_uid=uid)
    for label, field, reverse_name in TRACKED_M2M:
        through = getattr(apps.get_model(label), field).through
        handler = _m2m_handler(field, reverse_name)
        _connected.append(handler)
        m2m_changed.connect(handler, sender=through, dispatch_uid=f"audit:{label}.{field}")
