"""Warehouse changes for OpenTelemetry in (docs/otlp.md): versions 500-599.

Adds the event columns telemetry carries (all nullable: other sources leave them empty),
`otlp_points`, every metric data point received, one row per series and time, and
`otlp_call_agents`, the agent the traces name for each Claude Code API call. Never
edit a migration that has shipped: append a new one.
"""

from warehouse.schema.migration import Migration

MIGRATIONS = (
    Migration(
        500,
        "telemetry columns on events, metric points",
        (
            # The provider's request id of an llm_call (Claude Code's `request_id`, a
            # transcript's `requestId`): an API call seen both ways is stored once.
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS request_id VARCHAR",
            # Who: `user.email`, else `user.id`; their `organization.id`.
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS person VARCHAR",
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS organization VARCHAR",
            # The team the sender's resource names (`team.id`), or the sender's team;
            # `department` and `cost_center` from OTEL_RESOURCE_ATTRIBUTES.
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS team VARCHAR",
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS department VARCHAR",
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS cost_center VARCHAR",
            # A span's identity and parent, hex (an event made from a span, or a log
            # record emitted inside one).
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS trace_id VARCHAR",
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS span_id VARCHAR",
            "ALTER TABLE events ADD COLUMN IF NOT EXISTS parent_span_id VARCHAR",
            # One row per data point: `series` is a digest of the metric name, the
            # resource (less its per-process ids) and the point's attributes; a retried
            # export brings the same (series, ts) and is stored once. `value` is the
            # gauge's or sum's value, a histogram's sum (`count` its count);
            # `temporality` is `delta` or `cumulative` for sums and histograms.
            """
            CREATE TABLE IF NOT EXISTS otlp_points (
                series VARCHAR NOT NULL,
                metric VARCHAR NOT NULL,
                unit VARCHAR,
                kind VARCHAR NOT NULL,
                temporality VARCHAR,
                service VARCHAR,
                session VARCHAR,
                person VARCHAR,
                organization VARCHAR,
                team VARCHAR,
                department VARCHAR,
                cost_center VARCHAR,
                attrs VARCHAR NOT NULL,
                resource VARCHAR NOT NULL,
                start_ts TIMESTAMPTZ,
                ts TIMESTAMPTZ NOT NULL,
                value DOUBLE NOT NULL,
                count BIGINT,
                source VARCHAR NOT NULL,
                ingested_at TIMESTAMPTZ NOT NULL
            )
            """,
        ),
    ),
    Migration(
        501,
        "which agent made each Claude Code API call, from the traces",
        (
            # A `claude_code.llm_request` span made inside a subagent names the agent of
            # the call `request_id` of run (session) `run`: its `api_request` event's
            # llm_call is that agent's, whichever of the two arrives first.
            """
            CREATE TABLE IF NOT EXISTS otlp_call_agents (
                run VARCHAR NOT NULL,
                request_id VARCHAR NOT NULL,
                agent VARCHAR NOT NULL,
                parent VARCHAR
            )
            """,
        ),
    ),
    Migration(
        510,
        "vLLM request-trace columns on requests",
        (
            # From vLLM's llm_request span (docs/otlp.md), in milliseconds: time waiting
            # to be scheduled, in prefill, in decode.
            "ALTER TABLE requests ADD COLUMN IF NOT EXISTS queue_ms DOUBLE",
            "ALTER TABLE requests ADD COLUMN IF NOT EXISTS prefill_ms DOUBLE",
            "ALTER TABLE requests ADD COLUMN IF NOT EXISTS decode_ms DOUBLE",
            # The span's identity and parent, hex: with a propagated traceparent, the
            # calling agent's trace and call (events.trace_id / span_id).
            "ALTER TABLE requests ADD COLUMN IF NOT EXISTS trace_id VARCHAR",
            "ALTER TABLE requests ADD COLUMN IF NOT EXISTS span_id VARCHAR",
            "ALTER TABLE requests ADD COLUMN IF NOT EXISTS parent_span_id VARCHAR",
        ),
    ),
)
