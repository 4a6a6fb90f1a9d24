"""`GET /metrics`: Fleetscope's own figures in the Prometheus text format, for the
Prometheus (or any scraper) a team already runs (README, "Watching Fleetscope").

Owns the endpoint: who may read it (an API token of `read` or `admin` scope through the
API's own authentication, dashboard/auth.py, or a logged-in session; a stranger gets a
JSON 401, an `ingest` token a JSON 403) and gathering the figures at scrape time: what
this machine's processes counted (lib/process_metrics.py, summed over their
multiprocess files), how far behind ingest is (ingest/freshness.py) and the Celery
queues' lengths (dashboard/queues.py). prometheus_client writes the text; nothing here
formats it.

Every figure is fleet-wide and operational (source kinds, spools, queues, route
patterns): none names a run, a file, a user or a team, so any reader may see them all and
no visibility filter applies. Must not write SQL (ingest/freshness.py has it), nor keep
anything between scrapes.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe
from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from dashboard.api_answers import one_line
from dashboard.auth import API_AUTH
from dashboard.queues import queue_lengths
from ingest import freshness
from lib.errors import ForbiddenError

PREFIX = "fleetscope_"


class _ProcessFigures(Collector):
    """What this machine's processes counted, from the multiprocess folder; only
    Fleetscope's own families (a process that also built a stand-in vLLM's figures with
    prometheus_client left those files there too)."""

    def __init__(self) -> None:
        self._files = multiprocess.MultiProcessCollector(None, str(settings.FLEETSCOPE_METRICS_DIR))

    def collect(self) -> Iterator[Metric]:
        for family in self._files.collect():
            if family.name.startswith(PREFIX):
                yield family


class _ScrapeFigures(Collector):
    """What is read at each scrape: ingest's timestamps and backlog, the queues."""

    def collect(self) -> Iterator[Metric]:
        last = GaugeMetricFamily(
            "fleetscope_ingest_last_timestamp_seconds",
            "Unix time of the newest load of each source kind (read positions committed, events "
            "ingested_at); lag is time() minus this.",
            labels=["source_kind"],
        )
        for source_kind, committed_at in freshness.last_ingests().items():
            last.add_metric([source_kind], committed_at.timestamp())
        yield last
        unread = GaugeMetricFamily(
            "fleetscope_ingest_unread_bytes",
            "Bytes of the tailed folders' files past their stored read positions, per source kind.",
            labels=["source_kind"],
        )
        for source_kind, size in freshness.unread_bytes().items():
            unread.add_metric([source_kind], size)
        yield unread
        files = GaugeMetricFamily(
            "fleetscope_spool_files", "Files waiting in each spool.", labels=["spool"]
        )
        sizes = GaugeMetricFamily(
            "fleetscope_spool_bytes", "Bytes waiting in each spool.", labels=["spool"]
        )
        for spool, depth in freshness.spool_depths().items():
            files.add_metric([spool], depth.files)
            sizes.add_metric([spool], depth.bytes)
        yield files
        yield sizes
        attempted = freshness.last_scrape_attempt()
        scrape = GaugeMetricFamily(
            "fleetscope_scrape_last_attempt_timestamp_seconds",
            "Unix time of the newest attempt at any enabled vLLM scrape target.",
        )
        if attempted is not None:
            scrape.add_metric([], attempted.timestamp())
        yield scrape
        yield from _queues()


def _queues() -> Iterator[Metric]:
    lengths = queue_lengths()
    up = GaugeMetricFamily(
        "fleetscope_queue_up", "1 when the Celery broker answered the queue lengths, else 0."
    )
    up.add_metric([], 0 if lengths is None else 1)
    yield up
    length = GaugeMetricFamily(
        "fleetscope_queue_length", "Messages waiting in each Celery queue.", labels=["queue"]
    )
    for queue, count in (lengths or {}).items():
        length.add_metric([queue], count)
    yield length


def _refusal(request: HttpRequest) -> JsonResponse | None:
    """None when the request may read; else the API's JSON answer (401 or 403)."""
    try:
        for auth in API_AUTH:
            if auth(request):
                return None
    except ForbiddenError as exc:
        return JsonResponse({"detail": one_line(str(exc))}, status=403)
    return JsonResponse({"detail": "Unauthorized"}, status=401)


@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    refused = _refusal(request)
    if refused is not None:
        return refused
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ProcessFigures())
    registry.register(_ScrapeFigures())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_PLAIN_0_0_4)
