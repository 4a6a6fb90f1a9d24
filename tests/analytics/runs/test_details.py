"""Run details on the real Claude Code fixture session and a rebuilt git history: sources,
tools with their error rates, tokens by model with cache reads and writes, commits per
agent with task claims apart. Expected figures were computed independently from the
fixture files (see tests/ingest/pipelines/test_claude_code.py)."""

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from django.test import Client

from analytics.runs import details as run_details
from analytics.runs.paging import AgentSort, Paging
from ingest.git_rebuild import PlannedCommit, rebuild
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.git import run_git
from lib.errors import NotFoundError, ParameterError
from lib.window import TimeRange
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "agent-logs"
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


@pytest.fixture
def session(lake: Path) -> None:
    run_claude_code([str(FIXTURES)])


def test_the_sessions_tools_and_their_error_rate(session: None) -> None:
    found = run_details.tools(SESSION)
    by_tool = {t.tool: (t.calls, t.answered, t.errors) for t in found.tools}
    assert by_tool == {
        "Bash": (11, 9, 1),  # 2 Bash calls have no result in these excerpts
        "Read": (6, 6, 0),
        "WebFetch": (6, 6, 0),
        "WebSearch": (6, 6, 0),
        "Skill": (1, 1, 0),
        "Task": (1, 1, 0),
    }
    assert (found.calls, found.answered, found.errors) == (31, 29, 1)
    assert found.error_rate == pytest.approx(1 / 29)
    bash = next(t for t in found.tools if t.tool == "Bash")
    assert bash.error_rate == pytest.approx(1 / 9)


def test_tokens_by_model_keep_cache_reads_and_writes_apart(session: None) -> None:
    rows = {
        r.model: (
            r.calls,
            r.input_tokens,
            r.cached_input_tokens,
            r.cache_write_tokens,
            r.cache_write_5m_tokens,
            r.cache_write_1h_tokens,
            r.output_tokens,
        )
        for r in run_details.models(SESSION)
    }
    assert rows == {
        "claude-haiku-4-5-20251001": (7, 11, 384921, 41517, 41517, 0, 608),
        "claude-opus-4-6": (5, 7, 128728, 14617, 14617, 0, 639),
        "claude-sonnet-4-5-20250929": (3, 2408, 29274, 18814, 18814, 0, 944),
    }


def test_the_source_and_a_window(session: None) -> None:
    assert [(s.source_kind, s.sources) for s in run_details.sources(SESSION)] == [
        ("claude-code", 3)
    ]
    # Before 14:13 UTC: the five opus calls and two of the subagent's three sonnet calls
    # (its last one was at 14:13:05); the haiku calls came after.
    early = TimeRange(end=datetime(2026, 2, 12, 14, 13, tzinfo=UTC))
    assert {r.model: r.calls for r in run_details.models(SESSION, early)} == {
        "claude-opus-4-6": 5,
        "claude-sonnet-4-5-20250929": 2,
    }
    with pytest.raises(NotFoundError):
        run_details.tools("no-such-run")


def test_commits_per_agent_count_claims_apart(lake: Path, tmp_path: Path) -> None:
    t0 = 1768380000
    rebuild(
        tmp_path / "repo",
        [
            PlannedCommit(t0, t0 + 30, claim_add=("current_tasks/a.txt",), work=False),
            PlannedCommit(t0 + 60, t0 + 90),
            PlannedCommit(t0 + 120, t0 + 150, claim_remove=("current_tasks/a.txt",), work=False),
            PlannedCommit(t0 + 180, t0 + 210, claim_add=("current_tasks/b.txt",), work=True),
        ],
    )
    run_git(str(tmp_path / "repo"), "fleet")
    rows = run_details.commits_by_agent("fleet")
    assert [(r.agent, r.commits, r.claims, r.work) for r in rows] == [("Agent", 4, 2, 2)]
    # Committed at 08:40:30, 08:41:30, 08:42:30 and 08:43:30 UTC: claim, work, claim, work
    # (the last adds a lock file but also changes work.txt).
    split = run_details.work_and_claims("fleet", 60)
    assert [(p.t.strftime("%H:%M"), p.work, p.claims) for p in split.points] == [
        ("08:40", 0, 1),
        ("08:41", 1, 0),
        ("08:42", 0, 1),
        ("08:43", 1, 0),
    ]
    assert (split.work, split.claims) == (2, 2)


def test_the_api_serves_the_same_answers(
    session: None, client: Client, auth_headers: dict[str, str]
) -> None:
    tools = client.get(f"/api/runs/{SESSION}/tools", headers=auth_headers)
    assert tools.status_code == 200 and tools.json()["errors"] == 1
    models = client.get(f"/api/runs/{SESSION}/models", headers=auth_headers).json()
    assert [m["model"] for m in models] == [
        "claude-haiku-4-5-20251001",
        "claude-opus-4-6",
        "claude-sonnet-4-5-20250929",
    ]
    assert models[0]["cache_write_5m_tokens"] == 41517
    sources = client.get(f"/api/runs/{SESSION}/sources", headers=auth_headers).json()
    assert sources[0]["source_kind"] == "claude-code"
    # The first response and the last tool call of the two excerpts.
    assert (sources[0]["first_ts"], sources[0]["last_ts"]) == (
        "2026-02-12T14:12:01.177Z",
        "2026-02-12T14:23:05.321Z",
    )
    commits = client.get(f"/api/runs/{SESSION}/commits-by-agent", headers=auth_headers).json()
    assert [(c["agent"], c["commits"], c["work"]) for c in commits] == [("main", 1, 1)]
    split = client.get(f"/api/runs/{SESSION}/work-and-claims?bucket=1d", headers=auth_headers)
    assert split.json() == {
        "run": SESSION,
        "bucket_seconds": 86400,
        "points": [{"t": "2026-02-12T00:00:00Z", "work": 1, "claims": 0}],
        "work": 1,
        "claims": 0,
    }
    assert client.get("/api/runs/nope/tools", headers=auth_headers).status_code == 404
    assert client.get(f"/api/runs/{SESSION}/tools").status_code == 401


@pytest.fixture
def three_committers(lake: Path) -> None:
    # a: 3 commits of 1 file; b: 1 commit of 10 files; c: 2 commits of 2 files.
    plan = [("a", 1), ("a", 1), ("a", 1), ("b", 10), ("c", 2), ("c", 2)]
    lines = [
        orjson.dumps(
            {
                "ts": f"2026-01-14T10:{i:02d}:00Z",
                "run": "three",
                "agent": agent,
                "event": "commit",
                "commit": {"sha": f"sha-{i}", "files": files},
            }
        )
        for i, (agent, files) in enumerate(plan)
    ]
    ingest_body(b"\n".join(lines) + b"\n")


def test_commits_per_agent_sorted_and_paged_with_totals_over_every_agent(
    three_committers: None,
) -> None:
    page = run_details.commits_by_agent_page("three", None, AgentSort.COMMITS, Paging(2, 0))
    assert [(r.agent, r.commits) for r in page.rows] == [("a", 3), ("c", 2)]
    assert (page.agents, page.work, page.claims) == (3, 6, 0)
    by_files = run_details.commits_by_agent_page("three", None, AgentSort.FILES, Paging(1, 0))
    assert [(r.agent, r.files) for r in by_files.rows] == [("b", 10)]
    last = run_details.commits_by_agent_page("three", None, AgentSort.AGENT, Paging(2, 2))
    assert [r.agent for r in last.rows] == ["c"]
    beyond = run_details.commits_by_agent_page("three", None, AgentSort.COMMITS, Paging(2, 9))
    assert (beyond.rows, beyond.agents, beyond.work) == ([], 3, 6)
    with pytest.raises(ParameterError):
        run_details.commits_by_agent_page("three", None, AgentSort.TOKENS, Paging())


def test_the_api_sorts_and_pages_commits_per_agent(
    three_committers: None, client: Client, auth_headers: dict[str, str]
) -> None:
    path = "/api/runs/three/commits-by-agent"
    every = client.get(path, headers=auth_headers).json()
    assert [c["agent"] for c in every] == ["a", "c", "b"]
    page = client.get(path, {"sort": "files", "limit": "2", "offset": "1"}, headers=auth_headers)
    assert [c["agent"] for c in page.json()] == ["c", "a"]
    bad = client.get(path, {"sort": "height"}, headers=auth_headers)
    assert bad.status_code == 422
    assert bad.json() == {
        "detail": "sort must be one of commits, work, claims, files, insertions, deletions, agent"
    }
