"""The demo's real logs: the shipped transcripts and Aero's derived history load once, and
the history keeps the dataset's total and busiest hour (ingest/demo_data/NOTICE.md)."""

import csv
import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from analytics.runs import details as run_details
from analytics.runs import queries as runs
from ingest import demo_logs

pytestmark = pytest.mark.usefixtures("lake")


def test_aeros_history_keeps_its_total_and_busiest_hour(tmp_path: Path) -> None:
    demo_logs.prepare_fleet_history(tmp_path, datetime.now(UTC))
    first = demo_logs.load_fleet_history(tmp_path, None)
    again = demo_logs.load_fleet_history(tmp_path, None)
    assert (first.accepted, again.accepted, again.duplicates) == (31667, 0, 31667)
    rate = runs.commit_rate(demo_logs.HISTORY_RUN, 3600)
    assert rate.total == 31667
    assert rate.peak == runs.CommitPoint(datetime(2026, 1, 13, 23, tzinfo=UTC), 1388)
    assert run_details.sources(demo_logs.HISTORY_RUN)[0].source_kind == "git"


def test_the_shipped_history_holds_times_and_figures_only() -> None:
    with gzip.open(demo_logs.DEMO_DATA / demo_logs.HISTORY_FILE, "rt") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["committer_time", "author_time", "files", "insertions", "deletions"]
    assert all(value.isdigit() for row in rows[1:] for value in row)


def test_the_shipped_transcripts_load_once(tmp_path: Path) -> None:
    demo_logs.prepare_agent_logs(tmp_path, datetime.now(UTC))
    first = demo_logs.load_agent_logs(tmp_path, None)
    again = demo_logs.load_agent_logs(tmp_path, None)
    # 49 Claude Code events (see tests/ingest/pipelines/test_claude_code.py), 3 Codex.
    assert (first.accepted, first.files, again.accepted) == (52, 5, 0)
    listed = {r.run: r.source_kind for r in runs.list_runs()}
    assert listed == {
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04": "claude-code",
        "019e9625-802f-7e91-840a-cfe88d14117a": "codex",
        "019b64e5-57fa-7463-b644-fba7e456f905": "codex",
    }
