"""Settings > Audit log (admins only): the changes analytics.access.audit recorded, newest
first, PAGE_ROWS at a time (keyset: `before` is the last entry shown), filtered by kind
and by user; each with who, when, the action, the object and its fields old -> new.
`?format=csv&table=audit` streams every entry of the filter (not only the page), newest
first, a secret's change as "changed" as on the page, never its value.

A view only: entries are written by analytics.access.audit and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils.http import urlencode

from analytics.access.audit import SECRET, TRACKED
from analytics.access.models import AuditEntry
from dashboard.pages.settings import admin_required, settings_context
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
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


AUDIT_HEADER = ("at", "who", "action", "kind", "object", "team", "changes")


def _changes_text(entry: AuditEntry) -> str:
    """`field: old → new; other: changed` (a secret's values are never shown)."""
    return "; ".join(
        f"{c['field']}: changed" if c["secret"] else f"{c['field']}: {c['old']} → {c['new']}"
        for c in _changes(entry)
    )


def _audit_csv(request: HttpRequest, entries: QuerySet[AuditEntry]) -> StreamingHttpResponse:
    """Every entry of the filter, read a thousand at a time as the CSV streams."""

    def rows() -> Iterator[list[Any]]:
        for e in entries.select_related("team").iterator(chunk_size=1000):
            team = e.team.name if e.team else None
            object_ = e.object_repr
            yield [e.at, e.username or SYSTEM, e.action, e.kind, object_, team, _changes_text(e)]

    return table_csv(request, "settings", {"audit": CsvTable(AUDIT_HEADER, rows)})


@admin_required
def audit_page(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    kind = request.GET.get("kind", "").strip()
    who = request.GET.get("user", "").strip()
    entries = AuditEntry.objects.order_by("-at", "-id")
    if kind:
        entries = entries.filter(kind=kind)
    if who:
        entries = entries.filter(username="" if who == SYSTEM else who)
    if wants_csv(request) is not None:
        return _audit_csv(request, entries)
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
