"""The warehouse's connection: embedded default, transactions and the conflict retry,
maintenance, and the scale-out configuration (PostgreSQL catalog + S3 data path) on
throwaway loopback servers."""

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

import warehouse
from analytics.runs import queries as runs
from ingest.pipelines.agent_events import ingest_body, run_agent_events
from tests import services

EVENTS = b"".join(
    orjson.dumps(
        {
            "ts": 1768384800 + i * 60,
            "run": "scale",
            "agent": f"w{i % 4}",
            "event": "commit",
            "commit": {"sha": f"s{i}"},
        }
    )
    + b"\n"
    for i in range(120)
)


def test_the_embedded_catalog_is_sqlite_in_wal_mode(lake: Path) -> None:
    import sqlite3

    mode = sqlite3.connect(lake / "catalog.sqlite").execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)
    assert warehouse.is_embedded()


def test_a_local_warehouse_loads_only_the_extensions_it_uses(lake: Path) -> None:
    rows = warehouse.fetch_all("SELECT extension_name FROM duckdb_extensions() WHERE loaded")
    loaded = {r["extension_name"] for r in rows}
    assert {"ducklake", "sqlite_scanner"} <= loaded
    assert not loaded & {"postgres_scanner", "httpfs"}


def test_loads_can_run_on_one_thread_and_the_setting_comes_back(
    lake: Path, settings: object
) -> None:
    warehouse.close()
    settings.FLEETSCOPE_DUCKDB_THREADS = 2  # type: ignore[attr-defined]

    def threads() -> int:
        row = warehouse.fetch_one("SELECT current_setting('threads') AS n")
        return int(row["n"]) if row else 0

    assert threads() == 2
    with warehouse.single_threaded():
        assert threads() == 1
        assert warehouse.fetch_one("SELECT count(*) AS n FROM events") == {"n": 0}
    assert threads() == 2
    with pytest.raises(RuntimeError), warehouse.single_threaded():
        raise RuntimeError("a failed load")
    assert threads() == 2
    warehouse.close()


def test_a_transaction_commits_whole_or_not_at_all(lake: Path) -> None:
    insert = "INSERT INTO read_positions VALUES ('t', ?, 'k', 1, 1, now())"
    with warehouse.transaction() as cur:
        cur.execute(insert, ["kept-1"])
        cur.execute(insert, ["kept-2"])
    with pytest.raises(RuntimeError), warehouse.transaction() as cur:
        cur.execute(insert, ["lost"])
        raise RuntimeError("a failed load")
    rows = warehouse.fetch_all("SELECT source FROM read_positions ORDER BY source")
    assert [r["source"] for r in rows] == ["kept-1", "kept-2"]
    with warehouse.transaction() as cur:  # the connection is usable again
        cur.execute(insert, ["after"])
    assert warehouse.fetch_one("SELECT count(*) AS n FROM read_positions") == {"n": 3}


def test_a_write_conflicting_once_is_rolled_back_and_run_again(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warehouse.lake.time, "sleep", lambda seconds: None)
    insert = "INSERT INTO read_positions VALUES ('t', ?, 'k', 1, 1, now())"
    attempts: list[int] = []

    def work(cur: warehouse.Cursor) -> int:
        attempts.append(len(attempts) + 1)
        cur.execute(insert, [f"attempt-{attempts[-1]}"])
        if len(attempts) == 1:
            raise warehouse.Conflict("Conflict on tuple deletion!")
        return attempts[-1]

    assert warehouse.write(work) == 2
    rows = warehouse.fetch_all("SELECT source FROM read_positions")
    assert [r["source"] for r in rows] == ["attempt-2"]


def test_work_that_conflicts_twice_runs_three_times_with_doubling_pauses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(warehouse.lake.time, "sleep", pauses.append)
    runs: list[int] = []
    reread: list[int] = []

    def work() -> str:
        runs.append(len(runs) + 1)
        if len(runs) < 3:
            raise warehouse.Conflict("Conflict on tuple deletion!")
        return "done"

    result = warehouse.retry_on_conflict(work, before_retry=lambda: reread.append(len(runs)))
    assert result == "done"
    assert runs == [1, 2, 3]
    assert pauses == [0.1, 0.2]
    assert reread == [1, 2]  # after each pause, before the next run


class StaleCursor:
    """A real cursor whose first statement matching `breaks` reads a file maintenance has
    deleted since its snapshot (S3's 404, seen on the production topology)."""

    def __init__(self, real: Any, breaks: str, failures: list[str]) -> None:
        self.real, self.breaks, self.failures = real, breaks, failures

    def execute(self, sql: str, *args: Any) -> Any:
        if self.breaks in sql and not self.failures:
            self.failures.append(sql)
            raise duckdb.HTTPException("HTTP Error: HTTP GET error reading 'x.parquet' (HTTP 404)")
        return self.real.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def test_a_read_of_a_file_deleted_since_its_snapshot_is_run_again_on_the_same_handle(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = warehouse.lake._root()
    failures: list[str] = []
    real_cursor = warehouse.lake.cursor
    monkeypatch.setattr(
        warehouse.lake, "cursor", lambda: StaleCursor(real_cursor(), "SELECT 6 * 7", failures)
    )
    assert warehouse.fetch_one("SELECT 6 * 7 AS n") == {"n": 42}
    assert len(failures) == 1
    assert warehouse.lake._root() is before  # nothing broke: the handle stays


class BreakingCursor:
    """A real cursor whose statements matching `breaks` raise DuckDB's INTERNAL error (as
    DuckLake's inlined-data reader did under concurrent maintenance) the first `times`."""

    def __init__(self, real: Any, breaks: str, failures: list[str], times: int) -> None:
        self.real, self.breaks, self.failures, self.times = real, breaks, failures, times

    def execute(self, sql: str, *args: Any) -> Any:
        if self.breaks in sql and len(self.failures) < self.times:
            self.failures.append(sql)
            raise duckdb.InternalException("INTERNAL Error: Attempted to access index 0\nStack")
        return self.real.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def breaking(monkeypatch: pytest.MonkeyPatch, breaks: str, times: int) -> list[str]:
    failures: list[str] = []
    real_cursor = warehouse.lake.cursor
    monkeypatch.setattr(
        warehouse.lake, "cursor", lambda: BreakingCursor(real_cursor(), breaks, failures, times)
    )
    return failures


def test_a_read_on_a_broken_handle_is_run_again_on_a_new_one(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = warehouse.lake._root()
    reopened = warehouse.lake.WAREHOUSE_REOPENED._value.get()
    failures = breaking(monkeypatch, "SELECT 40 + 2", times=1)
    assert warehouse.fetch_one("SELECT 40 + 2 AS n") == {"n": 42}
    assert len(failures) == 1
    assert warehouse.lake._root() is not before  # the broken handle was dropped
    # and counted, for /metrics
    assert warehouse.lake.WAREHOUSE_REOPENED._value.get() == reopened + 1


def test_a_read_broken_three_times_is_run_a_fourth_after_pauses(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(warehouse.lake.time, "sleep", slept.append)
    failures = breaking(monkeypatch, "SELECT 40 + 2", times=3)
    assert warehouse.fetch_one("SELECT 40 + 2 AS n") == {"n": 42}
    assert (len(failures), slept) == (3, [0.05, 0.1, 0.2])


def test_a_read_broken_four_times_is_a_one_line_warehouse_error(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warehouse.lake.time, "sleep", lambda seconds: None)
    breaking(monkeypatch, "SELECT 40 + 2", times=4)
    with pytest.raises(warehouse.WarehouseBroken) as raised:
        warehouse.fetch_one("SELECT 40 + 2 AS n")
    assert (
        str(raised.value)
        == "the warehouse failed a read: INTERNAL Error: Attempted to access index 0"
    )
    assert warehouse.fetch_one("SELECT 1 AS n") == {"n": 1}  # and the next read works


class InvalidatedCursor(BreakingCursor):
    """A statement under way on another thread when the handle broke: DuckDB answers its
    fetch with an InvalidInput error carrying the FATAL one (seen on the topology)."""

    def execute(self, sql: str, *args: Any) -> Any:
        if self.breaks in sql and len(self.failures) < self.times:
            self.failures.append(sql)
            raise duckdb.InvalidInputException(
                "Invalid Input Error: Attempting to fetch from an unsuccessful query result\n"
                "Error: FATAL Error: Failed: database has been invalidated because of a "
                "previous fatal error. The database must be restarted prior to being used again."
            )
        return self.real.execute(sql, *args)


class AbortedCursor(BreakingCursor):
    """A cursor left in a transaction a failed statement aborted (its ROLLBACK failed too:
    the catalog's server gone, seen on the topology)."""

    def execute(self, sql: str, *args: Any) -> Any:
        if self.breaks in sql and len(self.failures) < self.times:
            self.failures.append(sql)
            raise duckdb.TransactionException(
                "TransactionContext Error: Current transaction is aborted (please ROLLBACK)"
            )
        return self.real.execute(sql, *args)


def test_a_read_on_a_cursor_left_in_an_aborted_transaction_gets_a_new_cursor(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[str] = []
    real_cursor = warehouse.lake.cursor
    monkeypatch.setattr(
        warehouse.lake, "cursor", lambda: AbortedCursor(real_cursor(), "SELECT 40 + 2", failures, 1)
    )
    first = real_cursor()
    assert warehouse.fetch_one("SELECT 40 + 2 AS n") == {"n": 42}
    assert len(failures) == 1 and real_cursor() is not first


def test_a_read_on_a_handle_another_thread_broke_is_run_again(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[str] = []
    real_cursor = warehouse.lake.cursor
    monkeypatch.setattr(
        warehouse.lake,
        "cursor",
        lambda: InvalidatedCursor(real_cursor(), "SELECT 40 + 2", failures, 1),
    )
    before = warehouse.lake._root()
    assert warehouse.fetch_one("SELECT 40 + 2 AS n") == {"n": 42}
    assert len(failures) == 1 and warehouse.lake._root() is not before


def test_a_write_broken_mid_transaction_is_rolled_back_and_run_again_once(
    lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warehouse.lake.time, "sleep", lambda seconds: None)
    failures = breaking(monkeypatch, "FROM read_positions", times=1)
    attempts: list[int] = []

    def work(cur: warehouse.Cursor) -> int:
        attempts.append(len(attempts) + 1)
        cur.execute("INSERT INTO read_positions VALUES ('t', ?, 'k', 1, 1, now())", ["s"])
        # A read inside the transaction breaks: not run again alone, the whole work is.
        row = warehouse.fetch_one("SELECT count(*) AS n FROM read_positions")
        return int(row["n"]) if row else -1

    assert warehouse.write(work) == 1
    assert attempts == [1, 2] and len(failures) == 1
    assert warehouse.fetch_all("SELECT source FROM read_positions") == [{"source": "s"}]


@pytest.mark.parametrize(
    ("options", "pauses"), [({}, [0.1, 0.2, 0.4, 0.8]), ({"attempts": 2}, [0.1])]
)
def test_work_that_always_conflicts_fails_in_one_line_after_its_attempts(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], pauses: list[float]
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(warehouse.lake.time, "sleep", slept.append)
    runs: list[int] = []

    def work() -> None:
        runs.append(len(runs) + 1)
        raise warehouse.Conflict("Conflict on tuple deletion!")

    with pytest.raises(
        warehouse.WarehouseError,
        match=r"^warehouse write kept conflicting: Conflict on tuple deletion!$",
    ):
        warehouse.retry_on_conflict(work, **options)
    assert len(runs) == options.get("attempts", 5)  # five by default
    assert slept == pytest.approx(pauses)


def test_maintenance_keeps_every_row(lake: Path) -> None:
    lines = EVENTS.splitlines(keepends=True)
    for start in range(0, 120, 30):  # many small commits, then one big one
        ingest_body(lines[start])
    ingest_body(EVENTS)  # the four lines posted alone are stored once (content keys): 120 rows
    before = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    result = warehouse.run_maintenance(keep_snapshots_days=0)
    after = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    assert before == after == {"n": 120}
    assert result["snapshots"] >= 1


def test_maintenance_deletes_files_no_snapshot_knows_once_a_day_old(lake: Path) -> None:
    # A load that dies between staging a Parquet file and committing it leaves one.
    ingest_body(EVENTS)
    folder = warehouse.local_table_dir("events")
    assert folder is not None
    old, new = folder / "fleetscope-old.parquet", folder / "fleetscope-new.parquet"
    for path in (old, new):
        warehouse.cursor().execute(f"COPY (SELECT 1 AS x) TO '{path}' (FORMAT parquet)")
    day_ago = time.time() - (warehouse.ORPHANS_OLDER_THAN_HOURS + 1) * 3600
    os.utime(old, (day_ago, day_ago))
    warehouse.run_maintenance(keep_snapshots_days=7)
    assert (old.exists(), new.exists()) == (False, True)
    assert warehouse.fetch_one("SELECT count(*) AS n FROM events") == {"n": 120}


def test_a_bad_catalog_is_a_one_line_error(settings: object, tmp_path: Path) -> None:
    warehouse.close()
    settings.FLEETSCOPE_WAREHOUSE = "ducklake:postgres:dbname=nope host=127.0.0.1 port=1"  # type: ignore[attr-defined]
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(tmp_path) + "/"  # type: ignore[attr-defined]
    try:
        with pytest.raises(warehouse.WarehouseError, match="cannot open the warehouse"):
            warehouse.fetch_all("SELECT 1")
    finally:
        warehouse.close()


@pytest.fixture
def scale_out(tmp_path: Path, settings: object) -> Iterator[str]:
    with services.postgres() as dsn, services.s3_emulator("fleetscope") as endpoint:
        warehouse.close()
        settings.FLEETSCOPE_WAREHOUSE = f"ducklake:postgres:{dsn}"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_WAREHOUSE_DATA = "s3://fleetscope/lake/"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_S3_ENDPOINT = endpoint  # type: ignore[attr-defined]
        settings.FLEETSCOPE_S3_KEY_ID = "testing"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_S3_SECRET = "testing"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_S3_USE_SSL = False  # type: ignore[attr-defined]
        try:
            yield endpoint
        finally:
            warehouse.close()


def test_a_postgres_catalog_takes_staged_files_as_they_are(
    tmp_path: Path, settings: object
) -> None:
    # With the data path local, a chunk's staged Parquet file joins events as it is.
    with services.postgres() as dsn:
        warehouse.close()
        settings.FLEETSCOPE_WAREHOUSE = f"ducklake:postgres:{dsn}"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_WAREHOUSE_DATA = f"{tmp_path / 'lake'}/"  # type: ignore[attr-defined]
        try:
            warehouse.migrate()
            log = tmp_path / "run.jsonl"
            log.write_bytes(EVENTS * 2)  # the second copy has the same shas
            summary = run_agent_events([str(log)])
            assert (summary.accepted, summary.duplicates) == (240, 0)
            added = warehouse.fetch_all(
                "SELECT data_file FROM ducklake_list_files('lake', 'events')"
            )
            assert [Path(r["data_file"]).name[:11] for r in added] == ["fleetscope-"]
            assert runs.commit_rate("scale", 3600).total == 120
        finally:
            warehouse.close()


def test_a_catalog_server_down_is_unreachable_for_now_and_back_by_itself(
    tmp_path: Path, settings: object
) -> None:
    with services.postgres() as dsn:
        warehouse.close()
        settings.FLEETSCOPE_WAREHOUSE = f"ducklake:postgres:{dsn}"  # type: ignore[attr-defined]
        settings.FLEETSCOPE_WAREHOUSE_DATA = f"{tmp_path / 'lake'}/"  # type: ignore[attr-defined]
        try:
            warehouse.migrate()
            ingest_body(EVENTS)
            services.stop_postgres(dsn)
            with pytest.raises(
                warehouse.WarehouseUnreachable, match="the warehouse is unreachable: "
            ):
                warehouse.fetch_one("SELECT count(*) AS n FROM events")
            with pytest.raises(warehouse.WarehouseUnreachable):
                ingest_body(EVENTS.replace(b'"agent":"w', b'"agent":"v'))
            services.start_postgres(dsn)
            # The same handle reads and writes again; the failed load stored nothing.
            assert warehouse.fetch_one("SELECT count(*) AS n FROM events") == {"n": 120}
            assert ingest_body(EVENTS.replace(b'"agent":"w', b'"agent":"v')).accepted == 120
            assert warehouse.fetch_one("SELECT count(*) AS n FROM events") == {"n": 240}
        finally:
            warehouse.close()


def test_s3_failing_for_a_while_is_ridden_out_and_for_long_is_unreachable(
    scale_out: str, settings: object
) -> None:
    from tests.production.s3_faults import DROPS, ERRORS, OK, faulty_s3

    with faulty_s3(scale_out) as s3:
        warehouse.close()
        settings.FLEETSCOPE_S3_ENDPOINT = s3.endpoint  # type: ignore[attr-defined]
        warehouse.migrate()
        ingest_body(EVENTS)
        # Two seconds of 500s, then of dropped connections, while a load reads the events
        # it checks its lines against: DuckDB's retries (S3_RETRY_SETTINGS) ride them out.
        for mode, agents in ((ERRORS, b'"agent":"v'), (DROPS, b'"agent":"u')):
            s3.fail(mode)
            threading.Timer(2.0, s3.fail, [OK]).start()
            assert ingest_body(EVENTS.replace(b'"agent":"w', agents)).accepted == 120
        assert s3.failed > 0
        # Failing for longer than the retries last: one line, nothing stored.
        s3.fail(ERRORS)
        with pytest.raises(warehouse.WarehouseUnreachable, match=r"\(HTTP 500 Internal"):
            ingest_body(EVENTS.replace(b'"agent":"w', b'"agent":"t'))
        s3.fail(OK)
        assert warehouse.fetch_one("SELECT count(*) AS n FROM events") == {"n": 360}


def test_postgres_catalog_and_s3_data_work_end_to_end(scale_out: str, settings: object) -> None:
    assert not warehouse.is_embedded()
    warehouse.migrate()
    # The second copy has the same shas, logged by other agents (so not the same lines).
    summary = ingest_body(EVENTS + EVENTS.replace(b'"agent":"w', b'"agent":"v'))
    assert summary.accepted == 240
    assert runs.commit_rate("scale", 3600).total == 120
    warehouse.run_maintenance(keep_snapshots_days=0)
    assert runs.list_runs()[0].commits == 120
    keys = services.s3_keys(scale_out, "fleetscope")
    assert any(key.startswith("lake/") and key.endswith(".parquet") for key in keys)
    # Its 240 events were staged in a local Parquet file and inserted from it.
    assert not list((Path(settings.DATA_DIR) / "tmp").glob("*.parquet"))  # type: ignore[attr-defined]


def test_fetch_rows_answers_tuples_in_the_selects_order(lake: object) -> None:
    rows = warehouse.fetch_rows("SELECT 2 AS b, 'x' AS a UNION ALL SELECT ?, 'y' ORDER BY b", [3])
    assert rows == [(2, "x"), (3, "y")]
