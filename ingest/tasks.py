"""Celery tasks for ingestion: thin wrappers around the pipelines (each also a command)."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings

from ingest.pipelines.agent_events import run_agent_events
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
