"""A generated run, ingested twice through the command, answers every runs endpoint as its
ground truth says: the acceptance check in miniature."""

import io
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.core.management import call_command
from django.test import Client

from ingest.synthetic import ErrorTrend, GroundTruth, RunSpec, generate_run
from lib.durations import format_time

pytestmark = pytest.mark.usefixtures("lake")

STALLED = RunSpec(
    run="stalled",
    seed=21,
    hours=10,
    workers=60,
    peak_commits_per_hour=240,
    stall_at=5.2,
    stall_hours=1.2,
    duplicate_commits=12,
)
RISING = RunSpec(
    run="rising",
    seed=5,
    hours=10,
    workers=40,
    peak_commits_per_hour=150,
    error_trend=ErrorTrend.RISING,
    finished=True,
)


def command(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return dict(orjson.loads(out.getvalue().strip().splitlines()[-1]))


def text(t: Any) -> str:
    return str(format_time(t))


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, GroundTruth]:
    stalled = generate_run(
        STALLED,
        tmp_path / "stalled.jsonl",
        malformed=9,
        epoch_fraction=0.5,
        partial_last_line=True,
    )
    rising = generate_run(RISING, tmp_path / "rising.jsonl", epoch_fraction=0.2)
    first = command("ingest", "agent-events", str(tmp_path))
    second = command("ingest", "agent-events", str(tmp_path))
    assert (first["accepted"], first["quarantined"], first["duplicates"]) == (
        stalled.accepted + rising.accepted,
        9,
        0,
    )
    assert first["pending_bytes"] == stalled.pending_bytes
    assert (second["accepted"], second["quarantined"], second["duplicates"]) == (0, 0, 0)
    return {"stalled": stalled, "rising": rising}


def get(client: Client, auth: dict[str, str], url: str) -> Any:
    response = client.get(url, headers=auth)
    assert response.status_code == 200, response.content
    return response.json()


def test_every_runs_endpoint_agrees_with_the_ground_truth(
    runs: dict[str, GroundTruth], client: Client, auth_headers: dict[str, str]
) -> None:
    listed = {r["run"]: r for r in get(client, auth_headers, "/api/runs")}
    for name, truth in runs.items():
        assert listed[name]["commits"] == truth.commits
        assert listed[name]["agents"] == len(truth.events.agents)
        assert listed[name]["first_ts"] == text(truth.first_ts)

        rate = get(client, auth_headers, f"/api/runs/{name}/commit-rate?bucket=1h")
        expected = {text(t): n for t, n in truth.commits_per_bucket(3600).items()}
        assert {p["t"]: p["commits"] for p in rate["points"]} == expected
        assert rate["total"] == truth.commits

        errors = get(client, auth_headers, f"/api/runs/{name}/error-rate?bucket=1h")
        expected_errors = {text(t): v for t, v in truth.errors_per_bucket(3600).items()}
        assert {p["t"]: (p["attempts"], p["errors"]) for p in errors["points"]} == expected_errors
        assert errors["drift"]["trend"] == str(truth.spec.error_trend)

        stalls = get(client, auth_headers, f"/api/runs/{name}/stalls?min_gap=30m")
        expected_stalls = truth.stalls(timedelta(minutes=30))
        assert [(s["start"], s["end"]) for s in stalls["stalls"]] == [
            (text(a), text(b)) for a, b in expected_stalls
        ]
        assert stalls["current"] is None

        agents = get(client, auth_headers, f"/api/runs/{name}/agents")
        assert {a["agent"]: (a["role"], a["parent"]) for a in agents} == {
            n: (truth.roles()[n], truth.parents()[n]) for n in truth.roles()
        }
    assert len(runs["stalled"].stalls(timedelta(minutes=30))) == 1


def test_the_command_prints_the_truth_and_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    summary = command(
        "generate_run",
        str(out),
        "--run",
        "cli",
        "--seed",
        "9",
        "--hours",
        "3",
        "--workers",
        "25",
        "--peak",
        "90",
        "--malformed",
        "3",
        "--duplicate-commits",
        "4",
        "--stall-at",
        "1.5",
        "--stall-hours",
        "0.75",
        "--truth",
        str(tmp_path / "truth.json"),
    )
    truth = orjson.loads((tmp_path / "truth.json").read_bytes())
    assert summary["run"] == "cli"
    assert summary["quarantined"] == 3
    assert summary["duplicate_commits"] == 4
    assert summary["events"] == summary["accepted"] == len(out.read_bytes().splitlines()) - 3
    assert sum(truth["commits_per_hour"].values()) == summary["commits"]
    assert len(truth["stalls"]) == 1
    assert truth["roles"]["root"] == "root_planner"
    assert truth["parents"]["p-css"] == "root"
