"""ingest/parsers/requests.py: the three record shapes, and the reasons bad lines get."""

import json
from datetime import UTC, datetime

import orjson
import pytest
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st

import warehouse
from ingest.parsers.json_lines import InvalidRecord, RawLine
from ingest.parsers.requests import (
    RequestRecord,
    Shape,
    parse_array,
    parse_lines,
    parse_object,
)
from tests.ingest.parsers.bounds_cases import (
    BAD_TIMES,
    SAMPLES,
    bad_counts,
    bad_names,
    good_counts,
    good_names,
    good_times,
)

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def test_a_native_record_keeps_every_field() -> None:
    record = parse_object(
        {
            "ts": "2026-03-01T11:00:00+01:00",
            "request_id": "r1",
            "model": "gpt-4o",
            "instance": "vllm-a",
            "prompt": "hello",
            "completion": "hi",
            "language": "EN-gb",
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cached_tokens": 0},
            "ttft_ms": 12,
            "latency_ms": 80.5,
            "finish_reason": "stop",
            "run": "run-1",
            "agent": "worker-3",
            "attrs": {"team": "search"},
            "tenant": "acme",
        },
        line_no=7,
    )

    assert record == RequestRecord(
        request_id="r1",
        ts=T0,
        shape=Shape.RECORD,
        model="gpt-4o",
        instance="vllm-a",
        run="run-1",
        agent="worker-3",
        language="en",
        prompt="hello",
        completion="hi",
        usage_prompt_tokens=1,
        usage_completion_tokens=1,
        usage_cached_tokens=0,
        ttft_ms=12.0,
        latency_ms=80.5,
        finish_reason="stop",
        attrs={"tenant": "acme", "team": "search"},
        line_no=7,
    )


def test_unix_seconds_are_utc_and_rfc3339_times_are_read_in_either_case() -> None:
    assert parse_object({"ts": 1772359200, "request_id": "a"}).ts == T0
    assert parse_object({"ts": "2026-03-01 10:00:00Z", "request_id": "a"}).ts == T0
    assert parse_object({"ts": "2026-03-01t11:00:00+01:00", "request_id": "a"}).ts == T0
    assert parse_object({"ts": "2026-03-01t10:00:00z", "request_id": "a"}).ts == T0


def test_an_openai_chat_completion_log_line() -> None:
    line = {
        "request": {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Weather?"},
                        {"type": "image_url", "image_url": {"url": "x"}},
                    ],
                },
            ],
        },
        "response": {
            "id": "chatcmpl-1",
            "created": 1772359200,
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "Sunny.",
                        "tool_calls": [
                            {
                                "type": "function",
                                "function": {"name": "f", "arguments": '{"city":"Oslo"}'},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {
                "prompt_tokens": 20,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        },
        "latency_ms": 250,
    }

    record = parse_object(line)

    assert record == RequestRecord(
        request_id="chatcmpl-1",
        ts=T0,
        shape=Shape.CHAT_COMPLETION,
        model="gpt-4o-2024-08-06",
        prompt="You are terse.\nWeather?",
        completion='Sunny.\n{"city":"Oslo"}',
        usage_prompt_tokens=20,
        usage_completion_tokens=9,
        usage_cached_tokens=0,
        latency_ms=250.0,
        finish_reason="tool_calls",
    )


def test_an_openai_batch_output_line() -> None:
    line = {
        "id": "batch_req_123",
        "custom_id": "task-7",
        "response": {
            "status_code": 200,
            "request_id": "req_abc",
            "body": {
                "id": "chatcmpl-9",
                "object": "chat.completion",
                "created": 1772359200,
                "model": "gpt-4o-mini",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "Bonjour"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13},
            },
        },
        "error": None,
    }

    record = parse_object(line)

    assert record == RequestRecord(
        request_id="batch_req_123",
        ts=T0,
        shape=Shape.BATCH_OUTPUT,
        model="gpt-4o-mini",
        completion="Bonjour",
        usage_prompt_tokens=11,
        usage_completion_tokens=2,
        finish_reason="stop",
        attrs={
            "custom_id": "task-7",
            "provider_request_id": "req_abc",
            "completion_id": "chatcmpl-9",
        },
    )


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        ([1, 2], "expected a JSON object, got an array"),
        ({"ts": 1772359200}, "request_id is required"),
        (
            {"ts": 1772359200, "request_id": ""},
            "request_id: must not be empty",
        ),
        ({"request_id": "a"}, "ts is required"),
        ({"ts": "yesterday", "request_id": "a"}, "ts: is not an RFC 3339 time: 'yesterday'"),
        (
            {"ts": "2026-03-01 10:00:00", "request_id": "a"},
            "ts: has no time zone: '2026-03-01 10:00:00'",
        ),
        (
            {"ts": "2026-03-01T10:00:00+25:00", "request_id": "a"},
            "ts: has an offset beyond +-24h: '2026-03-01T10:00:00+25:00'",
        ),
        (
            {"ts": "9999-12-31T23:59:59-05:00", "request_id": "a"},
            "ts: is outside 1970-2199: '9999-12-31T23:59:59-05:00'",
        ),
        (
            {"ts": "1969-12-31T23:59:59Z", "request_id": "a"},
            "ts: is outside 1970-2199: '1969-12-31T23:59:59Z'",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "usage": {"prompt_tokens": 2**63}},
            f"usage.prompt_tokens: must be below 10^18, got {2**63}",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "usage": {"completion_tokens": 10**18}},
            f"usage.completion_tokens: must be below 10^18, got {10**18}",
        ),
        (
            {
                "request": {},
                "response": {"id": "c", "created": 1772359200, "usage": {"prompt_tokens": 2**64}},
            },
            f"response.usage.prompt_tokens: must be below 10^18, got {2**64}",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "run": "r" * 201},
            "run is longer than 200 characters",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "agent": "a\x1fb"},
            "agent holds a control character",
        ),
        ({"ts": 1772359200, "request_id": "a", "model": ""}, "model is empty"),
        (
            {"ts": 1772359200, "request_id": "a", "instance": "gpu\n1"},
            "instance holds a control character",
        ),
        (
            {"ts": 1772359200000, "request_id": "a"},
            "ts: 1772359200000 is not Unix seconds between 2000 and 2100",
        ),
        (
            {"ts": True, "request_id": "a"},
            "ts: expected an RFC 3339 string or Unix seconds, got a boolean",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "prompt": 5},
            "prompt: expected a string, got a number",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "usage": {"prompt_tokens": -1}},
            "usage.prompt_tokens: must not be negative, got -1",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "usage": {"prompt_tokens": 1.5}},
            "usage.prompt_tokens: expected an integer, got a number",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "language": "english"},
            "language: expected an ISO 639-1 code, got 'english'",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "latency_ms": -3},
            "latency_ms: must be a non-negative number, got -3",
        ),
        (
            {"ts": 1772359200, "request_id": "a", "attrs": []},
            "attrs: expected an object, got an array",
        ),
        (
            {"id": "b1", "custom_id": "t1", "response": None, "error": {"message": "rate limited"}},
            "batch request t1 failed: rate limited",
        ),
        (
            {
                "id": "b1",
                "custom_id": "t1",
                "response": {"status_code": 500, "body": {}},
                "error": None,
            },
            "batch request t1 failed with status 500",
        ),
        ({"request": {}, "response": "oops"}, "response: expected an object, got a string"),
    ],
)
def test_bad_records_say_why(obj: object, reason: str) -> None:
    with pytest.raises(InvalidRecord) as caught:
        parse_object(obj)
    assert str(caught.value) == reason


def test_lines_become_records_or_rejections_and_blank_lines_are_skipped() -> None:
    good = orjson.dumps({"ts": 1772359200, "request_id": "a"})
    lines = [
        RawLine(1, 0, good),
        RawLine(2, 40, b"   "),
        RawLine(3, 44, b"{oops"),
        RawLine(4, 50, b"[]"),
    ]

    parsed = parse_lines(lines)

    assert [r.request_id for r in parsed.records] == ["a"]
    assert [(r.line_no, r.byte_offset, r.raw) for r in parsed.rejected] == [
        (3, 44, "{oops"),
        (4, 50, "[]"),
    ]
    assert parsed.rejected[0].reason.startswith("not JSON: ")
    assert parsed.rejected[1].reason == "expected a JSON object, got an array"


def test_an_array_body_numbers_its_elements_from_one() -> None:
    parsed = parse_array([{"ts": 1772359200, "request_id": "a"}, "junk"])

    assert [r.line_no for r in parsed.records] == [1]
    assert [(r.line_no, r.byte_offset, r.raw) for r in parsed.rejected] == [(2, None, '"junk"')]


def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it() -> None:
    good = orjson.dumps({"ts": 1772359200, "request_id": "a"})
    parsed = parse_lines([RawLine(1, 0, b"\xef\xbb\xbf" + good), RawLine(2, 40, b"\xef\xbb\xbf")])
    assert [r.request_id for r in parsed.records] == ["a"]
    assert [r.reason[:9] for r in parsed.rejected] == ["not JSON:"]  # only the first line's


@st.composite
def request_lines(draw: st.DrawFn) -> tuple[dict[str, object], str | None, datetime]:
    """A native record, good or with one field beyond the bounds: (the record, the words
    its reason holds or None, the UTC time of its ts)."""
    when = draw(good_times())
    record: dict[str, object] = {
        "ts": when.text,
        "request_id": "r",
        "usage": {"prompt_tokens": draw(good_counts), "completion_tokens": draw(good_counts)},
    }
    for key in draw(st.sets(st.sampled_from(["model", "run", "agent", "instance"]))):
        record[key] = draw(good_names)
    flaw = draw(st.sampled_from(["none", "time", "count", "model", "run", "agent", "instance"]))
    words: str | None = None
    if flaw == "time":
        record["ts"], words = draw(st.sampled_from(BAD_TIMES))
    elif flaw == "count":
        count = draw(bad_counts)
        record["usage"] = {"completion_tokens": count}
        # orjson reads an integer beyond 64 bits as a float, which is no count either.
        fits = -(2**63) <= count < 2**64
        words = ("negative" if count < 0 else "10^18") if fits else "expected an integer"
    elif flaw != "none":
        record[flaw], words = draw(bad_names)
    return record, words, when.utc


@settings(max_examples=SAMPLES, deadline=None)
@given(st.lists(request_lines(), min_size=1, max_size=8), st.booleans())
def test_any_mix_of_good_and_bad_lines_loads_the_good_and_rejects_the_bad_with_a_reason(
    lines: list[tuple[dict[str, object], str | None, datetime]], bom: bool
) -> None:
    raw = []
    for number, (record, _, _) in enumerate(lines, start=1):
        record["request_id"] = f"r{number}"
        data = json.dumps(record).encode()
        raw.append(RawLine(number, 0, (b"\xef\xbb\xbf" if bom and number == 1 else b"") + data))
    parsed = parse_lines(raw)

    records = {r.request_id: r for r in parsed.records}
    rejected = {r.line_no: r.reason for r in parsed.rejected}
    for number, (record, words, utc) in enumerate(lines, start=1):
        if words is None:
            got = records[f"r{number}"]
            assert got.ts == utc and got.line_no == number
            assert got.usage_completion_tokens == record["usage"]["completion_tokens"]  # type: ignore[index]
            assert (got.model, got.run, got.agent) == tuple(
                map(record.get, ("model", "run", "agent"))
            )
        else:
            assert words in rejected[number] and "\n" not in rejected[number]
            assert f"r{number}" not in records


def test_the_ingest_endpoint_quarantines_a_line_past_the_calendar_and_loads_the_rest(
    lake: object, client: Client, auth_headers: dict[str, str]
) -> None:
    # It answered 500 (OverflowError) before the parser gave this line a reason.
    body = b"\n".join(
        orjson.dumps(record)
        for record in [
            {"ts": "2026-03-01T10:00:00Z", "request_id": "r1"},
            {"ts": "9999-12-31T23:59:59-05:00", "request_id": "r2"},
            {"ts": "2026-03-01T10:00:00Z", "request_id": "r3", "usage": {"prompt_tokens": 2**63}},
            {"ts": "2026-03-01 10:00:00", "request_id": "r4"},
            {"ts": "2026-03-01t10:00:01z", "request_id": "r5"},
        ]
    )
    response = client.post(
        "/api/ingest/requests", body, content_type="application/x-ndjson", headers=auth_headers
    )
    assert response.status_code == 200
    assert response.json() == {"accepted": 2, "quarantined": 3, "duplicates": 0}
    reasons = warehouse.fetch_all(
        "SELECT line_no, reason FROM quarantine WHERE source_kind = 'requests' ORDER BY line_no"
    )
    assert [(row["line_no"], row["reason"]) for row in reasons] == [
        (2, "ts: is outside 1970-2199: '9999-12-31T23:59:59-05:00'"),
        (3, f"usage.prompt_tokens: must be below 10^18, got {2**63}"),
        (4, "ts: has no time zone: '2026-03-01 10:00:00'"),
    ]
