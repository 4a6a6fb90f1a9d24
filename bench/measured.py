"""Run a command and measure it alone: its wall and CPU seconds, and its own peak memory.

Linux carries a process's peak resident set over into the program it execs, so a command
started straight from a benchmark that has itself held 900 MiB reports (ru_maxrss) a peak
of at least 900 MiB, whatever it used. Started from this small process instead
(`python bench/measured.py CMD...`), the command's peak is its own. That process prints,
after the command's own output, one JSON line of figures; run() reads it back.

Standard library only: this file also runs as a script, outside Django.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO


@dataclass
class Measured:
    stdout: bytes  # the command's own output
    seconds: float
    cpu_seconds: float
    peak_mib: float


def run(
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stderr: int | IO[bytes] | None = None,
) -> Measured:
    """Run `command` (which must succeed: CalledProcessError otherwise) and measure it."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *command],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=stderr,
        check=True,
    )
    output, _, last = done.stdout.rstrip(b"\n").rpartition(b"\n")
    figures = json.loads(last)
    return Measured(
        output + b"\n" if output else b"",
        figures["seconds"],
        figures["cpu_seconds"],
        figures["peak_kib"] / 1024,  # Linux reports KiB
    )


def main(command: list[str]) -> int:
    started = time.perf_counter()
    done = subprocess.run(command)  # its output goes straight to ours
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = {
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_kib": usage.ru_maxrss,
    }
    sys.stdout.write(json.dumps(figures) + "\n")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
