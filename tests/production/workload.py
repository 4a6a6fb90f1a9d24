"""What the production tests share (their topology fixture is conftest.py's): the runs a
generator writes and the truth it knows about them, eight API readers across the web
servers, an HTTP client that retries its batches, a harness appending to a tailed file,
and the counts read back from the lake."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

import warehouse
from ingest.synthetic import RunSpec, generate_run
from tests.production.topology import Topology

READERS = 8
HTTP_BATCH_LINES = 400


class Truth:
    """What the generator wrote for one run: the counts the lake must hold once."""

    def __init__(self, folder: Path, run: str, seed: int, workers: int) -> None:
        self.run = run
        self.path = folder / f"{run}.jsonl"
        spec = RunSpec(run=run, seed=seed, hours=1.5, workers=workers, planners=2)
        summary = generate_run(spec, self.path).summary(timedelta(minutes=30))
        self.events = int(summary["accepted"])
        self.commits = int(summary["commits"])
        self.agents = int(summary["agents"])


class Readers:
    """Eight API clients reading across both web servers until stopped. A server that
    is down (killed, not yet back) refuses the connection: the client goes on to the
    other, as a load balancer would; every HTTP answer is recorded."""

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.stopping = threading.Event()
        self.answers: Counter[int] = Counter()
        self.refused = 0
        self.seconds: list[float] = []
        # (time.monotonic() at the answer, status, its Retry-After) of each answer not a 200.
        self.errors: list[tuple[float, int, str | None]] = []
        self.last_ok = 0.0  # time.monotonic() of the latest 200
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._read, args=(n,)) for n in range(READERS)]

    def __enter__(self) -> Readers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def _read(self, n: int) -> None:
        paths = ["/api/runs?limit=20", "/api/runs?sort=events&limit=5"]
        turn = n
        while not self.stopping.is_set():
            turn += 1
            urls = self.topology.web_urls()
            url = urls[turn % len(urls)] + paths[turn % len(paths)]
            request = urllib.request.Request(  # noqa: S310 - loopback only
                url, headers={"Authorization": f"Bearer {self.topology.read_token}"}
            )
            started = time.monotonic()
            retry_after = None
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
                    answer.read()
                    status = answer.status
            except urllib.error.HTTPError as exc:
                status, retry_after = exc.code, exc.headers.get("Retry-After")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                with self.lock:
                    self.refused += 1
                time.sleep(0.05)
                continue
            ended = time.monotonic()
            with self.lock:
                self.answers[status] += 1
                self.seconds.append(ended - started)
                if status == 200:
                    self.last_ok = ended
                else:
                    self.errors.append((ended, status, retry_after))


def http_writer(topology: Topology, truth: Truth, failures: list[str]) -> None:
    """Post the run in batches, to either web server, each until acknowledged (a client's
    retries after a refused connection, a reset or a 5xx)."""
    lines = truth.path.read_bytes().splitlines(keepends=True)
    for n, start in enumerate(range(0, len(lines), HTTP_BATCH_LINES)):
        batch = b"".join(lines[start : start + HTTP_BATCH_LINES])
        for attempt in range(200):
            urls = topology.web_urls()
            request = urllib.request.Request(  # noqa: S310 - loopback only
                urls[(n + attempt) % len(urls)] + "/api/ingest/agent-events",
                data=batch,
                method="POST",
                headers={
                    "Authorization": f"Bearer {topology.ingest_token}",
                    "Content-Type": "application/x-ndjson",
                },
            )
            try:
                with urllib.request.urlopen(request, timeout=120) as answer:  # noqa: S310
                    if answer.status == 200:
                        break
            except urllib.error.HTTPError as exc:
                failures.append(f"batch {n}: {exc.code}")
            except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
                failures.append(f"batch {n}: {exc}")
            time.sleep(0.2)
        else:
            raise AssertionError(f"batch {n} never acknowledged: {failures[-3:]}")


def tailed_writer(tail: Path, truth: Truth, pieces: int = 4) -> None:
    """Append the run to a file in the tailed folder in pieces, as a live harness does."""
    lines = truth.path.read_bytes().splitlines(keepends=True)
    target = tail / truth.path.name
    step = -(-len(lines) // pieces)
    for start in range(0, len(lines), step):
        with target.open("ab") as out:
            out.write(b"".join(lines[start : start + step]))
        time.sleep(2.0)


def stored(run: str) -> dict[str, int]:
    row = warehouse.fetch_one(
        """
        SELECT count(*) AS events,
               count(DISTINCT agent) AS agents,
               count(*) - count(DISTINCT (source, source_line)) AS lines_twice,
               (SELECT count(*) FROM agent_rows WHERE run = $run) AS copies
        FROM events WHERE run = $run
        """,
        {"run": run},
    )
    assert row is not None
    return row


def api_run(topology: Topology, run: str) -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310 - loopback only
        f"{topology.web_urls()[0]}/api/runs?q={run}",
        headers={"Authorization": f"Bearer {topology.read_token}"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
        found = [r for r in orjson.loads(answer.read()) if r["run"] == run]
    assert len(found) == 1, found
    return dict(found[0])


def wait_for(run: str, events: int, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if stored(run)["events"] >= events:
            return
        time.sleep(1.0)


class OtlpClients:
    """Exporters posting OTLP metric batches to either web server until stopped, each
    batch retried with the same body until answered 200, as an OpenTelemetry exporter
    retries a 503 or a refused connection. Client c's batch b holds the points at BASE +
    (c * 100000 + b) * 10 + 0..9 seconds, so every acknowledged point is known."""

    BASE_S = 1772323200  # 2026-03-01T00:00:00Z
    POINTS = 10

    def __init__(self, topology: Topology, metric: str, clients: int = 2) -> None:
        self.topology, self.metric = topology, metric
        self.acked: list[tuple[int, int]] = []
        self.retries = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._send, args=(c,)) for c in range(clients)]

    def _body(self, client: int, number: int) -> bytes:
        from tests.otlp import DELTA, metrics_request, sum_metric

        first = (client * 100_000 + number) * self.POINTS
        points = [
            (datetime.fromtimestamp(self.BASE_S + first + i, UTC), 1, {"client": client})
            for i in range(self.POINTS)
        ]
        metrics = [sum_metric(self.metric, points, DELTA)]
        return metrics_request({"service.name": "topology"}, metrics).SerializeToString()

    def _send(self, client: int) -> None:
        number = 0
        while not self.stopping.is_set():
            body = self._body(client, number)
            for attempt in range(600):
                urls = self.topology.web_urls()
                request = urllib.request.Request(  # noqa: S310 - loopback only
                    urls[(number + attempt) % len(urls)] + "/v1/metrics",
                    data=body,
                    method="POST",
                    headers={
                        "Authorization": f"Bearer {self.topology.ingest_token}",
                        "Content-Type": "application/x-protobuf",
                    },
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
                        if answer.status == 200:
                            break
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass  # a 503 (HTTPError), a server down: retried, as exporters do
                with self.lock:
                    self.retries += 1
                time.sleep(0.2)
            else:
                raise AssertionError(f"OTLP batch {client}/{number} never acknowledged")
            with self.lock:
                self.acked.append((client, number))
            number += 1
            time.sleep(0.3)

    def __enter__(self) -> OtlpClients:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=150)

    def sent(self) -> list[tuple[int, int]]:
        """(client, seconds after BASE_S) of every acknowledged point, sorted."""
        return sorted(
            (c, (c * 100_000 + b) * self.POINTS + i)
            for c, b in self.acked
            for i in range(self.POINTS)
        )

    def stored(self) -> list[tuple[int, int]]:
        """The same of every point stored, duplicates kept."""
        rows = warehouse.fetch_rows(
            "SELECT CAST(json_extract(attrs, '$.client') AS BIGINT),"
            " CAST(epoch(ts) AS BIGINT) - ? FROM otlp_points WHERE metric = ? ORDER BY 1, 2",
            [self.BASE_S, self.metric],
        )
        return [(int(c), int(s)) for c, s in rows]


def wait_for_spool(topology: Topology, seconds: float = 180) -> None:
    """Until the workers have loaded every OTLP request the web servers spooled."""
    folder = topology.root / "data" / "spool" / "otlp"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not [p for p in folder.glob("*.json") if not p.name.startswith(".")]:
            return
        time.sleep(1.0)
    raise AssertionError(f"the OTLP spool still holds files after {seconds} s")
