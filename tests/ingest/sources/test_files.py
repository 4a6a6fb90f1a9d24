"""Reading whole lines from log files: a read asks for what the file holds, so a file
written to while it is read is still read to its new end."""

import gzip
import os
from pathlib import Path

import pytest

from ingest.sources import files
from ingest.sources.line_layout import BOM


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
        with pytest.raises(files.SourceError, match=r"a\.jsonl: shrank while it was being read"):
            second.read()
        with pytest.raises(files.SourceError, match=r"a\.jsonl: shrank while it was being read"):
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


def lines(count: int) -> bytes:
    return b"".join(b'{"n": %d}\n' % i for i in range(count))


def read_until_broken(path: Path, chunk_bytes: int = 1 << 20) -> tuple[bytes, files.Readable]:
    chunks = files.readable(files.read_chunks(files.describe(path), 0, chunk_bytes))
    return b"".join(c.data for c in chunks), chunks


def test_a_truncated_gzip_file_yields_its_whole_lines_before_the_break(tmp_path: Path) -> None:
    data = lines(20_000)
    compressed = gzip.compress(data)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    with gzip.open(path) as handle:  # what a decompressor gets out of the half it has
        readable_part = handle.read1(1 << 30)
        while True:
            try:
                piece = handle.read1(1 << 30)
            except EOFError:
                break
            readable_part += piece
    whole_lines = readable_part[: readable_part.rindex(b"\n") + 1]

    read, chunks = read_until_broken(path, chunk_bytes=4096)

    assert read == whole_lines and len(whole_lines) > 1000
    assert chunks.failed == files.FailedFile(
        str(path),
        "truncated: Compressed file ended before the end-of-stream marker was reached"
        f" (after byte {len(whole_lines)}: the lines before it are read)",
    )


def test_a_gzip_file_with_a_broken_crc_yields_its_lines_then_fails(tmp_path: Path) -> None:
    data = lines(100)
    compressed = bytearray(gzip.compress(data))
    compressed[-8] ^= 0xFF  # the trailer's CRC-32
    path = tmp_path / "crc.jsonl.gz"
    path.write_bytes(bytes(compressed))

    read, chunks = read_until_broken(path)

    assert read == data
    assert chunks.failed is not None
    assert chunks.failed.reason.startswith("CRC check failed")
    assert chunks.failed.reason.endswith(f"(after byte {len(data)}: the lines before it are read)")


def test_a_file_named_gz_that_is_not_gzip_fails_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl.gz"
    path.write_bytes(b'{"n": 0}\n' * 3)

    read, chunks = read_until_broken(path)

    assert read == b""
    assert chunks.failed == files.FailedFile(str(path), "Not a gzipped file (b'{\"')")


def test_a_file_that_cannot_be_opened_fails_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "locked.jsonl"
    path.write_bytes(b"{}\n")
    log = files.describe(path)
    real_open = open

    def denied(file: object, *args: object, **kwargs: object) -> object:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", denied)
    chunks = files.readable(files.read_chunks(log, 0))
    assert list(chunks) == []
    assert chunks.failed == files.FailedFile(str(path), "Permission denied")
    with pytest.raises(files.UnreadableFile, match=r"locked\.jsonl: Permission denied"):
        with files.chunk_refs(log, 0):
            pass


def test_lines_ending_in_a_lone_cr_are_read_as_lines(tmp_path: Path) -> None:
    path = tmp_path / "mac.jsonl"
    path.write_bytes(b'{"a": 1}\r{"b": 2}\r{"c": 3')
    gz = tmp_path / "mac.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"a": 1}\r{"b": 2}\r'))
    log = files.describe(path)

    chunks = list(files.read_chunks(log, 0, chunk_bytes=10))
    with files.chunk_refs(log, 0, chunk_bytes=10) as refs:
        located = [(r.read(), bytes(r.read_into(bytearray())), r.end_offset) for r in refs]

    assert [(c.data, c.start_offset, c.end_offset) for c in chunks] == [
        (b'{"a": 1}\n', 0, 9),
        (b'{"b": 2}\n', 9, 18),
    ]
    assert located == [(b'{"a": 1}\n', b'{"a": 1}\n', 9), (b'{"b": 2}\n', b'{"b": 2}\n', 18)]
    assert [c.data for c in files.read_chunks(files.describe(gz), 0)] == [b'{"a": 1}\n{"b": 2}\n']
    # CRLF stays as it was (the readers drop the CR), and a lone CR inside LF lines too.
    crlf = tmp_path / "windows.jsonl"
    crlf.write_bytes(b'{"a": 1}\r\n{"b": "\r"}\n')
    assert [c.data for c in files.read_chunks(files.describe(crlf), 0)] == [
        b'{"a": 1}\r\n{"b": "\r"}\n'
    ]


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(BOM + b'{"a": 1}\n{"b": 2}\n{"c": 3}')
    gz = tmp_path / "bom.jsonl.gz"
    gz.write_bytes(gzip.compress(BOM + b'{"a": 1}\n'))
    log = files.describe(path)

    chunks = list(files.read_chunks(log, 0))
    with files.chunk_refs(log, 0) as refs:
        located = [(r.read(), r.start_offset, r.end_offset) for r in refs]

    assert [(c.data, c.start_offset, c.end_offset) for c in chunks] == [
        (b'{"a": 1}\n{"b": 2}\n', 3, 21)
    ]
    assert located == [(b'{"a": 1}\n{"b": 2}\n', 3, 21)]
    assert [(c.data, c.start_offset) for c in files.read_chunks(files.describe(gz), 0)] == [
        (b'{"a": 1}\n', 3)
    ]
    assert files.read_final_line(log, 21, 100) == files.Chunk(b'{"c": 3}', 21, 29)
    only = tmp_path / "one.jsonl"
    only.write_bytes(BOM + b'{"a": 1}')
    assert files.read_final_line(files.describe(only), 0, 100) == files.Chunk(b'{"a": 1}', 3, 11)


def test_what_a_folder_holds_that_cannot_be_read_is_named_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "good.jsonl").write_bytes(b"{}\n")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    failed: list[files.FailedFile] = []

    found = files.find_files([str(tmp_path)], failed=failed)

    assert [f.path.name for f in found] == ["good.jsonl"]
    assert sorted(failed, key=lambda f: f.file) == [
        files.FailedFile(
            str(tmp_path / "dangling.jsonl"), "cannot stat: No such file or directory"
        ),
        files.FailedFile(str(tmp_path / "pipe.jsonl"), "not a regular file"),
    ]


def test_a_folder_that_cannot_be_listed_is_named_and_the_others_are_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "locked").mkdir()
    (tmp_path / "open").mkdir()
    (tmp_path / "open" / "a.jsonl").write_bytes(b"{}\n")
    real_scandir = os.scandir

    def scandir(path: Path) -> object:
        if Path(path).name == "locked":  # as chmod 000 does, for a user who is not root
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    failed: list[files.FailedFile] = []

    found = files.find_files([str(tmp_path)], failed=failed)

    assert [f.path.name for f in found] == ["a.jsonl"]
    assert failed == [
        files.FailedFile(str(tmp_path / "locked"), "cannot list folder: Permission denied")
    ]
