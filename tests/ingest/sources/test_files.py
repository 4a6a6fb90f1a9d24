"""Reading whole lines from log files: a read asks for what the file holds, so a file
written to while it is read is still read to its new end."""

from pathlib import Path

from ingest.sources import files


def test_a_file_is_read_in_whole_lines_from_an_offset(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\ntwo\nthree\npartial")
    chunks = list(files.read_chunks(files.describe(path), 4, chunk_bytes=6))
    assert [(c.data, c.start_offset, c.end_offset) for c in chunks] == [
        (b"two\n", 4, 8),
        (b"three\n", 8, 14),
    ]


def test_lines_written_while_a_file_is_read_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\n")
    chunks = files.read_chunks(files.describe(path), 0)
    assert next(chunks).data == b"one\n"
    with open(path, "ab") as handle:
        handle.write(b"two\nthr")
    assert [(c.data, c.end_offset) for c in chunks] == [(b"two\n", 8)]
