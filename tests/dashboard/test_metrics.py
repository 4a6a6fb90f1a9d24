"""GET /metrics: who may read it, and each figure against a value worked out by hand.

Answers are read with prometheus_client's reference parser, not with the code that wrote
them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from django.conf import settings
from django.test import Client
from prometheus_client import values
from prometheus_client.parser import text_string_to_metric_families

import warehouse
from analytics.serving.models import ScrapeTarget
from dashboard.celery import _filesystem_broker_options, app
from dashboard.models import ApiToken
from ingest.pipelines import loading, otlp_spool, run_rollups, serving_spool
from ingest.pipelines.agent_events import ingest_body, run_agent_events
from lib.access import Scope
from tests import services
from tests.people import grant

PASSWORD = "metrics-test-password"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def reader(db: None, django_user_model: Any) -> Any:
    return grant(django_user_model.objects.create_user("rita", password=PASSWORD), "viewer")


@pytest.fixture
def token(reader: Any) -> str:
    return ApiToken.issue(reader, "prometheus", scope=Scope.READ)[1]


def scrape(token: str) -> Samples:
    """Every sample of /metrics, by name and labels, as the reference parser reads them."""
    answer = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.content.decode())
        for sample in family.samples
    }


def line(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def test_a_stranger_gets_a_json_401(db: None) -> None:
    answer = Client().get("/metrics")
    assert answer.status_code == 401
    assert answer.json() == {"detail": "Unauthorized"}
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer nope").status_code == 401


def test_an_ingest_token_is_refused_with_a_403(reader: Any) -> None:
    raw = ApiToken.issue(reader, "laptop", scope=Scope.INGEST)[1]
    answer = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert answer.status_code == 403
    assert answer.json()["detail"].startswith("an ingest token may only send data")


@pytest.mark.parametrize("scope", [Scope.READ, Scope.ADMIN])
def test_a_read_or_admin_token_reads_it(lake: Path, reader: Any, scope: Scope) -> None:
    raw = ApiToken.issue(reader, "prometheus", scope=scope)[1]
    assert line(scrape(raw), "fleetscope_queue_up") is not None


def test_a_logged_in_session_reads_it(lake: Path, reader: Any) -> None:
    client = Client()
    client.force_login(reader)
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert b"# TYPE fleetscope_spool_files gauge" in answer.content


def test_the_processes_count_into_the_multiprocess_folder() -> None:
    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(settings.FLEETSCOPE_METRICS_DIR)
    assert values.ValueClass is not values.MutexValue


def _clock(monkeypatch: pytest.MonkeyPatch, at: datetime) -> None:
    """The ingest's clock (its loads' stamps and committed read positions) set to `at`."""
    monkeypatch.setattr(loading, "now_utc", lambda: at)
    monkeypatch.setattr(run_rollups, "now_utc", lambda: at)


def _events(run: str, count: int) -> bytes:
    return b"".join(
        orjson.dumps({"ts": 1768384800 + i, "run": run, "agent": "w", "event": "tool_call"}) + b"\n"
        for i in range(count)
    )


def test_the_newest_posted_batch_is_the_ingest_timestamp(
    lake: Path, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    first, second = now - timedelta(minutes=10), now - timedelta(minutes=5)
    _clock(monkeypatch, first)
    assert ingest_body(_events("one", 3)).accepted == 3
    _clock(monkeypatch, second)
    assert ingest_body(_events("two", 2)).accepted == 2
    samples = scrape(token)
    stamp = line(samples, "fleetscope_ingest_last_timestamp_seconds", source_kind="agent-events")
    assert stamp == second.timestamp()


def test_a_file_loaded_days_ago_is_found_by_its_read_position(
    lake: Path, token: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Older than freshness.RECENT_HOURS, the events are not looked at: the position is."""
    loaded = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)
    (tmp_path / "a.jsonl").write_bytes(_events("old", 4))
    _clock(monkeypatch, loaded)
    assert run_agent_events([str(tmp_path / "a.jsonl")]).accepted == 4
    stamp = line(
        scrape(token), "fleetscope_ingest_last_timestamp_seconds", source_kind="agent-events"
    )
    assert stamp == loaded.timestamp() == 1768384800.0


def test_unread_bytes_are_what_the_tailed_files_hold_past_their_positions(
    lake: Path, token: str, tmp_path: Path
) -> None:
    folder = tmp_path / "tailed"
    folder.mkdir()
    read = _events("tail", 2)
    (folder / "a.jsonl").write_bytes(read)
    settings.FLEETSCOPE_TAIL_AGENT_EVENTS = [str(folder)]
    assert run_agent_events([str(folder)]).accepted == 2
    appended = b'{"ts": 1768384900, "run": "tail", "agent": "w", "event": "commit"}\n'
    with (folder / "a.jsonl").open("ab") as log:
        log.write(appended)
    (folder / "b.jsonl").write_bytes(b"x" * 1000 + b"\n")  # never read: counted whole
    samples = scrape(token)
    unread = line(samples, "fleetscope_ingest_unread_bytes", source_kind="agent-events")
    assert unread == len(appended) + 1001
    # The folders of the other tailed kinds are not configured: no figure for them.
    assert line(samples, "fleetscope_ingest_unread_bytes", source_kind="claude-code") is None


def test_spool_depth_counts_the_waiting_files_and_their_bytes(lake: Path, token: str) -> None:
    otlp = otlp_spool.spool_dir()
    for i, size in enumerate((10, 200, 3000)):
        (otlp / f"{1768384800000000 + i}-1-{i}.json").write_bytes(b"o" * size)
    (otlp / ".1768384800000009-1-9.json.tmp").write_bytes(b"t" * 50)  # being written
    serving = serving_spool.spool_dir()
    (serving / "1768384800000000-1-1.json").write_bytes(b"s" * 70)
    (serving / "rejected").mkdir(exist_ok=True)
    (serving / "rejected" / "1768384700000000-1-1.json").write_bytes(b"r" * 5)
    try:
        samples = scrape(token)
    finally:
        for folder in (otlp, serving):
            for path in folder.glob("*json*"):
                path.unlink()
    assert line(samples, "fleetscope_spool_files", spool="otlp") == 3
    assert line(samples, "fleetscope_spool_bytes", spool="otlp") == 10 + 200 + 3000
    assert line(samples, "fleetscope_spool_files", spool="serving") == 1
    assert line(samples, "fleetscope_spool_bytes", spool="serving") == 70


def test_the_newest_attempt_at_an_enabled_target_is_the_scrape_timestamp(
    lake: Path, token: str
) -> None:
    at = datetime(2026, 1, 14, 10, 0, 15, tzinfo=UTC)
    ScrapeTarget.objects.create(name="a", url="http://a/metrics", last_attempt_at=at)
    ScrapeTarget.objects.create(
        name="b", url="http://b/metrics", last_attempt_at=at - timedelta(minutes=1)
    )
    ScrapeTarget.objects.create(
        name="off", url="http://c/metrics", enabled=False, last_attempt_at=at + timedelta(hours=1)
    )
    samples = scrape(token)
    assert line(samples, "fleetscope_scrape_last_attempt_timestamp_seconds") == 1768384815.0


def _conflicts(samples: Samples) -> tuple[float | None, float | None]:
    return (
        line(samples, "fleetscope_warehouse_write_conflicts_total"),
        line(samples, "fleetscope_warehouse_write_conflicts_exhausted_total"),
    )


def test_write_conflicts_retried_and_exhausted_are_counted(
    lake: Path, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warehouse.lake.time, "sleep", lambda seconds: None)
    retried, exhausted = _conflicts(scrape(token))
    assert retried is not None and exhausted is not None
    runs: list[int] = []

    def twice() -> str:
        runs.append(1)
        if len(runs) <= 2:
            raise warehouse.Conflict("Conflict on tuple deletion!")
        return "done"

    assert warehouse.retry_on_conflict(twice) == "done"
    assert _conflicts(scrape(token)) == (retried + 2, exhausted)

    def always() -> None:
        raise warehouse.Conflict("Conflict on tuple deletion!")

    with pytest.raises(warehouse.WarehouseError):
        warehouse.retry_on_conflict(always, attempts=3)
    assert _conflicts(scrape(token)) == (retried + 4, exhausted + 1)


# Another process of the machine (a Celery worker, an ingest command) whose write conflicts
# once, with the settings and the data dir of this test process.
ONE_CONFLICT = """
import django
django.setup()
import warehouse
warehouse.lake.time.sleep = lambda seconds: None
runs = []
def work():
    runs.append(1)
    if len(runs) == 1:
        raise warehouse.Conflict("Conflict on tuple deletion!")
warehouse.retry_on_conflict(work)
"""


def test_metrics_sum_the_counts_of_the_machines_processes(lake: Path, token: str) -> None:
    retried, _ = _conflicts(scrape(token))
    assert retried is not None
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "dashboard.settings",
        "FLEETSCOPE_DATA_DIR": str(settings.DATA_DIR),
    }
    workers = [
        subprocess.Popen([sys.executable, "-c", ONE_CONFLICT], env=env, cwd=settings.BASE_DIR)
        for _ in range(2)
    ]
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0]
    assert _conflicts(scrape(token))[0] == retried + 2


def test_three_requests_to_a_route_are_counted_under_its_pattern(lake: Path, token: str) -> None:
    name = "fleetscope_http_request_duration_seconds_count"
    labels = {"route": "runs/<path:run>/", "method": "GET", "status": "3xx"}
    before = line(scrape(token), name, **labels) or 0.0
    for run in ("alpha-1", "alpha-2", "bravo-3"):
        assert Client().get(f"/runs/{run}/").status_code == 302  # to the login page
    samples = scrape(token)
    assert line(samples, name, **labels) == before + 3
    assert line(
        samples, "fleetscope_http_request_duration_seconds_bucket", le="+Inf", **labels
    ) == (before + 3)
    assert not [key for key in samples if "alpha" in str(key) or "bravo" in str(key)]


@pytest.fixture
def broker() -> Iterator[Any]:
    """The Celery app's broker settings, put back after the test."""
    saved = {key: app.conf[key] for key in ("broker_url", "broker_transport_options")}
    yield app.conf
    app.conf.update(saved)


def _send(queue_counts: dict[str, int]) -> None:
    """Messages put on each queue through the configured broker, as kombu stores them."""
    with app.connection_for_write() as connection:
        for queue, count in queue_counts.items():
            with connection.SimpleQueue(queue) as simple:
                for i in range(count):
                    simple.put({"n": i})


def test_queue_lengths_are_read_from_redis(
    lake: Path, token: str, tmp_path: Path, broker: Any
) -> None:
    with services.redis_server(tmp_path) as url:
        broker.broker_url = url
        broker.broker_transport_options = {}
        _send({"warehouse": 4, "celery": 2})
        samples = scrape(token)
        assert redis.Redis.from_url(url).llen("warehouse") == 4  # as Redis itself says
    assert line(samples, "fleetscope_queue_up") == 1
    assert line(samples, "fleetscope_queue_length", queue="warehouse") == 4
    assert line(samples, "fleetscope_queue_length", queue="celery") == 2


def test_queue_lengths_are_read_from_the_embedded_broker(
    lake: Path, token: str, tmp_path: Path, broker: Any
) -> None:
    broker.broker_url = "filesystem://"
    broker.broker_transport_options = _filesystem_broker_options(str(tmp_path / "broker"))
    _send({"warehouse": 3})
    samples = scrape(token)
    assert len(list((tmp_path / "broker" / "queue").glob("*.warehouse.msg"))) == 3
    assert line(samples, "fleetscope_queue_up") == 1
    assert line(samples, "fleetscope_queue_length", queue="warehouse") == 3
    assert line(samples, "fleetscope_queue_length", queue="celery") == 0


def test_a_broker_that_does_not_answer_is_queue_up_0_not_a_failed_scrape(
    lake: Path, token: str, broker: Any
) -> None:
    broker.broker_url = f"redis://127.0.0.1:{services.free_port()}/0"
    broker.broker_transport_options = {}
    samples = scrape(token)
    assert line(samples, "fleetscope_queue_up") == 0
    assert not [key for key in samples if key[0] == "fleetscope_queue_length"]
