"""Celery tasks for the warehouse: thin wrappers (each also a management command)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from celery import shared_task


@shared_task(name="analytics.maintain_warehouse", ignore_result=True)
def maintain_warehouse(keep_snapshots_days: int = 7) -> dict[str, Any]:
    """Merge small files, expire old snapshots, delete unreferenced files."""
    import warehouse  # here, not at start-up: beat imports this module for the task names

    return warehouse.run_maintenance(keep_snapshots_days=keep_snapshots_days)


@shared_task(name="analytics.send_daily_cost_report", ignore_result=True)
def send_daily_cost_report() -> dict[str, Any]:
    """Send yesterday's cost report once it is due (see daily_cost_schedule); a team's
    recipients get that team's report."""
    from analytics.access.visibility import seen_for_team
    from analytics.costs.report_delivery import deliver_report
    from analytics.costs.report_schedule import due_report_day, report_zone

    day = due_report_day()
    if day is None:
        return {"due": False}
    outcome = deliver_report(day, report_zone().key, seen_for_team=seen_for_team)
    return {"due": True, "date": day.isoformat(), **vars(outcome)}


@shared_task(name="analytics.evaluate_alerts", ignore_result=True)
def evaluate_alerts(at: str | None = None) -> dict[str, Any]:
    """Evaluate every alert rule as of now (or RFC 3339 `at`, for backfills), then send
    the notifications that are due (retries included)."""
    from analytics.alerts.delivery import send_due_notifications
    from analytics.alerts.engine import evaluate_rules, prune_evaluations
    from lib.durations import parse_time

    outcome = evaluate_rules(parse_time(at, name="at")).as_dict()
    if at is None and datetime.now(UTC).minute == 0:  # once an hour
        outcome["pruned_evaluations"] = prune_evaluations()
    outcome["delivery"] = vars(send_due_notifications())
    return outcome
