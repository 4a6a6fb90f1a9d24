"""ingest/pipelines/line_files.py: numbered lines from chunks, resumed after a restart."""

import io
from pathlib import Path

import warehouse
from ingest.parsers.json_lines import RawLine
from ingest.pipelines.line_files import ingest_files, split_lines
from ingest.pipelines.loading import IngestSummary, Position, advance_position
from ingest.sources.files import Chunk


def test_a_chunk_becomes_numbered_lines_with_their_offsets() -> None:
    chunk = Chunk(b'{"a":1}\r\n\n{"b":2}\n', start_offset=100, end_offset=118)

    assert split_lines(chunk, first_line_no=4) == [
        RawLine(5, 100, b'{"a":1}'),
        RawLine(6, 109, b""),
        RawLine(7, 110, b'{"b":2}'),
    ]


def test_an_unterminated_last_line_waits_for_its_newline(lake: Path, tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"one\ntwo\nthr")
    seen: list[tuple[list[bytes], Position]] = []

    def load(
        lines: list[RawLine], source: str, stored: Position | None, reached: Position
    ) -> IngestSummary:
        seen.append(([line.data for line in lines], reached))
        warehouse.write(lambda cur: advance_position(cur, "test", source, stored, reached))
        return IngestSummary(accepted=len(lines))

    summary = ingest_files([str(tmp_path)], "test", load, io.StringIO())
    with open(path, "ab") as handle:
        handle.write(b"ee\n")
    again = ingest_files([str(tmp_path)], "test", load, io.StringIO())

    assert (summary.accepted, summary.pending_bytes, summary.bytes) == (2, 3, 8)
    assert (again.accepted, again.pending_bytes) == (1, 0)
    assert [lines for lines, _ in seen] == [[b"one", b"two"], [b"three"]]
    assert seen[1][1].line_no == 3 and seen[1][1].byte_offset == 14


def test_a_complete_json_last_line_without_newline_is_read(lake: Path, tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_bytes(b'{"a": 1}\n{"b": 2}')
    seen: list[list[bytes]] = []

    def load(
        lines: list[RawLine], source: str, stored: Position | None, reached: Position
    ) -> IngestSummary:
        seen.append([line.data for line in lines])
        warehouse.write(lambda cur: advance_position(cur, "test", source, stored, reached))
        return IngestSummary(accepted=len(lines))

    summary = ingest_files([str(tmp_path)], "test", load)
    again = ingest_files([str(tmp_path)], "test", load)

    assert seen == [[b'{"a": 1}'], [b'{"b": 2}']]
    assert (summary.accepted, summary.pending_bytes, summary.bytes) == (2, 0, 17)
    assert (again.accepted, again.pending_bytes) == (0, 0)
