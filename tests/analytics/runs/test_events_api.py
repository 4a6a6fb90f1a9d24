"""GET /api/runs/{run}/events: the contract's shape, the filters and paging by `next`, the
whole filter as JSONL and CSV (content as listed by hand, formula cells escaped), 404 for
a run not seen or missing, one-line 422s, 401 without credentials."""

import csv
import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.runs import events
from dashboard.models import ApiToken
from ingest.pipelines.agent_events import ingest_body
from tests.analytics.runs.events_world import E5_USD, FORMULA, RUN, XSS, load_world

URL = f"/api/runs/{RUN}/events"


@pytest.fixture
def world(lake: Path, db: None) -> None:
    load_world()


def _get(client: Client, query: str, headers: dict[str, str]) -> tuple[int, Any]:
    response = client.get(f"{URL}?{query}", headers=headers)
    return response.status_code, response.json()


def _body(client: Client, query: str, headers: dict[str, str]) -> str:
    response = client.get(f"{URL}?{query}", headers=headers)
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]


def test_an_event_has_the_contracts_fields(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    status, body = _get(client, "kind=llm_call&order=oldest&limit=1", auth_headers)
    assert status == 200
    assert set(body) == {"events", "next"}
    [call] = body["events"]
    assert call["event"] == "llm_call"
    assert (call["ts"], call["run"], call["agent"], call["model"]) == (
        "2026-02-10T09:01:00Z", RUN, "w1", "acme-coder"
    )  # fmt: skip
    assert call["usage"] == {
        "input_tokens": 1000, "cached_input_tokens": 2000, "cache_write_tokens": None,
        "output_tokens": 500,
    }  # fmt: skip
    assert call["usd"] == pytest.approx(E5_USD)
    assert (call["cost_usd"], call["attrs"], call["failed"]) == (None, {"temperature": 0.2}, False)
    assert (call["source"], call["source_line"], call["source_kind"]) == (
        "explore.jsonl", 5, "agent-events"
    )  # fmt: skip
    assert (call["commit"], call["error"], call["handoff"], call["push"]) == (None,) * 4
    assert body["next"] is not None


def test_a_commit_and_an_error_carry_their_records(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    _, body = _get(client, "kind=commit", auth_headers)
    assert body["events"][0]["commit"] == {
        "sha": "abc123", "subject": FORMULA, "message": f"{FORMULA}\n\nthe body",
        "files": 2, "insertions": 10, "deletions": 1,
    }  # fmt: skip
    _, body = _get(client, "ok=false&agent=root", auth_headers)
    assert [e["error"] for e in body["events"]] == [{"kind": "other", "message": XSS}]


def test_paging_by_next_covers_the_run(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    seen: list[tuple[str, int]] = []
    query = "limit=4"
    while True:
        status, body = _get(client, query, auth_headers)
        assert status == 200
        seen += [(e["ts"], e["source_line"]) for e in body["events"]]
        if body["next"] is None:
            break
        query = f"limit=4&cursor={body['next']}"
    assert [line for _, line in seen] == list(range(15, 0, -1))  # E15 .. E1


def test_jsonl_is_every_matching_event_one_a_line(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    text = _body(client, "format=jsonl&agent=w2&subtree=1&order=oldest&limit=1", auth_headers)
    lines = [orjson.loads(line) for line in text.splitlines()]
    assert [(e["event"], e["agent"], e["ts"]) for e in lines] == [
        ("spawn", "w2", "2026-02-10T09:00:05Z"),
        ("tool_call", "w2", "2026-02-10T09:03:00Z"),
        ("commit", "w2", "2026-02-10T09:04:00Z"),
        ("tool_call", "w3", "2026-02-10T10:30:00Z"),
        ("spawn", "w3", "2026-02-10T10:30:00Z"),
    ]
    assert lines[2]["commit_message"] == f"{FORMULA}\n\nthe body"
    assert (lines[3]["parent"], lines[4]["parent"], lines[3]["source_line"]) == ("p1", "w2", 12)


def test_csv_is_every_matching_event_with_formulas_escaped(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    response = client.get(f"{URL}?format=csv&q=h&order=oldest", headers=auth_headers)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="explore-events.csv"'
    text = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["event"], r["agent"], r["ts"]) for r in rows] == [
        ("commit", "w2", "2026-02-10T09:04:00Z"),  # HYPERLINK, the body
    ]
    assert rows[0]["commit_message"] == f"'{FORMULA}\n\nthe body"
    assert (rows[0]["commit_files"], rows[0]["ok"], rows[0]["source_line"]) == ("2", "", "9")
    assert text.startswith("event,run,agent,ts,id,parent,role,model,")
    assert text.endswith("\r\n")


def test_csv_of_calls_lists_their_tokens_and_logged_cost(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    text = _body(client, "format=csv&kind=llm_call&order=oldest", auth_headers)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["model"], r["input_tokens"], r["output_tokens"], r["cost_usd"]) for r in rows] == [
        ("acme-coder", "1000", "500", ""),
        ("mystery-model", "10", "5", ""),
        ("acme-coder", "1", "1", "0.5"),
    ]
    assert rows[0]["attrs"] == '{"temperature":0.2}'


def test_an_empty_export_still_names_its_columns(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    text = _body(client, "format=csv&kind=stop", auth_headers)
    assert text.splitlines()[0].startswith("event,run,agent,ts,")
    assert len(text.splitlines()) == 1
    assert _body(client, "format=jsonl&kind=stop", auth_headers) == ""


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("cursor=zzz", "cursor is not one this list gave"),
        ("limit=0", "limit must be between 1 and 1000"),
        ("limit=many", "limit 'many' is not an integer"),
        ("ok=perhaps", "ok must be true or false"),
        ("order=up", "order must be newest or oldest"),
        ("format=xlsx", "format must be csv or jsonl"),
        ("subtree=1", "subtree needs an agent"),
        ("start=monday", "start must be an RFC 3339 time, got 'monday'"),
        ("format=csv&end=soon", "end must be an RFC 3339 time, got 'soon'"),
    ],
)
def test_bad_parameters_are_one_line_422s(
    client: Client, world: None, auth_headers: dict[str, str], query: str, detail: str
) -> None:
    assert _get(client, query, auth_headers) == (422, {"detail": detail})


def test_a_missing_or_unseen_run_is_a_404(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    assert client.get("/api/runs/nope/events", headers=auth_headers).status_code == 404
    assert client.get("/api/runs/nope/events?format=csv", headers=auth_headers).status_code == 404
    stranger = User.objects.create_user("nel", password="x")  # in no team: sees no run
    _, token = ApiToken.issue(stranger, "t")
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get(URL, headers=headers).status_code == 404
    assert client.get(f"{URL}?format=jsonl", headers=headers).status_code == 404
    assert client.get(URL).status_code == 401


def test_a_call_is_priced_at_the_shipped_list_price(
    client: Client, world: None, auth_headers: dict[str, str]
) -> None:
    # analytics/data/prices.json: claude-sonnet-4-5 at $3 in, $0.30 cached, $3.75 cache
    # write and $15 out per million tokens (prompt under the long-context tier).
    line = {
        "ts": "2026-02-10T11:00:00Z", "run": "priced", "agent": "main", "event": "llm_call",
        "model": "claude-sonnet-4-5",
        "usage": {"input_tokens": 10_000, "cached_input_tokens": 20_000,
                  "cache_write_tokens": 4_000, "output_tokens": 1_000},
    }  # fmt: skip
    assert ingest_body(orjson.dumps(line) + b"\n", source="priced.jsonl").accepted == 1
    response = client.get("/api/runs/priced/events", headers=auth_headers)
    [call] = response.json()["events"]
    by_hand = (10_000 * 3 + 20_000 * 0.3 + 4_000 * 3.75 + 1_000 * 15) / 1_000_000
    assert by_hand == pytest.approx(0.066)
    assert call["usd"] == pytest.approx(by_hand)


@pytest.mark.parametrize(
    ("order", "lines"), [("oldest", range(1, 16)), ("newest", range(15, 0, -1))]
)
def test_an_export_read_in_many_slices_and_chunks_holds_each_event_once(
    client: Client,
    world: None,
    auth_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    order: str,
    lines: range,
) -> None:
    # Chunks of 2 events, slices of 2/15 of the run's 1 h 45 min (14 min): many of both,
    # with E12-E14's tie on 10:30:00 inside one slice.
    monkeypatch.setattr(events, "EXPORT_CHUNK", 2)
    text = _body(client, f"format=jsonl&order={order}", auth_headers)
    assert [orjson.loads(line)["source_line"] for line in text.splitlines()] == list(lines)
    rows = list(
        csv.DictReader(io.StringIO(_body(client, f"format=csv&order={order}", auth_headers)))
    )
    assert [int(r["source_line"]) for r in rows] == list(lines)
    failed = _body(client, f"format=jsonl&ok=false&order={order}", auth_headers)
    expected = [6, 7, 15] if order == "oldest" else [15, 7, 6]  # E6, E7, E15
    assert [orjson.loads(line)["source_line"] for line in failed.splitlines()] == expected


@pytest.mark.parametrize("whole_slice", [0, 200_000])  # keyset chunks; a slice sorted in Arrow
@pytest.mark.parametrize("order", ["oldest", "newest"])
def test_an_export_keeps_time_order_across_fractions_of_a_second(
    client: Client,
    world: None,
    auth_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    whole_slice: int,
    order: str,
) -> None:
    # As text, "09:00:00.500Z" sorts before "09:00:00Z": the order must be the times'.
    stamps = ["09:00:00Z", "09:00:00.500Z", "09:00:01Z", "09:00:01.250Z", "09:00:02Z"]
    lines = [
        {"ts": f"2026-02-10T{s}", "run": "fractions", "agent": "a", "event": "spawn"}
        for s in stamps
    ]
    ingest_body(b"".join(orjson.dumps(line) + b"\n" for line in lines), source="f.jsonl")
    monkeypatch.setattr(events, "EXPORT_CHUNK", 1)
    monkeypatch.setattr(events, "WHOLE_SLICE", whole_slice)
    response = client.get(
        f"/api/runs/fractions/events?format=csv&order={order}", headers=auth_headers
    )
    text = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    times = [row["ts"][11:] for row in csv.DictReader(io.StringIO(text))]
    assert times == (stamps if order == "oldest" else stamps[::-1])
