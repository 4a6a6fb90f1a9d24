"""Reading whole lines from log files: a read asks for what the file holds, so a file
written to while it is read is still read to its new end."""

import gzip
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("chunk_bytes", [1, 5, 6, 16, 64, 1 << 20])
def test_chunks_located_before_they_are_read_hold_the_same_whole_lines(
    tmp_path: Path, chunk_bytes: int
) -> None:
    # A line longer than a chunk, short lines, an empty line, and a last line still being
    # written: every cut is after a newline, and the lines are those read_chunks reads.
    data = b"one\n" + b"x" * 40 + b"\ntwo\n\nthree\nfour\npartial"
    path = tmp_path / "a.jsonl"
    path.write_bytes(data)
    log = files.describe(path)
    refs = []
    with files.chunk_refs(log, 4, chunk_bytes=chunk_bytes) as located:
        for ref in located:
            refs.append(ref)
        read = [ref.read() for ref in refs]  # after every cut is found
    assert b"".join(read) == data[4 : data.rindex(b"\n") + 1]
    assert all(chunk.endswith(b"\n") for chunk in read)
    assert [r.start_offset for r in refs] == [4, *(r.end_offset for r in refs[:-1])]
    # Chunk k ends at the last newline before 4 + k * chunk_bytes (or, for a line longer
    # than a chunk, the first after it): the cuts do not drift.
    target = 4
    for ref in refs:
        target += chunk_bytes
        if target <= ref.start_offset:
            target = ref.start_offset + chunk_bytes
        cut = data.rfind(b"\n", ref.start_offset, target)
        assert ref.end_offset == (cut if cut >= 0 else data.index(b"\n", target)) + 1
    read_whole = b"".join(c.data for c in files.read_chunks(log, 4, chunk_bytes=chunk_bytes))
    assert b"".join(read) == read_whole
    # Read into one buffer, used again for each chunk (and grown when one is longer).
    buffer = bytearray(2)
    with files.chunk_refs(log, 4, chunk_bytes=chunk_bytes) as located:
        into = []
        for ref in located:
            view = ref.read_into(buffer)
            into.append(bytes(view))
            del view
    assert into == read
    assert len(buffer) >= max(len(chunk) for chunk in read)


def test_a_gzip_files_chunks_are_read_in_order_as_read_chunks_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(b"one\ntwo\nthree\nlast"))
    log = files.describe(path)
    with files.chunk_refs(log, 4, chunk_bytes=6) as refs:
        located = [(bytes(r.read_into(bytearray())), r.start_offset, r.end_offset) for r in refs]
    assert located == [
        (c.data, c.start_offset, c.end_offset) for c in files.read_chunks(log, 4, chunk_bytes=6)
    ]


def test_a_file_cut_short_while_its_chunks_are_read_fails_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    with files.chunk_refs(files.describe(path), 0, chunk_bytes=4) as refs:
        first, second = next(refs), next(refs)
        assert first.read() == b"one\n"
        path.write_bytes(b"one\n")  # truncated in place, as copytruncate rotates logs
        with pytest.raises(files.SourceError, match=r"a\.jsonl shrank while it was being read"):
            second.read()
        with pytest.raises(files.SourceError, match=r"a\.jsonl shrank while it was being read"):
            second.read_into(bytearray(16))


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
