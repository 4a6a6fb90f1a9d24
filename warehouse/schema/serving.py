"""Warehouse tables for vLLM serving metrics: raw samples, scrape outcomes, per-minute rollups.

Raw samples are kept for FLEETSCOPE_SERVING_RAW_RETENTION_HOURS; per-minute and per-hour
rollups of the modelled metrics (see ingest/parsers/vllm.py) are kept for good, so long
ranges never read raw rows. Never edit a migration that has shipped: append a new one in 100-199.
"""

from warehouse.schema.migration import Migration

MIGRATIONS = (
    Migration(
        100,
        "serving samples, scrapes, per-minute rollups",
        (
            # One row per exposed sample. `metric`, `engine` and `le` are the sample's place
            # in the one model of V0/V1 names (NULL when the sample is kept but not modelled).
            # `delta` is the reset-adjusted increase since the previous scrape, computed at
            # load time for counters and histogram parts so queries never need window
            # functions; NULL for gauges and for a series' first sample.
            """
            CREATE TABLE IF NOT EXISTS serving_samples (
                instance VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                name VARCHAR NOT NULL,
                labels VARCHAR NOT NULL,
                kind VARCHAR NOT NULL,
                value DOUBLE NOT NULL,
                created DOUBLE,
                metric VARCHAR,
                engine VARCHAR,
                le DOUBLE,
                delta DOUBLE
            )
            """,
            # One row per scrape attempt (or per imported Prometheus timestamp): `up`, the
            # one-line reason of a failure, and what the scrape said about the server.
            """
            CREATE TABLE IF NOT EXISTS serving_scrapes (
                instance VARCHAR NOT NULL,
                ts TIMESTAMPTZ NOT NULL,
                up BOOLEAN NOT NULL,
                error VARCHAR,
                source VARCHAR NOT NULL,
                duration_ms DOUBLE,
                samples INTEGER NOT NULL,
                engine_kind VARCHAR,
                model VARCHAR,
                engines INTEGER,
                block_size INTEGER,
                num_gpu_blocks BIGINT,
                prefix_unit VARCHAR,
                resets INTEGER NOT NULL
            )
            """,
            # Per minute, per modelled series (summed over labels other than engine and le):
            # gauges keep sum/count/max (a mean stays exact when minutes are merged),
            # counters keep the summed reset-adjusted increase.
            """
            CREATE TABLE IF NOT EXISTS serving_minutes (
                instance VARCHAR NOT NULL,
                minute TIMESTAMPTZ NOT NULL,
                metric VARCHAR NOT NULL,
                engine VARCHAR NOT NULL,
                le DOUBLE,
                samples BIGINT NOT NULL,
                value_sum DOUBLE NOT NULL,
                value_max DOUBLE NOT NULL,
                increase DOUBLE
            )
            """,
            # Append-only: every minute before the newest `rolled_until` is in
            # serving_minutes. Written in the same transaction as the rows it covers.
            """
            CREATE TABLE IF NOT EXISTS serving_rollup_marks (
                rolled_until TIMESTAMPTZ NOT NULL,
                minutes_written BIGINT NOT NULL,
                done_at TIMESTAMPTZ NOT NULL
            )
            """,
        ),
    ),
    Migration(
        101,
        "serving per-hour rollups",
        (
            # The same as serving_minutes per hour, built from it, so 30-day answers read
            # 60x fewer rows; every hour before the hour of the newest `rolled_until` is here.
            """
            CREATE TABLE IF NOT EXISTS serving_hours (
                instance VARCHAR NOT NULL,
                hour TIMESTAMPTZ NOT NULL,
                metric VARCHAR NOT NULL,
                engine VARCHAR NOT NULL,
                le DOUBLE,
                samples BIGINT NOT NULL,
                value_sum DOUBLE NOT NULL,
                value_max DOUBLE NOT NULL,
                increase DOUBLE
            )
            """,
            # Rollups of minutes that closed before the table existed.
            """
            INSERT INTO serving_hours
            SELECT instance, time_bucket(INTERVAL 1 HOUR, minute) AS hour, metric, engine, le,
                   sum(samples), sum(value_sum), max(value_max), sum(increase)
            FROM serving_minutes
            WHERE minute < (SELECT date_trunc('hour', max(rolled_until)) FROM serving_rollup_marks)
            GROUP BY ALL
            """,
        ),
    ),
)
