"""Serving metrics: parse + store CPU per scrape, bytes per target-day, endpoint latency.

`python -m bench serving`. Scale with BENCH_SERVING_TARGETS (default 4) and
BENCH_SERVING_DAYS (default 30); 16 targets is the issue's fleet (see the printed
extrapolation). Figures:
  1. CPU to parse and store one V1 scrape from the stand-in server (289 samples, one
     engine), loaded one per commit (the `scrape` command) and batched as the beat task
     loads its spool (4 scrapes per target per commit at the 60 s default; 1 and 16
     targets). Loads run on one DuckDB thread (see load_scrapes). Each case starts with
     one warm-up commit that is not counted (a process's first commit costs ~10x).
  2. Bytes per target-day: 1 h of stand-in scrapes through the real path, after
     maintenance (flush, merge), raw samples and per-minute rollups, scaled to a day.
  3. Endpoint latency through the HTTP API (auth, ninja, queries) on generated history:
     per-minute rollups for every target and day plus 48 h of raw samples per target,
     shaped like a current vLLM release's body (tests/fixtures/vllm-metrics/
     current-0.11-b.prom: every modelled family, spec decoding, split labels), with the
     endpoints of every signal (latency by phase, spec-decode, slo, fleet).
     BENCH_SERVING_ONLY=endpoints runs this step alone; BENCH_SERVING_REUSE=<dir> times
     the endpoints on the history a previous run generated and left in <dir> (its
     `history` lake, under the printed fleetscope-bench-* data dir) instead of
     generating it again (16 x 30 days takes ~5 minutes).
     Figures measured, with the commands: bench/serving.md.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
from django.test import Client

import warehouse
from ingest.parsers.vllm import ModelledScrape

TARGETS = int(os.environ.get("BENCH_SERVING_TARGETS", "4"))
DAYS = int(os.environ.get("BENCH_SERVING_DAYS", "30"))
RAW_HOURS = 48
ONLY = os.environ.get("BENCH_SERVING_ONLY", "")
REUSE = os.environ.get("BENCH_SERVING_REUSE", "")
CURRENT_BODY = (
    Path(__file__).parents[1] / "tests" / "fixtures" / "vllm-metrics" / "current-0.11-b.prom"
)
SCRAPE_S = 15
FLUSH_S = 60


def _fresh_lake(name: str) -> None:
    from django.conf import settings

    base = Path(settings.DATA_DIR) / name
    warehouse.close()
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{base / 'catalog.sqlite'}"
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(base / "data") + "/"
    warehouse.migrate()


def _reuse_lake(base: Path) -> None:
    from django.conf import settings

    warehouse.close()
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{base / 'catalog.sqlite'}"
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(base / "data") + "/"


def _standin_scrapes(count: int, engines: int = 1, seed: int = 7) -> list[tuple[float, str]]:
    from ingest.standin_vllm import StandinServer

    standin = StandinServer(engines=engines, seed=seed)
    return [
        (standin.created + SCRAPE_S * i, standin.metrics(now=standin.created + SCRAPE_S * i))
        for i in range(1, count + 1)
    ]


# --- 1. parse + store CPU ----------------------------------------------------------------


def bench_scrape_cpu() -> None:
    from ingest.parsers.vllm import parse_scrape
    from ingest.pipelines import serving_spool
    from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes

    _fresh_lake("cpu")
    texts = _standin_scrapes(60)
    samples = len(parse_scrape(texts[0][1]))
    started = time.process_time()
    for _, text in texts:
        parse_scrape(text)
    parse_ms = (time.process_time() - started) * 1000 / len(texts)
    print(f"   one V1 scrape: {samples} samples, parse {parse_ms:.2f} ms CPU (repeated structure)")
    from ingest.parsers.prometheus_text import parse_exposition

    started = time.process_time()
    for _, text in texts[:20]:
        parse_exposition(text)
    full_ms = (time.process_time() - started) * 1000 / 20
    print(f"   prometheus_client's parser on a new structure: {full_ms:.1f} ms CPU")

    def run(targets: int, per_commit: int, rounds: int, spool: bool) -> float:
        _fresh_lake(f"cpu-{targets}-{per_commit}-{spool}")
        cpu = 0.0
        n = 0
        # Round 0 warms up (the lake's first statements and files cost ~10x a later
        # commit, once per process) and is not counted: the beat worker runs for days.
        for r in range(rounds + 1):
            batch = []
            started = time.process_time()
            for k in range(per_commit):
                ts, text = texts[(r * per_commit + k) % len(texts)]
                when = datetime.fromtimestamp(ts, tz=UTC) + timedelta(
                    seconds=r * per_commit * SCRAPE_S
                )
                for t in range(targets):
                    pending = PendingScrape(f"t{t}", when, scrape=parse_scrape(text))
                    if spool:
                        serving_spool.append(pending)
                    else:
                        batch.append(pending)
            if spool:
                paths = serving_spool.pending_files()
                batch = serving_spool.read(paths)
            load_scrapes(batch, rollup_until=batch[-1].ts - timedelta(minutes=1))
            if spool:
                serving_spool.discard(paths)
            if r:
                cpu += time.process_time() - started
                n += len(batch)
        return cpu * 1000 / n

    per_commit = max(1, FLUSH_S // SCRAPE_S)
    direct = run(1, 1, 10, False)
    spooled_1 = run(1, per_commit, 8, True)
    spooled_16 = run(16, per_commit, 3, True)
    print(
        f"   parse + store CPU per scrape, warm: one per commit {direct:.1f} ms; "
        f"beat task, {FLUSH_S} s spool: 1 target ({per_commit} per commit) {spooled_1:.1f} ms, "
        f"16 targets ({16 * per_commit} per commit) {spooled_16:.1f} ms"
    )


# --- 2. bytes per target-day -------------------------------------------------------------


def _table_bytes() -> dict[str, int]:
    rows = warehouse.fetch_all(
        "SELECT t.table_name, sum(f.file_size_bytes) AS bytes"
        " FROM __ducklake_metadata_lake.ducklake_data_file f"
        " JOIN __ducklake_metadata_lake.ducklake_table t USING (table_id)"
        " WHERE f.end_snapshot IS NULL AND t.end_snapshot IS NULL GROUP BY t.table_name"
    )
    return {r["table_name"]: int(r["bytes"] or 0) for r in rows}


def bench_bytes_per_target_day() -> None:
    from ingest.parsers.vllm import parse_scrape
    from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes

    _fresh_lake("bytes")
    hours = 1
    texts = _standin_scrapes(hours * 3600 // SCRAPE_S, seed=11)
    batch: list[PendingScrape] = []
    for ts, text in texts:
        batch.append(
            PendingScrape("t0", datetime.fromtimestamp(ts, tz=UTC), scrape=parse_scrape(text))
        )
        if len(batch) == FLUSH_S // SCRAPE_S:
            load_scrapes(batch, rollup_until=batch[-1].ts - timedelta(minutes=1))
            batch = []
    warehouse.run_maintenance()
    sizes = _table_bytes()
    rows = warehouse.fetch_one("SELECT count(*) AS n FROM serving_samples")
    day = 24 / hours
    raw = sizes.get("serving_samples", 0) * day
    minutes = sizes.get("serving_minutes", 0) * day
    scrapes = sizes.get("serving_scrapes", 0) * day
    print(f"   {hours} h of one V1 target: {rows['n'] if rows else 0} raw samples stored")
    print(
        f"   bytes per target-day: raw samples {raw / 1e6:.1f} MB, per-minute rollups "
        f"{minutes / 1e6:.2f} MB, scrape log {scrapes / 1e3:.0f} KB"
    )
    print(
        f"   16 targets: {RAW_HOURS} h raw = {16 * raw * RAW_HOURS / 24 / 1e9:.2f} GB, "
        f"30 days of rollups = {16 * 30 * minutes / 1e9:.2f} GB"
    )


# --- 3. endpoints on generated history ---------------------------------------------------


def _dict(indices: np.ndarray, values: Sequence[object], kind: pa.DataType) -> pa.Array:
    """A dictionary-encoded column: cheap to build for millions of repeated strings."""
    return pa.DictionaryArray.from_arrays(
        pa.array(indices.astype(np.int32)), pa.array(values, type=kind)
    )


def _insert(table_name: str, table: pa.Table) -> None:
    def work(cur: duckdb.DuckDBPyConnection) -> None:
        cur.register("gen_batch", table)
        cur.execute(f"INSERT INTO {table_name} SELECT * FROM gen_batch")
        cur.unregister("gen_batch")

    warehouse.write(work)


def _generate_history(now: datetime, scrape: ModelledScrape) -> int:
    """Per-minute rollups for every target and day, written a day at a time for all
    targets, minute by minute (every target's rows of a minute together, in time order,
    as the beat task writes them a minute per commit), then the hours from them in hour
    order (as each completed hour is rolled up)."""
    keys = sorted(
        {
            (m, e or "0", le, c)
            for m, e, le, c in zip(
                scrape.metrics,
                scrape.engines,
                scrape.les,
                scrape.cumulative,
                strict=True,
            )
            if m
        },
        key=lambda k: (k[0], k[1], k[2] if k[2] is not None else -1.0),
    )
    n_series = len(keys)
    is_counter = np.array([k[3] for k in keys])
    rng = np.random.default_rng(3)
    start = (now - timedelta(days=DAYS)).replace(second=0, microsecond=0)
    total = 0
    for day in range(DAYS):
        minutes = 1440 if day < DAYS - 1 else int((now - start).total_seconds() // 60) - 1440 * day
        first_us = int((start + timedelta(days=day)).timestamp() * 1e6)
        minute_us = first_us + np.arange(minutes, dtype=np.int64) * 60_000_000
        per_target = minutes * n_series
        rows = per_target * TARGETS
        values = rng.random(rows)
        counter = np.tile(is_counter, minutes * TARGETS)
        table = pa.table(
            {
                "instance": _dict(
                    np.tile(np.repeat(np.arange(TARGETS), n_series), minutes),
                    [f"t{t}" for t in range(TARGETS)],
                    pa.string(),
                ),
                "minute": pa.array(
                    np.repeat(minute_us, n_series * TARGETS),
                    type=pa.timestamp("us", tz="UTC"),
                ),
                "metric": _dict(
                    np.tile(np.arange(n_series), minutes * TARGETS),
                    [k[0] for k in keys],
                    pa.string(),
                ),
                "engine": _dict(
                    np.tile(np.arange(n_series), minutes * TARGETS),
                    [k[1] for k in keys],
                    pa.string(),
                ),
                "le": pa.array(
                    np.tile(
                        np.array([k[2] if k[2] is not None else np.nan for k in keys]),
                        minutes * TARGETS,
                    ),
                    mask=np.tile(np.array([k[2] is None for k in keys]), minutes * TARGETS),
                ),
                "samples": pa.array(np.full(rows, 4, dtype=np.int64)),
                "value_sum": pa.array(values * 4),
                "value_max": pa.array(values),
                "increase": pa.array(np.floor(values * 20), mask=~counter),
            }
        )
        _insert("serving_minutes", table)
        total += rows
    mark = now - timedelta(minutes=1)
    warehouse.write(
        lambda cur: cur.execute(
            "INSERT INTO serving_hours SELECT instance, time_bucket(INTERVAL 1 HOUR, minute),"
            " metric, engine, le, sum(samples), sum(value_sum), max(value_max), sum(increase)"
            " FROM serving_minutes WHERE minute < ? GROUP BY ALL ORDER BY 2",
            [mark.replace(minute=0)],
        )
    )
    return total


def _generate_raw(now: datetime, scrape: ModelledScrape) -> int:
    """RAW_HOURS of raw samples per target (the retention window), shaped like real ones,
    written six hours at a time for all targets in scrape order (each scrape's targets
    together, as the spool loads them); then the scrape log and the watermark."""
    s = scrape
    n = len(s)
    first = now - timedelta(hours=RAW_HOURS)
    rng = np.random.default_rng(5)
    per_chunk = 6 * 3600 // SCRAPE_S
    total = 0
    for chunk in range(RAW_HOURS // 6):
        ts_us = (
            int((first + timedelta(hours=6 * chunk)).timestamp() * 1e6)
            + np.arange(per_chunk, dtype=np.int64) * SCRAPE_S * 1_000_000
        )
        rows = per_chunk * n * TARGETS
        values = rng.random(rows)
        idx = np.tile(np.arange(n), per_chunk * TARGETS)
        cumulative = np.array(s.cumulative)[idx]
        les = np.array([x if x is not None else np.nan for x in s.les])[idx]
        table = pa.table(
            {
                "instance": _dict(
                    np.tile(np.repeat(np.arange(TARGETS), n), per_chunk),
                    [f"t{t}" for t in range(TARGETS)],
                    pa.string(),
                ),
                "ts": pa.array(np.repeat(ts_us, n * TARGETS), type=pa.timestamp("us", tz="UTC")),
                "name": _dict(idx, s.names, pa.string()),
                "labels": _dict(idx, s.labels, pa.string()),
                "kind": _dict(idx, s.kinds, pa.string()),
                "value": pa.array(values),
                "created": pa.array(np.full(rows, 1.7e9)),
                "metric": _dict(idx, s.metrics, pa.string()),
                "engine": _dict(idx, s.engines, pa.string()),
                "le": pa.array(les, mask=np.isnan(les)),
                "delta": pa.array(np.floor(values * 3), mask=~cumulative),
            }
        )
        _insert("serving_samples", table)
        total += rows
    scrapes = RAW_HOURS * 3600 // SCRAPE_S
    ts_all = (
        int(first.timestamp() * 1e6) + np.arange(scrapes, dtype=np.int64) * SCRAPE_S * 1_000_000
    )
    rows = scrapes * TARGETS
    _insert(
        "serving_scrapes",
        pa.table(
            {
                "instance": _dict(
                    np.tile(np.arange(TARGETS), scrapes),
                    [f"t{t}" for t in range(TARGETS)],
                    pa.string(),
                ),
                "ts": pa.array(np.repeat(ts_all, TARGETS), type=pa.timestamp("us", tz="UTC")),
                "up": pa.array(np.ones(rows, dtype=bool)),
                "error": pa.nulls(rows, pa.string()),
                "source": _dict(np.zeros(rows), ["scrape"], pa.string()),
                "duration_ms": pa.array(np.full(rows, 12.0)),
                "samples": pa.array(np.full(rows, n, dtype=np.int32)),
                "engine_kind": _dict(np.zeros(rows), ["v1"], pa.string()),
                "model": _dict(np.zeros(rows), ["meta-llama/Llama-3.1-8B-Instruct"], pa.string()),
                "engines": pa.array(np.ones(rows, dtype=np.int32)),
                "block_size": pa.array(np.full(rows, 16, dtype=np.int32)),
                "num_gpu_blocks": pa.array(np.full(rows, 4096, dtype=np.int64)),
                "prefix_unit": _dict(np.zeros(rows), ["tokens"], pa.string()),
                "resets": pa.array(np.zeros(rows, dtype=np.int32)),
            }
        ),
    )
    # every minute but the last is rolled up, as the beat task leaves it
    warehouse.write(
        lambda cur: cur.execute(
            "INSERT INTO serving_rollup_marks VALUES (?, 0, now())", [now - timedelta(minutes=1)]
        )
    )
    return total


def _timed(client: Client, path: str, headers: dict[str, str], repeat: int = 5) -> str:
    """Median wall and CPU milliseconds of a request (CPU includes DuckDB's threads; on a
    shared machine wall time also counts waiting for a core)."""
    walls, cpus = [], []
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        response = client.get(path, headers=headers)
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((time.process_time() - cpu_started) * 1000)
        assert response.status_code == 200, (path, response.status_code, response.content[:200])
    return f"{statistics.median(walls):.0f} ms ({statistics.median(cpus):.0f} CPU)"


def bench_endpoints() -> None:
    from django.contrib.auth.models import User

    from dashboard.models import ApiToken

    if REUSE:
        _reuse_lake(Path(REUSE) / "history")
        mark = warehouse.fetch_one("SELECT max(rolled_until) AS w FROM serving_rollup_marks")
        now = mark["w"] + timedelta(minutes=1) if mark else datetime.now(UTC)
        print(f"   reused the history in {REUSE}, up to {now:%Y-%m-%d %H:%M}")
    else:
        _fresh_lake("history")
        now = datetime.now(UTC).replace(second=0, microsecond=0)
        started = time.monotonic()
        from ingest.parsers.vllm import parse_scrape

        scrape = parse_scrape(CURRENT_BODY.read_text())
        minute_rows = _generate_history(now, scrape)
        raw_rows = _generate_raw(now, scrape)
        print(
            f"   generated {TARGETS} targets x {DAYS} days: {minute_rows:,} rollup rows, "
            f"{raw_rows:,} raw samples ({RAW_HOURS} h) in {time.monotonic() - started:.0f} s"
        )
    user, _ = User.objects.get_or_create(username="bench", defaults={"is_superuser": True})
    _, token = ApiToken.issue(user, "bench")
    headers = {"Authorization": f"Bearer {token}"}
    client = Client(HTTP_HOST="127.0.0.1")  # an ALLOWED_HOSTS name, not "testserver"
    day = (now - timedelta(hours=24)).isoformat().replace("+00:00", "Z")
    month = (now - timedelta(days=DAYS)).isoformat().replace("+00:00", "Z")
    end = now.isoformat().replace("+00:00", "Z")
    for label, start, bucket in (
        ("24 h, 5m buckets", day, "5m"),
        (f"{DAYS} d, 1h buckets", month, "1h"),
    ):
        figures = []
        for path in ("kv-usage", "prefix-cache", "preemptions", "latency"):
            extra = "&metric=ttft&quantile=0.95" if path == "latency" else ""
            url = f"/api/serving/{path}?instance=t0&start={start}&end={end}&bucket={bucket}{extra}"
            figures.append(f"{path} {_timed(client, url, headers)}")
        print(f"   {label}: " + ", ".join(figures))
        window = f"start={start}&end={end}&bucket={bucket}"
        signals = []
        for name, query in (
            ("latency tpot", "latency?instance=t0&metric=tpot"),
            ("latency queue", "latency?instance=t0&metric=queue"),
            ("spec-decode", "spec-decode?instance=t0"),
            ("slo ttft", "slo?instance=t0&metric=ttft&target_seconds=0.5"),
            ("fleet-wide slo", "slo?metric=ttft&target_seconds=0.5"),
        ):
            signals.append(f"{name} {_timed(client, f'/api/serving/{query}&{window}', headers)}")
        print(f"   {label}, every signal: " + ", ".join(signals))
        url = f"/api/serving/fleet?start={start}&end={end}"
        print(f"   {label}: fleet table {_timed(client, url, headers)}")
    url = f"/api/serving/kv-usage?instance=t0&start={day}&end={end}&bucket=30s"
    print(f"   24 h, 30s buckets from raw samples: kv-usage {_timed(client, url, headers)}")
    print(f"   instances: {_timed(client, '/api/serving/instances', headers)}")


def run() -> None:
    steps = (bench_scrape_cpu, bench_bytes_per_target_day, bench_endpoints)
    for step in (s for s in steps if not ONLY or s.__name__ == f"bench_{ONLY}"):
        started = time.monotonic()
        step()
        print(f"   [{step.__name__}: {time.monotonic() - started:.0f} s]", flush=True)
