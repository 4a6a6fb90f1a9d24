"""A lock file that one process of a machine holds at a time, for work that must not run
twice at once over the same local folder (draining a spool): the second process is told
at once, and skips its turn instead of waiting. Released by the kernel when its holder
exits, kill -9 included."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held_alone(path: Path) -> Iterator[bool]:
    """True while this process holds the lock at `path` (created if missing); False when
    another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
