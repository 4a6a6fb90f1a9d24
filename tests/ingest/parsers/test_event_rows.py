"""Event rows -> one Arrow table: every column of the schema, NULL where a row named none."""

import pyarrow as pa
import pytest

from ingest.parsers.event_rows import COLUMNS, SCHEMA, EventRows


def test_each_row_fills_the_columns_it_names_and_the_rest_are_null() -> None:
    rows = EventRows()
    rows.add(run="r1", event="llm_call", id="m1", input_tokens=3, ts="2026-02-12T14:12:01Z")
    second = rows.add(run="r1", event="tool_call", id="t1", tool="Bash", source_line=7)
    rows.set(second, ok=False, duration_ms=12.5)
    table = rows.table()
    assert table.schema == SCHEMA
    assert table.to_pylist() == [
        {name: None for name in COLUMNS}
        | {"run": "r1", "event": "llm_call", "id": "m1", "input_tokens": 3}
        | {"ts": "2026-02-12T14:12:01Z"},
        {name: None for name in COLUMNS}
        | {"run": "r1", "event": "tool_call", "id": "t1", "tool": "Bash", "source_line": 7}
        | {"ok": False, "duration_ms": 12.5},
    ]


def test_no_rows_is_an_empty_table_of_every_column() -> None:
    assert EventRows().table() == pa.table({f.name: [] for f in SCHEMA}, schema=SCHEMA)


def test_a_name_that_is_not_a_column_is_refused() -> None:
    rows = EventRows()
    rows.add(run="r1", event="stop", id="s1", colour="blue")
    with pytest.raises(KeyError, match="colour"):
        rows.table()
