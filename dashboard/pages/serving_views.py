"""The Serving views after vLLM's own dashboard set, and beyond it: the fleet (an instance
table per engine and the load balance across instances), the KV cache (usage, local,
external and multimodal cache hit rates, KV block ages), speculative decoding, request
length heatmaps and SLO attainment. Each view filters by instance and by model (vLLM's
model_name) and answers only for instances the user sees (lib.access.Seen): a user who
does not see every team picks one of their instances, never the whole fleet's sums.

Views only: they parse the request, ask analytics/serving/ and hand the answers to the
figure builders of analytics/serving/view_charts.py; no SQL and no figure construction.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics import charts
from analytics.serving import queries as serving
from analytics.serving import view_charts
from analytics.serving.charts import time_series_figure
from analytics.serving.fleet import FleetRow, fleet_table
from analytics.serving.instances import Instance, list_instances
from analytics.serving.signals import cache_hit_rates, histogram_series
from analytics.serving.slo import slo_attainment
from analytics.serving.spec_decode import spec_decode
from dashboard.pages.serving import chart_problem, latency_text, percent
from dashboard.pages.time_window import PageWindow, range_problem, read_window
from lib.access import Seen, seen_of
from lib.errors import NotFoundError, ParameterError

# The views, in the order of their tabs: (url name, tab label).
VIEWS = (
    ("serving-fleet", "Fleet"),
    ("serving-kv-cache", "KV cache"),
    ("serving-spec-decode", "Speculative decoding"),
    ("serving-lengths", "Request lengths"),
    ("serving-slo", "SLO attainment"),
)
DEFAULT_TTFT_TARGET_S = 0.5
DEFAULT_TPOT_TARGET_S = 0.05
DEFAULT_E2E_TARGET_S = 10.0
SLO_METRICS = (("ttft", "TTFT"), ("tpot", "time per output token"), ("e2e", "end-to-end"))


@dataclass(frozen=True)
class Filters:
    """What a view shows: one instance (or, for a user who sees everything, the fleet),
    one model or all, and the window."""

    instance: str | None
    model: str | None
    page: PageWindow
    instances: list[Instance]  # the instances the user may pick
    seen: Seen

    def keep(self) -> dict[str, str]:
        return {k: v for k, v in (("instance", self.instance), ("model", self.model)) if v}


def _visible(request: HttpRequest) -> list[Instance]:
    return list_instances(seen=seen_of(request))


def _filters(request: HttpRequest) -> Filters:
    """NotFoundError for an instance the user does not see (as for one never scraped)."""
    instances = _visible(request)
    names = {i.instance for i in instances}
    instance = request.GET.get("instance") or None
    if instance is not None and instance not in names:
        raise NotFoundError(f"unknown instance {instance!r}")
    if instance is None and not seen_of(request).everything and instances:
        instance = instances[0].instance  # the fleet's sums would count other teams'
    model = request.GET.get("model") or None
    return Filters(instance, model, read_window(request), instances, seen_of(request))


def _window(f: Filters) -> serving.Window:
    return serving.make_window(f.instance, f.page.start, f.page.end, f.page.bucket_s, seen=f.seen)


def _context(request: HttpRequest, f: Filters, view: str, **extra: Any) -> dict[str, Any]:
    w = _window(f)
    models = sorted({i.model for i in f.instances if i.model})
    query = f.page.query(**f.keep())
    return {
        "nav": "serving",
        "view": view,
        "tabs": [
            {"url": reverse(name) + "?" + query, "label": label, "active": name == view}
            for name, label in VIEWS
        ],
        "filters": f,
        "all_allowed": seen_of(request).everything,
        "models": models,
        "range": f.page.context(f.keep(), shown=(w.start, w.end, w.bucket_s)),
        **extra,
    }


def _chart(name: str, f: Filters, **params: str) -> str:
    return reverse("serving-view-chart", args=[name]) + "?" + f.page.query(**f.keep(), **params)


def _view(
    view: str, template: str, build: Callable[[HttpRequest, Filters], dict[str, Any]]
) -> Callable[[HttpRequest], HttpResponse]:
    @login_required
    def page(request: HttpRequest) -> HttpResponse:
        try:
            f = _filters(request)
            context = _context(request, f, view, **build(request, f))
        except NotFoundError as exc:
            raise Http404(str(exc)) from None
        except ParameterError as exc:
            title = dict(VIEWS)[view]
            return range_problem(request, exc, title=title, nav="serving")
        return render(request, template, context)

    page.__name__ = view.replace("-", "_")
    return page


def _fleet_rows(f: Filters) -> list[FleetRow]:
    shown = [i for i in f.instances if f.instance in (None, i.instance)]
    if f.model:
        shown = [i for i in shown if i.model == f.model]
    return fleet_table(shown, _window(f), f.model) if shown else []


def _fleet(request: HttpRequest, f: Filters) -> dict[str, Any]:
    rows = _fleet_rows(f)
    return {
        "rows": [
            {
                "row": r,
                "url": reverse("serving-instance", args=[r.instance]),
                "kv": percent(r.kv_usage),
                "hit_rate": percent(r.prefix_hit_rate),
                "ttft_p95": latency_text(r.ttft_p95_seconds),
                "acceptance": percent(r.spec_acceptance_rate),
                "waiting_reasons": sorted(r.waiting_by_reason.items()),
                "rejection_reasons": sorted(r.admission_rejections_by_reason.items()),
            }
            for r in rows
        ],
        "balance_src": _chart("balance", f),
    }


def _kv_cache(request: HttpRequest, f: Filters) -> dict[str, Any]:
    rates = cache_hit_rates(f.instance, _window(f), model=f.model)
    return {
        "caches": [
            {
                "name": name,
                "hits": rate.hits,
                "queries": rate.queries,
                "rate": percent(rate.hit_rate),
            }
            for name, rate in rates.items()
        ],
        "charts": [
            ("KV-cache usage (mean over engines)", _chart("kv", f)),
            ("Cache hit rates", _chart("caches", f)),
            ("KV block lifetime (seconds)", _chart("kv_block_lifetime", f)),
            ("KV block idle before eviction (seconds)", _chart("kv_block_idle_before_evict", f)),
            ("KV block reuse gap (seconds)", _chart("kv_block_reuse_gap", f)),
        ],
    }


def _spec_decode(request: HttpRequest, f: Filters) -> dict[str, Any]:
    answer = spec_decode(f.instance, _window(f), model=f.model)
    o = answer.overall
    return {
        "overall": o,
        "acceptance": percent(o.acceptance_rate),
        "length": "n/a" if o.mean_acceptance_length is None else f"{o.mean_acceptance_length:.2f}",
        "charts": [
            ("Acceptance rate and mean acceptance length", _chart("spec", f)),
            ("Acceptance by draft position", _chart("positions", f)),
        ],
    }


def _lengths(request: HttpRequest, f: Filters) -> dict[str, Any]:
    return {
        "charts": [
            ("Prompt length (tokens) per request", _chart("request_prompt_tokens", f)),
            ("Generation length (tokens) per request", _chart("request_generation_tokens", f)),
            ("Requested max_tokens", _chart("request_params_max_tokens", f)),
            ("Tokens per engine step", _chart("iteration_tokens", f)),
        ]
    }


def _target(request: HttpRequest, name: str, default: float) -> float:
    raw = request.GET.get(name) or str(default)
    try:
        value = float(raw)
    except ValueError:
        raise ParameterError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"{name} must be a positive number of seconds")
    return value


def _slo_targets(request: HttpRequest) -> dict[str, float]:
    return {
        "ttft": _target(request, "ttft_target", DEFAULT_TTFT_TARGET_S),
        "tpot": _target(request, "tpot_target", DEFAULT_TPOT_TARGET_S),
        "e2e": _target(request, "e2e_target", DEFAULT_E2E_TARGET_S),
    }


def _slo(request: HttpRequest, f: Filters) -> dict[str, Any]:
    targets = _slo_targets(request)
    w = _window(f)
    rows = []
    for metric, label in SLO_METRICS:
        answer = slo_attainment(metric, targets[metric], f.instance, w, model=f.model)
        rows.append(
            {
                "metric": metric,
                "label": label,
                "target": targets[metric],
                "attained": answer.overall.attained,
                "total": answer.overall.total,
                "ratio": percent(answer.overall.ratio),
                "exact": answer.target_is_bucket_bound,
                "note": answer.note,
            }
        )
    params = {f"{m}_target": f"{targets[m]:g}" for m, _ in SLO_METRICS}
    return {
        "slo_rows": rows,
        "targets": params,
        "slo_src": _chart("slo", f, **params),
    }


fleet_view = _view("serving-fleet", "serving/views/fleet.html", _fleet)
kv_cache_view = _view("serving-kv-cache", "serving/views/kv_cache.html", _kv_cache)
spec_decode_view = _view("serving-spec-decode", "serving/views/charts.html", _spec_decode)
lengths_view = _view("serving-lengths", "serving/views/charts.html", _lengths)
slo_view = _view("serving-slo", "serving/views/slo.html", _slo)


# --- chart JSON -------------------------------------------------------------------------


def _heatmap(metric: str, unit: str) -> Callable[[HttpRequest, Filters], Any]:
    def build(request: HttpRequest, f: Filters) -> Any:
        return view_charts.heatmap_figure(
            histogram_series(metric, f.instance, _window(f), model=f.model), unit
        )

    return build


def _slo_chart(request: HttpRequest, f: Filters) -> Any:
    targets = _slo_targets(request)
    w = _window(f)
    return view_charts.slo_figure(
        {
            f"{label} ≤ {targets[m]:g} s": slo_attainment(
                m, targets[m], f.instance, w, model=f.model
            ).points
            for m, label in SLO_METRICS
        }
    )


CHARTS: dict[str, Callable[[HttpRequest, Filters], Any]] = {
    "balance": lambda r, f: view_charts.load_balance_figure(_fleet_rows(f)),
    "kv": lambda r, f: time_series_figure(
        {"KV usage": [(p.t, p.usage) for p in serving.kv_usage(f.instance, _window(f))]},
        y_title="of KV blocks",
        y_format=".0%",
        y_range=(0, 1),
    ),
    "caches": lambda r, f: view_charts.cache_rates_figure(
        cache_hit_rates(f.instance, _window(f), model=f.model)
    ),
    "spec": lambda r, f: view_charts.spec_decode_figure(
        spec_decode(f.instance, _window(f), model=f.model).points
    ),
    "positions": lambda r, f: view_charts.by_position_figure(
        spec_decode(f.instance, _window(f), model=f.model).by_position
    ),
    "slo": _slo_chart,
    "kv_block_lifetime": _heatmap("kv_block_lifetime", "seconds"),
    "kv_block_idle_before_evict": _heatmap("kv_block_idle_before_evict", "seconds"),
    "kv_block_reuse_gap": _heatmap("kv_block_reuse_gap", "seconds"),
    "request_prompt_tokens": _heatmap("request_prompt_tokens", "tokens"),
    "request_generation_tokens": _heatmap("request_generation_tokens", "tokens"),
    "request_params_max_tokens": _heatmap("request_params_max_tokens", "tokens"),
    "iteration_tokens": _heatmap("iteration_tokens", "tokens"),
}


@login_required
def view_chart(request: HttpRequest, name: str) -> HttpResponse:
    build = CHARTS.get(name)
    try:
        if build is None:
            raise NotFoundError(f"unknown chart {name!r}")
        fig = build(request, _filters(request))
    except (NotFoundError, ParameterError) as exc:
        return chart_problem(exc)
    return HttpResponse(charts.to_json(fig), content_type="application/json")
