"""Celery tasks for ingestion, thin wrappers scheduled in dashboard/celery.py: the folder
tails (by hand, `manage.py ingest`), the vLLM scrape tick (`manage.py scrape`) and the
retention of raw serving samples. Names are explicit (`name=`): the beat schedule and
queued messages refer to them, so moving a task to another module never renames it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from celery import shared_task
from django.conf import settings

if TYPE_CHECKING:
    from ingest.pipelines.loading import IngestSummary

# The pipelines are imported in the tasks that run them: they bring pyarrow, numpy and
# DuckDB (~80 MB), which beat, importing this module for the task names, never needs.

log = logging.getLogger(__name__)


def _tail(sources: tuple[tuple[str, Callable[[list[str]], IngestSummary]], ...]) -> dict[str, Any]:
    """Run each pipeline on each folder of its setting. A missing folder is reported and
    skipped; the others are still read. A file that cannot be read is logged (and listed
    in `failed`) on every pass while it stays broken; the others are still tailed."""
    from ingest.sources.files import SourceError

    totals: dict[str, Any] = {
        "accepted": 0,
        "quarantined": 0,
        "duplicates": 0,
        "errors": [],
        "failed": [],
    }
    for setting, run in sources:
        for folder in getattr(settings, setting):
            try:
                summary = run([folder])
            except SourceError as exc:
                log.warning("tail: %s", exc)
                totals["errors"].append(str(exc))
                continue
            for failed in summary.failed:
                log.warning("tail: cannot read %s", failed.line)
                totals["failed"].append({"file": failed.file, "reason": failed.reason})
            totals["accepted"] += summary.accepted
            totals["quarantined"] += summary.quarantined
            totals["duplicates"] += summary.duplicates
    return totals


@shared_task(name="ingest.load_otlp", ignore_result=True)
def load_otlp() -> dict[str, Any]:
    """Load the OTLP spool (what the receiver acknowledged) into the warehouse, for up to
    50 s; a tick that finds another drainer at work returns at once."""
    from dataclasses import asdict

    from ingest.pipelines.otlp import drain

    return asdict(drain(seconds=50.0))


@shared_task(name="ingest.tail_agent_events", ignore_result=True)
def tail_agent_events() -> dict[str, Any]:
    """Read new lines from every configured agent-event folder (FLEETSCOPE_TAIL_AGENT_EVENTS)."""
    from ingest.pipelines.agent_events import run_agent_events

    return _tail((("FLEETSCOPE_TAIL_AGENT_EVENTS", run_agent_events),))


def _transcript_sources() -> tuple[tuple[str, Callable[[list[str]], IngestSummary]], ...]:
    """(setting, pipeline) for the transcript folders the tail task reads."""
    from ingest.pipelines.claude_code import run_claude_code
    from ingest.pipelines.codex import run_codex

    return (
        ("FLEETSCOPE_TAIL_CLAUDE_CODE", run_claude_code),
        ("FLEETSCOPE_TAIL_CODEX", run_codex),
    )


@shared_task(name="ingest.tail_transcripts", ignore_result=True)
def tail_transcripts() -> dict[str, Any]:
    """Read what live Claude Code and Codex sessions appended since the last pass, from the
    folders in FLEETSCOPE_TAIL_CLAUDE_CODE and FLEETSCOPE_TAIL_CODEX (a line still being
    written waits for the next pass)."""
    return _tail(_transcript_sources())


@shared_task(name="ingest.scrape_vllm_targets", ignore_result=True)
def scrape_vllm_targets() -> dict[str, int]:
    """Scrape every due target; load the spool (and roll up closed minutes) when due."""
    from ingest.scrape_targets import scrape_due_targets

    return scrape_due_targets()


@shared_task(name="ingest.serving_retention", ignore_result=True)
def serving_retention() -> str | None:
    """Delete raw serving samples past the retention window (already rolled up)."""
    from ingest.scrape_targets import run_retention

    cutoff: datetime | None = run_retention()
    return cutoff.isoformat() if cutoff else None
