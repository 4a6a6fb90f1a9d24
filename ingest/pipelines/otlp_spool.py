"""The OTLP spool: what the receiver acknowledged, on disk, until the loader has it in the
warehouse.

Owns files under <data dir>/spool/otlp/: one per accepted request, the mapped batch as
JSON, written to a temporary name, fsynced, renamed and its folder fsynced before the
receiver answers 200, so a crash of any process at any moment loses nothing
acknowledged. The loader (ingest/pipelines/otlp.py) removes a file only after the
transaction that stored it committed; a crash in between loads it again, which the
loader's identities make a no-op. Also says when the receiver should push back: past
FLEETSCOPE_OTLP_SPOOL_MAX_MB of files waiting (503 with Retry-After), never by dropping.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings

from ingest.parsers.otlp import OtlpBatch, Rejected, Sender
from ingest.sources.otlp import Signal

FORMAT = 1


def spool_dir() -> Path:
    path = Path(settings.DATA_DIR) / "spool" / "otlp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def max_bytes() -> int:
    """How much may wait before the receiver answers 503 (FLEETSCOPE_OTLP_SPOOL_MAX_MB,
    default 512)."""
    return int(getattr(settings, "OTLP_SPOOL_MAX_MB", 512)) * 1024 * 1024


@dataclass(frozen=True)
class Spooled:
    """One acknowledged request, as read back: its batch and where it came from."""

    path: Path
    signal: Signal
    sender: str
    digest: str  # of the request's decoded body: a retried request has the same one
    received_at: datetime
    events: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    points: list[dict[str, Any]]
    rejected: list[Rejected]

    @property
    def source(self) -> str:
        """The events' and quarantine's `source`: `otlp/<signal>/<sender>`."""
        return f"otlp/{self.signal}/{self.sender}"


def body_digest(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=16).hexdigest()


def append(batch: OtlpBatch, sender: Sender, digest: str) -> Path:
    """Write the batch durably (OSError when it cannot: the receiver answers 503)."""
    received_us = time.time_ns() // 1000
    document = {
        "format": FORMAT,
        "signal": str(batch.signal),
        "sender": sender.name,
        "digest": digest,
        "received_us": received_us,
        "events": batch.events,
        "requests": batch.requests,
        "points": batch.points,
        "rejected": [[r.position, r.path, r.reason, r.raw, r.weight] for r in batch.rejected],
    }
    folder = spool_dir()
    name = f"{received_us}-{os.getpid()}-{time.monotonic_ns()}.json"
    tmp = folder / f".{name}.tmp"
    data = orjson.dumps(document)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    final = folder / name
    os.replace(tmp, final)
    _fsync_dir(folder)
    return final


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def pending_files(limit: int | None = None) -> list[Path]:
    """Waiting files, oldest first (their names start with the time received)."""
    names = sorted(
        entry.name
        for entry in os.scandir(spool_dir())
        if entry.name.endswith(".json") and not entry.name.startswith(".")
    )
    folder = spool_dir()
    return [folder / n for n in (names if limit is None else names[:limit])]


@dataclass(frozen=True)
class Depth:
    files: int
    bytes: int
    oldest_age_s: float | None


def depth(now_s: float | None = None) -> Depth:
    files, size, oldest = 0, 0, None
    for entry in os.scandir(spool_dir()):
        if not entry.name.endswith(".json") or entry.name.startswith("."):
            continue
        files += 1
        try:
            size += entry.stat().st_size
        except FileNotFoundError:  # loaded and removed while we looked
            continue
        received_us = int(entry.name.split("-", 1)[0])
        oldest = received_us if oldest is None else min(oldest, received_us)
    age = None
    if oldest is not None:
        age = max(0.0, (now_s if now_s is not None else time.time()) - oldest / 1e6)
    return Depth(files, size, age)


# How long one process trusts its last look at the spool's size: the receiver asks on
# every request, and a look lists and stats every waiting file.
FULL_CHECK_S = 1.0
_last_look: tuple[float, bool] | None = None


def is_full() -> bool:
    """True past FLEETSCOPE_OTLP_SPOOL_MAX_MB waiting (looked at most once a second)."""
    global _last_look
    now = time.monotonic()
    if _last_look is None or now - _last_look[0] >= FULL_CHECK_S:
        _last_look = (now, depth().bytes >= max_bytes())
    return _last_look[1]


def read(path: Path) -> Spooled:
    """One spooled request; ValueError (or OSError) when the file cannot be read."""
    document = orjson.loads(path.read_bytes())
    if document.get("format") != FORMAT:
        raise ValueError(f"spool format {document.get('format')!r}, expected {FORMAT}")
    return Spooled(
        path=path,
        signal=Signal(document["signal"]),
        sender=document["sender"],
        digest=document["digest"],
        received_at=datetime.fromtimestamp(document["received_us"] / 1e6, tz=UTC),
        events=document["events"],
        requests=document["requests"],
        points=document["points"],
        rejected=[Rejected(*r) for r in document["rejected"]],
    )


def set_aside(path: Path, reason: str) -> Path:
    """Move a file the loader cannot read to `rejected/` beside a note of why, so one bad
    file never blocks the spool and nothing is deleted."""
    folder = path.parent / "rejected"
    folder.mkdir(exist_ok=True)
    target = folder / path.name
    path.replace(target)
    (folder / f"{path.name}.reason").write_text(reason + "\n")
    return target


def discard(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
