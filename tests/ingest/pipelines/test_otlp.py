"""Loading the OTLP spool: each metric point once per (series, time) however often it was
sent, a request's rejected records quarantined once, files removed only after their
transaction, one drainer at a time, an unreadable file set aside."""

from pathlib import Path
from typing import Any

import pytest

import warehouse
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.sources.otlp import Signal
from tests.otlp import CUMULATIVE, metrics_request, sum_metric

RESOURCE = {"service.name": "claude-code", "process.pid": 1234}


@pytest.fixture
def spool(settings: Any, tmp_path: Path, lake: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return otlp_spool.spool_dir()


def _spool(points: list[tuple[str, float]], temporality: int = CUMULATIVE, pid: int = 1234) -> Path:
    metric = sum_metric(
        "claude_code.active_time.total",
        [(ts, value, {"session.id": "s-1"}) for ts, value in points],
        temporality,
        unit="s",
    )
    request = metrics_request({**RESOURCE, "process.pid": pid}, [metric])
    batch = map_request(Signal.METRICS, request, Sender("alice"))
    return otlp_spool.append(
        batch, Sender("alice"), otlp_spool.body_digest(request.SerializeToString())
    )


def _points() -> list[tuple[Any, ...]]:
    return [
        tuple(r.values())
        for r in warehouse.fetch_all(
            "SELECT strftime(ts, '%H:%M') AS at, value, session, temporality FROM otlp_points ORDER BY ts"
        )
    ]


def test_points_are_stored_once_however_often_they_are_sent(spool: Path) -> None:
    _spool([("2026-03-01T10:00:00", 3.0), ("2026-03-01T10:01:00", 7.5)])
    _spool([("2026-03-01T10:00:00", 3.0)])  # a retry, in another file
    _spool([("2026-03-01T10:01:00", 7.5)], pid=999)  # the same series after a restart
    summary = otlp.drain(seconds=10)
    assert (summary.files, summary.points) == (3, 2)
    assert _points() == [("10:00", 3.0, "s-1", "cumulative"), ("10:01", 7.5, "s-1", "cumulative")]
    assert otlp_spool.pending_files() == []
    _spool([("2026-03-01T10:01:00", 7.5), ("2026-03-01T10:02:00", 9.0)])
    assert otlp.drain(seconds=10).points == 1
    assert len(_points()) == 3


def test_rejected_records_are_quarantined_once_per_request_body(spool: Path) -> None:
    _spool([("2026-03-01T10:00:00", 1.0)], temporality=0)
    _spool([("2026-03-01T10:00:00", 1.0)], temporality=0)  # the exporter retried it
    assert otlp.drain(seconds=10).quarantined == 1
    _spool([("2026-03-01T10:00:00", 1.0)], temporality=0)
    assert otlp.drain(seconds=10).quarantined == 0
    [row] = warehouse.fetch_all("SELECT source_kind, source, line_no, reason FROM quarantine")
    assert row["source_kind"] == "otlp" and row["source"].startswith("otlp/metrics/alice/")
    assert (row["line_no"], row["reason"]) == (
        0,
        "resourceMetrics[0].scopeMetrics[0].metrics[0]: "
        "claude_code.active_time.total: a sum without a temporality",
    )


def test_a_crash_after_the_commit_and_before_the_files_go_loads_nothing_twice(
    spool: Path, monkeypatch: Any
) -> None:
    path = _spool([("2026-03-01T10:00:00", 3.0)])
    monkeypatch.setattr(otlp_spool, "discard", lambda paths: None)  # the process died here
    otlp.drain(seconds=10)
    assert path.exists()
    monkeypatch.undo()
    assert otlp.drain(seconds=10).points == 0
    assert len(_points()) == 1 and not path.exists()


def test_a_failed_transaction_keeps_its_files(spool: Path, monkeypatch: Any) -> None:
    path = _spool([("2026-03-01T10:00:00", 3.0)])

    def broken(_work: Any, **_: Any) -> Any:
        raise warehouse.WarehouseError("catalog unreachable")

    monkeypatch.setattr(warehouse, "write", broken)
    with pytest.raises(warehouse.WarehouseError):
        otlp.drain(seconds=10)
    assert path.exists()


def test_one_drainer_at_a_time(spool: Path) -> None:
    _spool([("2026-03-01T10:00:00", 3.0)])
    with otlp._drain_lock() as held:
        assert held
        assert otlp.drain(seconds=10).busy
    assert otlp.drain(seconds=10).points == 1


def test_an_unreadable_file_is_set_aside_with_its_reason(spool: Path) -> None:
    good = _spool([("2026-03-01T10:00:00", 3.0)])
    bad = good.with_name("1-1-1.json")
    bad.write_text('{"format": 99}')
    summary = otlp.drain(seconds=10)
    assert (summary.set_aside, summary.points) == (["1-1-1.json"], 1)
    assert (spool / "rejected" / "1-1-1.json").exists()
    assert "spool format 99" in (spool / "rejected" / "1-1-1.json.reason").read_text()
