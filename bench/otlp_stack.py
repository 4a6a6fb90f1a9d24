"""A Fleetscope web server of its own for OTLP load and crash runs: gunicorn on a free
loopback port over a throwaway data dir, an ingest-scoped token to send with, and the
spool's drainer as a separate process (what the Celery beat task runs).

Owns starting, finding and stopping those processes (bench/bench_otlp.py and the crash
tests, tests/ingest/pipelines/test_otlp_crash.py, use it). Every process it starts is in
a process group of its own and is stopped by `stop()`, by its pid; nothing here reads or
writes the warehouse itself (the drainers and the migration do, in their own processes).

Standard library only, so it runs outside Django too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 60
USERNAME = "shipper"

# The drainer, as `ingest.load_otlp` runs it (ingest/tasks.py), in a loop: each pass loads
# what the spool holds, then waits `pause` seconds (the beat schedule's tick) when it was
# empty. Run as `python -c DRAINER pause`.
DRAINER = """
import sys, time, django
django.setup()
from ingest.pipelines.otlp import drain
pause = float(sys.argv[1])
while True:
    summary = drain(seconds=50.0)
    if not summary.files:
        time.sleep(pause)
"""

# One full drain, `files_per_load` files a transaction, then exit
# (`python -c DRAIN_ONCE files_per_load`).
DRAIN_ONCE = """
import sys, django
django.setup()
from ingest.pipelines.otlp import drain
drain(seconds=600.0, files_per_load=int(sys.argv[1]))
"""

# Django set up and the loader imported once (seconds), then one drainer forked per line
# read on stdin (`files_per_load`), its pid written back: a drainer to kill mid-drain
# that starts in a fraction of a second. Exited drainers are reaped by the kernel.
DRAINERS = """
import os, signal, sys, django
django.setup()
from ingest.pipelines.otlp import drain
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        drain(seconds=600.0, files_per_load=int(line))
        os._exit(0)
    sys.stdout.write(f"{pid}\\n")
    sys.stdout.flush()
"""

# Both databases migrated, then the user and their token (one process: each start of
# Django costs seconds).
_PREPARE = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
from django.contrib.auth.models import User
from analytics.access.models import Access
from dashboard.models import ApiToken
from lib.access import Scope
user = User.objects.create_user({name!r}, {name!r} + "@example.com", "shipper-password-0123")
Access.objects.create(user=user, role="admin", all_teams=True)
print(ApiToken.issue(user, "otlp reader", scope=Scope.READ)[1])
print(ApiToken.issue(user, "otlp stack", scope=Scope.INGEST)[1])
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Stack:
    data_dir: Path
    port: int = field(default_factory=free_port)
    token: str = ""  # ingest-scoped: what the clients send with
    read_token: str = ""  # read-scoped: what a bench polls /api/runs with
    web: subprocess.Popen[bytes] | None = None
    drainer: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
        env.pop("DATABASE_URL", None)
        env.update(
            FLEETSCOPE_DATA_DIR=str(self.data_dir),
            FLEETSCOPE_SECRET_KEY="otlp-stack-key-0123456789abcdefghijklmnopqrstuvwxyz",
            DJANGO_SETTINGS_MODULE="dashboard.settings",
            PYTHONPATH=str(ROOT),
        )
        return env

    def python(self, code: str, *args: str) -> subprocess.Popen[bytes]:
        """`python -c code args...` in this stack's environment, in its own process group."""
        return subprocess.Popen(
            [sys.executable, "-c", code, *args],
            cwd=ROOT,
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=(self.data_dir / "python.log").open("ab"),
            start_new_session=True,
        )

    def drainers(self) -> subprocess.Popen[bytes]:
        """The DRAINERS process: write `files_per_load` lines to its stdin, read pids."""
        return subprocess.Popen(
            [sys.executable, "-c", DRAINERS],
            cwd=ROOT,
            env=self.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(self.data_dir / "python.log").open("ab"),
            start_new_session=True,
        )

    def prepare(self) -> None:
        """Both databases migrated, a user (an admin of every team) and their
        ingest-scoped and read-scoped tokens."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        made = subprocess.run(
            [sys.executable, "-c", _PREPARE.format(name=USERNAME)],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            check=True,
        )
        self.read_token, self.token = made.stdout.decode().strip().splitlines()[-2:]

    def start_web(self, workers: int | None = None) -> None:
        """gunicorn with `make run`'s settings (scripts/gunicorn.conf.py), `workers` of them
        when given; returns once it answers."""
        command = [
            str(Path(sys.executable).parent / "gunicorn"),
            "dashboard.wsgi:application",
            "--config",
            "scripts/gunicorn.conf.py",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--access-logfile",
            "/dev/null",
        ]
        if workers is not None:
            command += ["--workers", str(workers)]
        log = (self.data_dir / "web.log").open("ab")
        self.web = subprocess.Popen(
            command, cwd=ROOT, env=self.env(), stdout=log, stderr=log, start_new_session=True
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers():
            if self.web.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not start: {self.tail()}")
            time.sleep(0.2)
        if workers is not None:
            while len(self.workers()) < workers:
                time.sleep(0.1)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"GET /api/health HTTP/1.0\r\n\r\n")
                return sock.recv(12).startswith(b"HTTP/1.")
        except OSError:
            return False

    def tail(self) -> str:
        path = self.data_dir / "web.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def workers(self) -> list[int]:
        """The gunicorn master's live worker processes."""
        if self.web is None:
            return []
        return [p for p in children(self.web.pid) if running(p)]

    def web_pids(self) -> list[int]:
        return ([self.web.pid] if self.web is not None else []) + self.workers()

    def start_drainer(self, pause: float = 0.2) -> None:
        self.drainer = self.python(DRAINER, str(pause))

    def kill(self, pid: int) -> None:
        """SIGKILL one process (a gunicorn worker, say: its master starts another)."""
        _kill(pid, signal.SIGKILL)

    def kill_web(self) -> None:
        """SIGKILL the master and its workers (a machine's crash, as the web server sees it)."""
        if self.web is None:
            return
        pids = self.web_pids()
        for pid in pids:
            _kill(pid, signal.SIGKILL)
        self.web.wait(timeout=10)
        self.web = None
        deadline = time.monotonic() + 10
        while any(running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)

    def web_down(self) -> None:
        """Stop the web server (TERM: its requests finish), leaving the drainer running."""
        if self.web is not None:
            _kill_group(self.web.pid, signal.SIGTERM)
            self.web.wait(timeout=20)
            self.web = None

    def stop(self) -> None:
        """Stop everything this stack started: TERM, then KILL what is left after 10 s."""
        for process in (self.drainer, self.web):
            if process is not None and process.poll() is None:
                _kill_group(process.pid, signal.SIGTERM)
        for process in (self.drainer, self.web):
            if process is None:
                continue
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _kill_group(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.drainer = self.web = None


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def rss_bytes(pids: list[int]) -> int:
    """The summed resident set of these processes (VmRSS), those still alive."""
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.kill(pid, sig)


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(pid, sig)
