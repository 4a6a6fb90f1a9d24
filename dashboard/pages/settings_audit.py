"""Settings > Audit log (admins only): the changes analytics.access.audit recorded, newest
first, PAGE_ROWS at a time (keyset: `before` is the last entry shown), filtered by kind
and by user; each with who, when, the action, the object and its fields old -> new.

A view only: entries are written by analytics.access.audit and nowhere else.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import urlencode

from analytics.access.audit import SECRET, TRACKED
from analytics.access.models import AuditEntry
from dashboard.pages.settings import admin_required, settings_context
from dashboard.templatetags.fleetscope_time import DASH

PAGE_ROWS = 50
SYSTEM = "system"  # who an entry with no user and no command name is shown as


def _text(value: Any) -> str:
    """A recorded value as the page prints it: lists comma-separated, nothing as a dash."""
    if value is None or value == "" or value == []:
        return DASH
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _changes(entry: AuditEntry) -> list[dict[str, Any]]:
    rows = []
    for field, change in sorted((entry.changes or {}).items()):
        if change == SECRET or not isinstance(change, list) or len(change) != 2:
            rows.append({"field": field, "secret": True})
        else:
            old, new = _text(change[0]), _text(change[1])
            rows.append({"field": field, "old": old, "new": new, "secret": False})
    return rows


@admin_required
def audit_page(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind", "").strip()
    who = request.GET.get("user", "").strip()
    entries = AuditEntry.objects.order_by("-at", "-id")
    if kind:
        entries = entries.filter(kind=kind)
    if who:
        entries = entries.filter(username="" if who == SYSTEM else who)
    before = request.GET.get("before", "").strip()
    last = AuditEntry.objects.filter(pk=int(before)).first() if before.isdigit() else None
    if last is not None:
        entries = entries.filter(Q(at__lt=last.at) | Q(at=last.at, id__lt=last.id))
    page = list(entries.select_related("team")[: PAGE_ROWS + 1])
    more = len(page) > PAGE_ROWS
    page = page[:PAGE_ROWS]
    older = None
    if more:
        older = "?" + urlencode(
            {k: v for k, v in (("kind", kind), ("user", who), ("before", page[-1].pk)) if v}
        )
    names = AuditEntry.objects.order_by("username").values_list("username", flat=True).distinct()
    return render(
        request,
        "settings/audit.html",
        settings_context(
            request,
            "settings-audit",
            rows=[{"entry": e, "changes": _changes(e)} for e in page],
            kinds=sorted(t.kind for t in TRACKED.values()),
            users=sorted({n or SYSTEM for n in names}),
            kind=kind,
            who=who,
            older=older,
            first_page=last is None,
            system=SYSTEM,
        ),
    )
