"""The beat task that tails agent-event folders, and the warehouse maintenance task."""

import io
import logging
from pathlib import Path

import orjson
import pytest
from django.core.management import call_command

import warehouse
from analytics.tasks import maintain_warehouse
from ingest.tasks import tail_agent_events


def _events(start: int, count: int) -> bytes:
    return b"".join(
        orjson.dumps(
            {"ts": 1768384800 + i, "run": "tail", "agent": "w", "event": "tool_call", "id": f"t{i}"}
        )
        + b"\n"
        for i in range(start, start + count)
    )


def test_it_reads_new_lines_of_configured_folders(
    lake: Path, tmp_path: Path, settings: object
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    settings.FLEETSCOPE_TAIL_AGENT_EVENTS = [str(folder), str(tmp_path / "missing")]  # type: ignore[attr-defined]
    (folder / "a.jsonl").write_bytes(_events(0, 5))
    first = tail_agent_events()
    with open(folder / "a.jsonl", "ab") as handle:
        handle.write(_events(5, 3))
    second = tail_agent_events()
    assert (first["accepted"], second["accepted"], tail_agent_events()["accepted"]) == (5, 3, 0)
    assert first["errors"] == [f"no such file or folder: {tmp_path / 'missing'}"]


def test_a_broken_file_is_logged_on_every_pass_and_the_others_are_still_tailed(
    lake: Path, tmp_path: Path, settings: object, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    settings.FLEETSCOPE_TAIL_AGENT_EVENTS = [str(folder)]  # type: ignore[attr-defined]
    (folder / "a.jsonl.gz").write_bytes(b"not gzip")
    (folder / "b.jsonl").write_bytes(_events(0, 4))
    with caplog.at_level(logging.WARNING, logger="ingest.tasks"):
        first = tail_agent_events()
        with open(folder / "b.jsonl", "ab") as handle:
            handle.write(_events(4, 2))
        second = tail_agent_events()
    broken = {"file": str(folder / "a.jsonl.gz"), "reason": "Not a gzipped file (b'no')"}
    assert (first["accepted"], first["failed"]) == (4, [broken])
    assert (second["accepted"], second["failed"]) == (2, [broken])
    assert [r.getMessage() for r in caplog.records] == [
        f"tail: cannot read {folder / 'a.jsonl.gz'}: Not a gzipped file (b'no')"
    ] * 2


def test_maintenance_runs_as_a_task_and_a_command(lake: Path) -> None:
    warehouse.write(
        lambda cur: cur.execute("INSERT INTO quarantine VALUES ('x', 'y', 1, 0, 'r', 'raw', now())")
    )
    assert maintain_warehouse(keep_snapshots_days=0)["snapshots"] >= 1
    out = io.StringIO()
    call_command("maintain_warehouse", "--keep-days", "0", stdout=out)
    assert set(orjson.loads(out.getvalue())) == {"files_removed", "snapshots", "seconds"}
    assert warehouse.fetch_one("SELECT count(*) AS n FROM quarantine") == {"n": 1}


def test_create_api_token_prints_a_token_that_authenticates(user: object) -> None:
    from dashboard.models import ApiToken

    out = io.StringIO()
    call_command("create_api_token", "alice", "--name", "ci", stdout=out)
    raw = out.getvalue().strip()
    assert raw.startswith("fs_")
    token = ApiToken.authenticate(raw)
    assert token is not None and token.name == "ci"
