"""Reading OTLP bodies: protobuf and OTLP/JSON give the same message, hex ids are read as
the bytes they spell (not as base64), gzip is undone, and what does not decode says why."""

import base64
import gzip

import orjson
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from ingest.sources.otlp import (
    JSON,
    MAX_OTLP_BODY_BYTES,
    PROTOBUF,
    OtlpBodyError,
    OtlpTooLarge,
    Signal,
    UnsupportedMediaType,
    answer,
    decode,
    encoding_of,
    inflate,
)
from tests.otlp import otlp_json, span, traces_request

TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"


def _request():
    return traces_request(
        {"service.name": "agent"},
        [span("chat", TRACE, SPAN, "2026-03-01T10:00:00", "2026-03-01T10:00:02", {"n": 7})],
    )


def test_otlp_json_ids_are_hex_and_read_as_the_bytes_they_spell() -> None:
    body = otlp_json(_request())
    assert orjson.loads(body)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] == TRACE
    message = decode(Signal.TRACES, body, JSON)
    got = message.resource_spans[0].scope_spans[0].spans[0]
    assert got.trace_id == bytes.fromhex(TRACE) and got.span_id == bytes.fromhex(SPAN)
    # What protobuf's stock parser would have made of the hex: base64 of other bytes.
    assert base64.b64decode(TRACE) != bytes.fromhex(TRACE)
    assert message == decode(Signal.TRACES, _request().SerializeToString(), PROTOBUF)


def test_otlp_json_takes_int64_as_strings_or_numbers_and_ignores_unknown_fields() -> None:
    document = orjson.loads(otlp_json(_request()))
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    spans[0]["startTimeUnixNano"] = int(spans[0]["startTimeUnixNano"])  # a number
    spans[0]["someFutureField"] = {"x": 1}
    document["unknownTopLevel"] = True
    message = decode(Signal.TRACES, orjson.dumps(document), JSON)
    assert message.resource_spans[0].scope_spans[0].spans[0].start_time_unix_nano == (
        1772359200 * 10**9
    )


def test_undecodable_bodies_say_why_in_one_line() -> None:
    with pytest.raises(OtlpBodyError, match="not a protobuf ExportLogsServiceRequest"):
        decode(Signal.LOGS, b"\xff\xff\xff", PROTOBUF)
    with pytest.raises(OtlpBodyError, match="not JSON"):
        decode(Signal.LOGS, b"{nope", JSON)
    with pytest.raises(OtlpBodyError, match="traceId 'zz' is not hex"):
        decode(
            Signal.TRACES,
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}',
            JSON,
        )
    with pytest.raises(OtlpBodyError, match="not an OTLP/JSON"):
        decode(Signal.LOGS, b"[1, 2]", JSON)


def test_gzip_is_undone_and_a_bomb_is_refused_by_its_inflated_size() -> None:
    assert inflate(gzip.compress(b"abc"), "gzip") == b"abc"
    assert inflate(b"abc", "") == b"abc"
    with pytest.raises(OtlpTooLarge):
        inflate(gzip.compress(b"\0" * (MAX_OTLP_BODY_BYTES + 1)), "gzip")
    with pytest.raises(OtlpBodyError, match="not valid gzip"):
        inflate(b"not gzip", "gzip")
    with pytest.raises(OtlpBodyError, match="truncated"):
        inflate(gzip.compress(b"abc" * 1000)[:20], "gzip")
    with pytest.raises(OtlpBodyError, match="br is not supported"):
        inflate(b"x", "br")


def test_content_types() -> None:
    assert encoding_of("application/x-protobuf") == PROTOBUF
    assert encoding_of("application/json; charset=utf-8") == JSON
    with pytest.raises(UnsupportedMediaType, match="text/plain is not OTLP"):
        encoding_of("text/plain")


def test_answers_are_empty_or_carry_partial_success_in_the_request_encoding() -> None:
    assert answer(Signal.LOGS, PROTOBUF) == b""
    assert orjson.loads(answer(Signal.LOGS, JSON)) == {}
    partial = ExportLogsServiceResponse.FromString(answer(Signal.LOGS, PROTOBUF, 2, "bad ts"))
    assert (
        partial.partial_success.rejected_log_records,
        partial.partial_success.error_message,
    ) == (
        2,
        "bad ts",
    )
    assert orjson.loads(answer(Signal.TRACES, JSON, 3, "x")) == {
        "partialSuccess": {"rejectedSpans": "3", "errorMessage": "x"}
    }
    assert ExportTraceServiceResponse.FromString(answer(Signal.TRACES, PROTOBUF, 3, "x"))
