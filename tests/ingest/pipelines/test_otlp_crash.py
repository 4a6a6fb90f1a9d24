"""Crashes against a real gunicorn (bench/otlp_stack.py): a chunked body read whole, web
workers and the master killed with SIGKILL under load from four retrying clients, and the
drainer killed mid-drain; in every case each point of every acknowledged batch is stored
exactly once. One stack (data dir, databases, token) serves the module; each test uses
a metric of its own."""

from __future__ import annotations

import http.client
import os
import signal
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

import warehouse
from bench.otlp_stack import DRAIN_ONCE, Stack, running
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp_spool
from ingest.sources.otlp import Signal
from tests.otlp import DELTA, metrics_request, sum_metric

BASE = datetime(2026, 3, 1, tzinfo=UTC)
BASE_S = int(BASE.timestamp())
POINTS_PER_BATCH = 10
CLIENTS = 4


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The module's stack, its web server started (two workers) and stopped by the tests
    that need it so."""
    started = Stack(tmp_path_factory.mktemp("otlp-crash") / "data")
    started.prepare()
    started.start_web(workers=2)
    try:
        yield started
    finally:
        started.stop()


def _batch(metric: str, client: int, number: int) -> bytes:
    """A batch of POINTS_PER_BATCH points no other batch has: client c's batch b holds
    the seconds BASE + (c * 100000 + b) * 10 + 0..9."""
    first = (client * 100_000 + number) * POINTS_PER_BATCH
    points = [
        (datetime.fromtimestamp(BASE_S + first + i, UTC), 1, {"client": client})
        for i in range(POINTS_PER_BATCH)
    ]
    request = metrics_request({"service.name": "crash-test"}, [sum_metric(metric, points, DELTA)])
    return request.SerializeToString()


def _post(stack: Stack, path: str, body: Any, **headers: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=10)
    try:
        connection.request(
            "POST",
            path,
            body=body,
            headers={
                "Content-Type": "application/x-protobuf",
                "Authorization": f"Bearer {stack.token}",
                **headers,
            },
            encode_chunked=not isinstance(body, bytes),
        )
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


STORED_SQL = """
SELECT CAST(json_extract(attrs, '$.client') AS BIGINT) AS client,
       CAST(epoch(ts) AS BIGINT) - ? AS offset_s
FROM otlp_points WHERE metric = ? ORDER BY client, offset_s
"""


def _stored(stack: Stack, settings: Any, metric: str) -> list[tuple[int, int]]:
    """(client, seconds after BASE) of every stored point of the metric, duplicates kept,
    read from the stack's warehouse (opened here once its writers are done)."""
    warehouse.close()
    settings.DATA_DIR = stack.data_dir
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{stack.data_dir / 'warehouse.sqlite'}"
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(stack.data_dir / "lake") + "/"
    try:
        rows = warehouse.fetch_all(STORED_SQL, [BASE_S, metric])
    finally:
        warehouse.close()
    return [(r["client"], r["offset_s"]) for r in rows]


def _sent(acked: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The points of these (client, batch) pairs, as _batch numbers them."""
    return sorted(
        (c, (c * 100_000 + b) * POINTS_PER_BATCH + i)
        for c, b in acked
        for i in range(POINTS_PER_BATCH)
    )


def test_a_chunked_body_is_read_whole(stack: Stack, settings: Any) -> None:
    settings.DATA_DIR = stack.data_dir
    body = _batch("crash.chunked", 3, 7)
    pieces = iter([body[:7], body[7:40], body[40:]])  # no Content-Length: chunked
    assert _post(stack, "/v1/metrics", pieces) == 200
    [path] = otlp_spool.pending_files()
    spooled = otlp_spool.read(path)
    assert spooled.digest == otlp_spool.body_digest(body)  # every byte of it
    # Client 3's batch 7: seconds (3 * 100000 + 7) * 10 + 0..9 after BASE, ten of them.
    first = datetime.fromtimestamp(BASE_S + 3_000_070, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    assert [p["ts"] for p in spooled.points][:1] == [f"{first}.000000Z"]
    assert len(spooled.points) == 10
    otlp_spool.discard([path])


class Clients:
    """CLIENTS threads sending batches until told to stop, each batch retried with the
    same body until it is answered 200 (as an exporter retries), never given up on."""

    def __init__(self, stack: Stack, metric: str) -> None:
        self.stack, self.metric = stack, metric
        self.acked: list[tuple[int, int]] = []
        self.retries = 0
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._send, args=(c,)) for c in range(CLIENTS)]
        self.lock = threading.Lock()

    def _send(self, client: int) -> None:
        number = 0
        while not self.stopping.is_set():
            body = _batch(self.metric, client, number)
            deadline = time.monotonic() + 60
            while True:
                try:
                    if _post(self.stack, "/v1/metrics", body) == 200:
                        break
                except (OSError, http.client.HTTPException):
                    pass  # the server is down (killed): retried below, as an exporter does
                with self.lock:
                    self.retries += 1
                assert time.monotonic() < deadline, "a batch was never acknowledged"
                time.sleep(0.05)
            with self.lock:
                self.acked.append((client, number))
            number += 1
            time.sleep(0.01)

    def __enter__(self) -> Clients:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=90)

    def wait_for(self, acked: int) -> None:
        deadline = time.monotonic() + 30
        while len(self.acked) < acked:
            assert time.monotonic() < deadline, f"only {len(self.acked)} batches acknowledged"
            time.sleep(0.02)


def test_killing_the_web_server_under_load_loses_and_doubles_nothing(
    stack: Stack, settings: Any
) -> None:
    stack.start_drainer()  # loading alongside, as the beat task does
    try:
        with Clients(stack, "crash.web") as clients:
            first, second = stack.workers()
            for victim in (first, second):  # one, then the other while it is replaced
                clients.wait_for(len(clients.acked) + 10)
                stack.kill(victim)
            clients.wait_for(len(clients.acked) + 10)
            stack.kill_web()  # the master and its workers at once
            stack.start_web(workers=2)
            clients.wait_for(len(clients.acked) + 10)
            stack.kill(stack.workers()[0])
            clients.wait_for(len(clients.acked) + 10)
        assert clients.retries > 0  # the kills did land on requests
        stack.web_down()
        deadline = time.monotonic() + 60
        while otlp_spool_files(stack) and time.monotonic() < deadline:
            time.sleep(0.05)  # files are removed only once their transaction committed
    finally:
        stack.stop()
    assert otlp_spool_files(stack) == 0
    assert _stored(stack, settings, "crash.web") == _sent(clients.acked)


def otlp_spool_files(stack: Stack) -> int:
    return len(list((stack.data_dir / "spool" / "otlp").glob("*.json")))


def test_killing_the_drainer_mid_drain_loses_and_doubles_nothing(
    stack: Stack, settings: Any
) -> None:
    settings.DATA_DIR = stack.data_dir  # the spool is written here, the drainer reads it
    sender = Sender("shipper")
    batches = [(c, b) for c in range(CLIENTS) for b in range(20)]
    retried = batches[::6]  # a retry of every sixth batch, in a file of its own
    for client, number in batches + retried:
        body = _batch("crash.drain", client, number)
        request = ExportMetricsServiceRequest.FromString(body)
        mapped = map_request(Signal.METRICS, request, sender)
        otlp_spool.append(mapped, sender, otlp_spool.body_digest(body))
    total = otlp_spool_files(stack)
    assert total == 80 + 14
    drainers = stack.drainers()  # each drainer a fork of one process set up once
    assert drainers.stdin is not None and drainers.stdout is not None
    try:
        for kill in range(3):
            before = otlp_spool_files(stack)
            drainers.stdin.write(b"4\n")  # 4 files a transaction: many of them
            drainers.stdin.flush()
            drainer = int(drainers.stdout.readline())
            deadline = time.monotonic() + 60
            while otlp_spool_files(stack) >= before:  # until a transaction has committed
                assert running(drainer)
                assert time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(0.05 * kill)  # at another point of a transaction each time
            os.kill(drainer, signal.SIGKILL)
            # Gone, every thread of it (a killed leader shows as a zombie while DuckDB's
            # threads still exit, holding the drain lock): the next one is not refused.
            while Path(f"/proc/{drainer}").exists():
                time.sleep(0.01)
    finally:
        drainers.kill()
        drainers.wait(timeout=10)
    left = otlp_spool_files(stack)
    assert 0 < left < total  # killed mid-drain each time, with files still waiting
    assert stack.python(DRAIN_ONCE, "4").wait(timeout=120) == 0
    assert otlp_spool_files(stack) == 0
    assert _stored(stack, settings, "crash.drain") == _sent(batches)
