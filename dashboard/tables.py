"""A page's tables by name, for `?format=csv&table=<name>` (the convention of
dashboard.templatetags.fleetscope_export's `{% csv_link %}` and `wants_csv`).

A page lists its tables as `CsvTable`s (the header and a function giving every row: the
whole table, never the page of it on screen) and answers a CSV request with
`table_csv`, which streams them through dashboard.export.csv_response (formula cells
escaped there). A name the page has no table for is a 404 naming the tables it has.
Owns no data: each page builds its rows from the same figures it renders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, StreamingHttpResponse

from dashboard.export import csv_response
from dashboard.templatetags.fleetscope_export import wants_csv


@dataclass(frozen=True)
class CsvTable:
    header: Sequence[str]
    rows: Callable[[], Iterable[Sequence[Any]]]  # called only when the table is asked for


Tables = Mapping[str, CsvTable]


def table_csv(request: HttpRequest, page: str, tables: Tables) -> StreamingHttpResponse:
    """The table `?table=` names, as a streamed CSV named fleetscope-<page>-<table>.csv."""
    name = wants_csv(request) or ""
    table = tables.get(name)
    if table is None:
        raise Http404(f"no table {name!r} on this page; its tables: {', '.join(sorted(tables))}")
    return csv_response(f"fleetscope-{page}-{name}.csv", table.header, table.rows())
