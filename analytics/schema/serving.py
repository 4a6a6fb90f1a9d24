"""Warehouse tables for vLLM serving metrics: raw samples, scrape outcomes, per-minute rollups.

Raw samples are kept for FLEETSCOPE_SERVING_RAW_RETENTION_HOURS; per-minute rollups of the
modelled metrics (see ingest/parsers/vllm.py) are kept for good, so long ranges never read
raw rows. Never edit a migration that has shipped: append a new one in 100-199.
"""

from analytics.warehouse import Migration

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
)
