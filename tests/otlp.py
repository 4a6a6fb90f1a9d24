"""Building OTLP requests in tests, with the `opentelemetry-proto` classes, and posting them
to the receiver: one place for every OTLP test (receiver, mappers, loader, people).

`log_record(...)`, `span(...)`, `sum_metric(...)` make one record; `logs_request`,
`traces_request`, `metrics_request` wrap records of one resource; `post(client, ...)`
sends one as protobuf or OTLP/JSON (ids in hex, as the specification writes them).
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric, NumberDataPoint
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from ingest.sources.otlp import key_values

PATHS: dict[type[Message], str] = {
    ExportLogsServiceRequest: "/v1/logs",
    ExportMetricsServiceRequest: "/v1/metrics",
    ExportTraceServiceRequest: "/v1/traces",
}
DELTA, CUMULATIVE = 1, 2


def nanos(when: str | datetime) -> int:
    moment = datetime.fromisoformat(when) if isinstance(when, str) else when
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def log_record(when: str | datetime, attrs: Mapping[str, Any], body: str = "") -> LogRecord:
    record = LogRecord(time_unix_nano=nanos(when), observed_time_unix_nano=nanos(when))
    record.attributes.extend(key_values(attrs))
    if body:
        record.body.string_value = body
    return record


def span(
    name: str,
    trace_id: str,
    span_id: str,
    start: str | datetime,
    end: str | datetime,
    attrs: Mapping[str, Any],
    parent_span_id: str = "",
    status_code: int = 0,
) -> Span:
    out = Span(
        name=name,
        trace_id=bytes.fromhex(trace_id),
        span_id=bytes.fromhex(span_id),
        parent_span_id=bytes.fromhex(parent_span_id) if parent_span_id else b"",
        start_time_unix_nano=nanos(start),
        end_time_unix_nano=nanos(end),
    )
    out.attributes.extend(key_values(attrs))
    out.status.code = status_code  # type: ignore[assignment]
    return out


def sum_metric(
    name: str,
    points: Iterable[tuple[str | datetime, float, Mapping[str, Any]]],
    temporality: int = DELTA,
    unit: str = "",
    start: str | datetime | None = None,
) -> Metric:
    metric = Metric(name=name, unit=unit)
    metric.sum.aggregation_temporality = temporality  # type: ignore[assignment]
    metric.sum.is_monotonic = True
    for when, value, attrs in points:
        point = NumberDataPoint(time_unix_nano=nanos(when))
        if start is not None:
            point.start_time_unix_nano = nanos(start)
        if isinstance(value, int):
            point.as_int = value
        else:
            point.as_double = value
        point.attributes.extend(key_values(attrs))
        metric.sum.data_points.append(point)
    return metric


def logs_request(
    resource: Mapping[str, Any], records: Iterable[LogRecord]
) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    group = request.resource_logs.add()
    group.resource.attributes.extend(key_values(resource))
    group.scope_logs.add().log_records.extend(records)
    return request


def traces_request(resource: Mapping[str, Any], spans: Iterable[Span]) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    group = request.resource_spans.add()
    group.resource.attributes.extend(key_values(resource))
    group.scope_spans.add().spans.extend(spans)
    return request


def metrics_request(
    resource: Mapping[str, Any], metrics: Iterable[Metric]
) -> ExportMetricsServiceRequest:
    request = ExportMetricsServiceRequest()
    group = request.resource_metrics.add()
    group.resource.attributes.extend(key_values(resource))
    group.scope_metrics.add().metrics.extend(metrics)
    return request


def _hex_ids(node: Any) -> Any:
    """protobuf's JSON writes bytes as base64; OTLP/JSON writes ids as hex."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)
    return node


def otlp_json(request: Message) -> bytes:
    """The request as OTLP/JSON: lowerCamelCase, ids in hex, int64 as strings."""
    return orjson.dumps(_hex_ids(json_format.MessageToDict(request)))


def post(
    client: Any,
    request: Message,
    token: str | None,
    *,
    encoding: str = "protobuf",
    gzipped: bool = False,
) -> Any:
    """POST the request to its standard path; answers the Django test client's response."""
    if encoding == "protobuf":
        body, content_type = request.SerializeToString(), "application/x-protobuf"
    else:
        body, content_type = otlp_json(request), "application/json"
    headers: dict[str, str] = {}
    if gzipped:
        body = gzip.compress(body)
        headers["HTTP_CONTENT_ENCODING"] = "gzip"
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client.post(PATHS[type(request)], data=body, content_type=content_type, **headers)
