"""Reading an OTLP/HTTP request body into its `opentelemetry-proto` message, and writing
the answer the specification asks for, in the request's own encoding.

Owns the three signals' message classes, the content types (`application/x-protobuf`,
`application/json`), gzip bodies and the one place OTLP/JSON's ids are read right:
OTLP/JSON writes trace and span ids as hex, where protobuf's stock JSON parser expects
base64 for `bytes` fields and would silently read other bytes (a 32-hex-digit trace id is
valid base64 of 24 bytes). Also builds AnyValues for whoever sends requests (the demo, the
bench, the tests). Must not map records onto events (ingest/parsers/otlp.py does) nor
touch the spool or the warehouse.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

# The largest body the receiver takes, decompressed (413 past it): an exporter's batch
# is a few MiB at most (Claude Code's 512 records are ~0.5 MiB of protobuf).
MAX_OTLP_BODY_BYTES = 32 * 1024 * 1024

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

# OTLP/JSON fields that are `bytes` in the protobuf and hex in JSON (the specification's
# exception to proto3's JSON mapping).
_HEX_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


class Signal(StrEnum):
    LOGS = "logs"
    METRICS = "metrics"
    TRACES = "traces"


@dataclass(frozen=True)
class _Classes:
    request: type[Message]
    response: type[Message]
    rejected_field: str  # partial_success's count of this signal's rejected records


_CLASSES = {
    Signal.LOGS: _Classes(
        logs_service_pb2.ExportLogsServiceRequest,
        logs_service_pb2.ExportLogsServiceResponse,
        "rejected_log_records",
    ),
    Signal.METRICS: _Classes(
        metrics_service_pb2.ExportMetricsServiceRequest,
        metrics_service_pb2.ExportMetricsServiceResponse,
        "rejected_data_points",
    ),
    Signal.TRACES: _Classes(
        trace_service_pb2.ExportTraceServiceRequest,
        trace_service_pb2.ExportTraceServiceResponse,
        "rejected_spans",
    ),
}


class OtlpBodyError(ValueError):
    """A body that does not decode (400); the message says why, in one line."""


class OtlpTooLarge(ValueError):
    """A body past MAX_OTLP_BODY_BYTES, compressed or not (413)."""

    def __init__(self) -> None:
        super().__init__(
            f"OTLP body larger than {MAX_OTLP_BODY_BYTES >> 20} MiB; export smaller batches"
        )


class UnsupportedMediaType(ValueError):
    """A Content-Type that is neither protobuf nor JSON (415)."""


def encoding_of(content_type: str) -> str:
    """PROTOBUF or JSON from a Content-Type header (parameters such as charset ignored)."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in (PROTOBUF, "application/protobuf"):
        return PROTOBUF
    if media == JSON:
        return JSON
    raise UnsupportedMediaType(
        f"Content-Type {media or '(none)'} is not OTLP: send {PROTOBUF} or {JSON}"
    )


def inflate(body: bytes, content_encoding: str) -> bytes:
    """The body with its Content-Encoding undone (gzip, deflate or none), refused past
    the bound however well it compresses."""
    coding = content_encoding.strip().lower()
    if coding in ("", "identity"):
        if len(body) > MAX_OTLP_BODY_BYTES:
            raise OtlpTooLarge()
        return body
    if coding not in ("gzip", "deflate"):
        raise OtlpBodyError(f"Content-Encoding {coding} is not supported: send gzip or none")
    window = 16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(window)
    try:
        out = inflater.decompress(body, MAX_OTLP_BODY_BYTES + 1)
    except zlib.error as exc:
        raise OtlpBodyError(f"body is not valid {coding}: {exc}") from None
    if len(out) > MAX_OTLP_BODY_BYTES or inflater.unconsumed_tail:
        raise OtlpTooLarge()
    if not inflater.eof:
        raise OtlpBodyError(f"body is truncated {coding}")
    return out


def decode(signal: Signal, body: bytes, encoding: str) -> Message:
    """The signal's Export*ServiceRequest from an (inflated) body; OtlpBodyError when it
    does not decode."""
    message = _CLASSES[signal].request()
    if encoding == PROTOBUF:
        try:
            message.ParseFromString(body)
        except DecodeError as exc:
            raise OtlpBodyError(f"body is not a protobuf {_name(signal)}: {exc}") from None
        return message
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise OtlpBodyError(f"body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise OtlpBodyError(f"body is not an OTLP/JSON {_name(signal)} object")
    try:
        json_format.ParseDict(_ids_as_base64(document), message, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise OtlpBodyError(f"body is not an OTLP/JSON {_name(signal)}: {_one_line(exc)}") from None
    return message


def answer(signal: Signal, encoding: str, rejected: int = 0, message: str = "") -> bytes:
    """The Export*ServiceResponse body: empty, or with partial_success when records were
    rejected (or a warning message is due)."""
    response = _CLASSES[signal].response()
    if rejected or message:
        partial = response.partial_success
        setattr(partial, _CLASSES[signal].rejected_field, rejected)
        partial.error_message = message
    if encoding == PROTOBUF:
        return response.SerializeToString()
    return orjson.dumps(json_format.MessageToDict(response))


def status_body(encoding: str, code: int, message: str) -> bytes:
    """A google.rpc.Status-shaped error body (what OTLP/HTTP answers with on 4xx/5xx):
    protobuf for a protobuf request, JSON otherwise."""
    if encoding == PROTOBUF:
        return _status_protobuf(code, message)
    return orjson.dumps({"code": code, "message": message})


def _status_protobuf(code: int, message: str) -> bytes:
    # google.rpc.Status { int32 code = 1; string message = 2; }, written by hand: the
    # googleapis-common-protos package would be a dependency for two fields.
    text = message.encode()
    return bytes([0x08]) + _varint(code) + bytes([0x12]) + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _ids_as_base64(node: Any) -> Any:
    """The document with every hex trace/span id rewritten as the base64 ParseDict reads
    (in place: the document is ours). An id that is not hex is an OtlpBodyError."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _HEX_ID_KEYS and isinstance(value, str):
                node[key] = _hex_to_base64(key, value)
            elif isinstance(value, dict | list):
                _ids_as_base64(value)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict | list):
                _ids_as_base64(item)
    return node


def _hex_to_base64(key: str, value: str) -> str:
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise OtlpBodyError(f"{key} {value[:40]!r} is not hex") from None
    return base64.b64encode(raw).decode()


def _name(signal: Signal) -> str:
    return _CLASSES[signal].request.DESCRIPTOR.name


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]


def any_value(value: Any) -> AnyValue:
    """A Python value as an OTLP AnyValue (bool, int, float, bytes, list, mapping, else
    its text): what the demo's sender, the bench and the tests build requests with."""
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, list):
        out = AnyValue()
        out.array_value.values.extend(any_value(v) for v in value)
        return out
    if isinstance(value, Mapping):
        out = AnyValue()
        out.kvlist_value.values.extend(key_values(value))
        return out
    return AnyValue(string_value=str(value))


def key_values(attrs: Mapping[str, Any]) -> list[KeyValue]:
    """Attributes as OTLP KeyValues, in their order."""
    return [KeyValue(key=k, value=any_value(v)) for k, v in attrs.items()]


def gzip_body(body: bytes) -> bytes:
    """gzip as exporters send it (for tests, the bench and the demo's sender)."""
    return gzip.compress(body, compresslevel=1)


__all__ = [
    "JSON",
    "MAX_OTLP_BODY_BYTES",
    "PROTOBUF",
    "OtlpBodyError",
    "OtlpTooLarge",
    "Signal",
    "UnsupportedMediaType",
    "answer",
    "any_value",
    "decode",
    "encoding_of",
    "gzip_body",
    "inflate",
    "key_values",
    "status_body",
]
