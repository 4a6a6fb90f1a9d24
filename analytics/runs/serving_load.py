"""The serving load under a run: the vLLM instances that served the models the run's
LLM calls used, and their KV-cache usage and preemptions per bucket over the run's
buckets (the commit and error charts' own: epoch-aligned, from the run's first bucket
to its last, or the asked range's).

An instance served a model when its latest successful scrape named it (vLLM's
`model_name` label, the served model name), compared exactly with the calls' `model`;
the reader sees only the instances lib.access.Seen allows (list_instances and the
series Window filter them), and a run they do not see is a 404 (queries.ensure_run).
No SQL of its own: the run's models are analytics.runs.details', the series
analytics.serving's. Must not build URLs or figures (analytics/runs/serving_charts.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from analytics.runs import details
from analytics.runs.queries import bucket_range, ensure_run
from analytics.runs.status import SYSTEM_VIEW
from analytics.serving.instances import list_instances
from analytics.serving.queries import KvPoint, PreemptionPoint, fleet_series
from analytics.serving.series import Window
from lib.access import Seen
from lib.window import TimeRange

# What details.models names a call without a model: no instance serves it.
UNKNOWN_MODEL = "(unknown)"


@dataclass(frozen=True)
class InstanceLoad:
    """One instance that served one of the run's models, over the run's buckets (a
    bucket without a sample is left out)."""

    instance: str
    model: str
    kv_usage: list[KvPoint] = field(default_factory=list)  # mean over every engine's samples
    preemptions: list[PreemptionPoint] = field(default_factory=list)


@dataclass(frozen=True)
class ServingLoad:
    run: str
    bucket_seconds: int
    start: datetime | None  # the first bucket's start (None: the run has no event in range)
    end: datetime | None  # the last bucket's end (exclusive)
    models: list[str]  # the models the run's calls in range used, most tokens first
    instances: list[InstanceLoad]  # by instance name


def run_models(run: str, window: TimeRange | None = None, *, seen: Seen = SYSTEM_VIEW) -> list[str]:
    """The models the run's LLM calls in the window used (most tokens first)."""
    return model_names(details.models(run, window, seen=seen))


def model_names(models: Iterable[details.ModelUse]) -> list[str]:
    """The named models of details.models' rows (a call naming none is left out)."""
    return [m.model for m in models if m.model != UNKNOWN_MODEL]


def serving_instances(models: Iterable[str], seen: Seen) -> dict[str, str]:
    """instance -> model, for every instance `seen` allows whose latest successful scrape
    served one of `models`."""
    wanted = set(models)
    return {
        row.instance: row.model
        for row in list_instances(seen=seen)
        if row.model is not None and row.model in wanted
    }


def serving_load(
    run: str, bucket_seconds: int, window: TimeRange = TimeRange(), *, seen: Seen = SYSTEM_VIEW
) -> ServingLoad:
    """KV usage and preemptions per bucket of each instance serving the run's models."""
    ensure_run(run, seen)
    models = run_models(run, window, seen=seen)
    served = serving_instances(models, seen)
    span = bucket_range(run, window, bucket_seconds)
    if span is None:
        return ServingLoad(run, bucket_seconds, None, None, models, [])
    start = datetime.fromtimestamp(span[0], tz=UTC)
    end = datetime.fromtimestamp(span[1] + bucket_seconds, tz=UTC)
    series = (
        fleet_series(Window(start, end, bucket_seconds, seen), only=frozenset(served))
        if served
        else {}
    )
    loads = []
    for instance, model in sorted(served.items()):
        found = series.get(instance)
        loads.append(
            InstanceLoad(
                instance,
                model,
                kv_usage=found.kv_usage if found else [],
                preemptions=found.preemptions if found else [],
            )
        )
    return ServingLoad(run, bucket_seconds, start, end, models, loads)
