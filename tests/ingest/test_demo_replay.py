"""The demo's shipped transcripts give replays: every demo session has turns and a
label, as many turns as its files hold (counted by tests/ingest/parsers'
independent readers), so `make run` shows a replay."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

import warehouse
from analytics.runs import replay
from ingest import demo_logs
from tests.ingest.parsers.test_claude_code_turns import expected_kinds

pytestmark = pytest.mark.usefixtures("lake")
CLAUDE_RUN = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


def test_every_demo_session_has_turns_and_a_label(tmp_path: Path) -> None:
    demo_logs.prepare_agent_logs(tmp_path, datetime.now(UTC))
    demo_logs.load_agent_logs(tmp_path, None)
    files = sorted((tmp_path / "claude-code").rglob("*.jsonl"))
    expected = sum(sum(expected_kinds(path).values()) for path in files)
    stored = warehouse.fetch_all(
        "SELECT run, count(*) AS turns FROM session_turns GROUP BY run ORDER BY run"
    )
    assert {r["run"]: r["turns"] for r in stored}[CLAUDE_RUN] == expected == 79
    assert len(stored) == 3
    for run in (r["run"] for r in stored):
        page = replay.replay_page(run)
        assert page.turns and page.label is not None and page.label.project, run
    label = replay.replay_page(CLAUDE_RUN).label
    assert label is not None and label.branch == "spotter-4te"
