"""ingest/parsers/parallel.py: {"id", "language", "text"} lines."""

from ingest.parsers.json_lines import RawLine
from ingest.parsers.parallel import ParallelText, parse_lines


def test_good_lines_become_texts_and_bad_ones_say_why() -> None:
    lines = [
        RawLine(1, 0, '{"id": "s1", "language": "TA", "text": "வணக்கம்"}'.encode()),
        RawLine(2, 60, b'{"id": "s1", "language": "tamil", "text": "x"}'),
        RawLine(3, 110, b'{"id": "", "language": "en", "text": "x"}'),
        RawLine(4, 150, b'{"id": "s2", "language": "en", "text": "  "}'),
        RawLine(5, 190, b"nope"),
        RawLine(6, 195, b""),
    ]

    parsed = parse_lines(lines)

    assert parsed.texts == [ParallelText("s1", "ta", "வணக்கம்", 1)]
    assert [(r.line_no, r.reason) for r in parsed.rejected[:3]] == [
        (2, "language: expected an ISO 639-1 code, got 'tamil'"),
        (3, "id: must not be empty"),
        (4, "text: expected a non-empty string, got a string"),
    ]
    assert parsed.rejected[3].line_no == 5 and parsed.rejected[3].reason.startswith("not JSON")
