"""The Celery app and the whole beat schedule, one commented entry per periodic task.

Embedded default: Celery's filesystem transport under the data dir (no server to run).
Production: `CELERY_BROKER_URL=redis://...`. Warehouse writes are routed to the
`warehouse` queue; with the embedded SQLite catalog, one worker consumes it so writes
happen one at a time (design.md); the writer lock in analytics.warehouse backs that up.
"""

import os
from datetime import timedelta
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
# Celery's Django fixup runs Django's system checks in beat and in each worker, and the URL
# check imports every page and the API (DuckDB, pyarrow, plotly: ~110 MB in beat, which
# runs no task). `manage.py migrate` runs them at each `make run` and deploy.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("fleetscope")
app.config_from_object("django.conf:settings", namespace="CELERY")


def _filesystem_broker_options(data_dir: str) -> dict[str, Any]:
    queue_dir = os.path.join(data_dir, "queue")
    processed_dir = os.path.join(data_dir, "processed")
    control_dir = os.path.join(data_dir, "control")  # kombu's default is ./control
    for folder in (queue_dir, processed_dir, control_dir):
        os.makedirs(folder, exist_ok=True)
    return {
        "data_folder_in": queue_dir,
        "data_folder_out": queue_dir,
        "processed_folder": processed_dir,
        "control_folder": control_dir,
        "store_processed": False,
    }


def configure(broker_url: str, broker_dir: str) -> None:
    if broker_url.startswith("filesystem://"):
        app.conf.broker_transport_options = _filesystem_broker_options(broker_dir)


def _beat_schedule(
    tail_seconds: int, scrape_seconds: int = 15, otlp_seconds: int = 2
) -> dict[str, dict[str, Any]]:
    return {
        # Load what the OTLP receiver acknowledged (the spool) into the warehouse, so it is
        # on the pages within seconds (FLEETSCOPE_OTLP_LOAD_SECONDS). One drainer at a
        # time (a lock file); a tick that finds it busy returns at once.
        "load-otlp": {
            "task": "ingest.load_otlp",
            "schedule": timedelta(seconds=otlp_seconds),
            "options": {"expires": otlp_seconds},
        },
        # Read new lines from the configured agent-event folders (FLEETSCOPE_TAIL_AGENT_EVENTS).
        # Expires before the next run so a backlog never stacks up identical tails.
        "tail-agent-events": {
            "task": "ingest.tail_agent_events",
            "schedule": timedelta(seconds=tail_seconds),
            "options": {"expires": tail_seconds},
        },
        # Read new lines of live Claude Code and Codex sessions from the configured folders
        # (FLEETSCOPE_TAIL_CLAUDE_CODE, FLEETSCOPE_TAIL_CODEX); each pass reads only what
        # was appended. Expires before the next run, so a slow pass is never stacked.
        "tail-transcripts": {
            "task": "ingest.tail_transcripts",
            "schedule": timedelta(seconds=tail_seconds),
            "options": {"expires": tail_seconds},
        },
        # Scrape every due vLLM target (each has its own interval, 15 s by default); the
        # spool of scrapes is loaded, with the per-minute rollup, in one commit when due.
        # Expires before the next tick: a late tick is skipped, never stacked.
        "scrape-vllm-targets": {
            "task": "ingest.scrape_vllm_targets",
            "schedule": timedelta(seconds=scrape_seconds),
            "options": {"expires": scrape_seconds},
        },
        # Delete raw serving samples older than FLEETSCOPE_SERVING_RAW_RETENTION_HOURS
        # (only minutes already rolled up).
        "serving-retention": {
            "task": "ingest.serving_retention",
            "schedule": timedelta(hours=1),
            "options": {"expires": 1800},
        },
        # The daily cost report: each tick sends yesterday's report to recipients not yet
        # served once the local report time has passed (FLEETSCOPE_COST_REPORT_TIME/_TZ),
        # so daylight-saving changes never shift it; a late tick is dropped, not stacked.
        "send-daily-cost-report": {
            "task": "analytics.send_daily_cost_report",
            "schedule": timedelta(minutes=15),
            "options": {"expires": 600},
        },
        # Alert rules, as of now, then any notification that is due (first tries and
        # retries with backoff). A late tick is dropped: the next one sees the same data.
        "evaluate-alerts": {
            "task": "analytics.evaluate_alerts",
            "schedule": timedelta(minutes=1),
            "options": {"expires": 55},
        },
        # Merge small Parquet files, expire week-old snapshots, delete unreferenced files.
        "warehouse-maintenance": {
            "task": "analytics.maintain_warehouse",
            "schedule": timedelta(hours=6),
            "options": {"expires": 3600},
        },
    }


app.conf.task_routes = {
    "ingest.*": {"queue": "warehouse"},
    "analytics.maintain_warehouse": {"queue": "warehouse"},
}
app.conf.task_default_queue = "celery"
app.conf.worker_prefetch_multiplier = 1
app.conf.task_acks_late = True


def setup_from_django() -> None:
    """Called from DashboardConfig.ready(), once Django's settings are loaded."""
    from django.conf import settings

    configure(settings.CELERY_BROKER_URL, str(settings.CELERY_BROKER_DIR))
    app.conf.beat_schedule = _beat_schedule(
        settings.FLEETSCOPE_TAIL_SECONDS,
        settings.FLEETSCOPE_SCRAPE_SECONDS,
        settings.FLEETSCOPE_OTLP_LOAD_SECONDS,
    )
    app.conf.beat_schedule_filename = str(settings.DATA_DIR / "celerybeat-schedule")


# Each installed app's tasks.py (ingest.tasks, analytics.tasks), imported once Django is set up.
app.autodiscover_tasks()
