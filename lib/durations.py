"""Durations and time ranges as the API spells them: `30s`, `5m`, `1h`, `1d`, RFC 3339 times.

Owns parsing only; every datetime it returns is UTC-aware and within lib.bounds'
EVENT_YEARS, every duration at most MAX_DURATION: anything else is a ParameterError naming
the parameter (422 on the API), never an OverflowError deeper down.
"""

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator

from lib.bounds import EVENT_YEARS
from lib.errors import ParameterError

# The longest duration any parameter may be (a bucket, a gap, a silence, a lookback):
# longer than any window a question covers, and far inside timedelta's range, so adding
# one to a time within EVENT_YEARS never overflows.
MAX_DURATION = timedelta(days=3650)

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str, *, name: str = "duration") -> timedelta:
    """`90s`, `5m`, `1.5h`, `1d` -> timedelta; anything else (or zero) is a ParameterError."""
    match = _DURATION.match(text or "")
    if not match:
        raise ParameterError(f"{name} must look like 30s, 5m, 1h or 1d, got {_shown(text)}")
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds <= 0:
        raise ParameterError(f"{name} must be positive, got {_shown(text)}")
    if not math.isfinite(seconds) or seconds > MAX_DURATION.total_seconds():
        raise ParameterError(f"{name} must be at most {MAX_DURATION.days}d, got {_shown(text)}")
    return timedelta(seconds=seconds)


def parse_bucket_seconds(text: str) -> int:
    """A bucket width in whole seconds, between 1 s and 31 days."""
    seconds = parse_duration(text, name="bucket").total_seconds()
    if seconds < 1 or seconds != int(seconds):
        raise ParameterError(f"bucket must be a whole number of seconds, got {_shown(text)}")
    if seconds > 31 * 86400:
        raise ParameterError(f"bucket must be at most 31d, got {_shown(text)}")
    return int(seconds)


def parse_time(text: str | None, *, name: str = "time") -> datetime | None:
    """RFC 3339 (`Z` or an offset; a bare time is taken as UTC) -> aware UTC datetime."""
    if text is None or text == "":
        return None
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ParameterError(f"{name} must be an RFC 3339 time, got {_shown(text)}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        utc: datetime | None = value.astimezone(UTC)  # 9999-12-31T23:00-05:00 is past datetime.max
    except OverflowError:
        utc = None
    if utc is None or not EVENT_YEARS.holds(utc):
        raise ParameterError(f"{name} is {EVENT_YEARS.reason()}, got {_shown(text)}")
    return utc


def _shown(text: str | None) -> str:
    """A parameter's value as an error quotes it: on one line (repr), and cut short."""
    return repr(text[:40] + "..." if text is not None and len(text) > 40 else text)


def format_time(value: datetime | None) -> str | None:
    """Aware datetime -> RFC 3339 UTC string with `Z`, as every API answer spells times."""
    if value is None:
        return None
    value = value.astimezone(UTC)
    text = value.isoformat(timespec="milliseconds" if value.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def _rfc3339(value: Any) -> Any:
    return format_time(value) if isinstance(value, datetime) else value


# A time as every API answer spells it (RFC 3339 UTC with `Z`), for an Out schema's field
# read from a row's datetime.
Time = Annotated[str, BeforeValidator(_rfc3339)]


def format_duration(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
