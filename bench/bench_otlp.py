"""`make bench otlp`: sustained OTLP logs ingest, as issue 22's numbers ask, beside a bare
decode of the same bodies.

gunicorn on a free loopback port with `make run`'s settings (scripts/gunicorn.conf.py:
one worker, eight threads), over a throwaway data dir (bench/otlp_stack.py); the drainer
alongside in a process of its own, as the beat task runs it (ingest.pipelines.otlp.drain,
again every FLEETSCOPE_OTLP_LOAD_SECONDS when the spool was empty). Four client threads,
each on a kept-alive connection, POST protobuf ExportLogsServiceRequest batches of 512
Claude Code `api_request` and `tool_result` records (the attributes Claude Code sends;
each batch a session of its own) for `--seconds` (60). Reported: records/s acknowledged,
p50/p99 request latency, the server's peak RSS (master and workers summed, sampled every
0.25 s), the loader's records/s and the backlog left at the end, the time from a marker
session's 200 (sent halfway through, the load going on) to its run on /api/runs, and a bare `ParseFromString` of the same bodies in
this process, records/s, with the ratio (the figure that holds across machines).

`python -m bench otlp`, or `python -m bench.bench_otlp --seconds 10`;
FLEETSCOPE_BENCH_OTLP_SECONDS sets the default. Stops everything it started however the
run ends.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from bench.otlp_stack import Stack, rss_bytes
from ingest.sources.otlp import any_value

SECONDS = int(os.environ.get("FLEETSCOPE_BENCH_OTLP_SECONDS", "60"))
CLIENTS = 4
RECORDS = 512
LOAD_SECONDS = 2.0  # the beat schedule's tick (FLEETSCOPE_OTLP_LOAD_SECONDS)
VISIBLE_WITHIN_S = 30.0  # how long the marker session is waited for
# Each batch's session: this placeholder, replaced in the serialized body by one of the
# same length (a protobuf string's bytes can change, never its length).
PLACEHOLDER = b"00000000-bench-session-00000000"
BASE_NS = 1_772_359_200 * 1_000_000_000  # 2026-03-01T10:00:00Z
TARGETS = "targets: >= 20,000 records/s, p99 < 250 ms, RSS < 1 GiB, visible < 10 s"


def _kv(key: str, value: str | int | float) -> KeyValue:
    return KeyValue(key=key, value=any_value(value))


def _record(i: int) -> LogRecord:
    """Record i of a batch: api_request or tool_result in turn, Claude Code's attributes."""
    at = BASE_NS + i * 150_000_000
    common: dict[str, str | int | float] = {
        "session.id": PLACEHOLDER.decode(),
        "user.id": "5f1c0a7e9b3d4c2a8e6f",
        "user.email": f"dev{i % 20}@example.com",
        "organization.id": "7c2e4b1a-org",
        "user.account_uuid": "a1b2c3d4-account",
        "terminal.type": "vscode",
        "event.timestamp": f"2026-03-01T10:{(i // 400) % 60:02d}:{(i // 7) % 60:02d}.000Z",
        "event.sequence": i,
    }
    if i % 2 == 0:
        name = "api_request"
        attrs: dict[str, str | int | float] = {
            "event.name": name,
            "model": "claude-sonnet-4-5-20250929",
            "input_tokens": 1200 + i,
            "output_tokens": 340 + i % 97,
            "cache_read_tokens": 24000,
            "cache_creation_tokens": 512,
            "cost_usd": 0.0412,
            "duration_ms": 5321 + i,
            "speed": "normal",
            "query_source": "repl_main_thread",
            "request_id": f"req_011CX{i:010d}",
        }
    else:
        name = "tool_result"
        attrs = {
            "event.name": name,
            "tool_name": "Bash" if i % 3 else "Edit",
            "success": "true" if i % 11 else "false",
            "duration_ms": 812 + i,
            "tool_use_id": f"toolu_01{i:012d}",
            "tool_parameters": '{"bash_command":"pytest -q","full_command":"pytest -q tests"}',
        }
    record = LogRecord(time_unix_nano=at, observed_time_unix_nano=at)
    record.body.string_value = f"claude_code.{name}"
    record.attributes.extend(_kv(k, v) for k, v in {**common, **attrs}.items())
    return record


def template() -> bytes:
    request = ExportLogsServiceRequest()
    group = request.resource_logs.add()
    group.resource.attributes.extend(
        _kv(k, v)
        for k, v in {
            "service.name": "claude-code",
            "service.version": "2.1.3",
            "os.type": "linux",
            "host.arch": "amd64",
            "team.id": "platform",
            "department": "engineering",
            "cost_center": "cc-42",
        }.items()
    )
    scope = group.scope_logs.add()
    scope.scope.name = "com.anthropic.claude_code.events"
    scope.log_records.extend(_record(i) for i in range(RECORDS))
    return request.SerializeToString()


def session_of(client: int, number: int) -> bytes:
    session = f"{client:08d}-bench-session-{number:08d}".encode()
    assert len(session) == len(PLACEHOLDER)
    return session


class Load:
    def __init__(self, stack: Stack, body: bytes, seconds: float) -> None:
        self.stack, self.body, self.seconds = stack, body, seconds
        self.latencies: list[float] = []
        self.acked = 0  # records
        self.failed = 0  # answers other than 200
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.rss_peak = 0
        self.bodies_sent: list[bytes] = []  # a few, for the bare decode
        self.visible: float | None = None
        self.backlog_files = 0

    def _client(self, client: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.stack.port, timeout=60)
        headers = {
            "Content-Type": "application/x-protobuf",
            "Authorization": f"Bearer {self.stack.token}",
        }
        number = 0
        while not self.stopping.is_set():
            body = self.body.replace(PLACEHOLDER, session_of(client, number))
            if number < 4:
                with self.lock:
                    self.bodies_sent.append(body)
            started = time.perf_counter()
            try:
                connection.request("POST", "/v1/logs", body=body, headers=headers)
                answer = connection.getresponse()
                answer.read()
                status = answer.status
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.stack.port, timeout=60)
                status = 0
            took = time.perf_counter() - started
            with self.lock:
                if status == 200:
                    self.latencies.append(took)
                    self.acked += RECORDS
                else:
                    self.failed += 1
            number += 1
        connection.close()

    def _sample(self) -> None:
        while not self.stopping.is_set():
            self.rss_peak = max(self.rss_peak, rss_bytes(self.stack.web_pids()))
            time.sleep(0.25)

    def run(self) -> float:
        """The load for `seconds`; halfway through, the marker session is sent and
        watched for (self.visible) while the load goes on."""
        threads = [threading.Thread(target=self._client, args=(c,)) for c in range(CLIENTS)]
        sampler = threading.Thread(target=self._sample)
        marker = threading.Thread(target=self._watch_marker)
        started = time.perf_counter()
        for thread in [*threads, sampler]:
            thread.start()
        time.sleep(self.seconds / 2)
        marker.start()
        time.sleep(self.seconds / 2)
        self.stopping.set()
        for thread in [*threads, sampler]:
            thread.join()
        took = time.perf_counter() - started
        self.backlog_files = _pending(self.stack)  # as the load ends, not after the marker
        marker.join()
        return took

    def _watch_marker(self) -> None:
        self.visible = visibility(self.stack, self.body)


def _runs(stack: Stack) -> set[str]:
    connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=30)
    try:
        connection.request(
            "GET", "/api/runs", headers={"Authorization": f"Bearer {stack.read_token}"}
        )
        answer = connection.getresponse()
        return {r["run"] for r in json.loads(answer.read())} if answer.status == 200 else set()
    finally:
        connection.close()


def visibility(stack: Stack, body: bytes) -> float | None:
    """Seconds from the marker batch's 200 to its session on /api/runs; None when it did
    not show within VISIBLE_WITHIN_S."""
    marker = session_of(99, 99_999_999)
    connection = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=60)
    connection.request(
        "POST",
        "/v1/logs",
        body=body.replace(PLACEHOLDER, marker),
        headers={
            "Content-Type": "application/x-protobuf",
            "Authorization": f"Bearer {stack.token}",
        },
    )
    answer = connection.getresponse()
    answer.read()
    connection.close()
    assert answer.status == 200, answer.status
    acked = time.perf_counter()
    while time.perf_counter() - acked < VISIBLE_WITHIN_S:
        if marker.decode() in _runs(stack):
            return time.perf_counter() - acked
        time.sleep(0.1)
    return None


def bare_decode(bodies: list[bytes], seconds: float = 3.0) -> float:
    """Records/s of ExportLogsServiceRequest.FromString over these bodies, in turn."""
    records, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for body in bodies:
            request = ExportLogsServiceRequest.FromString(body)
            records += sum(len(s.log_records) for g in request.resource_logs for s in g.scope_logs)
    return records / (time.perf_counter() - started)


def _pending(stack: Stack) -> int:
    return len(list((stack.data_dir / "spool" / "otlp").glob("*.json")))


def run(seconds: float = SECONDS) -> dict[str, Any]:
    stack = Stack(Path(tempfile.mkdtemp(prefix="fleetscope-bench-otlp-")) / "data")
    stack.prepare()
    try:
        stack.start_web()
        stack.start_drainer(pause=LOAD_SECONDS)
        body = template()
        load = Load(stack, body, seconds)
        took = load.run()
        backlog_files = load.backlog_files
        visible = load.visible
        loaded_records = load.acked - backlog_files * RECORDS
    finally:
        stack.stop()
    decode = bare_decode(load.bodies_sent)  # with the server stopped: nothing else running
    rate = load.acked / took
    latencies = sorted(load.latencies)
    p50 = statistics.median(latencies) * 1000 if latencies else float("nan")
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else float("nan")
    figures = {
        "seconds": round(took, 1),
        "records_acknowledged": load.acked,
        "records_per_s": round(rate),
        "failed_requests": load.failed,
        "p50_ms": round(p50, 1),
        "p99_ms": round(p99, 1),
        "rss_peak_mib": round(load.rss_peak / 2**20),
        "loader_records_per_s": round(loaded_records / took),
        "backlog_files": backlog_files,
        "backlog_records": backlog_files * RECORDS,
        "visible_s": None if visible is None else round(visible, 2),
        "bare_decode_records_per_s": round(decode),
        "ratio": round(rate / decode, 3),
    }
    print(f"   {CLIENTS} clients x batches of {RECORDS} for {took:.1f} s ({TARGETS})")
    print(f"   acknowledged: {load.acked:,} records, {rate:,.0f} records/s ({load.failed} failed)")
    print(
        f"   latency: p50 {p50:.1f} ms, p99 {p99:.1f} ms; server RSS peak {figures['rss_peak_mib']} MiB"
    )
    print(
        f"   loader: {figures['loader_records_per_s']:,} records/s;"
        f" backlog at the end {backlog_files} files ({backlog_files * RECORDS:,} records)"
    )
    shown = "not shown" if visible is None else f"{visible:.2f} s"
    print(f"   200 -> on /api/runs, under load: {shown} (waited up to {VISIBLE_WITHIN_S:.0f} s)")
    print(f"   bare ParseFromString: {decode:,.0f} records/s; ratio {figures['ratio']:.3f}")
    print(f"   {json.dumps(figures)}", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=SECONDS)
    run(parser.parse_args().seconds)


if __name__ == "__main__":
    main()
