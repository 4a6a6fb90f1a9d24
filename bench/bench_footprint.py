"""`python -m bench footprint`: the memory `make run` takes on the demo, all processes summed.

Starts scripts/run.sh (demo included) on a throwaway data dir and free loopback ports,
logs in as the demo user, loads every page once (the runs list, each run's page, the
overview, serving and an instance's page, tokens, costs, alerts) with every chart each
page draws, lets the worker and beat tick, then sums the resident memory (RSS, and PSS,
which shares copy-on-write pages between gunicorn's forked workers) of every process the
script started, and stops it. `python -m bench.bench_footprint --root DIR` measures another
checkout (say, main's commit exported to DIR) the same way, for the figure beside it.

It must not leave anything running: the stack is stopped, by a TERM to its group, however
the measurement ends.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 600
# After the pages: beat's first ticks (scrapes every 15 s, tails every 30 s) run on the worker.
SETTLE_S = 35
# The pages a visitor opens from the navigation; each run's and instance's page is found
# from the lists' links.
PAGES = ("/", "/overview/", "/serving/", "/tokens/", "/costs/", "/alerts/")
LINKED = re.compile(r'href="(/(?:runs|serving)/[^"?#]+/)"')
CHART = re.compile(r'data-src="([^"]+)"')


@dataclass(frozen=True)
class Process:
    pid: int
    command: str
    rss_mb: float
    pss_mb: float


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _memory_kb(pid: int, field: str, file: str) -> int:
    for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(pids: list[int]) -> list[Process]:
    """Each live process's RSS and PSS, in MB."""
    found = []
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            rss = _memory_kb(pid, "VmRSS", "status")
            pss = _memory_kb(pid, "Pss", "smaps_rollup")
        except OSError:
            continue  # gone meanwhile (a short-lived helper)
        found.append(Process(pid, command.strip()[:90], rss / 1024, pss / 1024))
    return found


class Browser:
    """A logged-in session on the stack: cookies kept, each URL fetched at most once."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.seen: set[str] = set()

    def get(self, path: str) -> str:
        with self.opener.open(self.base_url + path, timeout=300) as answer:
            return answer.read().decode("utf-8", "replace")

    def log_in(self, username: str, password: str) -> None:
        form = self.get("/accounts/login/")
        match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        if match is None:
            raise RuntimeError("the login page has no CSRF token")
        body = urllib.parse.urlencode(
            {"csrfmiddlewaretoken": match.group(1), "username": username, "password": password}
        ).encode()
        request = urllib.request.Request(  # noqa: S310 - the stack's own loopback URL
            self.base_url + "/accounts/login/",
            data=body,
            headers={"Referer": self.base_url + "/accounts/login/"},
        )
        with self.opener.open(request, timeout=60) as answer:
            if "/accounts/login/" in answer.geturl():
                raise RuntimeError("the demo login was refused")

    def visit(self, path: str) -> str:
        """A page and every chart it draws."""
        self.seen.add(path)
        html = self.get(path)
        for src in CHART.findall(html):
            src = src.replace("&amp;", "&")
            if src not in self.seen:
                self.seen.add(src)
                self.get(src)
        return html


def load_every_page(browser: Browser) -> int:
    """Visit the navigation's pages, then each run's and instance's page they link to."""
    linked: list[str] = []
    for page in PAGES:
        html = browser.visit(page)
        linked += [urllib.parse.unquote(p) for p in LINKED.findall(html)]
    for page in dict.fromkeys(linked):
        if page not in browser.seen:
            browser.visit(urllib.parse.quote(page))
    return len(browser.seen)


def _start(root: Path, data_dir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETSCOPE_", "DJANGO_"))}
    env.update(
        FLEETSCOPE_DATA_DIR=str(data_dir),
        PORT=str(port),
        STANDIN_VLLM_PORT=str(_free_port()),
    )
    with log.open("wb") as out:
        return subprocess.Popen(
            ["bash", "scripts/run.sh"],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(script: subprocess.Popen[bytes]) -> None:
    if script.poll() is None:
        os.killpg(script.pid, signal.SIGTERM)
    try:
        script.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(script.pid, signal.SIGKILL)
        script.wait(timeout=10)


def footprint(root: Path = ROOT, settle_s: float = SETTLE_S) -> list[Process]:
    """Start the stack of the checkout at `root` on the demo, load every page, and return
    the memory of each of its processes."""
    data_dir = Path(tempfile.mkdtemp(prefix="fleetscope-footprint-"))
    port = _free_port()
    log = data_dir / "run.log"
    script = _start(root, data_dir, port, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while b"Fleetscope is running" not in log.read_bytes():
            if script.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"run.sh did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        browser = Browser(f"http://127.0.0.1:{port}")
        password = (data_dir / "demo" / "password").read_text().strip()
        browser.log_in("demo", password)
        fetched = load_every_page(browser)
        print(f"   {fetched} pages and charts loaded", flush=True)
        time.sleep(settle_s)
        return measure([script.pid, *_descendants(script.pid)])
    finally:
        _stop(script)


def report(processes: list[Process], label: str) -> None:
    for p in sorted(processes, key=lambda p: -p.rss_mb):
        if p.rss_mb >= 5:
            print(f"   {p.rss_mb:7.0f} MB RSS {p.pss_mb:7.0f} MB PSS  {p.command}")
    rss = sum(p.rss_mb for p in processes)
    pss = sum(p.pss_mb for p in processes)
    print(f"   {label}: {rss:.0f} MB RSS in all ({pss:.0f} MB PSS), {len(processes)} processes")


def run() -> None:
    report(footprint(), "make run on the demo")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="seconds after the pages")
    args = parser.parse_args()
    report(footprint(args.root.resolve(), args.settle), f"make run of {args.root}")
    sys.exit(0)
