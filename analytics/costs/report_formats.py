"""The daily cost report as JSON, CSV and HTML (the page, the e-mail body, the download).

Owns formatting only: takes the DailyReport analytics.costs.report builds (the JSON is
its fields in their order, nested rows included). Charts in the HTML are tables with bar
widths (no images to render or to be blocked by mail clients).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import orjson
from django.template.loader import render_to_string

from analytics.costs.report import DailyReport, TrendPoint

FORMATS = ("html", "csv", "json")
TOP_PEOPLE = 10  # the HTML's people section (the JSON and CSV list everyone)
CSV_COLUMNS = (
    "section",
    "name",
    "calls",
    "input_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "output_tokens",
    "usd",
    "note",
)


def to_json(report: DailyReport) -> str:
    return orjson.dumps(report, option=orjson.OPT_INDENT_2).decode()


def to_csv(report: DailyReport) -> str:
    """One table: a row per model, run, team, person and GPU target, then the totals."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for m in report.by_model:
        note = f"unpriced calls: {m.unpriced_calls}" if m.unpriced_calls else ""
        writer.writerow(
            [
                "model",
                m.model,
                m.calls,
                m.input_tokens,
                m.cached_input_tokens,
                m.cache_write_tokens,
                m.output_tokens,
                f"{m.usd:.6f}",
                note,
            ]
        )
    for r in report.by_run:
        note = f"unpriced calls: {r.unpriced_calls}" if r.unpriced_calls else ""
        writer.writerow(["run", r.run, r.calls, "", "", "", "", f"{r.usd:.6f}", note])
    for t in report.by_team:
        budget = t.daily_budget_usd
        note = f"daily budget {budget:.2f}" if budget is not None else ""
        writer.writerow(["team", t.team, "", "", "", "", "", f"{t.usd:.6f}", note])
    for person in report.by_person:
        note = f"team {person.team}" if person.team else ""
        if person.unpriced_calls:
            note = f"{note}; unpriced calls: {person.unpriced_calls}".lstrip("; ")
        usd = f"{person.usd:.6f}"
        writer.writerow(["person", person.person, person.calls, "", "", "", "", usd, note])
    for g in report.gpu:
        note = f"{g.gpus} GPUs x {g.usd_per_gpu_hour} USD/GPU-hour x {g.hours:g} h"
        writer.writerow(["gpu", g.target, "", "", "", "", g.generated_tokens, f"{g.usd:.6f}", note])
    for model in report.unpriced:
        writer.writerow(["unpriced", model, "", "", "", "", "", "", "no price in the table"])
    for problem in report.price_problems:
        writer.writerow(["price_problem", "", "", "", "", "", "", "", problem])
    writer.writerow(["total", "api", report.calls, "", "", "", "", f"{report.api_usd:.6f}", ""])
    writer.writerow(["total", "gpu", "", "", "", "", "", f"{report.gpu_usd:.6f}", ""])
    writer.writerow(["total", "all", "", "", "", "", "", f"{report.total_usd:.6f}", ""])
    writer.writerow(
        ["total", "cache_savings", "", "", "", "", "", f"{report.cache_savings_usd:.6f}", ""]
    )
    return out.getvalue()


def _bars(rows: Sequence[tuple[str, float]]) -> list[dict[str, Any]]:
    """(label, USD) pairs as bars, each with a width in percent of the largest."""
    top = max((usd for _, usd in rows), default=0.0)
    return [
        {"label": label, "usd": usd, "width": round(usd / top * 100, 1) if top else 0.0}
        for label, usd in rows
    ]


def html_context(report: DailyReport) -> dict[str, Any]:
    trend = [*report.trend, TrendPoint(report.date, report.api_usd)]
    return {
        "report": report,
        "model_bars": _bars([(m.model, m.usd) for m in report.by_model]),
        "run_bars": _bars([(r.run, r.usd) for r in report.top_runs]),
        "person_bars": _bars([(p.person, p.usd) for p in report.by_person[:TOP_PEOPLE]]),
        "trend_bars": _bars([(p.date, p.usd) for p in trend]),
        "teams": [
            {
                **asdict(t),
                "over": t.daily_budget_usd is not None and t.usd > t.daily_budget_usd,
                "used_pct": (
                    round(t.usd / t.daily_budget_usd * 100, 1) if t.daily_budget_usd else None
                ),
            }
            for t in report.by_team
        ],
    }


def to_html(report: DailyReport) -> str:
    """A whole HTML document with inline styles (e-mail clients drop style sheets)."""
    return render_to_string("costs/report_email.html", html_context(report))
