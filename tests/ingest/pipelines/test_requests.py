"""ingest/pipelines/requests.py: files and API bodies into the warehouse, counted."""

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
import tiktoken

import warehouse
from analytics.tokens.vocabularies import get_encoding
from ingest.pipelines.requests import ingest_body, run_requests
from ingest.sources.files import SourceError

ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")


def _line(**fields: object) -> bytes:
    return orjson.dumps(fields) + b"\n"


def _counts(text: str) -> dict[str, int]:
    return {name: len(get_encoding(name).encode_ordinary(text)) for name in ENCODINGS}


def _run(*paths: Path) -> dict[str, Any]:
    return run_requests([str(p) for p in paths], progress=io.StringIO()).as_dict()


def _tokens(request_id: str) -> dict[str, tuple[int | None, int | None]]:
    rows = warehouse.fetch_all(
        "SELECT encoding, prompt_tokens, completion_tokens FROM request_tokens "
        "WHERE request_id = ? ORDER BY encoding",
        [request_id],
    )
    return {r["encoding"]: (r["prompt_tokens"], r["completion_tokens"]) for r in rows}


def test_it_counts_every_request_under_every_encoding(lake: Path, tmp_path: Path) -> None:
    prompt = "இன்று வானிலை நன்றாக இருக்கிறது."
    completion = "The weather is nice today."
    path = tmp_path / "requests.jsonl"
    path.write_bytes(
        _line(ts="2026-03-01T10:00:00Z", request_id="r1", prompt=prompt, completion=completion)
    )

    summary = _run(path)

    assert (summary["accepted"], summary["quarantined"], summary["duplicates"]) == (1, 0, 0)
    expected_prompt, expected_completion = _counts(prompt), _counts(completion)
    assert _tokens("r1") == {
        name: (expected_prompt[name], expected_completion[name]) for name in ENCODINGS
    }
    assert expected_completion == {"gpt2": 6, "cl100k_base": 6, "o200k_base": 6}


def test_it_detects_the_language_when_the_record_gives_none(lake: Path, tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(
        _line(ts=1772359200, request_id="ru", prompt="Где ближайшая аптека? Мне нужно лекарство.")
        + _line(ts=1772359200, request_id="given", prompt="Where is it?", language="pt-BR")
    )

    _run(path)

    rows = warehouse.fetch_all(
        "SELECT request_id, language, language_detected FROM requests ORDER BY request_id"
    )
    assert rows == [
        {"request_id": "given", "language": "pt", "language_detected": False},
        {"request_id": "ru", "language": "ru", "language_detected": True},
    ]


def test_a_second_run_changes_nothing(lake: Path, tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(
        _line(ts="2026-03-01T10:00:00Z", request_id="a", prompt="hello")
        + b"{not json\n"
        + _line(ts="2026-03-01T10:00:01Z", request_id="b", prompt="bye")
    )

    first = _run(path)
    second = _run(path)

    assert (first["accepted"], first["quarantined"], first["duplicates"]) == (2, 1, 0)
    assert (second["accepted"], second["quarantined"], second["duplicates"]) == (0, 0, 0)
    assert warehouse.fetch_one("SELECT count(*) AS n FROM requests") == {"n": 2}
    assert warehouse.fetch_one("SELECT count(*) AS n FROM request_tokens") == {"n": 6}
    quarantined = warehouse.fetch_all(
        "SELECT source_kind, line_no, byte_offset, raw FROM quarantine"
    )
    offset = len(_line(ts="2026-03-01T10:00:00Z", request_id="a", prompt="hello"))
    assert quarantined == [
        {"source_kind": "requests", "line_no": 2, "byte_offset": offset, "raw": "{not json"}
    ]


def test_appended_lines_are_read_from_where_the_last_run_stopped(
    lake: Path, tmp_path: Path
) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(_line(ts="2026-03-01T10:00:00Z", request_id="a", prompt="one"))
    _run(path)
    with open(path, "ab") as handle:
        handle.write(_line(ts="2026-03-01T10:00:01Z", request_id="b", prompt="two"))

    summary = _run(path)

    assert (summary["accepted"], summary["duplicates"]) == (1, 0)
    row = warehouse.fetch_one("SELECT source_line FROM requests WHERE request_id = 'b'")
    assert row == {"source_line": 2}


def test_a_request_id_seen_in_another_file_is_a_duplicate(lake: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(_line(ts="2026-03-01T10:00:00Z", request_id="same", prompt="first"))
    second.write_bytes(
        _line(ts="2026-03-01T10:00:00Z", request_id="same", prompt="second")
        + _line(ts="2026-03-01T10:00:00Z", request_id="new", prompt="x")
        + _line(ts="2026-03-01T10:00:00Z", request_id="new", prompt="x again")
    )

    summary = _run(tmp_path)

    assert (summary["accepted"], summary["duplicates"], summary["files"]) == (2, 2, 2)
    row = warehouse.fetch_one("SELECT prompt FROM requests WHERE request_id = 'same'")
    assert row == {"prompt": "first"}


def test_provider_usage_is_kept_and_a_big_gap_is_flagged(lake: Path, tmp_path: Path) -> None:
    text = "Summarise the incident report in three bullet points. " * 10
    counted = len(tiktoken.get_encoding("o200k_base").encode_ordinary(text))
    path = tmp_path / "requests.jsonl"
    path.write_bytes(
        _line(
            ts=1772359200,
            request_id="close",
            model="gpt-4o",
            prompt=text,
            usage={"prompt_tokens": counted + 7, "completion_tokens": 0, "cached_tokens": 64},
        )
        + _line(
            ts=1772359200,
            request_id="far",
            model="gpt-4o",
            prompt=text,
            usage={"prompt_tokens": counted * 2},
        )
        + _line(
            ts=1772359200,
            request_id="llama",
            model="meta-llama/Llama-3.1-8B",
            prompt=text,
            usage={"prompt_tokens": counted * 2},
        )
    )

    _run(path)

    rows = warehouse.fetch_all(
        "SELECT request_id, reference_encoding, usage_prompt_tokens, usage_cached_tokens, "
        "usage_mismatch FROM requests ORDER BY request_id"
    )
    assert rows == [
        {
            "request_id": "close",
            "reference_encoding": "o200k_base",
            "usage_prompt_tokens": counted + 7,
            "usage_cached_tokens": 64,
            "usage_mismatch": False,
        },
        {
            "request_id": "far",
            "reference_encoding": "o200k_base",
            "usage_prompt_tokens": counted * 2,
            "usage_cached_tokens": None,
            "usage_mismatch": True,
        },
        {
            "request_id": "llama",
            "reference_encoding": None,
            "usage_prompt_tokens": counted * 2,
            "usage_cached_tokens": None,
            "usage_mismatch": None,
        },
    ]


def test_a_missing_path_is_an_error_before_anything_is_read(lake: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file or folder"):
        _run(tmp_path / "nope.jsonl")


def test_an_api_body_may_be_jsonl_or_a_json_array(lake: Path) -> None:
    jsonl = _line(ts=1772359200, request_id="x1", prompt="a") + b"[1]\n"
    array = orjson.dumps([{"ts": 1772359200, "request_id": "x2", "prompt": "b"}, "junk"])

    assert ingest_body(jsonl, "api:alice") == {"accepted": 1, "quarantined": 1, "duplicates": 0}
    assert ingest_body(array, "api:alice") == {"accepted": 1, "quarantined": 1, "duplicates": 0}
    assert ingest_body(array, "api:alice") == {"accepted": 0, "quarantined": 1, "duplicates": 1}
    # Every delivery of a bad line is recorded; stored requests are never duplicated.
    assert warehouse.fetch_one("SELECT count(*) AS n FROM quarantine") == {"n": 3}
    assert warehouse.fetch_one("SELECT count(*) AS n FROM requests") == {"n": 2}
