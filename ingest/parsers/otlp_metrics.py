"""OTLP metrics as stored series points (`otlp_points`): every gauge, sum and histogram
data point of any service, one row each, keyed by its series (metric name, resource and
point attributes) and time, so a retried export is stored once.

Owns reading a metric's data points and their temporality (delta or cumulative, as the
exporter declares it: Claude Code's default is delta, an SDK's is cumulative); what a
series means (lines of code, active time) is the read side's (analytics/people/). Pure.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ingest.parsers.event_rows import Reject
from ingest.parsers.otlp import Attrs, Mapped, Resource, Sender, attributes, text, ts_text

_TEMPORALITY = {1: "delta", 2: "cumulative"}
# Resource attributes that change from one process start to the next without naming
# another series (a series is the same counter however often its exporter restarts).
_VOLATILE = frozenset({"process.pid", "service.instance.id"})


def _json(attrs: Attrs) -> str:
    return orjson.dumps(attrs, option=orjson.OPT_SORT_KEYS).decode()


def _point_rows(
    metric: Any, resource: Resource, kind: str, points: Any, temporality: str | None
) -> list[dict[str, Any]]:
    resource_json = _json({k: v for k, v in resource.attrs.items() if k not in _VOLATILE})
    rows = []
    for point in points:
        attrs = attributes(point.attributes)
        attrs_json = _json(attrs)
        series = hashlib.blake2b(
            f"{metric.name}\0{resource_json}\0{attrs_json}".encode(), digest_size=16
        ).hexdigest()
        if kind == "histogram":
            value, number_of = float(point.sum), int(point.count)
        else:
            which = point.WhichOneof("value")
            if which is None:
                raise Reject(f"{metric.name}: a data point without a value")
            value, number_of = float(getattr(point, which)), None
        session = attrs.get("session.id")
        rows.append(
            {
                **_point_people(attrs),
                "series": series,
                "metric": metric.name,
                "unit": metric.unit or None,
                "kind": kind,
                "temporality": temporality,
                "service": resource.service or None,
                "session": session if isinstance(session, str) else None,
                "attrs": attrs_json,
                "resource": resource_json,
                "start_ts": ts_text(point.start_time_unix_nano)
                if point.start_time_unix_nano
                else None,
                "ts": ts_text(point.time_unix_nano),
                "value": value,
                "count": number_of,
            }
        )
    return rows


def _point_people(attrs: Attrs) -> dict[str, str]:
    """The person and organization a point's own attributes name (Claude Code puts
    user.email on every data point, not on the resource); absent keys are left to the
    walk's people columns, which read the resource."""
    found = {
        "person": text(attrs, "user.email") or text(attrs, "user.id"),
        "organization": text(attrs, "organization.id"),
    }
    return {k: v for k, v in found.items() if v is not None}


def map_metric(resource: Resource, _attrs: Attrs, metric: Any, _sender: Sender) -> Mapped | None:
    which = metric.WhichOneof("data")
    if which == "gauge":
        rows = _point_rows(metric, resource, "gauge", metric.gauge.data_points, None)
    elif which == "sum":
        temporality = _TEMPORALITY.get(metric.sum.aggregation_temporality)
        if temporality is None:
            raise Reject(f"{metric.name}: a sum without a temporality")
        rows = _point_rows(metric, resource, "sum", metric.sum.data_points, temporality)
    elif which == "histogram":
        temporality = _TEMPORALITY.get(metric.histogram.aggregation_temporality)
        if temporality is None:
            raise Reject(f"{metric.name}: a histogram without a temporality")
        points = metric.histogram.data_points
        rows = _point_rows(metric, resource, "histogram", points, temporality)
    elif which is None:
        raise Reject(f"{metric.name or '(no name)'}: a metric without data")
    else:  # exponential histograms and summaries: valid, not read by any page
        return None
    return Mapped(points=rows)
