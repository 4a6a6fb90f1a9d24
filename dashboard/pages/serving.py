"""The Serving pages: every instance at a glance, one instance in depth (KV usage, queue,
preemptions, prefix-cache hit rate, latency quantiles, throughput, KV capacity and the
last scrape error), and the chart JSON both load. Views only: they parse the request,
ask analytics/serving/ (queries, latency, capacity) and hand the answers to the figure
builders of analytics/serving/charts.py; no SQL and no figure construction here.

Every view reads as the request's user may (`seen_of(request)`): the tables and fleet
charts hold only visible instances, and an instance the user may not see is a 404, as an
unknown one (analytics.serving.instances.require_instance). Saving a model config is an
editor's change (the access middleware refuses a viewer's POST) and only for a model a
visible instance serves.

The overview's instance table is a CSV too (`?format=csv&table=instances`, the
convention of dashboard.tables), its raw figures rather than the page's text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from analytics import charts
from analytics.serving import charts as serving_charts
from analytics.serving import queries as serving
from analytics.serving.capacity import capacity_for
from analytics.serving.instances import (
    GaugesNow,
    latest_gauges_all,
    list_instances,
    recent_scrapes,
    require_instance,
)
from analytics.serving.latency import latency
from analytics.serving.models import ModelConfig, ScrapeTarget
from analytics.serving.signals import increase_by_label
from dashboard.pages.time_window import PageWindow, range_problem, read_window
from dashboard.tables import CsvTable, table_csv
from dashboard.templatetags.fleetscope_export import wants_csv
from lib.access import Seen, seen_of
from lib.errors import NotFoundError, ParameterError

QUANTILES = (0.5, 0.95, 0.99)


def chart_problem(exc: Exception) -> HttpResponse:
    """A chart's answer to a bad request: JSON with a one-line `detail`, as the API's."""
    status = 404 if isinstance(exc, NotFoundError) else 422
    return JsonResponse({"detail": str(exc)}, status=status)


def _window(instance: str | None, page: PageWindow, seen: Seen) -> serving.Window:
    return serving.make_window(instance, page.start, page.end, page.bucket_s, seen=seen)


def percent(value: float | None) -> str:
    """A fraction as the Serving pages print it (`n/a` when unknown)."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def latency_text(value: float | None) -> str:
    """Seconds as the Serving pages print a latency: ms under a second."""
    if value is None:
        return "n/a"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


# --- pages ------------------------------------------------------------------------------

INSTANCES_HEADER = (
    "instance",
    "up",
    "engine",
    "engines",
    "model",
    "kv_usage_now",
    "kv_usage_mean_1h",
    "prefix_hit_rate_1h",
    "preemptions_1h",
    "ttft_p95_1h_s",
    "running",
    "waiting",
    "last_scrape",
    "last_error",
    "last_error_at",
)


@login_required
def serving_overview(request: HttpRequest) -> HttpResponseBase:
    seen = seen_of(request)
    try:
        page = read_window(request)
        shown = _window(None, page, seen)
    except ParameterError as exc:
        return range_problem(request, exc, title="Serving", nav="serving")
    instances = list_instances(seen=seen)
    now = page.end or datetime.now(UTC)
    summary = serving.fleet_summary(now - timedelta(hours=1), now, seen) if instances else {}
    latest = latest_gauges_all(instances)
    targets = {t.name: t for t in ScrapeTarget.objects.all() if seen.sees_instance(t.name)}
    rows = []
    raw: list[tuple[object, ...]] = []
    for r in instances:
        s = summary.get(r.instance, serving.InstanceSummary())
        g = latest.get(r.instance, GaugesNow())
        raw.append(
            (
                r.instance,
                r.up,
                r.engine or "",
                r.engines,
                r.model or "",
                g.kv_usage,
                s.kv_usage_mean,
                s.hit_rate,
                int(s.preemptions),
                s.ttft_p95,
                g.running,
                g.waiting,
                r.last_scrape.isoformat(),
                r.last_error or "",
                r.last_error_at.isoformat() if r.last_error_at else "",
            )
        )
        rows.append(
            {
                **asdict(r),
                "url": reverse("serving-instance", args=[r.instance]),
                "kv_now": percent(g.kv_usage),
                "kv_mean": percent(s.kv_usage_mean),
                "hit_rate": percent(s.hit_rate),
                "preemptions": int(s.preemptions),
                "ttft_p95": latency_text(s.ttft_p95),
                "running": g.running,
                "waiting": g.waiting,
                "target": targets.get(r.instance),
            }
        )
    never_scraped = [
        t for name, t in targets.items() if name not in {r.instance for r in instances}
    ]
    if wants_csv(request) is not None:
        return table_csv(request, "serving", {"instances": CsvTable(INSTANCES_HEADER, lambda: raw)})
    charts_query = page.query()
    return render(
        request,
        "serving/overview.html",
        {
            "nav": "serving",
            "rows": rows,
            "never_scraped": never_scraped,
            "sees_everything": seen.everything,
            "range": page.context(shown=(shown.start, shown.end, shown.bucket_s)),
            "kv_src": reverse("serving-fleet-chart", args=["kv"]) + "?" + charts_query,
            "preemptions_src": reverse("serving-fleet-chart", args=["preemptions"])
            + "?"
            + charts_query,
        },
    )


class ModelConfigForm(forms.ModelForm):
    class Meta:
        model = ModelConfig
        fields = ["model", "num_layers", "num_kv_heads", "head_dim", "dtype_bytes"]
        widgets = {"model": forms.HiddenInput()}


@login_required
def serving_instance(request: HttpRequest, instance: str) -> HttpResponse:
    engine = request.GET.get("engine") or None
    keep = {"engine": engine} if engine else {}
    seen = seen_of(request)
    try:
        row = require_instance(instance, seen)
    except NotFoundError as exc:
        raise Http404(str(exc)) from None
    try:
        page = read_window(request)
        shown = _window(instance, page, seen)
    except ParameterError as exc:
        return range_problem(request, exc, title=instance, nav="serving", keep=keep)
    try:
        context_tokens = request.GET.get("context")
        context = float(context_tokens) if context_tokens else None
        capacity = capacity_for(instance, context, seen=seen)
    except ValueError as exc:  # a context length that is not a number
        return HttpResponse(str(exc), status=422, content_type="text/plain; charset=utf-8")
    config = ModelConfig.objects.filter(model=row.model).first() if row.model else None
    form = ModelConfigForm(
        instance=config,
        initial={"model": row.model, "num_layers": 32, "num_kv_heads": 8, "head_dim": 128},
    )
    query = page.query(instance=instance, engine=engine)
    chart_names = [
        ("kv", "KV-cache usage"),
        ("queue", "Running and waiting requests"),
        ("preemptions", "Preemptions per bucket"),
        ("prefix", "Prefix-cache hit rate"),
        ("ttft", "Time to first token (p50 / p95 / p99)"),
        ("itl", "Inter-token latency (p50 / p95 / p99)"),
        ("e2e", "End-to-end latency (p50 / p95 / p99)"),
        ("queue_phase", "Time waiting in the queue (p50 / p95 / p99)"),
        ("prefill", "Prefill time (p50 / p95 / p99)"),
        ("decode", "Decode time (p50 / p95 / p99)"),
        ("inference", "Inference time: prefill + decode (p50 / p95 / p99)"),
        ("tpot", "Time per output token, per request (p50 / p95 / p99)"),
        ("throughput", "Token throughput"),
        ("rejections", "Admission rejections by reason (vLLM 0.32+)"),
    ]
    charts_list = [
        {"title": title, "src": reverse("serving-chart", args=[name]) + "?" + query}
        for name, title in chart_names
    ]
    engines = [str(i) for i in range(row.engines or 1)]
    return render(
        request,
        "serving/instance.html",
        {
            "nav": "serving",
            "row": row,
            "instance": instance,
            "capacity": capacity,
            "kv_now": percent(capacity.kv_usage),
            "form": form if row.model else None,
            "config": config,
            "failures": [s for s in recent_scrapes(instance, 50) if not s.up][:10],
            "range": page.context(keep, shown=(shown.start, shown.end, shown.bucket_s)),
            "engines": engines if len(engines) > 1 else [],
            "engine": engine,
            "charts": charts_list,
        },
    )


@login_required
@require_POST
def save_model_config(request: HttpRequest) -> HttpResponse:
    model = request.POST.get("model", "")
    if not any(r.model == model for r in list_instances(seen=seen_of(request))):
        raise Http404(f"no instance serves model {model!r}")
    existing = ModelConfig.objects.filter(model=model).first()
    form = ModelConfigForm(request.POST, instance=existing)
    back = request.POST.get("next", "")
    if not form.is_valid():
        errors = "; ".join(f"{k}: {' '.join(str(m) for m in v)}" for k, v in form.errors.items())
        return HttpResponse(errors, status=422, content_type="text/plain; charset=utf-8")
    form.save()
    if back.startswith("/serving/"):
        return redirect(back)
    return redirect("serving")


# --- chart JSON -------------------------------------------------------------------------
# Each instance chart reads its answers and hands them to its builder in serving/charts.py.


def _latency(metric: str) -> Callable[[str, serving.Window, str | None], Any]:
    def build(instance: str, w: serving.Window, engine: str | None) -> Any:
        return serving_charts.latency_figure(
            {q: latency(metric, q, instance, w, engine).points for q in QUANTILES}
        )

    return build


def _kv(instance: str, w: serving.Window, engine: str | None) -> Any:
    mean = serving.kv_usage(instance, w, engine)
    engines = require_instance(instance, w.seen).engines or 1
    by_engine = {}
    if engine is None and engines > 1:  # the whole instance: each engine's line too
        by_engine = {str(e): serving.kv_usage(instance, w, str(e)) for e in range(engines)}
    return serving_charts.kv_figure(mean, by_engine)


def _queue(instance: str, w: serving.Window, engine: str | None) -> Any:
    return serving_charts.queue_figure(serving.queue(instance, w, engine))


def _preemptions(instance: str, w: serving.Window, engine: str | None) -> Any:
    return serving_charts.preemptions_figure(serving.preemptions(instance, w, engine).points)


def _prefix(instance: str, w: serving.Window, engine: str | None) -> Any:
    return serving_charts.prefix_cache_figure(serving.prefix_cache(instance, w, engine).points)


def _rejections(instance: str, w: serving.Window, engine: str | None) -> Any:
    by_reason = increase_by_label("admission_rejections", instance, w, engine)
    return serving_charts.rejections_figure(by_reason)


def _throughput(instance: str, w: serving.Window, engine: str | None) -> Any:
    return serving_charts.throughput_figure(serving.throughput(instance, w, engine))


INSTANCE_CHARTS: dict[str, Callable[[str, serving.Window, str | None], Any]] = {
    "kv": _kv,
    "queue": _queue,
    "preemptions": _preemptions,
    "prefix": _prefix,
    "ttft": _latency("ttft"),
    "itl": _latency("itl"),
    "e2e": _latency("e2e"),
    "queue_phase": _latency("queue"),
    "prefill": _latency("prefill"),
    "decode": _latency("decode"),
    "inference": _latency("inference"),
    "tpot": _latency("tpot"),
    "throughput": _throughput,
    "rejections": _rejections,
}


def _json(fig: Any) -> HttpResponse:
    return HttpResponse(charts.to_json(fig), content_type="application/json")


@login_required
def instance_chart(request: HttpRequest, name: str) -> HttpResponse:
    build = INSTANCE_CHARTS.get(name)
    if build is None:
        return chart_problem(NotFoundError(f"unknown chart {name!r}"))
    instance = request.GET.get("instance", "")
    seen = seen_of(request)
    try:
        require_instance(instance, seen)
        w = _window(instance, read_window(request), seen)
        return _json(build(instance, w, request.GET.get("engine") or None))
    except (NotFoundError, ParameterError) as exc:
        return chart_problem(exc)


@login_required
def fleet_chart(request: HttpRequest, name: str) -> HttpResponse:
    if name not in ("kv", "preemptions"):
        return chart_problem(NotFoundError(f"unknown chart {name!r}"))
    try:
        page = read_window(request)
        w = _window(None, page, seen_of(request))
    except ParameterError as exc:
        return chart_problem(exc)
    fleet = sorted(serving.fleet_series(w).items())
    if name == "kv":
        fig = serving_charts.fleet_kv_figure({i: data.kv_usage for i, data in fleet})
    else:
        fig = serving_charts.fleet_preemptions_figure({i: data.preemptions for i, data in fleet})
    return _json(fig)
