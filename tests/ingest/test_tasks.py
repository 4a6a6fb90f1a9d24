"""The tail task for live Claude Code and Codex sessions, and its beat entry."""

import shutil
from pathlib import Path

import pytest

import warehouse
from dashboard.celery import _beat_schedule
from ingest.tasks import tail_transcripts
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "agent-logs"


def test_it_reads_what_live_sessions_appended(lake: Path, tmp_path: Path, settings: object) -> None:
    claude, codex = tmp_path / "projects" / "p", tmp_path / "sessions"
    claude.mkdir(parents=True)
    codex.mkdir()
    settings.FLEETSCOPE_TAIL_CLAUDE_CODE = [str(tmp_path / "projects")]  # type: ignore[attr-defined]
    settings.FLEETSCOPE_TAIL_CODEX = [str(codex), str(tmp_path / "gone")]  # type: ignore[attr-defined]
    session = (FIXTURES / "claude-code-commit-and-tool-error.jsonl").read_bytes()
    half = session.index(b"\n", len(session) // 2) + 1
    (claude / "s.jsonl").write_bytes(session[:half])
    shutil.copy(FIXTURES / "codex-rollout-0.135.jsonl", codex / "rollout.jsonl")
    first = tail_transcripts()
    with open(claude / "s.jsonl", "ab") as handle:
        handle.write(session[half:])
    second = tail_transcripts()
    third = tail_transcripts()
    assert first["errors"] == [f"no such file or folder: {tmp_path / 'gone'}"]
    assert first["accepted"] > 0 and second["accepted"] > 0 and third["accepted"] == 0
    # The whole excerpt (13 events, tests/ingest/pipelines) and the rollout (2 events).
    assert first["accepted"] + second["accepted"] == 13 + 2
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events WHERE event = 'commit'")
    assert row == {"n": 1}


def test_the_beat_runs_it_on_the_tail_schedule_and_drops_late_runs() -> None:
    entry = _beat_schedule(45)["tail-transcripts"]
    assert entry["task"] == "ingest.tail_transcripts"
    assert entry["schedule"].total_seconds() == 45
    assert entry["options"] == {"expires": 45}


@pytest.fixture(autouse=True)
def _no_agent_event_folders(settings: object) -> None:
    settings.FLEETSCOPE_TAIL_AGENT_EVENTS = []  # type: ignore[attr-defined]
