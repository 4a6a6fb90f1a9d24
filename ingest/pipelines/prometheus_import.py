"""Import vLLM history from a Prometheus server: range-query chunks -> synthetic scrapes
(one per instance and evaluation time) -> the same model and loader as live scrapes.

Owns turning Prometheus series back into exposition samples: the type of each series
comes from the server's metadata (its record of `# TYPE`), the instance from a label.
Chunks load one transaction each, carrying counter state across chunks, so a restart
inside the imported range is a reset exactly as in a live scrape.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ingest.parsers.counters import CounterState
from ingest.parsers.prometheus_text import ExpositionError, Sample, one_line
from ingest.parsers.vllm import FAMILIES, Kind, model_samples
from ingest.pipelines.vllm_scrape import LoadResult, PendingScrape, load_scrapes
from ingest.sources import prometheus_api
from lib.http import FetchError

DEFAULT_QUERY = '{__name__=~"vllm:.+"}'
HISTOGRAM_PARTS = ("_bucket", "_count", "_sum")


@dataclass
class ImportResult:
    chunks: int = 0
    series: int = 0
    load: LoadResult = field(default_factory=LoadResult)

    def summary(self) -> dict[str, object]:
        return {**self.load.summary(), "chunks": self.chunks, "series": self.series}


def family_of(name: str, types: dict[str, tuple[str, str]]) -> tuple[str, str, str]:
    """(family as prometheus_client names it, declared type, help) for a series name."""
    if name in types:
        kind, doc = types[name]
        if kind == "counter" and name.endswith("_total"):
            return name[: -len("_total")], kind, doc
        return name, kind, doc
    for suffix in HISTOGRAM_PARTS:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and types.get(base, ("", ""))[0] in ("histogram", "summary"):
            return base, types[base][0], types[base][1]
    if name.endswith("_total") and types.get(name[: -len("_total")], ("", ""))[0] == "counter":
        return name[: -len("_total")], "counter", types[name[: -len("_total")]][1]
    # Not in the server's metadata (an old server, or a metadata limit): vLLM's own types.
    if name.endswith("_total") and name[: -len("_total")] in FAMILIES:
        family = name[: -len("_total")]
        if FAMILIES[family][1] is Kind.COUNTER:
            return family, "counter", ""
    for suffix in HISTOGRAM_PARTS:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and base in FAMILIES and FAMILIES[base][1] is Kind.HISTOGRAM:
            return base, "histogram", ""
    if name in FAMILIES and FAMILIES[name][1] is Kind.GAUGE:
        return name, "gauge", ""
    return name, "unknown", ""


def run_import(
    base_url: str,
    start: datetime,
    end: datetime,
    step_s: float,
    *,
    query: str = DEFAULT_QUERY,
    instance_label: str = "instance",
    drop_labels: tuple[str, ...] = ("job",),
    rename: str | None = None,
    timeout_s: float = 30.0,
    progress: Callable[[str], None] | None = None,
) -> ImportResult:
    if end < start:
        raise ValueError("--end must not be before --start")
    if not math.isfinite(step_s) or step_s <= 0:
        raise ValueError("--step must be positive")
    try:
        types = prometheus_api.metadata(base_url, timeout_s=timeout_s)
    except FetchError as exc:
        # Range queries may still work; vLLM's own types stand in for the metadata.
        if progress:
            progress(f"no metric metadata ({exc}); using vLLM's metric types")
        types = {}
    states: dict[str, CounterState] = {}
    result = ImportResult()
    dropped = {instance_label, *drop_labels}
    for chunk_start, chunk_end in prometheus_api.chunks(start, end, step_s):
        series = prometheus_api.query_range(
            base_url, query, chunk_start, chunk_end, step_s, timeout_s=timeout_s
        )
        result.chunks += 1
        result.series = max(result.series, len(series))
        by_scrape: dict[tuple[str, float], list[Sample]] = defaultdict(list)
        for s in series:
            name = s.labels.get("__name__", "")
            instance = rename or s.labels.get(instance_label) or "prometheus"
            family, kind, doc = family_of(name, types)
            labels = {k: v for k, v in s.labels.items() if k != "__name__" and k not in dropped}
            for ts, raw in s.values:
                # float() reads Prometheus' "NaN", "+Inf", "-Inf" spellings too
                sample = Sample(family, kind, name, labels, float(raw), doc)
                by_scrape[(instance, ts)].append(sample)
        pending = []
        for (instance, ts), samples in sorted(by_scrape.items()):
            when = datetime.fromtimestamp(ts, tz=UTC)
            try:
                pending.append(PendingScrape(instance, when, "prometheus", model_samples(samples)))
            except ExpositionError as exc:
                pending.append(
                    PendingScrape(instance, when, "prometheus", None, one_line(str(exc)))
                )
        result.load.add(load_scrapes(pending, states=states))
        if progress:
            progress(f"{chunk_start.isoformat()} .. {chunk_end.isoformat()}: {len(series)} series")
    return result
