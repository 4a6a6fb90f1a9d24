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


def test_folders_are_searched_for_matching_files_each_found_once_by_real_path(
    tmp_path: Path,
) -> None:
    root, elsewhere = tmp_path / "projects", tmp_path / "elsewhere"
    (root / "a" / "b").mkdir(parents=True)
    elsewhere.mkdir()
    for name in ("x.jsonl", ".hidden.jsonl", "a/y.jsonl.gz", "a/b/z.jsonl", "X.JSONL", "a/n.txt"):
        (root / name).write_bytes(b"{}\n")
    (root / "folder.jsonl").mkdir()
    (elsewhere / "o.jsonl").write_bytes(b"{}\n")
    (root / "a" / "linked-folder").symlink_to(elsewhere)  # not entered
    (root / "a" / "linked.jsonl").symlink_to(elsewhere / "o.jsonl")
    (root / "a" / "again.jsonl").symlink_to(root / "x.jsonl")
    (root / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    found = files.find_files([str(root), str(root / "x.jsonl")])
    assert [f.path.relative_to(tmp_path).as_posix() for f in found] == [
        "elsewhere/o.jsonl",
        "projects/.hidden.jsonl",
        "projects/a/b/z.jsonl",
        "projects/a/y.jsonl.gz",
        "projects/x.jsonl",
    ]
    assert found[-1] == files.describe(root / "x.jsonl")
