"""Celery tasks for vLLM serving metrics: thin wrappers, each also a manage.py command
(`scrape`, `import_prometheus`); scheduled in dashboard/celery.py."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from ingest.scrape_targets import run_retention, scrape_due_targets


@shared_task(name="ingest.scrape_vllm_targets", ignore_result=True)
def scrape_vllm_targets() -> dict[str, int]:
    """Scrape every due target; load the spool (and roll up closed minutes) when due."""
    return scrape_due_targets()


@shared_task(name="ingest.serving_retention", ignore_result=True)
def serving_retention() -> str | None:
    """Delete raw serving samples past the retention window (already rolled up)."""
    cutoff: datetime | None = run_retention()
    return cutoff.isoformat() if cutoff else None
