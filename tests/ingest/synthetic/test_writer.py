"""The synthetic log is spelled as real logs are, faults included."""

from datetime import UTC, datetime
from pathlib import Path

import orjson

from ingest.synthetic import RunSpec, generate_run
from ingest.synthetic.writer import MALFORMED, malformed_lines

SMALL = RunSpec(run="small", seed=4, hours=2, workers=20, peak_commits_per_hour=120)


def parse_ts(value: object) -> datetime:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    assert isinstance(value, str)
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_times_are_rfc3339_or_unix_seconds_and_agree_with_the_truth(tmp_path: Path) -> None:
    truth = generate_run(SMALL, tmp_path / "a.jsonl", epoch_fraction=0.4)
    docs = [orjson.loads(line) for line in (tmp_path / "a.jsonl").read_bytes().splitlines()]
    assert len(docs) == len(truth.events) == truth.accepted
    numbers = [d for d in docs if not isinstance(d["ts"], str)]
    offsets = [d for d in docs if isinstance(d["ts"], str) and not d["ts"].endswith("Z")]
    assert 0.35 < len(numbers) / len(docs) < 0.45
    assert len(offsets) > 0.03 * len(docs)
    for doc, ms in zip(docs, truth.events.ts_ms.tolist(), strict=True):
        assert round(parse_ts(doc["ts"]).timestamp() * 1000) == ms


def test_malformed_lines_and_a_line_still_being_written(tmp_path: Path) -> None:
    truth = generate_run(SMALL, tmp_path / "a.jsonl", malformed=10, partial_last_line=True)
    raw = (tmp_path / "a.jsonl").read_bytes()
    lines = raw.split(b"\n")
    assert (truth.accepted, truth.quarantined) == (len(truth.events), 10)
    assert len(lines) == truth.accepted + 10 + 1
    assert len(lines[-1]) == truth.pending_bytes > 0
    bad = malformed_lines("small")
    assert sum(1 for line in lines if line in bad) == 10
    # Those that name a run name this one.
    assert bad[2] == b'{"ts": true, "run": "small", "agent": "w-1", "event": "tool_call"}'
    assert sum(1 for line in bad if b'"run": "small"' in line) == 5
    assert len(bad) == len(MALFORMED)


def test_commits_carry_sha_files_insertions_deletions_and_message(tmp_path: Path) -> None:
    generate_run(SMALL, tmp_path / "a.jsonl")
    docs = [orjson.loads(line) for line in (tmp_path / "a.jsonl").read_bytes().splitlines()]
    landed = [d for d in docs if d["event"] == "commit" and d["ok"]]
    assert landed
    assert all(len(d["commit"]["sha"]) == 40 for d in landed)
    assert all(d["commit"]["files"] >= 2 and d["commit"]["message"] for d in landed)
    kinds = {d["event"] for d in docs}
    assert kinds == {
        "spawn",
        "task",
        "llm_call",
        "tool_call",
        "commit",
        "push",
        "handoff",
        "error",
        "summary",
    }
    llm = next(d for d in docs if d["event"] == "llm_call")
    assert set(llm["usage"]) == {
        "input_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "output_tokens",
    }
    assert any(d["event"] == "push" and d["push"]["conflict"] for d in docs)
    assert any(d["event"] == "tool_call" and not d["ok"] for d in docs)
