"""When the daily cost report is due: yesterday's report, from the configured local time
on, in the configured time zone (FLEETSCOPE_COST_REPORT_TIME, FLEETSCOPE_COST_REPORT_TZ).

The beat task ticks every quarter hour and asks here; a fixed UTC crontab would shift by
an hour across daylight-saving changes. Delivery itself skips recipients already served.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def report_zone() -> ZoneInfo:
    name = settings.FLEETSCOPE_COST_REPORT_TZ
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(
            f"FLEETSCOPE_COST_REPORT_TZ: unknown time zone {name!r}"
        ) from None


def report_time() -> time:
    text = settings.FLEETSCOPE_COST_REPORT_TIME
    try:
        return time.fromisoformat(text)
    except ValueError:
        raise ImproperlyConfigured(
            f"FLEETSCOPE_COST_REPORT_TIME must be HH:MM, got {text!r}"
        ) from None


def due_report_day(now: datetime | None = None) -> date | None:
    """Yesterday (local) once the local report time has passed today, else None."""
    local = (now or datetime.now(UTC)).astimezone(report_zone())
    if local.time() < report_time():
        return None
    return local.date() - timedelta(days=1)
