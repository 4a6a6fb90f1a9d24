"""The agent-event parser: every contract rule, on both the fast and the exact path."""

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import hypothesis
import pyarrow as pa
import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

import warehouse
from ingest.parsers import agent_events as parser
from ingest.pipelines.agent_events import dedup, staging
from tests.ingest.parsers.bounds_cases import (
    BAD_TIMES,
    SAMPLES,
    bad_counts,
    bad_names,
    good_counts,
    good_names,
    good_times,
)

VALID = (
    b'{"ts":"2026-01-14T10:00:00Z","run":"r","agent":"w-1","event":"llm_call","id":"e1",'
    b'"model":"gpt-5.2","usage":{"input_tokens":1800,"cached_input_tokens":24000,'
    b'"cache_write_tokens":0,"output_tokens":950},"duration_ms":8200}\n'
)


def stage(data: bytes, *, first_line_no: int = 1, base_offset: int = 0) -> staging.StagedChunk:
    """The chunk as the pipeline stages it; its staged rows are read into `rows`."""
    lines = parser.split_lines(data, first_line_no=first_line_no, base_offset=base_offset)
    load = dedup.Load("test.jsonl", datetime.now(UTC))
    folder = Path(settings.DATA_DIR) / "staged"
    folder.mkdir(exist_ok=True)
    chunk = staging.stage_lines(lines, load, folder, size=len(data))
    if chunk.file is not None:
        chunk.rows = (
            warehouse.cursor()
            .execute("SELECT * FROM read_parquet(?)", [str(chunk.file)])
            .to_arrow_table()
        )
        chunk.discard()
    return chunk


def parse(data: bytes) -> list[dict]:
    """Each line's outcome in line order: a valid line's event columns with `reason`
    None, or a rejected line's reason alone (blank lines and repeated ids have none)."""
    chunk = stage(data)
    assert chunk.rows is not None
    out = {
        row["source_line"]: {"line_no": row["source_line"], "reason": None}
        | {c: row[c] for c in parser.EVENT_COLUMNS}
        for row in chunk.rows.to_pylist()
    }
    for row in chunk.rejected.to_pylist():
        out[row["line_no"]] = {"line_no": row["line_no"], "reason": row["reason"]}
    return [out[line_no] for line_no in sorted(out)]


def reasons(data: bytes) -> list[str | None]:
    return [row["reason"] for row in parse(data)]


def test_it_splits_lines_with_numbers_and_offsets() -> None:
    table = parser.split_lines(b"a\n\nbc\n", first_line_no=5, base_offset=100)
    assert table.column("line_no").to_pylist() == [5, 6, 7]
    assert table.column("byte_offset").to_pylist() == [100, 102, 103]
    assert table.column("text").to_pylist() == ["a\n", "\n", "bc\n"]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 1 << 20])
def test_newlines_are_found_a_block_at_a_time_wherever_blocks_end(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(parser, "_NEWLINE_BLOCK", block)
    data = b"a\n\nbcd\nefghij\n\n\nk\n"
    table = parser.split_lines(data, first_line_no=1, base_offset=0)
    assert table.column("text").to_pylist() == [
        line.decode() for line in data.splitlines(keepends=True)
    ]
    assert table.column("byte_offset").to_pylist() == [0, 2, 3, 7, 14, 15, 16]


def test_it_refuses_a_chunk_without_a_final_newline() -> None:
    with pytest.raises(ValueError, match="whole lines"):
        parser.split_lines(b'{"a":1}', first_line_no=1, base_offset=0)


def test_it_keeps_bytes_that_are_not_utf8_as_base64() -> None:
    table = parser.split_lines(b"ok\n\xff\xfe\n", first_line_no=1, base_offset=0)
    assert table.column("text").to_pylist() == ["ok\n", None]
    assert table.column("raw_base64").to_pylist() == [None, "//4K"]


@pytest.mark.usefixtures("lake")
class TestValidation:
    def test_it_types_a_valid_event(self) -> None:
        (row,) = parse(VALID)
        assert row["reason"] is None
        assert (row["run"], row["agent"], row["event"], row["id"]) == ("r", "w-1", "llm_call", "e1")
        assert row["ts"].isoformat() == "2026-01-14T10:00:00+00:00"
        assert (row["input_tokens"], row["cached_input_tokens"]) == (1800, 24000)
        assert (row["cache_write_tokens"], row["output_tokens"]) == (0, 950)
        assert row["duration_ms"] == 8200.0
        assert row["model"] == "gpt-5.2"

    def test_it_reads_epoch_seconds_and_offsets_as_utc(self) -> None:
        rows = parse(
            b'{"ts":1768384800.5,"run":"r","agent":"a","event":"stop"}\n'
            b'{"ts":"2026-01-14T12:00:00+02:00","run":"r","agent":"a","event":"stop"}\n'
        )
        assert rows[0]["ts"].isoformat() == "2026-01-14T10:00:00.500000+00:00"
        assert rows[1]["ts"].isoformat() == "2026-01-14T10:00:00+00:00"

    def test_it_unescapes_strings(self) -> None:
        (row,) = parse(
            b'{"ts":1,"run":"r\\u00e9","agent":"a\\"b","event":"commit",'
            b'"commit":{"sha":"abc","message":"line\\nnext"}}\n'
        )
        assert (row["run"], row["agent"], row["commit_message"]) == ("r\u00e9", 'a"b', "line\nnext")

    @pytest.mark.parametrize(
        ("line", "reason"),
        [
            (b"not json", "line is not valid JSON"),
            (b"[1, 2]", "line is not a JSON object"),
            (b'{"run":"r","agent":"a","event":"x"}', "missing required field ts"),
            (b'{"ts":1,"agent":"a","event":"x"}', "missing required field run"),
            (b'{"ts":1,"run":null,"agent":"a","event":"x"}', "missing required field run"),
            (b'{"ts":1,"run":5,"agent":"a","event":"x"}', "run must be a string"),
            (b'{"ts":1,"run":"r","agent":"a","event":"x","ok":"yes"}', "ok must be a boolean"),
            (b'{"ts":1,"run":"r","agent":"a","event":"x","ok":1}', "ok must be a boolean"),
            (
                b'{"ts":true,"run":"r","agent":"a","event":"x"}',
                "ts must be an RFC 3339 string or Unix seconds",
            ),
            (
                b'{"ts":"yesterday","run":"r","agent":"a","event":"x"}',
                "ts is not an RFC 3339 time with a zone",
            ),
            (
                b'{"ts":"2026-01-14T10:00:00","run":"r","agent":"a","event":"x"}',
                "ts is not an RFC 3339 time with a zone",
            ),
            (
                b'{"ts":1768384800000,"run":"r","agent":"a","event":"x"}',
                "ts is outside 1970-2199 (milliseconds given as seconds?)",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":"lots"}',
                "usage must be an object",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"input_tokens":1.5}}',
                "usage.input_tokens must be an integer",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"input_tokens":"5"}}',
                "usage.input_tokens must be an integer",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"input_tokens":'
                b"12345678901234567890}}",
                "usage.input_tokens must be an integer",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","commit":{"files":1234567890123456789}}',
                "commit.files must be an integer",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"output_tokens":-3}}',
                "usage.output_tokens must be >= 0",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","cost_usd":"1.5"}',
                "cost_usd must be a number",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","commit":{"files":"3"}}',
                "commit.files must be an integer",
            ),
            (b'{"ts":1,"run":"","agent":"a","event":"x"}', "run must be 1-200 characters"),
            (b'{"ts":1,"run":"r","agent":"a","event":""}', "event must not be empty"),
            (b'{"ts":1,"run":"r","agent":"a","event":"x","attrs":[1]}', "attrs must be an object"),
            # DuckDB reads nan and infinities; none is a value of the contract's types.
            (b'{"ts":1,"run":nan,"agent":"a","event":"x"}', "run must be a string"),
            (
                b'{"ts":nan,"run":"r","agent":"a","event":"x"}',
                "ts must be an RFC 3339 string or Unix seconds",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","cost_usd":nan}',
                "cost_usd must be a number",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","cost_usd":NaN}',
                "cost_usd must be a number",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","duration_ms":-nan}',
                "duration_ms must be a number",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","duration_ms":Infinity}',
                "duration_ms must be a number",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","duration_ms":1E400}',
                "duration_ms must be a number",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"output_tokens":nan}}',
                "usage.output_tokens must be an integer",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","commit":{"files":-Infinity}}',
                "commit.files must be an integer",
            ),
            (b'{"ts":1,"run":"r","agent":"a","event":"x","ok":nan}', "ok must be a boolean"),
            (b'{"ts":1,"run":"r","agent":"a","event":"x","usage":nan}', "usage must be an object"),
            (b'{"ts":1,"run":"r","agent":"a","event":"x","attrs":nan}', "attrs must be an object"),
            # The bounds every door applies (lib/bounds.py).
            (b'{"ts":1,"run":"r","agent":"a","event":"x",}', "line is not valid JSON"),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","attrs":{"k":[1,]}}',
                "line is not valid JSON",
            ),
            (b'{"ts":1,"run":"r","agent":"a","event":"x" , \t}', "line is not valid JSON"),
            (
                b'{"ts":"2026-01-14T10:00:00+25:00","run":"r","agent":"a","event":"x"}',
                "ts is not an RFC 3339 time with a zone",
            ),
            (
                b'{"ts":"2026-01-14T10:00:00-24:00","run":"r","agent":"a","event":"x"}',
                "ts is not an RFC 3339 time with a zone",
            ),
            (
                b'{"ts":"2026-01-14T24:00:00Z","run":"r","agent":"a","event":"x"}',
                "ts is not an RFC 3339 time with a zone",
            ),
            (
                b'{"ts":"9999-12-31T23:59:59-05:00","run":"r","agent":"a","event":"x"}',
                "ts is outside 1970-2199",
            ),
            (b'{"ts":1,"run":"r\\u0001","agent":"a","event":"x"}', "run holds a control character"),
            (b'{"ts":1,"run":"r","agent":"a\\nb","event":"x"}', "agent holds a control character"),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","model":"m\\u0085"}',
                "model holds a control character",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","tool":"' + b"t" * 201 + b'"}',
                "tool must be 1-200 characters",
            ),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","model":""}',
                "model must be 1-200 characters",
            ),
            # Keys spelled with escapes are the contract's keys all the same.
            (b'{"ts":1,"run":"r","agent":"a","event":"x","\\u0069d":5}', "id must be a string"),
            (
                b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"input_\\u0074okens":"5"}}',
                "usage.input_tokens must be an integer",
            ),
        ],
    )
    def test_it_quarantines_with_a_reason(self, line: bytes, reason: str) -> None:
        # Alone, and beside a valid line.
        assert reasons(line + b"\n") == [reason]
        assert reasons(VALID + line + b"\n") == [None, reason]

    def test_a_lower_case_time_and_a_byte_order_mark_are_read_on_both_paths(self) -> None:
        lines = (
            b'\xef\xbb\xbf{"ts":"2026-01-14t10:00:00z","run":"r","agent":"a","event":"x"}\n'
            b'{"ts":"2026-01-14 12:00:00.5+02:00","run":"r","agent":"a","event":"y"}\n'
            b'{"ts":"2026-01-15t09:59:00+23:59","run":"r","agent":"a","event":"z"}\n'
        )
        expected = ["2026-01-14T10:00:00+00:00", "2026-01-14T10:00:00.500000+00:00"]
        expected.append("2026-01-14T10:00:00+00:00")
        fast = parse(lines)
        exact = staging._exact_path(
            warehouse.cursor(), parser.split_lines(lines, first_line_no=1, base_offset=0)
        ).to_pylist()
        for rows in (fast, exact):
            assert [row["reason"] for row in rows] == [None, None, None]
            assert [row["ts"].isoformat() for row in rows] == expected
        first, second, _ = lines.splitlines(keepends=True)  # the mark is the first line's
        offsets = parser.split_lines(lines, first_line_no=1, base_offset=0).column("byte_offset")
        assert offsets.to_pylist() == [0, len(first), len(first) + len(second)]

    def test_a_key_spelled_with_escapes_is_read_as_the_key(self) -> None:
        [row] = parse(
            b'{"ts":1,"\\u0072un":"r","agent":"a","event":"x","i\\u0064":"e\\u0031",'
            b'"usage":{"input_tokens":5}}\n'
        )
        assert (row["reason"], row["run"], row["id"], row["input_tokens"]) == (None, "r", "e1", 5)

    def test_it_drops_blank_lines_but_keeps_counting_them(self) -> None:
        chunk = stage(VALID + b"\n   \n" + VALID.replace(b'"e1"', b'"e2"'))
        assert chunk.rows is not None
        assert chunk.rows.column("source_line").to_pylist() == [1, 4]
        assert (chunk.lines, chunk.valid) == (4, 2)

    @pytest.mark.parametrize("inlined_up_to", [100, 0])
    def test_a_repeated_id_keeps_its_first_line(
        self, monkeypatch: pytest.MonkeyPatch, inlined_up_to: int
    ) -> None:
        # With 0, a clean chunk is staged by the fast path alone unless an id repeats.
        monkeypatch.setattr(warehouse.lake, "INLINED_ROWS_UP_TO", inlined_up_to)
        chunk = stage(VALID + VALID.replace(b'"w-1"', b'"w-2"') + VALID.replace(b'"e1"', b'"e2"'))
        assert chunk.rows is not None
        assert chunk.rows.column("source_line").to_pylist() == [1, 3]
        assert chunk.rows.column("agent").to_pylist() == ["w-1", "w-1"]
        assert chunk.valid == 3

    def test_fast_and_exact_paths_agree(self, monkeypatch: pytest.MonkeyPatch) -> None:
        lines = (
            VALID
            + b'{"ts":1,"run":"r","agent":"a","event":"commit","commit":{"sha":"s1","files":2},'
            b'"attrs":{"k":[1,{"x":null}]},"ok":true}\n'
            + b'{"ts":1,"run":"r","agent":"a","event":"x","usage":{"input_tokens":1.5}}\n'
            + b"garbage\n"
        )
        checked: list[list[int]] = []
        exact_path = staging._exact_path

        def spy(cur: object, some: pa.Table) -> pa.Table:
            checked.append(some.column("line_no").to_pylist())
            return exact_path(cur, some)  # type: ignore[arg-type]

        monkeypatch.setattr(staging, "_exact_path", spy)
        fast = parse(lines)
        assert checked == [[3, 4]]  # a malformed line sends only itself line by line
        exact = exact_path(
            warehouse.cursor(), parser.split_lines(lines, first_line_no=1, base_offset=0)
        )
        assert fast[:2] == [
            {c: row[c] for c in ["line_no", "reason", *parser.EVENT_COLUMNS]}
            for row in exact.to_pylist()[:2]
        ]
        assert fast[1]["attrs"] == '{"k":[1,{"x":null}]}'
        assert [row["reason"] for row in fast[2:]] == [
            "usage.input_tokens must be an integer",
            "line is not valid JSON",
        ]

    def test_a_line_that_is_not_json_stages_its_chunk_again_line_by_line(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The fast statement stops at a line that is not JSON; the chunk is then staged
        # by the statement that reads such a line as rejected, and its other lines are
        # kept whole. A clean chunk never takes that statement.
        monkeypatch.setattr(warehouse.lake, "INLINED_ROWS_UP_TO", 0)
        statements: list[str] = []
        copy = warehouse.data_files.copy_to_parquet

        def spy(cur: object, query: str, path: Path, params: Sequence[object] = ()) -> None:
            statements.append(
                {staging._STAGE_SQL: "fast", staging._STAGE_ANY_SQL: "any"}.get(query, "other")
            )
            copy(cur, query, path, params)  # type: ignore[arg-type]

        monkeypatch.setattr(warehouse.data_files, "copy_to_parquet", spy)
        second = VALID.replace(b'"e1"', b'"e2"')
        assert reasons(VALID + second) == [None, None]
        assert statements == ["fast"]
        statements.clear()
        rows = parse(VALID + b'{"ts": 1, "run": \n' + second)
        assert statements == ["fast", "any", "other"]  # "other": restaged without line 2
        assert [row["reason"] for row in rows] == [None, "line is not valid JSON", None]
        assert [row.get("id") for row in rows] == ["e1", None, "e2"]
        assert rows[2]["input_tokens"] == 1800

    def test_rejected_lines_keep_their_raw_text(self) -> None:
        chunk = stage(VALID + b"oops {\n", first_line_no=10, base_offset=500)
        assert chunk.rejected.to_pylist() == [
            {
                "line_no": 11,
                "byte_offset": 500 + len(VALID),
                "reason": "line is not valid JSON",
                "raw_text": "oops {",
            }
        ]

    def test_lines_that_are_not_utf8_are_rejected_beside_valid_ones(self) -> None:
        chunk = stage(VALID + b'{"ts":1,"run":"\xff"}\n')
        assert chunk.rejected.to_pylist() == [
            {
                "line_no": 2,
                "byte_offset": len(VALID),
                "reason": "line is not valid UTF-8",
                "raw_text": "base64:eyJ0cyI6MSwicnVuIjoi/yJ9Cg==",
            }
        ]
        assert chunk.valid == 1


def test_every_event_column_is_in_the_warehouse_schema(lake: object) -> None:
    columns = {
        r["column_name"]
        for r in warehouse.fetch_all(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'events'"
        )
    }
    assert set(parser.EVENT_COLUMNS) <= columns


# Values written as they are (not JSON, but DuckDB reads them): nan and infinities, as
# Python's json.dumps writes them and in other spellings, and a number beyond a double.
RAW = ["NaN", "nan", "-nan", "Infinity", "-Infinity", "inf", "1E400", "null"]
MUTATIONS = [
    5,
    -1,
    1.5,
    "7",
    "x",
    True,
    None,
    {"a": 1},
    [1],
    "2026-01-14T10:00:00Z",
    "1768384800",
    *(f"raw:{text}" for text in RAW),
]


def _mutated_lines(count: int) -> bytes:
    """Valid events with one field at a time replaced by a value of another JSON type;
    some written with a space or a tab before or after their colons, some with a key
    given twice (the first one counts, on both paths)."""
    import random

    rng = random.Random(7)
    paths = [f.path for f in parser.FIELDS]
    out = []
    for i in range(count):
        doc: dict = {
            "ts": 1768384800 + i,
            "run": "r",
            "agent": f"a{i % 5}",
            "event": "commit",
            "id": f"e{i}",
            "usage": {"input_tokens": 1, "output_tokens": 2},
            "commit": {"sha": f"s{i}", "files": 1},
            "ok": True,
            "attrs": {"k": i},
        }
        path = rng.choice(paths)
        value = rng.choice(MUTATIONS)
        head, _, leaf = path.rpartition(".")
        if head:
            container = doc.setdefault(head, {})
            if isinstance(container, dict):
                container[leaf] = value
        else:
            doc[leaf] = value
        line = json.dumps(doc, separators=rng.choice([(", ", ": "), (",", " : "), (",", ":\t")]))
        if rng.random() < 0.1:
            line = line[:-1] + f', "{leaf}": {json.dumps(rng.choice(MUTATIONS))}}}'
        for text in RAW:
            line = line.replace(json.dumps(f"raw:{text}"), text)
        out.append(line.encode() + b"\n")
    return b"".join(out)


def test_the_typed_path_agrees_with_the_exact_path_on_mistyped_values(
    lake: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    exact_path = staging._exact_path

    def spy(cur: object, lines: pa.Table) -> pa.Table:
        seen.append(lines.num_rows)
        return exact_path(cur, lines)  # type: ignore[arg-type]

    monkeypatch.setattr(staging, "_exact_path", spy)
    data = _mutated_lines(400)
    typed = parse(data)
    assert len(seen) == 1 and 0 < seen[0] < 400  # only the suspect lines took the exact path
    exact = exact_path(
        warehouse.cursor(), parser.split_lines(data, first_line_no=1, base_offset=0)
    ).to_pylist()
    # Lines missing from `typed` repeat an earlier line's id (mutated to "7", say).
    firsts: dict[str, dict] = {}
    for row in exact:
        if row["reason"] is None:
            firsts.setdefault(row["id"], row)
    exact = [
        row
        for row in exact
        if row["reason"] is not None or row["id"] is None or firsts[row["id"]] is row
    ]
    assert [row["reason"] for row in typed] == [row["reason"] for row in exact]
    valid = [row for row in exact if row["reason"] is None]
    assert [row for row in typed if row["reason"] is None] == [
        {c: row[c] for c in ["line_no", "reason", *parser.EVENT_COLUMNS]} for row in valid
    ]
    assert 50 < len(exact) - len(valid) < 400


@st.composite
def bounded_lines(draw: st.DrawFn) -> tuple[dict[str, object], str | None, datetime]:
    """An event, good or with one field beyond the bounds: (the event, the words its
    reason holds or None, the UTC time of its ts)."""
    when = draw(good_times())
    doc: dict[str, object] = {
        "ts": when.text,
        "run": draw(good_names),
        "agent": draw(good_names),
        "event": "llm_call",
        "model": draw(good_names),
        "tool": draw(good_names),
        "usage": {"input_tokens": draw(good_counts)},
    }
    flaw = draw(st.sampled_from(["none", "time", "count", "run", "agent", "model", "tool"]))
    words: str | None = None
    if flaw == "time":
        doc["ts"] = draw(st.sampled_from(BAD_TIMES))[0]
        words = "ts "
    elif flaw == "count":
        doc["usage"] = {"input_tokens": draw(bad_counts)}
        words = "usage.input_tokens must be"
    elif flaw != "none":
        doc[flaw] = draw(bad_names)[0]
        words = f"{flaw} "
    return doc, words, when.utc


# Each example stages its lines through both DuckDB paths (0.2-1 s on the shared machine):
# fewer examples than the other parsers' properties, of more lines each.
@hypothesis.settings(
    max_examples=SAMPLES // 3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # the lake is only read
)
@given(st.lists(bounded_lines(), min_size=1, max_size=24), st.booleans(), st.booleans())
def test_any_mix_of_good_and_bad_lines_loads_the_good_and_rejects_the_bad_with_a_reason(
    lake: object,
    lines: list[tuple[dict[str, object], str | None, datetime]],
    bom: bool,
    trailing_comma: bool,
) -> None:
    texts = []
    for number, (doc, _, _) in enumerate(lines, start=1):
        doc["id"] = f"e{number}"
        texts.append(json.dumps(doc, separators=(",", ":"), ensure_ascii=number % 2 == 0))
    if trailing_comma:  # the last line, which then is not JSON
        texts[-1] = texts[-1][:-1] + ",}"
        lines[-1] = (lines[-1][0], "line is not valid JSON", lines[-1][2])
    data = (parser.BOM if bom else b"") + "".join(t + "\n" for t in texts).encode()

    fast = parse(data)
    exact = staging._exact_path(
        warehouse.cursor(), parser.split_lines(data, first_line_no=1, base_offset=0)
    ).to_pylist()
    assert [row["reason"] for row in fast] == [row["reason"] for row in exact]
    for (doc, words, utc), row in zip(lines, fast, strict=True):
        if words is None:
            assert row["reason"] is None
            assert row["ts"] == utc
            assert (row["run"], row["agent"], row["model"], row["tool"]) == (
                doc["run"],
                doc["agent"],
                doc["model"],
                doc["tool"],
            )
            assert row["input_tokens"] == doc["usage"]["input_tokens"]  # type: ignore[index]
        else:
            assert row["reason"] is not None and row["reason"].startswith(words.split()[0])
            assert words in row["reason"] or words.strip() in row["reason"]
