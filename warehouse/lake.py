"""The warehouse's connection: the only module that opens DuckDB.

Owns the DuckLake attachment (SQLite catalog in WAL mode + Parquet by default, PostgreSQL
catalog and S3 data at scale), the extensions loaded from their pip packages (nothing is
downloaded at run time), per-thread cursors, the single-writer lock of the embedded
catalog, transactions and the one retry of a conflicting write (retry_on_conflict), and
maintenance. It must not know what the tables mean: the schema and its versions are
warehouse/schema/ and warehouse/migrations.py (neither is imported here), Parquet files
that join a table are warehouse/data_files.py's, queries live in analytics/<topic>/,
loads in ingest/pipelines/.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa
from django.conf import settings

from lib.process_metrics import WAREHOUSE_REOPENED, WRITE_CONFLICTS, WRITE_CONFLICTS_EXHAUSTED

log = logging.getLogger(__name__)

LAKE = "lake"
DUCKDB_VERSION = "v1.5.5"
# An insert of up to this many rows is kept in the catalog (DuckLake's data inlining)
# instead of becoming a Parquet file of its own; ducklake_flush_inlined_data writes them out.
INLINED_ROWS_UP_TO = 100
# Files in the data path that no snapshot knows are deleted by maintenance once this old.
# A load killed before its commit leaves some: they go at the next writer's start already
# (warehouse.data_files.remove_uncommitted_files); this catches those it cannot prove
# abandoned (DuckLake's own files with a PostgreSQL catalog, files named otherwise).
ORPHANS_OLDER_THAN_HOURS = 24

# (pip package, file it ships, name DuckDB expects): DuckDB derives the entry point from
# the file name, and the sqlite/postgres packages ship theirs without the _scanner suffix.
EXTENSIONS = (
    ("duckdb_extension_sqlite", "sqlite.duckdb_extension", "sqlite_scanner"),
    ("duckdb_extension_postgres", "postgres.duckdb_extension", "postgres_scanner"),
    ("duckdb_extension_httpfs", "httpfs.duckdb_extension", "httpfs"),
    ("duckdb_extension_ducklake", "ducklake.duckdb_extension", "ducklake"),
)

T = TypeVar("T")

# A request to S3 that fails (a 5xx, a connection dropped) is retried by DuckDB after
# 0.1 s, then a pause doubling each time: 7 retries ride out 6.4 s of an S3 that answers
# 500s or nothing (tests/production/test_restarts.py); past that, WarehouseUnreachable.
S3_RETRY_SETTINGS = ("http_retries = 7", "http_retry_wait_ms = 100", "http_retry_backoff = 2")

# What the layers above name instead of importing DuckDB: a connection (cursor) of the
# lake, a conflict with another writer, and a statement DuckDB could not read its input for.
Cursor = duckdb.DuckDBPyConnection
Conflict = duckdb.TransactionException
InvalidInput = duckdb.InvalidInputException
# DuckDB's own assertion failures, and the FATAL error of every statement after one (the
# database handle is invalidated until reopened). DuckLake raises one under concurrent
# writers and maintenance on a PostgreSQL catalog (a read of inlined rows as another
# process flushes them: found by tests/production/test_faults.py); without reopening,
# that process failed every read and write from then on.
_BROKEN = (duckdb.InternalException, duckdb.FatalException)


class WarehouseError(RuntimeError):
    """The warehouse could not be opened or written; the message is one line for users."""


class WarehouseBroken(WarehouseError):
    """DuckDB failed one of its own checks (INTERNAL) or refuses every statement since one
    (FATAL): the process's handle was dropped, the next statement opens a new one; or a
    data file the work's snapshot named was deleted by maintenance meanwhile. The work that
    raised this is safe to run again (write and retry_on_conflict do)."""


class WarehouseUnreachable(WarehouseError):
    """The catalog's server could not be reached (PostgreSQL restarting, the network
    down): nothing was read or written; the same work succeeds once it is back (DuckDB
    connects again by itself)."""


class NotMigrated(WarehouseError):
    """The warehouse lacks tables or changes its schema has: the message names the data dir
    and the command to run (warehouse.migrations says what is missing)."""


# Set by warehouse.migrations: what, if anything, the warehouse's schema lacks, as the one
# line NotMigrated carries. A statement naming a table or column that does not exist is
# explained with it, so a warehouse never migrated says so instead of DuckDB's
# "Table read_positions does not exist".
_schema_problem: Callable[[], str | None] | None = None


def explain_catalog_errors_with(problem: Callable[[], str | None]) -> None:
    global _schema_problem
    _schema_problem = problem


def not_migrated() -> NotMigrated | None:
    """NotMigrated when the warehouse's schema lacks migrations, else None."""
    message = _schema_problem() if _schema_problem is not None else None
    return NotMigrated(message) if message else None


def _explained(exc: duckdb.Error) -> BaseException:
    """The error to raise for a statement that failed with `exc`: NotMigrated when the
    schema lacks migrations and the statement named what they would create."""
    if isinstance(exc, duckdb.CatalogException | duckdb.BinderException):
        error = not_migrated()
        if error is not None:
            error.__cause__ = exc
            return error
    return exc


# --- opening -----------------------------------------------------------------------------


def _extension_dir() -> Path:
    return Path(settings.DATA_DIR) / "duckdb_extensions" / DUCKDB_VERSION


def _link_extensions() -> dict[str, Path]:
    """Expose each packaged extension under the file name DuckDB expects."""
    target_dir = _extension_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for package, shipped, name in EXTENSIONS:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise WarehouseError(f"DuckDB extension package {package} is not installed")
        source = Path(spec.origin).parent / "extensions" / DUCKDB_VERSION / shipped
        if not source.exists():
            raise WarehouseError(f"{package} does not ship {DUCKDB_VERSION}/{shipped}")
        link = target_dir / f"{name}.duckdb_extension"
        if not link.exists() or link.resolve() != source.resolve():
            tmp = target_dir / f".{name}.{os.getpid()}.tmp"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(source)
            os.replace(tmp, link)  # atomic, so concurrent starters never see a half link
        paths[name] = link
    return paths


def _needed_extensions(url: str, data_path: str) -> set[str]:
    """The extensions this warehouse's catalog and data path use: each LOAD costs 0.1 to
    0.3 s of CPU at every start-up (a command, a worker), so the others are not loaded."""
    needed = {"ducklake"}
    if url.startswith("ducklake:postgres:"):
        needed.add("postgres_scanner")
    else:
        needed.add("sqlite_scanner")
    if data_path.startswith("s3://"):
        needed.add("httpfs")
    return needed


def _sqlite_catalog_path(url: str) -> Path | None:
    prefix = "ducklake:sqlite:"
    return Path(url[len(prefix) :]) if url.startswith(prefix) else None


def is_embedded() -> bool:
    """True when the catalog is a local SQLite file, which allows one writer at a time."""
    return _sqlite_catalog_path(settings.FLEETSCOPE_WAREHOUSE) is not None


def _prepare_sqlite_catalog(path: Path) -> None:
    # Without WAL, readers and the writer fail with "database is locked" (design.md).
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=30)
    try:
        con.execute("PRAGMA journal_mode=WAL")
    finally:
        con.close()


def _open_database() -> duckdb.DuckDBPyConnection:
    config: dict[str, Any] = {
        "allow_unsigned_extensions": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "memory_limit": settings.FLEETSCOPE_DUCKDB_MEMORY_LIMIT,
    }
    if settings.FLEETSCOPE_DUCKDB_THREADS:
        config["threads"] = settings.FLEETSCOPE_DUCKDB_THREADS
    con = duckdb.connect(":memory:", config=config)
    try:
        con.execute("SET TimeZone = 'UTC'")
        _attach(con, settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA, LAKE)
        con.execute(f"USE {LAKE}")
    except duckdb.Error as exc:
        con.close()
        raise WarehouseError(
            f"cannot open the warehouse {settings.FLEETSCOPE_WAREHOUSE}: {exc}"
        ) from exc
    return con


def _attach(
    con: duckdb.DuckDBPyConnection, url: str, data_path: str, alias: str, *, read_only: bool = False
) -> None:
    """Attach the DuckLake at `url` (its data at `data_path`) as `alias`, loading the
    extensions it needs first."""
    needed = _needed_extensions(url, data_path)
    for name, path in _link_extensions().items():
        if name in needed:
            con.execute(f"LOAD '{path}'")
    catalog_file = _sqlite_catalog_path(url)
    if catalog_file is not None:
        _prepare_sqlite_catalog(catalog_file)
    if data_path.startswith("s3://"):
        _create_s3_secret(con)
        for setting in S3_RETRY_SETTINGS:
            con.execute(f"SET GLOBAL {setting}")
    elif not read_only:
        Path(data_path).mkdir(parents=True, exist_ok=True)
    options = f"DATA_PATH {literal(data_path)}, DATA_INLINING_ROW_LIMIT {INLINED_ROWS_UP_TO:d}"
    con.execute(f"ATTACH {literal(url)} AS {alias} ({options}{', READ_ONLY' if read_only else ''})")


@contextmanager
def attached_read_only(url: str, data_path: str, alias: str) -> Iterator[None]:
    """Another DuckLake attached beside this process's warehouse as `alias`, read only,
    while the block runs (copying one warehouse into another: warehouse.copy)."""
    cur = cursor()
    try:
        _attach(cur, url, data_path, alias, read_only=True)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open the warehouse {url}: {_first_line(exc)}") from exc
    try:
        yield
    finally:
        cur.execute(f"DETACH {alias}")


def literal(value: str) -> str:
    """Quote an operator-supplied setting, or a path made from one, for statements that
    take no bound parameters (ATTACH, CREATE SECRET, COPY TO); request data never reaches
    these."""
    return "'" + value.replace("'", "''") + "'"


def _create_s3_secret(con: duckdb.DuckDBPyConnection) -> None:
    endpoint = settings.FLEETSCOPE_S3_ENDPOINT
    options = [
        "TYPE s3",
        f"KEY_ID {literal(settings.FLEETSCOPE_S3_KEY_ID)}",
        f"SECRET {literal(settings.FLEETSCOPE_S3_SECRET)}",
        f"REGION {literal(settings.FLEETSCOPE_S3_REGION)}",
        f"USE_SSL {'true' if settings.FLEETSCOPE_S3_USE_SSL else 'false'}",
    ]
    if endpoint:
        # S3-compatible stores (MinIO, moto) are addressed by path, not virtual host.
        options += [f"ENDPOINT {literal(endpoint)}", "URL_STYLE 'path'"]
    con.execute("CREATE OR REPLACE SECRET fleetscope_s3 (" + ", ".join(options) + ")")


_open_lock = threading.Lock()
_database: duckdb.DuckDBPyConnection | None = None
_database_pid: int | None = None
_local = threading.local()


def _root() -> duckdb.DuckDBPyConnection:
    global _database, _database_pid
    with _open_lock:
        # A forked Celery worker must not share its parent's DuckDB handle.
        if _database is None or _database_pid != os.getpid():
            _database = _open_database()
            _database_pid = os.getpid()
        return _database


def cursor() -> duckdb.DuckDBPyConnection:
    """This thread's connection to the warehouse (DuckDB connections are not thread-safe)."""
    root = _root()
    cur = getattr(_local, "cursor", None)
    if cur is None or getattr(_local, "root", None) is not root:
        cur = root.cursor()
        cur.execute(f"USE {LAKE}")
        _local.cursor = cur
        _local.root = root
    return cur


def separate_cursor() -> duckdb.DuckDBPyConnection:
    """A new connection to the warehouse, outside this thread's transaction; the caller
    closes it."""
    cur = _root().cursor()
    cur.execute(f"USE {LAKE}")
    return cur


@contextmanager
def single_threaded() -> Iterator[None]:
    """Run this process's warehouse statements on one DuckDB thread meanwhile (`threads`
    is per process: for loads in the worker and in commands, never in the web process;
    not nested).
    The setting is read and set on a connection that has not entered the lake: there a
    function call looks the lake's catalog up first (~4 ms of CPU, where this takes 0.4)."""
    root = _root()
    plain = getattr(_local, "plain", None)
    if plain is None or getattr(_local, "plain_root", None) is not root:
        plain = _local.plain = root.cursor()
        _local.plain_root = root
    row = plain.execute("SELECT current_setting('threads')").fetchone()
    before = int(row[0]) if row else 1
    if before == 1:
        yield
        return
    plain.execute("SET threads = 1")
    try:
        yield
    finally:
        plain.execute(f"SET threads = {before:d}")


def _discard(root: duckdb.DuckDBPyConnection | None) -> None:
    """Drop the process's handle if it is still `root` (another thread may have done so
    and opened a new one already); every thread's next statement opens or uses the new."""
    global _database, _database_pid
    with _open_lock:
        if root is not None and _database is root:
            try:
                root.close()
            except duckdb.Error:
                log.debug("closing a broken warehouse handle raised", exc_info=True)
            _database = None
            _database_pid = None
            WAREHOUSE_REOPENED.inc()


def _stale(exc: duckdb.Error) -> bool:
    """Whether `exc` is a read of a data file its snapshot named and maintenance (of any
    process) has deleted since: run again, the work reads a newer snapshot. Found by
    tests/production/test_faults.py: S3's 404 under `maintain_warehouse --keep-days 0`."""
    if not isinstance(exc, duckdb.HTTPException | duckdb.IOException):
        return False
    text = str(exc)
    return "404" in text or "No such file" in text


# What DuckDB says when the catalog's server is down or went away, or S3 is failing.
_UNREACHABLE_TEXTS = (
    "Unable to connect to Postgres",
    "connection to server at",
    "server closed the connection",
    "terminating connection",
    "no connection to the server",
    "Connection refused",
    # S3 answering errors or nothing, after DuckDB's retries (S3_RETRY_SETTINGS)
    "HTTP 500",
    "HTTP 502",
    "HTTP 503",
    "HTTP 504",
    "Server returned nothing",
    "Could not establish connection",
    "Timeout was reached",
)


def _unreachable(exc: duckdb.Error) -> bool:
    """Whether `exc` is the catalog's server being out of reach (tests/production:
    PostgreSQL restarted under load). A COMMIT it answered so may or may not have been
    applied: the work is not run again here; its caller's next run finds out (a load's
    read position, an HTTP batch's content keys)."""
    # Of any class: a plain Error for a catalog read, TransactionException for a COMMIT.
    text = str(exc)
    return any(part in text for part in _UNREACHABLE_TEXTS)


def _aborted(exc: duckdb.Error) -> bool:
    """Whether the cursor is still in a transaction a failed statement aborted."""
    return "Current transaction is aborted" in str(exc)


def _unreachable_error(exc: duckdb.Error) -> WarehouseUnreachable:
    error = WarehouseUnreachable(f"the warehouse is unreachable: {_first_line(exc)}")
    error.__cause__ = exc
    return error


def _broken(exc: duckdb.Error, root: duckdb.DuckDBPyConnection | None) -> bool:
    """Whether `exc` means the handle `root` is unusable: DuckDB broke, or another thread
    found it broken and closed it under this one."""
    if isinstance(exc, _BROKEN):
        return True
    if "database has been invalidated" in str(exc):
        # The FATAL error of a statement that was under way on another thread when the
        # handle broke, as DuckDB words it for a result fetched meanwhile (InvalidInput).
        return True
    return isinstance(exc, duckdb.ConnectionException) and root is not _database


def _first_line(exc: BaseException) -> str:
    """DuckDB's INTERNAL errors carry a stack trace after their first line."""
    return (str(exc).splitlines() or [""])[0]


def close() -> None:
    """Drop this process's handle; the next call opens the warehouse again (tests, forks)."""
    global _database, _database_pid
    with _open_lock:
        if _database is not None:
            _database.close()
        _database = None
        _database_pid = None
        _local.__dict__.clear()


# --- reading -----------------------------------------------------------------------------


READ_ATTEMPTS = 4


def _read(
    sql: str,
    params: Sequence[Any] | dict[str, Any] | None,
    take: Callable[[duckdb.DuckDBPyConnection], T],
) -> T:
    """Run a read and `take` its answer. A broken handle (_broken) is dropped and the read
    run again on a new one, up to READ_ATTEMPTS times in all, after a pause that doubles
    from 0.05 s (DuckLake's INTERNAL error under maintenance in another process can recur
    at once); inside a transaction it is not run again here: the transaction's work is
    (transaction, retry_on_conflict)."""
    for attempt in range(1, READ_ATTEMPTS + 1):
        cur = cursor()
        root = getattr(_local, "root", None)
        try:
            cur.execute(sql, params or [])
            return take(cur)
        except duckdb.Error as exc:
            if _unreachable(exc):
                raise _unreachable_error(exc) from exc
            inside = getattr(_local, "in_transaction", False)
            aborted = _aborted(exc) and not inside
            if aborted:
                _reset_cursor()  # left so by a statement that failed mid-way: run again
            stale = aborted or _stale(exc)
            if not stale and not _broken(exc, root):
                raise _explained(exc) from exc
            if not stale:
                _discard(root)
            if inside or attempt == READ_ATTEMPTS:
                raise WarehouseBroken(f"the warehouse failed a read: {_first_line(exc)}") from exc
            log.warning("warehouse read failed, run again: %s", _first_line(exc))
            time.sleep(0.05 * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def _dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    columns = [d[0] for d in cur.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


def fetch_all(
    sql: str, params: Sequence[Any] | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Run a read query with bound parameters; rows as dicts keyed by column name."""
    return _read(sql, params, _dicts)


def fetch_rows(
    sql: str, params: Sequence[Any] | dict[str, Any] | None = None
) -> list[tuple[Any, ...]]:
    """Run a read query with bound parameters; rows as tuples in the SELECT's order, for a
    reader that builds its own typed rows from many of them (no dict per row)."""
    return _read(sql, params, lambda cur: cur.fetchall())


def fetch_one(
    sql: str, params: Sequence[Any] | dict[str, Any] | None = None
) -> dict[str, Any] | None:
    rows = fetch_all(sql, params)
    return rows[0] if rows else None


def fetch_arrow(sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pa.Table:
    """Run a read query with bound parameters; its answer as one Arrow table (columnar,
    no Python object per value: for a reader that writes many rows out as they are)."""
    return _read(sql, params, lambda cur: cur.to_arrow_table())


# --- writing -----------------------------------------------------------------------------


@contextmanager
def _writer_lock() -> Iterator[None]:
    """One writer at a time for the SQLite catalog (two writers fail with "database is
    locked", design.md); PostgreSQL catalogs take concurrent writers and need no lock."""
    if not is_embedded():
        yield
        return
    lock_path = Path(settings.DATA_DIR) / "warehouse.write.lock"
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --- claims: one writer at a time per key, across processes ------------------------------

# How long a claim waits for another writer of the same key before giving up.
CLAIM_WAIT_SECONDS = 300


def _claim_key(key: str) -> int:
    """A stable signed 64-bit number for `key` (PostgreSQL's advisory lock key)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)


def _claims_connection() -> Any:
    """This thread's PostgreSQL session for claims, on the lake's catalog server."""
    import psycopg  # only with a PostgreSQL catalog

    con = getattr(_local, "claims", None)
    if con is None or con.closed or con.broken:
        dsn = settings.FLEETSCOPE_WAREHOUSE.removeprefix("ducklake:postgres:")
        con = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
        con.execute(f"SET lock_timeout = '{CLAIM_WAIT_SECONDS:d}s'")
        _local.claims = con
    return con


def claim(keys: Iterable[str]) -> bool:
    """Hold `keys` for this thread's transaction, until it commits or rolls back: a writer
    of another process claiming one of them waits meanwhile. For what DuckLake's conflict
    check misses: two transactions that each read a source's position and only append
    rows both commit, and the same lines are loaded twice (found by the faults test: two
    workers tailing one folder). With the embedded catalog the writer lock already allows
    one writer at a time, and nothing is claimed: False. With a PostgreSQL catalog the
    keys become advisory locks of a session of this thread's (a process killed mid-way
    loses its session, and its locks with it): True, and the caller must read what the
    keys guard afresh (separate_cursor), as the transaction's snapshot may predate the
    claim."""
    if is_embedded():
        return False
    if not getattr(_local, "in_transaction", False):
        raise WarehouseError("claim() holds keys for a transaction: call it inside one")
    import psycopg

    numbers = sorted({_claim_key(k) for k in keys})  # one order for all: no deadlock
    try:
        _claims_connection().execute(
            "SELECT pg_advisory_lock(k) FROM unnest(%s::bigint[]) AS k", [numbers]
        )
    except psycopg.errors.LockNotAvailable as exc:
        raise WarehouseError(
            f"another writer held the same source for {CLAIM_WAIT_SECONDS} s"
        ) from exc
    except psycopg.Error as exc:
        _drop_claims()
        raise WarehouseBroken(
            f"the warehouse's catalog refused a claim: {_first_line(exc)}"
        ) from exc
    _local.claimed = True
    return True


def _drop_claims() -> None:
    con = getattr(_local, "claims", None)
    _local.claims = None
    if con is not None:
        con.close()  # its session ends, and every lock it held


def _release_claims() -> None:
    if not getattr(_local, "claimed", False):
        return
    _local.claimed = False
    import psycopg

    try:
        _local.claims.execute("SELECT pg_advisory_unlock_all()")
    except psycopg.Error:
        _drop_claims()


# Run once per process by its first writer, holding the writer lock, before its first
# transaction (warehouse.data_files registers the removal of files no transaction will
# commit). Per pid: a forked worker is a writer of its own.
_writer_start: list[Callable[[duckdb.DuckDBPyConnection], object]] = []
_writer_started_pid: int | None = None


def on_writer_start(hook: Callable[[duckdb.DuckDBPyConnection], object]) -> None:
    _writer_start.append(hook)


def _start_writer(cur: duckdb.DuckDBPyConnection) -> None:
    global _writer_started_pid
    if _writer_started_pid == os.getpid():
        return
    _writer_started_pid = os.getpid()
    for hook in _writer_start:
        try:
            hook(cur)
        except (OSError, duckdb.Error):  # a clean-up that failed must not stop the write
            log.warning("writer start-up hook %s failed", hook.__name__, exc_info=True)


@contextmanager
def transaction() -> Iterator[duckdb.DuckDBPyConnection]:
    """One warehouse transaction, held while the block runs: committed when it ends,
    rolled back whole when it raises. A conflict with another writer raises
    duckdb.TransactionException, rolled back; the caller decides whether to start again
    (write() does). For a load that spans several steps, as the agent-event ingest does
    while its next chunk is parsed."""
    with _writer_lock():
        cur = cursor()
        root = getattr(_local, "root", None)
        try:
            _start_writer(cur)
            cur.execute("BEGIN TRANSACTION")
        except duckdb.Error as exc:
            if _unreachable(exc):
                raise _unreachable_error(exc) from exc
            if _broken(exc, root):
                _discard(root)
                raise WarehouseBroken(f"the warehouse failed a write: {_first_line(exc)}") from exc
            raise _explained(exc) from exc
        _local.in_transaction = True
        try:
            yield cur
            cur.execute("COMMIT")
        except duckdb.Error as exc:
            _rollback(cur)
            if _unreachable(exc):
                raise _unreachable_error(exc) from exc
            if _stale(exc):
                raise WarehouseBroken(f"the warehouse failed a write: {_first_line(exc)}") from exc
            if _broken(exc, root):
                _discard(root)
                raise WarehouseBroken(f"the warehouse failed a write: {_first_line(exc)}") from exc
            raise _explained(exc) from exc
        except BaseException:
            _rollback(cur)
            raise
        finally:
            _local.in_transaction = False
            _release_claims()  # after the commit: a writer waiting reads what it wrote


def _rollback(cur: duckdb.DuckDBPyConnection) -> None:
    try:
        cur.execute("ROLLBACK")
    except duckdb.Error:
        # Left in its aborted transaction (the catalog's server gone), the cursor would
        # refuse every later statement of this thread: a new one is made instead.
        log.debug("rollback after a failed transaction raised", exc_info=True)
        _reset_cursor()


def _reset_cursor() -> None:
    """Drop this thread's cursor (and the views registered on it); the next statement
    gets a new one on the same handle."""
    cur = getattr(_local, "cursor", None)
    _local.cursor = None
    if cur is not None:
        try:
            cur.close()
        except duckdb.Error:
            log.debug("closing a cursor left in an aborted transaction raised", exc_info=True)


def explain_unexpected(exc: BaseException) -> WarehouseError | None:
    """The warehouse error that an exception raised by a statement run on a cursor
    directly (not through fetch_* or transaction) stands for, if any: the catalog's server
    out of reach, for a 503 to retry instead of a 500."""
    if isinstance(exc, duckdb.Error) and _unreachable(exc):
        return _unreachable_error(exc)
    return None


def write(work: Callable[[duckdb.DuckDBPyConnection], T], *, attempts: int = 5) -> T:
    """Run `work` in one warehouse transaction, committed or rolled back whole.

    Conflicts with other writers are retried (retry_on_conflict); `work` must therefore
    be safe to run again (it reads its own inputs inside the transaction).
    """

    def in_transaction() -> T:
        with transaction() as cur:
            return work(cur)

    return retry_on_conflict(in_transaction, attempts=attempts)


def retry_on_conflict(
    work: Callable[[], T],
    *,
    attempts: int = 5,
    before_retry: Callable[[], object] | None = None,
) -> T:
    """Run `work` again while it conflicts with another writer (Conflict) or the handle
    broke (WarehouseBroken: reopened for the next attempt), up to `attempts` times in all,
    then raise WarehouseError. `work` opens its own transactions, each rolled back whole
    by the conflict, so it must be safe to run again.

    The pause before a retry doubles from 0.1 s (0.1, 0.2, 0.4, 0.8 s for 5 attempts), so
    writers that collided do not collide again at once; `before_retry` then runs, to read
    again what the next attempt starts from (a load's stored read position)."""
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except Conflict as exc:
            if attempt == attempts:
                WRITE_CONFLICTS_EXHAUSTED.inc()
                raise WarehouseError(f"warehouse write kept conflicting: {exc}") from exc
            WRITE_CONFLICTS.inc()
            log.warning("warehouse write conflict (attempt %d): %s", attempt, exc)
        except WarehouseBroken as exc:
            if attempt == attempts:
                raise
            log.warning("warehouse handle broken (attempt %d), reopened: %s", attempt, exc)
        time.sleep(0.1 * 2 ** (attempt - 1))
        if before_retry is not None:
            before_retry()
    raise AssertionError("unreachable")
