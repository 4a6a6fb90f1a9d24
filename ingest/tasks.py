"""Celery tasks for ingestion: thin wrappers around the pipelines (each also a command)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import shared_task
from django.conf import settings

from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.codex import run_codex
from ingest.pipelines.loading import IngestSummary
from ingest.sources.files import SourceError

log = logging.getLogger(__name__)


@shared_task(name="ingest.tail_agent_events", ignore_result=True)
def tail_agent_events() -> dict[str, Any]:
    """Read new lines from every configured agent-event folder (FLEETSCOPE_TAIL_AGENT_EVENTS).

    A folder that is missing is reported and skipped; the others are still read.
    """
    totals: dict[str, Any] = {"accepted": 0, "quarantined": 0, "duplicates": 0, "errors": []}
    for folder in settings.FLEETSCOPE_TAIL_AGENT_EVENTS:
        try:
            summary = run_agent_events([folder])
        except SourceError as exc:
            log.warning("tail_agent_events: %s", exc)
            totals["errors"].append(str(exc))
            continue
        totals["accepted"] += summary.accepted
        totals["quarantined"] += summary.quarantined
        totals["duplicates"] += summary.duplicates
    return totals


# (setting, pipeline) for the transcript folders the tail task reads.
_TRANSCRIPT_SOURCES: tuple[tuple[str, Callable[[list[str]], IngestSummary]], ...] = (
    ("FLEETSCOPE_TAIL_CLAUDE_CODE", run_claude_code),
    ("FLEETSCOPE_TAIL_CODEX", run_codex),
)


@shared_task(name="ingest.tail_transcripts", ignore_result=True)
def tail_transcripts() -> dict[str, Any]:
    """Read what live Claude Code and Codex sessions appended since the last pass, from the
    folders in FLEETSCOPE_TAIL_CLAUDE_CODE and FLEETSCOPE_TAIL_CODEX (a line still being
    written waits for the next pass). A missing folder is reported and skipped."""
    totals: dict[str, Any] = {"accepted": 0, "quarantined": 0, "duplicates": 0, "errors": []}
    for setting, run in _TRANSCRIPT_SOURCES:
        for folder in getattr(settings, setting):
            try:
                summary = run([folder])
            except SourceError as exc:
                log.warning("tail_transcripts: %s", exc)
                totals["errors"].append(str(exc))
                continue
            totals["accepted"] += summary.accepted
            totals["quarantined"] += summary.quarantined
            totals["duplicates"] += summary.duplicates
    return totals
