"""Two writers of one source on a PostgreSQL catalog: DuckLake lets two transactions that
only append rows both commit, so each must claim the source's read position and read it
afresh (ingest/pipelines/loading.py, warehouse.claim). Found by the faults test: two
workers tailing one folder loaded the same lines twice."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import warehouse
from ingest.pipelines.loading import (
    Position,
    PositionMoved,
    advance_position,
    advance_positions,
    check_position,
)
from tests import services

KIND = "agent_events"
FIRST = Position("key-a", 10, 1)
SECOND = Position("key-a", 20, 2)


@pytest.fixture
def postgres_lake(tmp_path: Path, settings: object) -> Iterator[None]:
    with services.postgres() as dsn:
        warehouse.close()
        settings.FLEETSCOPE_WAREHOUSE = f"ducklake:postgres:{dsn}"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_WAREHOUSE_DATA = f"{tmp_path / 'lake'}/"  # type: ignore[attr-defined]
        try:
            warehouse.migrate()
            yield
        finally:
            warehouse.close()


def _in_other_thread(work: object) -> None:
    failed: list[BaseException] = []

    def run() -> None:
        try:
            work()  # type: ignore[operator]
        except BaseException as exc:  # reported below
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive() and not failed, failed


def _positions_stored() -> int:
    row = warehouse.fetch_one("SELECT count(*) AS n FROM read_positions WHERE source = 'a'")
    return int(row["n"]) if row else 0


def test_a_position_committed_after_the_transactions_snapshot_is_seen(
    postgres_lake: None,
) -> None:
    with warehouse.transaction() as cur:
        cur.execute("SELECT count(*) FROM events").fetchone()  # the snapshot is taken
        # Another writer commits the source's first position meanwhile.
        _in_other_thread(
            lambda: warehouse.write(lambda c: advance_position(c, KIND, "a", None, FIRST))
        )
        # The transaction's snapshot still says "no position": read from it, this load
        # would go on and store the same lines again.
        assert cur.execute("SELECT count(*) FROM read_positions").fetchone() == (0,)
        with pytest.raises(PositionMoved):
            check_position(cur, KIND, "a", None)
    with warehouse.transaction() as cur:
        cur.execute("SELECT count(*) FROM events").fetchone()
        _in_other_thread(
            lambda: warehouse.write(lambda c: advance_positions(c, KIND, [("a", FIRST, SECOND)]))
        )
        with pytest.raises(PositionMoved):
            advance_positions(cur, KIND, [("a", FIRST, Position("key-a", 30, 3))])
    assert _positions_stored() == 2


def test_a_second_writer_of_the_source_waits_for_the_first_to_commit(
    postgres_lake: None,
) -> None:
    claimed, release = threading.Event(), threading.Event()
    order: list[str] = []

    def first() -> None:
        with warehouse.transaction() as cur:
            advance_position(cur, KIND, "a", None, FIRST)
            claimed.set()
            release.wait(30)
            order.append("first commits")

    holder = threading.Thread(target=first)
    holder.start()
    assert claimed.wait(30)

    def second() -> None:
        with warehouse.transaction() as cur:
            order.append("second claims")
            # Waits for the first's commit, then reads its position: not None any more.
            with pytest.raises(PositionMoved):
                check_position(cur, KIND, "a", None)
            check_position(cur, KIND, "a", FIRST)
            order.append("second read the first's position")

    waiter = threading.Thread(target=second)
    waiter.start()
    waiter.join(timeout=1)
    assert waiter.is_alive()  # waiting on the claim
    release.set()
    holder.join(timeout=30)
    waiter.join(timeout=30)
    assert order == ["second claims", "first commits", "second read the first's position"]
    assert _positions_stored() == 1


def test_a_claim_outside_a_transaction_is_refused(postgres_lake: None) -> None:
    with pytest.raises(warehouse.WarehouseError, match="inside one"):
        warehouse.claim(["x"])


def test_the_embedded_catalog_claims_nothing(lake: Path) -> None:
    # Its writer lock lets one writer in at a time already.
    with warehouse.transaction():
        assert warehouse.claim(["x"]) is False


def test_a_body_posted_again_while_its_first_post_loads_is_stored_once(
    postgres_lake: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client's retry on another web server, racing its first try: without the run's
    claim both transactions found the lines not stored yet, and both committed them."""
    import orjson

    from ingest.pipelines import agent_events
    from ingest.pipelines.agent_events import ingest_body

    body = b"".join(
        orjson.dumps({"ts": 1768384800 + i, "run": "posted", "agent": "w", "event": "tool_call"})
        + b"\n"
        for i in range(30)
    )
    real_load_chunk = agent_events.load_chunk
    first_loaded, go = threading.Event(), threading.Event()

    def first_waits(*args: object, **kwargs: object) -> object:
        loaded = real_load_chunk(*args, **kwargs)  # type: ignore[arg-type]
        if not first_loaded.is_set():
            first_loaded.set()
            assert go.wait(30)  # the first try holds its transaction open meanwhile
        return loaded

    monkeypatch.setattr(agent_events, "load_chunk", first_waits)
    answers: list[int] = []
    first = threading.Thread(target=lambda: answers.append(ingest_body(body).accepted))
    first.start()
    assert first_loaded.wait(30)
    retry = threading.Thread(target=lambda: answers.append(ingest_body(body).accepted))
    retry.start()
    retry.join(timeout=2)
    assert retry.is_alive()  # waiting on the run's claim
    go.set()
    first.join(timeout=30)
    retry.join(timeout=30)
    assert answers == [30, 0]
    stored = warehouse.fetch_one("SELECT count(*) AS n FROM events WHERE run = 'posted'")
    assert stored == {"n": 30}


def test_otlp_loads_of_two_machines_take_turns(
    postgres_lake: None, settings: object, tmp_path: Path
) -> None:
    """Two drainers (two machines' spools) holding the same batch, an exporter's retry
    sent to both: the second waits for the first's commit, then finds its points stored."""
    from ingest.parsers.otlp import Sender
    from ingest.parsers.otlp_sources import map_request
    from ingest.pipelines import otlp, otlp_spool
    from ingest.sources.otlp import Signal
    from tests.otlp import CUMULATIVE, metrics_request, sum_metric

    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]
    metric = sum_metric("turns.total", [("2026-03-01T10:00:00", 3.0, {"k": "v"})], CUMULATIVE)
    request = metrics_request({"service.name": "turns"}, [metric])
    batch = map_request(Signal.METRICS, request, Sender("alice"))
    digest = otlp_spool.body_digest(request.SerializeToString())
    first, second = (otlp_spool.append(batch, Sender("alice"), digest) for _ in range(2))
    holding, release = threading.Event(), threading.Event()

    def other_machine() -> None:
        with warehouse.transaction():
            warehouse.claim([otlp.LOAD_CLAIM])
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=other_machine)
    holder.start()
    assert holding.wait(30)
    loaded: list[int] = []
    loader = threading.Thread(target=lambda: loaded.append(otlp.load_files([first]).points))
    loader.start()
    loader.join(timeout=2)
    assert loader.is_alive()  # its turn comes when the other's transaction ends
    release.set()
    holder.join(timeout=30)
    loader.join(timeout=30)
    assert loaded == [1] and otlp.load_files([second]).points == 0
