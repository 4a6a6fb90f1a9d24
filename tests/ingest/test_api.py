"""ingest/api.py: bodies POSTed to /api/ingest/... are read as a stream and loaded a block
of lines at a time; re-posting stores nothing twice, events without an id included; bad
lines are quarantined with their position in the body."""

import json
from typing import Any

import orjson
import pytest
from django.test import Client

import warehouse
from ingest.api import _body_chunks
from ingest.sources import bodies
from lib.errors import BodyTooLarge

EVENTS = "/api/ingest/agent-events"
REQUESTS = "/api/ingest/requests"


def event(
    minute: int, agent: str = "w1", kind: str = "tool_call", **extra: object
) -> dict[str, Any]:
    return {
        "ts": f"2026-01-14T10:{minute:02d}:00Z",
        "run": "r1",
        "agent": agent,
        "event": kind,
        **extra,
    }


def jsonl(*items: object) -> bytes:
    return b"".join(orjson.dumps(item) + b"\n" for item in items)


def post(client: Client, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    response = client.post(path, body, content_type="application/x-ndjson", headers=headers)
    return response.status_code, response.json()


def stored_events() -> int:
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    assert row is not None
    return int(row["n"])


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of about 200 bytes, so that a short body is read in several."""
    monkeypatch.setattr(bodies, "BLOCK_BYTES", 200)


@pytest.mark.usefixtures("small_blocks")
def test_events_without_ids_posted_again_are_duplicates(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    body = jsonl(*(event(m) for m in range(12)))
    assert post(client, EVENTS, body, auth_headers) == (
        200,
        {"accepted": 12, "quarantined": 0, "duplicates": 0},
    )
    assert post(client, EVENTS, body, auth_headers) == (
        200,
        {"accepted": 0, "quarantined": 0, "duplicates": 12},
    )
    assert stored_events() == 12


@pytest.mark.usefixtures("small_blocks")
def test_the_same_lines_split_into_other_requests_store_nothing_twice(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    lines = [orjson.dumps(event(m)) + b"\n" for m in range(10)]
    assert post(client, EVENTS, b"".join(lines[:4]), auth_headers)[1]["accepted"] == 4
    # A retry of a larger request overlapping the first, then the rest as a JSON array
    # spelled with other whitespace: only the six new lines are stored.
    assert post(client, EVENTS, b"".join(lines[2:7]), auth_headers)[1] == {
        "accepted": 3,
        "quarantined": 0,
        "duplicates": 2,
    }
    array = json.dumps([event(m) for m in range(5, 10)], indent=2).encode()
    assert post(client, EVENTS, array, auth_headers)[1] == {
        "accepted": 3,
        "quarantined": 0,
        "duplicates": 2,
    }
    assert stored_events() == 10


def test_ids_given_still_decide_and_other_lines_of_a_run_are_kept(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    body = jsonl(
        event(1, id="e1"), event(1, id="e1", agent="w2"), event(2), event(2, agent="w2"), event(2)
    )
    # e1 twice: once; the three lines without id: two distinct, one repeated within the body.
    assert post(client, EVENTS, body, auth_headers)[1] == {
        "accepted": 3,
        "quarantined": 0,
        "duplicates": 2,
    }
    ids = warehouse.fetch_all("SELECT id FROM events ORDER BY id")
    assert ids[0] == {"id": "e1"}
    assert all(row["id"].startswith("line:") and len(row["id"]) == 37 for row in ids[1:])


@pytest.mark.usefixtures("small_blocks")
def test_bad_lines_are_quarantined_with_their_line_and_byte_in_the_body(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    good = jsonl(*(event(m) for m in range(6)))
    body = good + b"not json\n" + jsonl(event(7)) + b'{"ts": "yesterday"}'
    assert len(good) > 200  # the bad line is in a later block than the first
    assert post(client, EVENTS, body, auth_headers)[1] == {
        "accepted": 7,
        "quarantined": 2,
        "duplicates": 0,
    }
    rows = warehouse.fetch_all(
        "SELECT source, line_no, byte_offset FROM quarantine ORDER BY line_no"
    )
    second_bad = len(good) + len(b"not json\n") + len(jsonl(event(7)))
    assert rows == [
        {"source": "api/alice", "line_no": 7, "byte_offset": len(good)},
        {"source": "api/alice", "line_no": 9, "byte_offset": second_bad},
    ]


def test_a_broken_json_array_is_a_422_saying_where(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    status, body = post(client, EVENTS, b'[{"ts": 1}, {"ts": ', auth_headers)
    assert (status, body) == (
        422,
        {"detail": "body is not a valid JSON array at character 12: Expecting value"},
    )
    status, body = post(client, REQUESTS, b"[1, 2", auth_headers)
    assert (status, body) == (
        422,
        {"detail": "body is not a valid JSON array at character 5: expected ',' or ']'"},
    )


def record(n: int, **extra: object) -> dict[str, Any]:
    return {"ts": 1772359200 + n, "request_id": f"q{n}", "prompt": f"prompt {n}", **extra}


@pytest.mark.usefixtures("small_blocks")
def test_requests_are_loaded_a_block_at_a_time_and_once(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    body = jsonl(*(record(n) for n in range(8))) + b"[1]\n" + jsonl(record(8))
    assert post(client, REQUESTS, body, auth_headers) == (
        200,
        {"accepted": 9, "quarantined": 1, "duplicates": 0},
    )
    assert post(client, REQUESTS, body, auth_headers) == (
        200,
        {"accepted": 0, "quarantined": 1, "duplicates": 9},
    )
    array = orjson.dumps([record(n) for n in range(6, 12)])
    assert post(client, REQUESTS, array, auth_headers) == (
        200,
        {"accepted": 3, "quarantined": 0, "duplicates": 3},
    )
    assert warehouse.fetch_one("SELECT count(*) AS n FROM requests") == {"n": 12}
    (bad,) = warehouse.fetch_all("SELECT DISTINCT source, line_no, byte_offset FROM quarantine")
    assert bad == {
        "source": "api:alice",
        "line_no": 9,
        "byte_offset": len(jsonl(*(record(n) for n in range(8)))),
    }


def test_an_array_element_past_64_bits_is_quarantined_not_a_500(
    client: Client, auth_headers: dict[str, str], lake: object
) -> None:
    # Found by the property test: a number below -2^63 read by the array reader could not
    # be written back as the quarantined raw text.
    body = b'[{"ts": 946684800, "request_id": ""}, -9223372036854775809]'
    status, answer = post(client, REQUESTS, body, auth_headers)
    assert (status, answer) == (200, {"accepted": 0, "quarantined": 2, "duplicates": 0})
    raws = {r["raw"] for r in warehouse.fetch_all("SELECT raw FROM quarantine")}
    assert "-9.223372036854776e+18" in raws


class Streamed:
    """A request whose body arrives in chunks, declaring no length."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.headers: dict[str, str] = {}
        self._chunks = chunks

    def read(self, size: int) -> bytes:
        return self._chunks.pop(0) if self._chunks else b""


def test_a_body_growing_past_the_bound_is_refused_as_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ingest import api

    monkeypatch.setattr(api, "MAX_BODY_BYTES", 10)
    chunks = _body_chunks(Streamed([b"12345", b"67890", b"x"]))  # type: ignore[arg-type]
    assert next(chunks) == b"12345"
    assert next(chunks) == b"67890"
    with pytest.raises(BodyTooLarge):
        next(chunks)


def test_a_load_whose_catalog_server_went_away_is_a_503_to_retry(
    client: Client, auth_headers: dict[str, str], lake: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    from ingest.pipelines.agent_events import staging

    def gone(*args: object, **kwargs: object) -> None:
        # As DuckDB words it for a statement run on a cursor directly (a chunk's staging).
        raise duckdb.BinderException(
            "Binder Error: Failed to query most recent snapshot for DuckLake: Failed to "
            "describe prepared statement: server closed the connection unexpectedly"
        )

    monkeypatch.setattr(staging.warehouse.data_files, "copy_to_parquet", gone)
    answer = client.post(
        EVENTS, jsonl(event(1)), content_type="application/x-ndjson", headers=auth_headers
    )
    assert (answer.status_code, answer["Retry-After"]) == (503, "5")
    assert answer.json()["detail"].startswith("the warehouse is unreachable: Binder Error: ")
    monkeypatch.undo()
    assert stored_events() == 0
