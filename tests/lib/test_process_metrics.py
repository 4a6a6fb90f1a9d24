"""The multiprocess folder's housekeeping: what gunicorn's hooks remove, and what stays."""

import os
import subprocess
import sys
from pathlib import Path

from lib.process_metrics import remove_dead_processes


def _ended_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_the_files_of_ended_processes_are_removed(tmp_path: Path) -> None:
    ended, running = _ended_pid(), os.getpid()
    for name in (
        f"counter_{ended}.db",
        f"histogram_{ended}.db",
        f"counter_{running}.db",
        f"gauge_livesum_{running}.db",
        "notes.txt",
        "counter_x.db",
    ):
        (tmp_path / name).write_bytes(b"")
    removed = remove_dead_processes(tmp_path)
    assert sorted(p.name for p in removed) == [f"counter_{ended}.db", f"histogram_{ended}.db"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"counter_{running}.db", f"gauge_livesum_{running}.db", "notes.txt", "counter_x.db"]
    )
