"""ingest/pipelines/parallel.py: parallel texts counted and stored once per (id, language)."""

import io
from pathlib import Path

import orjson
import tiktoken

import warehouse
from ingest.pipelines.parallel import run_parallel


def _write(path: Path, *records: dict[str, str]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def test_texts_are_counted_under_every_encoding_and_stored_once(lake: Path, tmp_path: Path) -> None:
    _write(
        tmp_path / "a.jsonl",
        {"id": "s1", "language": "en", "text": "The weather is nice today."},
        {"id": "s1", "language": "hi", "text": "आज मौसम अच्छा है।"},
        {"id": "s1", "language": "hi", "text": "a second Hindi s1 is a duplicate"},
    )
    _write(tmp_path / "b.jsonl", {"id": "s1", "language": "en", "text": "again"})
    (tmp_path / "c.jsonl").write_bytes(b'{"id": "s2"}\n')

    first = run_parallel([str(tmp_path)], progress=io.StringIO()).as_dict()
    second = run_parallel([str(tmp_path)], progress=io.StringIO()).as_dict()

    assert {k: first[k] for k in ("accepted", "quarantined", "duplicates", "files")} == {
        "accepted": 2,
        "quarantined": 1,
        "duplicates": 2,
        "files": 3,
    }
    assert (second["accepted"], second["quarantined"], second["duplicates"]) == (0, 0, 0)
    rows = warehouse.fetch_all(
        "SELECT id, language, encoding, tokens FROM parallel_tokens ORDER BY language, encoding"
    )
    expected = [
        {
            "id": "s1",
            "language": language,
            "encoding": name,
            "tokens": len(tiktoken.get_encoding(name).encode(text)),
        }
        for language, text in (("en", "The weather is nice today."), ("hi", "आज मौसम अच्छा है।"))
        for name in ("cl100k_base", "gpt2", "o200k_base")
    ]
    assert rows == expected
    assert warehouse.fetch_one("SELECT count(*) AS n FROM parallel_texts") == {"n": 2}
