"""`make run` (scripts/run.sh) stops everything it started, whatever signals reach it and in
whatever order: Ctrl-C (INT to the process group), twice; TERM to the group; TERM, HUP or
INT to the script alone; a mix. Within 10 s of the first signal every process it started
(gunicorn and its workers, the Celery worker and its pool, beat, the stand-in vLLM) is
gone, the ports are free, and the next start on the same ports and data dir succeeds.

Each case starts the whole stack with `--no-demo` (the demo load is not what is tested)
over one data dir shared by the module, on loopback ports picked free."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.otlp_stack import running

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 180
STOP_DEADLINE_S = 10.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@dataclass(frozen=True)
class Stack:
    data_dir: Path
    web_port: int
    vllm_port: int

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
        env.pop("DATABASE_URL", None)
        env.pop("CELERY_BROKER_URL", None)
        env.update(
            FLEETSCOPE_DATA_DIR=str(self.data_dir),
            FLEETSCOPE_SECRET_KEY="run-script-test-key-0123456789abcdefghijklmnop",
            PORT=str(self.web_port),
            STANDIN_VLLM_PORT=str(self.vllm_port),
        )
        return env


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Stack:
    return Stack(tmp_path_factory.mktemp("run-script") / "data", _free_port(), _free_port())


def _children(pid: int) -> dict[int, list[int]]:
    """Every process's children, read from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> set[int]:
    tree = _children(pid)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"


@dataclass
class Running:
    script: subprocess.Popen[bytes]
    processes: set[int]


def _start(stack: Stack, output: Path) -> Running:
    """Start scripts/run.sh in a process group of its own, as a terminal would, and wait
    until it says it is running; then take every process it started."""
    assert _port_is_free(stack.web_port) and _port_is_free(stack.vllm_port)
    with output.open("wb") as out:
        script = subprocess.Popen(
            ["bash", "scripts/run.sh", "--no-demo"],
            cwd=ROOT,
            env=stack.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while b"Fleetscope is running" not in output.read_bytes():
        if script.poll() is not None or time.monotonic() > deadline:
            script.kill()
            raise AssertionError(f"run.sh did not start:\n{output.read_text()[-3000:]}")
        time.sleep(0.5)
    with urllib.request.urlopen(
        f"http://127.0.0.1:{stack.web_port}/accounts/login/", timeout=10
    ) as answer:
        assert answer.status == 200
    # The stand-in vLLM answers too: it is one of the services to stop.
    with urllib.request.urlopen(f"http://127.0.0.1:{stack.vllm_port}/metrics", timeout=10):
        pass
    processes = _descendants(script.pid)
    commands = " | ".join(_command(p) for p in processes)
    for service in ("gunicorn", "worker", "beat", "ingest.standin_vllm"):
        assert service in commands, commands
    return Running(script, processes)


def _send(running: Running, target: str, name: str) -> None:
    sig = getattr(signal, f"SIG{name}")
    if target == "group":
        os.killpg(running.script.pid, sig)
    else:
        os.kill(running.script.pid, sig)


# (seconds after the previous signal, target, signal), in the order sent. `make run` itself
# turns one signal into two at once: TERM to the group reaches make, which sends its child
# the script a TERM of its own.
ORDERS = {
    "ctrl-c": [(0.0, "group", "INT")],
    "ctrl-c-twice-at-once": [(0.0, "group", "INT"), (0.0, "group", "INT")],
    "ctrl-c-twice": [(0.0, "group", "INT"), (0.3, "group", "INT")],
    "term-to-group-as-make-does": [(0.0, "group", "TERM"), (0.0, "script", "TERM")],
    "term-to-script-then-ctrl-c": [(0.0, "script", "TERM"), (0.3, "group", "INT")],
    "hup-to-script": [(0.0, "script", "HUP")],
    "int-term-hup-to-script": [
        (0.0, "script", "INT"),
        (0.05, "script", "TERM"),
        (0.05, "script", "HUP"),
    ],
}


@pytest.fixture
def started(stack: Stack, tmp_path: Path) -> Iterator[Running]:
    running = _start(stack, tmp_path / "run.log")
    yield running
    for pid in running.processes | {running.script.pid}:  # a failed case cleans up after itself
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    running.script.wait(timeout=10)


@pytest.mark.parametrize("order", list(ORDERS), ids=list(ORDERS))
def test_every_signal_order_stops_every_process_within_10_s(
    order: str, stack: Stack, started: Running
) -> None:
    first = time.monotonic()
    for pause_s, target, name in ORDERS[order]:
        time.sleep(pause_s)
        if started.script.poll() is None:
            _send(started, target, name)
    started.script.wait(timeout=STOP_DEADLINE_S + 2)
    while (left := {p for p in started.processes if running(p)}) and (
        time.monotonic() - first < STOP_DEADLINE_S
    ):
        time.sleep(0.2)
    elapsed = time.monotonic() - first
    assert not left, [_command(p) for p in left]
    assert elapsed < STOP_DEADLINE_S
    assert _port_is_free(stack.web_port)
    assert _port_is_free(stack.vllm_port)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{stack.web_port}/", timeout=2)
