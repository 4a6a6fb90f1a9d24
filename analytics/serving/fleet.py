"""The fleet table: one row per instance and engine over a window, with its model, up,
KV usage, running and waiting requests (waiting by reason), preemptions, prefix-cache hit
rate, p95 TTFT, speculative-decoding acceptance, admission rejections (by reason), sleep
state and last scrape.

Takes the instances to show (the caller lists them with instances.list_instances, so
whatever decides which instances a request may see decides the table too) and reads
every figure in one statement through analytics/serving/series.py, in one bucket as wide
as the window (hour rollups for long windows), plus one short read for the sleep state
now. No SQL of its own.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from analytics.serving.histograms import finite_quantile
from analytics.serving.instances import Instance, data_range
from analytics.serving.queries import make_window
from analytics.serving.series import SeriesRow, Window, read_series
from lib.access import Seen
from lib.window import WindowQuery

GAUGES = ("kv_usage", "running", "waiting", "prefix_hit_rate")
COUNTERS = ("preemptions", "prefix_hits", "prefix_queries", "spec_draft_tokens")
COUNTERS_ACCEPTED = ("spec_accepted_tokens",)
# Admission rejections (vLLM 0.32+) always carry a `reason`, so only split rows exist;
# they have no `engine` label and are stored under engine "0" (the frontend's).
REJECTIONS = "admission_rejections"
SPLIT = ("waiting_by_reason", REJECTIONS)
# The order sleep states are reported in when several read 1: the deepest sleep wins.
SLEEP_STATES = ("discard_all", "weights_offloaded")
SLEEP_LOOKBACK = timedelta(minutes=5)


@dataclass(frozen=True)
class FleetRow:
    instance: str
    engine: str | None  # None for an instance without samples in the window
    model: str | None
    up: bool
    last_scrape: datetime
    kv_usage: float | None  # mean over the window, 0..1
    running: float | None  # mean over the window
    waiting: float | None
    waiting_by_reason: dict[str, float] = field(default_factory=dict)  # means by reason
    preemptions: float | None = None  # increase over the window
    prefix_hit_rate: float | None = None  # hits / queries (V0: the gauge's mean)
    ttft_p95_seconds: float | None = None
    spec_acceptance_rate: float | None = None  # accepted / draft tokens
    admission_rejections: float | None = None  # increase over the window; None: not exposed
    admission_rejections_by_reason: dict[str, float] = field(default_factory=dict)
    sleep_state: str | None = None  # "awake", "weights_offloaded", "discard_all"


@dataclass
class _Acc:
    gauges: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0, 0]))
    increases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    seen: set[str] = field(default_factory=set)
    ttft: dict[float, float] = field(default_factory=lambda: defaultdict(float))


def _one_bucket(w: Window) -> Window:
    """The window as one bucket of a multiple of its own bucket size (same tables read)."""
    span = (w.end - w.start).total_seconds()
    return Window(w.start, w.end, w.bucket_s * max(1, math.ceil(span / w.bucket_s)))


def _mean(acc: _Acc, metric: str) -> float | None:
    total, n = acc.gauges[metric] if metric in acc.gauges else (0.0, 0)
    return total / n if n else None


def _sleep_now(w: Window, shown: list[Instance]) -> dict[tuple[str, str], str]:
    """(instance, engine) -> its sleep state in the last minutes up to the newest scrape
    in the window."""
    if not shown:
        return {}
    end = min(w.end, max(i.last_scrape for i in shown) + timedelta(microseconds=1))
    start = max(w.start, end - SLEEP_LOOKBACK)
    start = start.replace(second=0, microsecond=0)
    rows = read_series((), None, None, Window(start, end, 60), split=("sleep_state",))
    latest: dict[tuple[str, str], tuple[datetime, dict[str, float]]] = {}
    for metric, metric_rows in rows.items():
        if not metric.startswith("sleep_state:"):
            continue
        state = metric.split(":", 1)[1]
        for r in metric_rows:
            key = (r.instance, str(r.engine))
            t, values = latest.get(key, (r.t, {}))
            if r.t > t:
                t, values = r.t, {}
            if r.t == t:
                values[state] = r.value_sum / r.samples if r.samples else 0.0
                latest[key] = (t, values)
    out = {}
    for key, (_, values) in latest.items():
        asleep = [s for s in SLEEP_STATES if values.get(s, 0.0) >= 0.5]
        if asleep:
            out[key] = asleep[0]
        elif "awake" in values:
            out[key] = "awake" if values["awake"] >= 0.5 else "asleep"
    return out


def _accumulate(rows: dict[str, list[SeriesRow]], keep: set[str]) -> dict[tuple[str, str], _Acc]:
    accs: dict[tuple[str, str], _Acc] = defaultdict(_Acc)
    for metric, metric_rows in rows.items():
        for r in metric_rows:
            if r.instance not in keep:
                continue
            acc = accs[(r.instance, str(r.engine))]
            acc.seen.add(metric)
            if metric == "ttft":
                if r.le is not None:
                    acc.ttft[r.le] += r.increase or 0.0
            elif metric in GAUGES or metric.startswith("waiting_by_reason:"):
                g = acc.gauges[metric]
                g[0] += r.value_sum
                g[1] += r.samples
            else:
                acc.increases[metric] += r.increase or 0.0
    return accs


def fleet_table(instances: list[Instance], w: Window, model: str | None = None) -> list[FleetRow]:
    """One row per instance and engine (ordered), over the window `w`; `model` keeps the
    instances serving it."""
    shown = [i for i in instances if model is None or i.model == model]
    keep = {i.instance for i in shown}
    rows = read_series(
        (*GAUGES, *COUNTERS, *COUNTERS_ACCEPTED, "ttft"), None, None, _one_bucket(w), split=SPLIT
    )
    accs = _accumulate(rows, keep)
    sleep = _sleep_now(w, shown)
    out: list[FleetRow] = []
    for inst in sorted(shown, key=lambda i: i.instance):
        engines = sorted({e for (i, e) in accs if i == inst.instance})
        if not engines:
            out.append(
                FleetRow(
                    inst.instance, None, inst.model, inst.up, inst.last_scrape, None, None, None
                )
            )
        for engine in engines:
            acc = accs[(inst.instance, engine)]
            inc = acc.increases
            hit_rate = None
            if inc.get("prefix_queries", 0.0) > 0:
                hit_rate = inc.get("prefix_hits", 0.0) / inc["prefix_queries"]
            elif "prefix_hit_rate" in acc.gauges:
                hit_rate = _mean(acc, "prefix_hit_rate")
            drafts = inc.get("spec_draft_tokens", 0.0)
            rejected = {
                m.split(":", 1)[1]: v
                for m, v in sorted(inc.items())
                if m.startswith(f"{REJECTIONS}:")
            }
            out.append(
                FleetRow(
                    instance=inst.instance,
                    engine=engine,
                    model=inst.model,
                    up=inst.up,
                    last_scrape=inst.last_scrape,
                    kv_usage=_mean(acc, "kv_usage"),
                    running=_mean(acc, "running"),
                    waiting=_mean(acc, "waiting"),
                    waiting_by_reason={
                        m.split(":", 1)[1]: v
                        for m in sorted(acc.gauges)
                        if m.startswith("waiting_by_reason:") and (v := _mean(acc, m)) is not None
                    },
                    preemptions=inc["preemptions"] if "preemptions" in acc.seen else None,
                    prefix_hit_rate=hit_rate,
                    ttft_p95_seconds=finite_quantile(0.95, acc.ttft.items()) if acc.ttft else None,
                    spec_acceptance_rate=(
                        inc.get("spec_accepted_tokens", 0.0) / drafts if drafts > 0 else None
                    ),
                    sleep_state=sleep.get((inst.instance, engine)),
                    admission_rejections=sum(rejected.values()) if rejected else None,
                    admission_rejections_by_reason=rejected,
                )
            )
    return out


def fleet_window(window: WindowQuery, seen: Seen) -> Window:
    """The fleet table's window, read as `seen` may: as asked, else the hour up to the
    newest scrape it sees; in minutes (hours from a day up), so it reads the rollups."""
    start, end = window.start_time(), window.end_time()
    if end is None:
        found = data_range(None, seen)
        end = (found[1] if found else datetime.now(UTC)) + timedelta(microseconds=1)
    if start is None:
        start = end - timedelta(hours=1)
    bucket_s = 3600 if end - start >= timedelta(days=1) else 60
    return make_window(None, start, end, bucket_s, seen=seen)
