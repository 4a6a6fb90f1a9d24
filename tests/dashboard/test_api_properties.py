"""Properties of every API answer, on random input: random query parameter values (text,
huge numbers, dates in any offset, durations) on every GET endpoint the OpenAPI schema
lists, and random or mutated bodies on both ingest endpoints. Never a 5xx; every answer
parses with a strict JSON parser (NaN refused); an ingest body posted again adds nothing."""

import json
import urllib.parse
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import warehouse
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.vllm_text import EngineState, v1_text

PROPERTY = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def strict_json(content: bytes) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(content.decode("utf-8"), parse_constant=refuse)


def check_answer(response: Any, where: str) -> Any:
    assert response.status_code < 500, (where, response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), (
        where,
        response["Content-Type"],
    )
    body = strict_json(response.content)
    if response.status_code >= 400:
        assert isinstance(body["detail"], str) and "\n" not in body["detail"], (where, body)
    return body


def _get_operations() -> list[tuple[str, list[tuple[str, str]]]]:
    from dashboard.api import api

    schema = api.get_openapi_schema()
    return [
        (path, [(p["name"], p["in"]) for p in ops["get"].get("parameters", [])])
        for path, ops in schema["paths"].items()
        if "get" in ops
    ]


GETS = _get_operations()

TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
ZONES = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
TIMES = st.builds(
    lambda when, zone: when.replace(tzinfo=zone).isoformat(),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    ZONES,
)
DURATIONS = st.builds(
    lambda n, unit: f"{n}{unit}",
    st.one_of(st.integers(min_value=0, max_value=10**30), st.floats(min_value=0, allow_nan=False)),
    st.sampled_from(["ms", "s", "m", "h", "d", "w", "", "y"]),
)
VALUES = st.one_of(
    TEXT,
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats().map(str),  # nan, inf, 1e+300 included
    TIMES,
    st.dates().map(str),
    DURATIONS,
    st.sampled_from(
        [
            "",
            "9999-12-31",
            "0001-01-01",
            "0001-01-01T00:00:00+05:00",
            "1e999",
            "NaN",
            "-0",
            "r1",
            "gpu-a",
            "o200k_base",
            "ttft",
        ]
    ),
)


@pytest.fixture
def data(lake: object, db: None) -> None:
    """A run, and an instance with one good and one bad (7.5, NaN) KV sample."""
    ingest_body(
        b"".join(
            orjson.dumps(
                {"ts": 1768384800 + 60 * i, "run": "r1", "agent": f"w{i % 3}", "event": kind}
            )
            + b"\n"
            for i, kind in enumerate(["spawn", "tool_call", "commit", "error", "llm_call"] * 4)
        )
    )
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    load_scrapes(
        [
            PendingScrape(
                "gpu-a",
                t0 + timedelta(minutes=i),
                scrape=parse_scrape(v1_text({"0": EngineState(u)})),
            )
            for i, u in enumerate([0.25, 7.5, float("nan")])
        ]
    )


@pytest.mark.usefixtures("data")
@PROPERTY
@given(st.data())
def test_every_get_endpoint_answers_json_and_no_5xx_whatever_its_parameters(
    auth_headers: dict[str, str], data: st.DataObject
) -> None:
    path, params = data.draw(st.sampled_from(GETS), label="endpoint")
    query: dict[str, str] = {}
    for name, where in params:
        if where == "path":
            value = data.draw(
                st.one_of(st.sampled_from(["r1", "1"]), TEXT.filter(bool)), label=name
            )
            path = path.replace("{" + name + "}", urllib.parse.quote(value, safe=""))
        elif data.draw(st.booleans(), label=f"give {name}"):
            query[name] = data.draw(VALUES, label=name)
    response = Client().get(path, query, headers=auth_headers)
    check_answer(response, f"{path}?{urllib.parse.urlencode(query)}")


def count(table: str) -> int:
    row = warehouse.fetch_one(f"SELECT count(*) AS n FROM {table}")
    assert row is not None
    return int(row["n"])


def events_count() -> int:
    return count("events")


def requests_count() -> int:
    return count("requests")


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=8,
)
EVENT = st.fixed_dictionaries(
    {
        "ts": st.one_of(
            st.integers(min_value=-(10**20), max_value=10**20),
            TIMES,
            st.just("2026-01-14T10:00:00Z"),
        ),
        "run": st.sampled_from(["p1", "p2", ""]),
        "agent": st.sampled_from(["w1", "w2"]),
        "event": st.sampled_from(["commit", "tool_call", "error", "spawn", "llm_call", ""]),
    },
    optional={"id": TEXT, "ok": st.booleans(), "attrs": JSON_VALUES, "tokens": JSON_VALUES},
)
RECORD = st.fixed_dictionaries(
    {
        "ts": st.one_of(st.integers(min_value=946684800, max_value=4102444799), TIMES),
        "request_id": TEXT,
    },
    optional={
        "prompt": TEXT,
        "completion": TEXT,
        "model": TEXT,
        "usage": JSON_VALUES,
        "latency_ms": JSON_VALUES,
    },
)


def dumps(value: Any) -> bytes:
    """JSON of any value, integers past 64 bits included (orjson refuses them)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def lines_of(items: list[Any]) -> bytes:
    return b"".join(dumps(item) + b"\n" for item in items)


@st.composite
def bodies(draw: st.DrawFn, items: st.SearchStrategy[Any]) -> bytes:
    """JSON Lines or a JSON array of valid-looking items and arbitrary JSON, then mutated:
    bytes flipped, inserted or cut away, or the body truncated."""
    chosen = draw(st.lists(st.one_of(items, JSON_VALUES), max_size=8))
    body = bytearray(dumps(chosen) if draw(st.booleans()) else lines_of(chosen))
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        if not body:
            break
        at = draw(st.integers(min_value=0, max_value=len(body) - 1))
        action = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if action == "flip":
            body[at] = draw(st.integers(min_value=0, max_value=255))
        elif action == "insert":
            body[at:at] = draw(
                st.sampled_from([b"\n", b"[", b"{", b'"', b"\xff", b"NaN", b"\\u0000"])
            )
        elif action == "delete":
            del body[at]
        else:
            del body[at:]
    return bytes(body)


def post(path: str, body: bytes, headers: dict[str, str]) -> Any:
    return Client().post(path, body, content_type="application/x-ndjson", headers=headers)


@pytest.mark.usefixtures("lake")
@PROPERTY
@given(body=bodies(EVENT))
def test_any_agent_events_body_is_answered_in_json_and_a_repost_adds_nothing(
    auth_headers: dict[str, str], body: bytes
) -> None:
    first = check_answer(post("/api/ingest/agent-events", body, auth_headers), "first post")
    stored = events_count()
    again = check_answer(post("/api/ingest/agent-events", body, auth_headers), "again")
    assert events_count() == stored
    if "accepted" in first:
        assert again["accepted"] == 0
        assert again["duplicates"] == first["accepted"] + first["duplicates"]


@pytest.mark.usefixtures("lake")
@PROPERTY
@given(body=bodies(RECORD))
def test_any_requests_body_is_answered_in_json_and_a_repost_adds_nothing(
    auth_headers: dict[str, str], body: bytes
) -> None:
    first = check_answer(post("/api/ingest/requests", body, auth_headers), "first post")
    stored = requests_count()
    again = check_answer(post("/api/ingest/requests", body, auth_headers), "again")
    assert requests_count() == stored
    if "accepted" in first:
        assert again["accepted"] == 0
