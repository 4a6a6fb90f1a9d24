"""Typed readers for Fleetscope's environment variables, one per kind of value.

Owns parsing and validating configuration values: a bad value stops start-up with
ImproperlyConfigured, one line naming the variable, its value (any password in it masked)
and what it expects; it never silently falls back to the default. manage.py prints that
line without a traceback.
"""

import ipaddress
import os
import re
from collections.abc import Collection
from datetime import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# `//user:secret@host` and a libpq `password=secret`: masked wherever a value is shown.
_URL_PASSWORD = re.compile(r"(//[^/@:]*:)[^/@]*@")
_DSN_PASSWORD = re.compile(r"(password=)\S+", re.IGNORECASE)


def read_str(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


def read_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise _invalid(name, "true or false", raw)


def read_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An integer, within [minimum, maximum] where those are given."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if minimum is not None and maximum is not None:
        expected = f"an integer from {minimum} to {maximum}"
    elif minimum is not None:
        expected = f"an integer of at least {minimum}"
    elif maximum is not None:
        expected = f"an integer of at most {maximum}"
    else:
        expected = "an integer"
    try:
        value = int(raw)
    except ValueError:
        raise _invalid(name, expected, raw) from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise _invalid(name, expected, raw)
    return value


def read_choice(name: str, default: str, choices: Collection[str]) -> str:
    """One of `choices`, in any letter case; answered as spelled in `choices`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    by_folded = {choice.casefold(): choice for choice in choices}
    if raw.casefold() not in by_folded:
        raise _invalid(name, f"one of {', '.join(sorted(choices))}", raw)
    return by_folded[raw.casefold()]


def read_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def read_networks(name: str, default: list[str]) -> list[str]:
    """Comma-separated IP addresses or CIDR networks (`10.0.0.1`, `172.16.0.0/12`, `::1`),
    answered as networks (`10.0.0.1/32`)."""
    networks = []
    for item in read_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            expected = "comma-separated IP addresses or networks such as 10.0.0.1,172.16.0.0/12"
            raise _invalid(name, expected, item) from None
    return networks


def read_path(name: str, default: Path) -> Path:
    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser().resolve() if raw else default.resolve()


def read_time_zone(name: str, default: str) -> str:
    """An IANA time zone name (`Europe/Paris`, `UTC`), as the tz database spells it."""
    raw = read_str(name, default)
    try:
        ZoneInfo(raw)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise _invalid(name, "an IANA time zone such as Europe/Paris or UTC", raw) from None
    return raw


def read_time_of_day(name: str, default: str) -> str:
    """A local time of day, HH:MM (ISO 8601, so HH:MM:SS too), without a UTC offset."""
    raw = read_str(name, default)
    try:
        parsed = time.fromisoformat(raw)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is not None:
        raise _invalid(name, "a time of day HH:MM, such as 07:00", raw)
    return raw


def read_url(name: str, default: str, *, schemes: Collection[str], example: str) -> str:
    """A `scheme://...` URL whose scheme is one of `schemes` and whose port, if any, is a
    number from 0 to 65535. In Celery's `transport+driver://` form (`sqla+postgresql://`)
    the transport is the scheme. A `;`-separated list (a broker's fail-over) is read as
    one URL per item."""
    raw = read_str(name, default)
    for url in raw.split(";"):
        problem = _url_problem(url.strip(), schemes)
        if problem:
            raise _invalid(name, f"a URL such as {example}", _masked(raw), problem)
    return raw


def read_database_url(name: str, default: str, **options: Any) -> dict[str, Any]:
    """A database URL (`postgres://user:password@host/db`, `sqlite:///path`), answered as
    Django's DATABASES entry (dj-database-url does the parsing, `options` go to it)."""
    raw = read_str(name, default)
    try:
        return dict(dj_database_url.parse(raw, **options))
    except ValueError:  # its errors list every scheme it knows: say what is wrong instead
        problem = _url_problem(raw, dj_database_url.ENGINE_SCHEMES) or ""
        example = "postgres://user:password@host/dbname or sqlite:///path/db.sqlite3"
        raise _invalid(name, f"a URL such as {example}", _masked(raw), problem) from None


def read_catalog_url(name: str, default: str) -> str:
    """A DuckLake catalog: `ducklake:sqlite:PATH`, `ducklake:postgres:DSN`, or
    `ducklake:PATH` (a DuckDB file)."""
    raw = read_str(name, default)
    catalog = raw.removeprefix("ducklake:") if raw.startswith("ducklake:") else ""
    kind, _, rest = catalog.partition(":")
    if not catalog or (kind in ("sqlite", "postgres") and not rest.strip()):
        expected = "a DuckLake catalog such as ducklake:sqlite:PATH or ducklake:postgres:DSN"
        raise _invalid(name, expected, _masked(raw))
    return raw


def read_data_path(name: str, default: str) -> str:
    """Where a warehouse keeps its files: a folder, or `s3://bucket/prefix/`."""
    raw = read_str(name, default)
    if "://" in raw and (not raw.startswith("s3://") or not urlsplit(raw).netloc):
        raise _invalid(name, "a folder or an s3://bucket/prefix/ URL", _masked(raw))
    return raw


def _url_problem(url: str, schemes: Collection[str]) -> str | None:
    scheme, separator, _ = url.partition("://")
    if not separator or not scheme:
        return "no scheme://"
    transport = scheme.lower().partition("+")[0]
    if scheme.lower() not in schemes and transport not in schemes:
        return f"unknown scheme {scheme}://"
    try:
        urlsplit(url).port  # noqa: B018 - read for the ValueError a bad port raises
    except ValueError as exc:
        return str(exc)[:1].lower() + str(exc)[1:]
    return None


def _masked(value: str) -> str:
    return _DSN_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", value))


def _invalid(name: str, expected: str, raw: str, problem: str = "") -> ImproperlyConfigured:
    reason = f" ({problem})" if problem else ""
    return ImproperlyConfigured(f"{name} must be {expected}, got {raw!r}{reason}")
