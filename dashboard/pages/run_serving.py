"""The run page's "Serving under this run" section: which scraped vLLM instances served the
run's models (for the section's text and its empty state), its charts' URLs, and the
chart JSON of their KV-cache usage and preemptions per bucket, whose buckets open the
run's events explorer on their window (dashboard.pages.run_links). The views themselves
are dashboard/pages/runs.py's, beside the run's other charts (one reading of the window).

Answers from analytics/runs/serving_load.py, figures from analytics/runs/serving_charts.py;
no SQL, no view. Reads as the request's Seen: an instance the reader does not see is
left out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
from django.urls import reverse

from analytics import charts
from analytics.runs.charts import Explore
from analytics.runs.details import ModelUse
from analytics.runs.serving_load import ServingLoad, model_names, serving_instances, serving_load
from dashboard.pages import run_links
from dashboard.pages.run_window import RunWindow
from lib.access import Seen

Build = Callable[[ServingLoad, Explore], go.Figure]


def serving_context(
    run: str, window: RunWindow, models: list[ModelUse], seen: Seen
) -> dict[str, Any]:
    """The section's context: the run's named models (details.models' rows of the
    window), the instances (name, model) that served them, and the charts' URLs."""
    names = model_names(models)
    query = window.query()
    return {
        "serving_models": names,
        "serving_instances": sorted(serving_instances(names, seen).items()),
        "serving_kv_chart_url": f"{reverse('run-serving-kv-chart', args=[run])}?{query}",
        "serving_preemptions_chart_url": (
            f"{reverse('run-serving-preemptions-chart', args=[run])}?{query}"
        ),
    }


def serving_chart(run: str, window: RunWindow, seen: Seen, build: Build) -> str:
    """One of the section's figures as JSON, its buckets linked to the run's explorer."""
    load = serving_load(run, window.bucket_seconds, window.time_range, seen=seen)
    return charts.to_json(build(load, run_links.explore_of(run)))
