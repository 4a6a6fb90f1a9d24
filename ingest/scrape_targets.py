"""Scrape targets in Django's database: registering and removing them, checking a one-off
scrape's name, and scraping the due ones.

Owns the beat tick: claim each due target with a conditional UPDATE (two workers never
scrape one target twice), collect the scrapes concurrently, spool them, and load the spool
in one warehouse transaction (with the per-minute rollup) once it is old enough.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Q

from analytics.serving.models import ScrapeTarget
from ingest.pipelines import serving_rollups, serving_spool
from ingest.pipelines.vllm_scrape import LoadResult, collect_scrape, load_scrapes
from lib.file_locks import held_alone

log = logging.getLogger(__name__)

MAX_PARALLEL_SCRAPES = 8
ROLLUP_GRACE = timedelta(minutes=1)


def default_instance_name(url: str) -> str:
    """host:port, as Prometheus names an instance."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())


def check_target(url: str, instance: str | None = None) -> str:
    """The instance name a scrape of `url` is stored under (default host:port), checked
    as the admin checks a target's, without registering anything (ValueError, one line)."""
    name = instance or default_instance_name(url)
    try:
        ScrapeTarget(name=name, url=url).full_clean(validate_unique=False)
    except ValidationError as exc:
        raise ValueError(_problems(exc)) from None
    return name


def remove_target(name_or_url: str) -> ScrapeTarget:
    """Unregister the target of that instance name, or the one target scraping that URL
    (its stored scrapes stay); ValueError (one line) when there is none, or several."""
    found = ScrapeTarget.objects.filter(name=name_or_url).first()
    if found is None:
        by_url = list(ScrapeTarget.objects.filter(url=name_or_url))
        if len(by_url) > 1:
            names = ", ".join(t.name for t in by_url)
            raise ValueError(f"{len(by_url)} targets scrape {name_or_url} ({names}): name one")
        if not by_url:
            raise ValueError(f"no scrape target named or scraping {name_or_url!r}")
        found = by_url[0]
    ScrapeTarget.objects.filter(pk=found.pk).delete()
    return found


def register_target(
    url: str,
    instance: str | None = None,
    interval_s: int | None = None,
    labels: dict[str, str] | None = None,
) -> ScrapeTarget:
    """Create or update the target named `instance` (validated as the admin would)."""
    name = instance or default_instance_name(url)
    target = ScrapeTarget.objects.filter(name=name).first() or ScrapeTarget(name=name)
    target.url = url
    if interval_s is not None:
        target.interval_seconds = interval_s
    if labels:
        target.labels = {**(target.labels or {}), **labels}
    target.enabled = True
    try:
        target.full_clean()
    except ValidationError as exc:
        raise ValueError(_problems(exc)) from None
    target.save()
    return target


def claim_due_targets(now: datetime) -> list[ScrapeTarget]:
    due = []
    for target in ScrapeTarget.objects.filter(enabled=True):
        last = target.last_attempt_at
        if last is not None and (now - last).total_seconds() < target.interval_seconds - 1:
            continue
        claimed = (
            ScrapeTarget.objects.filter(pk=target.pk)
            .filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at=last))
            .update(last_attempt_at=now)
        )
        if claimed:
            due.append(target)
    return due


def scrape_due_targets(
    now: datetime | None = None, *, flush_s: int | None = None
) -> dict[str, int]:
    """One beat tick: scrape every due target, spool, load the spool when it is due."""
    now = now or datetime.now(UTC)
    targets = claim_due_targets(now)
    if targets:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_SCRAPES, len(targets))) as pool:
            pending = list(
                pool.map(
                    lambda t: collect_scrape(t.name, t.url, timeout_s=t.timeout_seconds, now=now),
                    targets,
                )
            )
        for p in pending:
            serving_spool.append(p)
    flush_after = settings.FLEETSCOPE_SERVING_FLUSH_SECONDS if flush_s is None else flush_s
    age = serving_spool.oldest_age_s(now.timestamp())
    loaded = LoadResult()
    if age is not None and age >= flush_after:
        loaded = flush_spool(now)
    return {"scraped": len(targets), "loaded_scrapes": loaded.scrapes + loaded.failed}


def flush_spool(now: datetime | None = None) -> LoadResult:
    """Load every spooled scrape in one transaction, rolling up the minutes now closed.
    One flusher of the machine's spool at a time: two workers' ticks would otherwise load
    the same files at once, and with a PostgreSQL catalog both transactions see none of
    them stored and commit (the OTLP drainer holds the same kind of lock); a tick that
    finds another flushing leaves the files to it."""
    now = now or datetime.now(UTC)
    with held_alone(serving_spool.spool_dir() / ".flush.lock") as alone:
        if not alone:
            return LoadResult()
        paths = serving_spool.pending_files()
        result = load_scrapes(serving_spool.read(paths), rollup_until=now - ROLLUP_GRACE)
        serving_spool.discard(paths)
    return result


def run_retention(now: datetime | None = None) -> datetime | None:
    return serving_rollups.apply_retention(settings.FLEETSCOPE_SERVING_RAW_RETENTION_HOURS, now)
