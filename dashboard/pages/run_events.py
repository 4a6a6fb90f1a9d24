"""The events explorer page, `/runs/<run>/events/`: a run's events in a table, filtered by
the same parameters as `GET /api/runs/{run}/events` (kept in the URL), each row opening
its whole record; a page at a time by the keyset cursor; `format=csv|jsonl` downloads
every event the filter matches. From analytics/runs/events.py, the question the API asks.

View only: no SQL. Login required; a run the user does not see is the 404 of a run that
does not exist; a bad parameter is runs/bad_parameter.html's friendly 422.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponseBase
from django.shortcuts import render
from django.urls import reverse

from analytics.runs import events, events_export
from analytics.runs.events_api import event_record
from analytics.runs.events_filters import read_filter, read_format, read_limit
from dashboard.pages.run_links import page_link
from lib.access import seen_of
from lib.errors import NotFoundError, ParameterError
from warehouse.schema.events import EventKind

_TOKENS = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")


@dataclass(frozen=True)
class Row:
    """An event as a row of the table, with its whole record as the API spells it."""

    event: events.Event
    tokens: int | None
    record: str  # JSON, indented


def _row(run: str, e: events.Event) -> Row:
    counts = [e.fields[name] for name in _TOKENS if e.fields[name] is not None]
    record = orjson.dumps(event_record(run, e), option=orjson.OPT_INDENT_2).decode()
    return Row(e, sum(counts) if counts else None, record)


@login_required
def run_events(request: HttpRequest, run: str) -> HttpResponseBase:
    seen = seen_of(request)
    try:
        flt = read_filter(request.GET)
        fmt = read_format(request.GET.get("format"))
        limit = read_limit(request.GET.get("limit"))
        if fmt is not None:
            return events_export.export_response(run, flt, fmt, seen)
        cursor = request.GET.get("cursor") or None
        page = events.events_page(run, flt, seen, limit=limit, cursor=cursor)
    except NotFoundError:
        raise Http404(f"There is no run named {run!r}.") from None
    except ParameterError as exc:
        return render(request, "runs/bad_parameter.html", {"message": str(exc)}, status=422)
    kept: dict[str, Any] = flt.query()
    if request.GET.get("limit"):
        kept["limit"] = limit

    link = page_link(request, kept)

    context = {
        "nav": "runs",
        "run": run,
        "flt": flt,
        "form": {name: request.GET.get(name, "") for name in ("agent", "model", "tool", "q")},
        "start": kept.get("start", ""),
        "end": kept.get("end", ""),
        "kinds": [kind.value for kind in EventKind],
        "rows": [_row(run, e) for e in page.events],
        "run_url": reverse("run", kwargs={"run": run}),
        "replay_url": reverse("run-replay", kwargs={"run": run}),
        "api_url": reverse("api:run_events", kwargs={"run": run}),
        "api_query": urlencode(kept),
        "next_url": link(cursor=page.next) if page.next else None,
        "first_url": link() if cursor else None,
        "csv_url": f"{request.path}?{urlencode({**flt.query(), 'format': 'csv'})}",
        "jsonl_url": f"{request.path}?{urlencode({**flt.query(), 'format': 'jsonl'})}",
        "clear_url": request.path,
        "filtered": not flt.is_empty(),
    }
    return render(request, "runs/events.html", context)
