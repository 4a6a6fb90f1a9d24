"""A run's quarantined lines and the lines by source: which run a line belongs to, newest
first, paged, through the API with its 401, 404 and 422."""

from pathlib import Path

import orjson
import pytest
from django.test import Client

from analytics.runs import quarantine
from analytics.runs.paging import Paging
from ingest.pipelines.agent_events import run_agent_events
from lib.errors import NotFoundError, ParameterError


def _event(run: str, minute: int, event: str = "tool_call") -> bytes:
    return orjson.dumps(
        {"ts": f"2026-01-14T10:{minute:02d}:00Z", "run": run, "agent": "w-1", "event": event}
    )


# run-a's file: lines 2, 4 and 5 are bad; line 5 names run-b, so it is run-b's.
A_LINES = [
    _event("run-a", 0, "spawn"),
    b"not json at all",
    _event("run-a", 1),
    b'{"ts": "2026-01-14T10:02:00Z", "agent": "w-1", "event": "tool_call"}',
    b'{"ts": true, "run": "run-b", "agent": "w-1", "event": "tool_call"}',
    _event("run-a", 3),
]
# run-b's file: line 2 is bad and names no run.
B_LINES = [_event("run-b", 0, "spawn"), b"<b>[1, 2, 3]</b>"]


@pytest.fixture
def files(lake: Path, tmp_path: Path) -> tuple[str, str]:
    a, b = tmp_path / "logs" / "a.jsonl", tmp_path / "logs" / "b.jsonl"
    a.parent.mkdir()
    a.write_bytes(b"\n".join(A_LINES) + b"\n")
    b.write_bytes(b"\n".join(B_LINES) + b"\n")
    summary = run_agent_events([str(a.parent)])
    assert (summary.accepted, summary.quarantined) == (4, 4)
    return str(a), str(b)


def test_a_runs_lines_are_those_of_its_files_that_name_no_other_run(
    files: tuple[str, str],
) -> None:
    a, b = files
    page = quarantine.run_quarantine("run-a", Paging())
    assert page.total == 2
    # Newest first: the same load, so the file's last lines first.
    assert [(line.source, line.line_no) for line in page.lines] == [(a, 4), (a, 2)]
    assert page.lines[1].raw == "not json at all"
    assert page.lines[1].source_kind == "agent-events"
    assert page.lines[1].reason
    other = quarantine.run_quarantine("run-b", Paging())
    assert [(line.source, line.line_no) for line in other.lines] == [(b, 2), (a, 5)]


def test_pages_of_a_runs_lines(files: tuple[str, str]) -> None:
    second = quarantine.run_quarantine("run-a", Paging(limit=1, offset=1))
    assert (second.total, second.limit, second.offset) == (2, 1, 1)
    assert [line.line_no for line in second.lines] == [2]
    beyond = quarantine.run_quarantine("run-a", Paging(limit=1, offset=5))
    assert (beyond.total, beyond.lines) == (2, [])


def test_lines_by_source_whatever_their_run(files: tuple[str, str]) -> None:
    a, b = files
    by_file = quarantine.source_quarantine(a, None, Paging())
    assert [line.line_no for line in by_file.lines] == [5, 4, 2]
    assert quarantine.source_quarantine(None, None, Paging()).total == 4
    assert quarantine.source_quarantine(None, "requests", Paging()).total == 0
    assert quarantine.source_quarantine(b, "agent-events", Paging()).total == 1


def test_bad_paging_is_one_line() -> None:
    with pytest.raises(ParameterError, match="limit must be between 1 and 1000"):
        Paging(limit=0)
    with pytest.raises(ParameterError, match="offset is negative"):
        Paging(offset=-1)
    with pytest.raises(ParameterError, match="not an integer"):
        Paging.read("ten")
    assert Paging.read("") == Paging()


def test_the_api_lists_them(
    files: tuple[str, str], client: Client, auth_headers: dict[str, str]
) -> None:
    a, b = files
    body = client.get("/api/runs/run-a/quarantine?limit=1", headers=auth_headers).json()
    assert (body["total"], body["limit"], body["offset"]) == (2, 1, 0)
    [line] = body["lines"]
    assert {k: line[k] for k in ("source_kind", "source", "line_no", "byte_offset")} == {
        "source_kind": "agent-events",
        "source": a,
        "line_no": 4,
        # Lines 1-3 and their newlines come before it.
        "byte_offset": sum(len(x) + 1 for x in A_LINES[:3]),
    }
    assert line["raw"] == A_LINES[3].decode()
    assert line["ingested_at"].endswith("Z")
    by_source = client.get("/api/quarantine", {"source": b}, headers=auth_headers).json()
    assert [x["raw"] for x in by_source["lines"]] == ["<b>[1, 2, 3]</b>"]


def test_the_api_answers_401_404_and_422(
    files: tuple[str, str], client: Client, auth_headers: dict[str, str]
) -> None:
    assert client.get("/api/runs/run-a/quarantine").status_code == 401
    assert client.get("/api/quarantine").status_code == 401
    missing = client.get("/api/runs/no-such-run/quarantine", headers=auth_headers)
    assert (missing.status_code, missing.json()) == (404, {"detail": "unknown run 'no-such-run'"})
    bad = client.get("/api/quarantine?limit=5000", headers=auth_headers)
    assert (bad.status_code, bad.json()) == (422, {"detail": "limit must be between 1 and 1000"})


def test_no_such_run_raises(lake: Path) -> None:
    with pytest.raises(NotFoundError):
        quarantine.run_quarantine("nothing", Paging())
