"""The tail task for live Claude Code and Codex sessions, and its beat entry; every beat
entry names a task the worker registers (autodiscovered from each app's tasks.py)."""

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import warehouse
from dashboard.celery import _beat_schedule
from ingest.tasks import scrape_vllm_targets, serving_retention, tail_transcripts
from tests.conftest import FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "agent-logs"
ROOT = Path(__file__).resolve().parents[2]


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


def test_a_broken_transcript_is_reported_and_the_live_ones_are_still_tailed(
    lake: Path, tmp_path: Path, settings: object
) -> None:
    claude = tmp_path / "projects" / "p"
    claude.mkdir(parents=True)
    settings.FLEETSCOPE_TAIL_CLAUDE_CODE = [str(tmp_path / "projects")]  # type: ignore[attr-defined]
    settings.FLEETSCOPE_TAIL_CODEX = []  # type: ignore[attr-defined]
    session = (FIXTURES / "claude-code-commit-and-tool-error.jsonl").read_bytes()
    half = session.index(b"\n", len(session) // 2) + 1
    compressed = gzip.compress(session)
    (claude / "old.jsonl.gz").write_bytes(compressed[: len(compressed) // 2])
    (claude / "s.jsonl").write_bytes(session[:half])
    first = tail_transcripts()
    with open(claude / "s.jsonl", "ab") as handle:
        handle.write(session[half:])
    second = tail_transcripts()
    assert [f["file"] for f in first["failed"]] == [str(claude / "old.jsonl.gz")]
    assert [f["file"] for f in second["failed"]] == [str(claude / "old.jsonl.gz")]
    assert first["failed"][0]["reason"].startswith("truncated: ")
    # The excerpt's 13 events, each once: the broken copy's readable lines are duplicates.
    row = warehouse.fetch_one("SELECT count(*) AS n FROM events")
    assert row == {"n": 13}
    assert second["accepted"] > 0


def test_the_beat_runs_it_on_the_tail_schedule_and_drops_late_runs() -> None:
    entry = _beat_schedule(45)["tail-transcripts"]
    assert entry["task"] == "ingest.tail_transcripts"
    assert entry["schedule"].total_seconds() == 45
    assert entry["options"] == {"expires": 45}


def registered_by_a_fresh_worker() -> set[str]:
    """The task names a new process registers by autodiscovery alone, as a worker does at
    start-up (this test module's own imports would hide a task nothing discovers)."""
    script = (
        "import django; django.setup(); from dashboard.celery import app; "
        "app.loader.import_default_modules(); print(*sorted(app.tasks), sep='\\n')"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_every_beat_entry_names_a_task_a_fresh_worker_registers() -> None:
    tasks = {entry["task"] for entry in _beat_schedule(30).values()}
    assert tasks == {
        "ingest.load_otlp",
        "ingest.tail_agent_events",
        "ingest.tail_transcripts",
        "ingest.scrape_vllm_targets",
        "ingest.serving_retention",
        "analytics.send_daily_cost_report",
        "analytics.evaluate_alerts",
        "analytics.maintain_warehouse",
    }
    assert tasks - registered_by_a_fresh_worker() == set()


def test_the_serving_tasks_keep_their_names_in_ingest_tasks() -> None:
    assert scrape_vllm_targets.name == "ingest.scrape_vllm_targets"
    assert serving_retention.name == "ingest.serving_retention"


@pytest.fixture(autouse=True)
def _no_agent_event_folders(settings: object) -> None:
    settings.FLEETSCOPE_TAIL_AGENT_EVENTS = []  # type: ignore[attr-defined]
