"""The Tokens page: the token tax per language under each encoding, traffic by language,
usage mismatches, and a paste box that shows how each encoding cuts a text; its three
tables as CSV (`?format=csv&table=tax|traffic|mismatches`, dashboard.tables).

Views only: answers come from analytics.tokens.report and analytics.tokens.queries,
figures from analytics.tokens.charts; no SQL here. Traffic and mismatches are of the
requests the user sees (`seen_of`); the tax of parallel texts is everyone's. The page
takes no time window: its `from` and `to` are the encodings of the saving (the API's
from_encoding, to_encoding).
"""

from __future__ import annotations

from dataclasses import asdict, astuple, fields
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import ensure_csrf_cookie

from analytics import charts
from analytics.tokens import charts as token_charts
from analytics.tokens import queries
from analytics.tokens import report as tokens_report
from analytics.tokens.language_names import language_name
from analytics.tokens.report import TrafficReport
from analytics.tokens.tax import LanguageTax
from analytics.tokens.vocabularies import configured_encodings
from dashboard.tables import CsvTable, Tables, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Seen, seen_of
from lib.errors import ParameterError

MISMATCH_ROWS = 20
# The mismatches' CSV: the newest this many (the page shows MISMATCH_ROWS).
MISMATCH_CSV_ROWS = 100_000
MISMATCH_HEADER = tuple(f.name for f in fields(queries.Mismatch))


def _bad_parameter(exc: ParameterError) -> HttpResponse:
    return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else round(100 * fraction, 1)


def _tax_tables(request: HttpRequest) -> tuple[str, str, dict[str, list[LanguageTax]]]:
    """(selected encoding, corpus, tax table per configured encoding)."""
    encodings = list(configured_encodings())
    selected = request.GET.get("encoding") or encodings[-1]
    tokens_report.check_encoding(selected)
    if selected not in encodings:
        encodings.append(selected)
    corpus = tokens_report.resolve_corpus(request.GET.get("corpus"))
    tables = {name: tokens_report.parallel_tax_table(name, corpus).languages for name in encodings}
    return selected, corpus.value, tables


def _tax_cell(encoding: str, row: LanguageTax | None) -> dict[str, Any]:
    """One encoding's tokens and tax of a language (None where it has no row)."""
    return {
        "encoding": encoding,
        "tokens": row.tokens if row else None,
        "tax": row.tax if row else None,
    }


def _tax_order(tables: dict[str, list[LanguageTax]], selected: str) -> list[str]:
    """Languages as the selected encoding's table sorts them: highest tax first."""
    return [row.language for row in tables[selected]]


def _csv_tables(
    encodings: list[str],
    tax_rows: list[dict[str, Any]],
    traffic: TrafficReport,
    seen: Seen,
) -> Tables:
    """The page's tables as CSV (`?format=csv&table=tax|traffic|mismatches`): the numbers
    unformatted (fractions, not percentages), each encoding's columns named after it."""
    tax_header = ["language", "name", "samples", "chars"]
    for name in encodings:
        tax_header += [f"{name}_tokens", f"{name}_tax"]
    traffic_header = [
        "language", "name", "requests", "share_of_requests", "chars", "reported_requests",
        "reported_tokens", "reported_share_of_tokens",
    ]  # fmt: skip
    for name in traffic.encodings:
        traffic_header += [f"{name}_tokens", f"{name}_share_of_tokens", f"{name}_tokens_per_char"]
    traffic_header += [f"saved_tokens_{traffic.from_encoding}_to_{traffic.to_encoding}"]

    def tax() -> list[list[Any]]:
        return [
            [r["language"], r["name"], r["samples"], r["chars"]]
            + [v for cell in r["cells"] for v in (cell["tokens"], cell["tax"])]
            for r in tax_rows
        ]

    def traffic_lines() -> list[list[Any]]:
        lines = []
        for row in traffic.languages:
            line: list[Any] = [
                row.language, language_name(row.language), row.requests, row.share_of_requests,
                row.chars, row.reported.requests, row.reported.tokens,
                row.reported.share_of_tokens,
            ]  # fmt: skip
            for name in traffic.encodings:
                cell = row.encodings.get(name)
                if cell is None:
                    line += [None, None, None]
                else:
                    line += [cell.tokens, cell.share_of_tokens, cell.tokens_per_char]
            lines.append([*line, row.saving.saved_tokens])
        return lines

    def mismatches() -> list[tuple[Any, ...]]:
        return [astuple(m) for m in queries.usage_mismatches(seen, MISMATCH_CSV_ROWS)]

    return {
        "tax": CsvTable(tax_header, tax),
        "traffic": CsvTable(traffic_header, traffic_lines),
        "mismatches": CsvTable(MISMATCH_HEADER, mismatches),
    }


@login_required
@ensure_csrf_cookie  # the paste box POSTs to the API: CSRF checks the cookie and the token
def tokens_page(request: HttpRequest) -> HttpResponseBase:
    seen = seen_of(request)
    try:
        selected, corpus, tables = _tax_tables(request)
        traffic = tokens_report.traffic_report(
            None,
            None,
            request.GET.get("from") or None,
            request.GET.get("to") or None,
            seen=seen,
        )
    except ParameterError as exc:
        return _bad_parameter(exc)
    encodings = list(tables)
    by_encoding = {name: {row.language: row for row in rows} for name, rows in tables.items()}
    tax_rows: list[dict[str, Any]] = []
    for code in _tax_order(tables, selected):
        row = by_encoding[selected][code]
        tax_rows.append(
            {
                "language": code,
                "name": language_name(code),
                "samples": row.samples,
                "chars": row.chars,
                "cells": [_tax_cell(name, by_encoding[name].get(code)) for name in encodings],
            }
        )
    traffic_rows = [
        {
            **asdict(row),
            "name": language_name(row.language),
            "request_pct": _percent(row.share_of_requests),
            "saved_pct": _percent(row.saving.saved_fraction),
            "reported_tokens": row.reported.tokens,
            "reported_pct": _percent(row.reported.share_of_tokens),
            "cells": [
                {**asdict(cell), "share_pct": _percent(cell.share_of_tokens)}
                if (cell := row.encodings.get(name))
                else None
                for name in traffic.encodings
            ],
        }
        for row in traffic.languages
    ]
    if wants_csv(request) is not None:
        return table_csv(request, "tokens", _csv_tables(encodings, tax_rows, traffic, seen))
    compared, mismatched = queries.mismatch_summary(seen)
    highest = next(
        (
            {"name": r["name"], "tax": r["cells"][encodings.index(selected)]["tax"]}
            for r in tax_rows
            if r["language"] != "en" and r["cells"][encodings.index(selected)]["tax"]
        ),
        None,
    )
    query = urlencode({"encoding": selected, "corpus": corpus})
    context = {
        "nav": "tokens",
        "encodings": encodings,
        "selected": selected,
        "corpus": corpus,
        "tax_rows": tax_rows,
        "highest": highest,
        "total_saved_pct": _percent(traffic.saving.saved_fraction),
        "traffic": traffic,
        "traffic_rows": traffic_rows,
        "compared": compared,
        "mismatched": mismatched,
        "mismatches": queries.usage_mismatches(seen, MISMATCH_ROWS),
        "sees_everything": seen.everything,
        "in_no_team": not seen.everything and not seen.team_ids,
        "tax_chart_url": reverse("tokens-tax-chart") + "?" + query,
        "traffic_chart_url": reverse("tokens-traffic-chart"),
        "count_url": reverse("api:tokens_count"),
    }
    return render(request, "tokens/tokens.html", context)


@login_required
def tax_chart(request: HttpRequest) -> HttpResponse:
    """The tax chart's figure JSON (what /api/tokens/tax answers, per encoding)."""
    try:
        selected, _corpus, tables = _tax_tables(request)
    except ParameterError as exc:
        return _bad_parameter(exc)
    fig = token_charts.build_tax_figure(tables, _tax_order(tables, selected))
    return HttpResponse(charts.to_json(fig), content_type="application/json")


@login_required
def traffic_chart(request: HttpRequest) -> HttpResponse:
    """The traffic chart's figure JSON (what /api/tokens/traffic answers)."""
    try:
        traffic = tokens_report.traffic_report(None, None, seen=seen_of(request))
    except ParameterError as exc:
        return _bad_parameter(exc)
    fig = token_charts.build_traffic_figure(traffic.languages, traffic.encodings)
    return HttpResponse(charts.to_json(fig), content_type="application/json")
