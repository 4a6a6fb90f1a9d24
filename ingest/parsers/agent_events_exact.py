"""The agent-event parser's exact path, for the lines the fast path does not take or
rejects: each field's JSON type checked from its text (types are checked here, never
silently converted) and the first failing check's reason kept.

`LINES_TO_FIELDS_SQL` reads each line's fields as their JSON text, `validate_fields()`
checks each field's JSON type from its first byte, vectorised with Arrow and NumPy, and
`FINALIZE_SQL` parses timestamps. Pure: no files, no warehouse queries.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.parsers.agent_events_fields import (
    CONTAINERS,
    CONTROL_CHARACTER,
    FIELDS,
    NAMES,
    TOP_LEVEL,
    TRAILING_COMMA,
    Field,
    JsonType,
)
from ingest.parsers.timestamps import EVENT_YEARS, RFC3339
from lib.bounds import NAME_LENGTH

_EXPECTED = {
    JsonType.STRING: "a string",
    JsonType.INTEGER: "an integer",
    JsonType.NUMBER: "a number",
    JsonType.BOOLEAN: "a boolean",
    JsonType.OBJECT: "an object",
    JsonType.TIME: "an RFC 3339 string or Unix seconds",
}

_OUTSIDE_SQL = EVENT_YEARS.outside_sql("parsed_ts")
_OUTSIDE = f"ts is outside {EVENT_YEARS.first}-{EVENT_YEARS.end - 1}"
_OUTSIDE_SECONDS = f"{_OUTSIDE} (milliseconds given as seconds?)"


def _field_column(path: str) -> str:
    """The `fields` relation's column holding a path's JSON text: j_usage__input_tokens."""
    return "j_" + path.replace(".", "__")


def _leaves(container: str) -> list[str]:
    return [f.leaf for f in FIELDS if f.container == container]


_FLAT_STRUCTURE = "{" + ", ".join(f'"{p}": "JSON"' for p in TOP_LEVEL) + "}"


def _container_parse(container: str) -> str:
    structure = "{" + ", ".join(f'"{leaf}": "JSON"' for leaf in _leaves(container)) + "}"
    return (
        f"CASE WHEN starts_with(CAST(j.\"{container}\" AS VARCHAR), '{{') "
        f'THEN from_json(j."{container}", \'{structure}\') END AS "{container}_parsed"'
    )


_CONTAINER_PARSES = ", ".join(_container_parse(c) for c in CONTAINERS)


def _slow_column(field: Field) -> str:
    name = _field_column(field.path)
    if field.container:
        return f'CAST("{field.container}_parsed"."{field.leaf}" AS VARCHAR) AS {name}'
    return f'CAST(j."{field.path}" AS VARCHAR) AS {name}'


# Slow path: `raw_lines(line_no, byte_offset, text, raw_base64)` -> one row per non-blank
# line with `problem` set for a line that is not UTF-8, not JSON, or not an object.
LINES_TO_FIELDS_SQL = f"""
WITH checked AS (
    SELECT line_no, byte_offset, text,
           coalesce(json_valid(text) AND NOT regexp_matches(text, '{TRAILING_COMMA}'), false)
               AS valid
    FROM raw_lines
    WHERE text IS NULL OR json_valid(text) OR trim(text, ' \t\r\n') <> ''
),
parsed AS (
    SELECT line_no, byte_offset, text, valid,
           CASE WHEN valid THEN json_type(text) END AS top_type
    FROM checked
),
objects AS (
    SELECT line_no, byte_offset,
           CASE WHEN text IS NULL THEN 'line is not valid UTF-8'
                WHEN NOT valid THEN 'line is not valid JSON'
                WHEN top_type <> 'OBJECT' THEN 'line is not a JSON object'
           END AS problem,
           CASE WHEN top_type = 'OBJECT' THEN from_json(text, '{_FLAT_STRUCTURE}') END AS j
    FROM parsed
),
nested AS (
    SELECT *, {_CONTAINER_PARSES}
    FROM objects
)
SELECT line_no, byte_offset, problem,
       {", ".join(_slow_column(f) for f in FIELDS)}
FROM nested
"""

_INTEGER_TEXT = r"^-?(0|[1-9]\d{0,17})$"  # fits BIGINT; larger counts are not token counts
_QUOTE, _BRACE, _MINUS, _T, _F, _N = (ord(c) for c in '"{-tfn')


def _first_bytes(array: pa.Array) -> np.ndarray:
    """Each value's first byte (0 for NULL or empty), read from the buffers, no copies."""
    n = len(array)
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    offsets: np.ndarray = np.frombuffer(array.buffers()[1], dtype=offset_type)[
        array.offset : array.offset + n + 1
    ]
    data_buffer = array.buffers()[2]
    if data_buffer is None or data_buffer.size == 0:
        return np.zeros(n, dtype=np.uint8)
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    first = data[np.minimum(offsets[:-1], len(data) - 1)]
    first = np.where(offsets[1:] > offsets[:-1], first, 0).astype(np.uint8)
    if array.null_count:
        first[~np.asarray(array.is_valid())] = 0
    return first


def _is_null(texts: pa.Array, first: np.ndarray) -> np.ndarray:
    """Which JSON texts are `null`. DuckDB's JSON reader also takes nan, NaN and Infinity
    (as Python's json.dumps writes them): they are present, and of no contract type."""
    null = np.zeros(len(first), dtype=bool)
    rows = np.flatnonzero(first == _N)
    if len(rows):
        null[rows] = np.asarray(pc.fill_null(pc.equal(texts.take(rows), "null"), False))
    return null


def _is_number_start(first: np.ndarray) -> np.ndarray:
    return (first == _MINUS) | ((first >= ord("0")) & (first <= ord("9")))


def _string_values(texts: pa.Array) -> pa.Array:
    """JSON string texts -> their values; only strings with escapes go through json.loads."""
    values = pc.utf8_slice_codeunits(texts, 1, -1)
    escaped = np.asarray(pc.fill_null(pc.match_substring(texts, "\\"), False))
    if escaped.any():
        decoded = values.to_pylist()
        raw = texts.to_pylist()
        for i in np.flatnonzero(escaped):
            decoded[i] = json.loads(raw[i])
        values = pa.array(decoded, values.type)
    return values


class _Checks:
    """The first failing check of each row, as a code into `messages` (0 = valid)."""

    def __init__(self, n: int) -> None:
        self.messages: list[str | None] = [None]
        self.code = np.zeros(n, dtype=np.int32)

    def fail(self, mask: np.ndarray, message: str) -> None:
        todo = mask & (self.code == 0)
        if todo.any():
            self.messages.append(message)
            self.code[todo] = len(self.messages) - 1

    def fail_at(self, indices: np.ndarray, message: str) -> None:
        mask = np.zeros(len(self.code), dtype=bool)
        mask[indices] = True
        self.fail(mask, message)

    def reasons(self) -> pa.Array:
        return pa.DictionaryArray.from_arrays(
            pa.array(self.code, pa.int32()), pa.array(self.messages, pa.string())
        ).cast(pa.string())


def _scatter(values: pa.Array, present: np.ndarray) -> pa.Array:
    """Values computed for the present rows only, spread back over all rows (NULL elsewhere)."""
    if len(values) == len(present):
        return values
    return pc.replace_with_mask(pa.nulls(len(present), values.type), pa.array(present), values)


def validate_fields(fields: pa.Table) -> pa.Table:
    """Check every field's JSON type and convert values.

    Input: the `fields` relation (line_no, byte_offset, problem?, j_* JSON texts).
    Output: line_no, byte_offset, reason (NULL when valid), ts_text, ts_seconds, and the
    event columns other than ts (FINALIZE_SQL turns ts_text/ts_seconds into ts). Work is
    done on each field's present values only: most fields are absent from most events.
    """
    n = fields.num_rows
    checks = _Checks(n)
    if "problem" in fields.column_names:
        problem = fields.column("problem").combine_chunks()
        if problem.null_count < n:
            for text in pc.unique(problem.drop_null()).to_pylist():
                checks.fail(np.asarray(pc.fill_null(pc.equal(problem, text), False)), text)
    out: dict[str, pa.Array] = {
        "line_no": fields.column("line_no").combine_chunks(),
        "byte_offset": fields.column("byte_offset").combine_chunks(),
    }
    container_ok: dict[str, np.ndarray] = {}
    for field in FIELDS:
        column = fields.column(_field_column(field.path)).combine_chunks()
        first = _first_bytes(column)
        present = (first != 0) & ~_is_null(column, first)  # JSON null counts as absent
        if field.container is not None:
            # A container that is not an object already failed; its leaves are skipped.
            present &= container_ok[field.container]
        if field.required:
            checks.fail(~present, f"missing required field {field.path}")
        rows = np.flatnonzero(present)
        texts = column if len(rows) == n else column.take(pa.array(rows))
        head = first[rows]
        expected = f"{field.path} must be {_EXPECTED[field.kind]}"
        if field.kind == JsonType.OBJECT:
            ok = head == _BRACE
            checks.fail_at(rows[~ok], expected)
            container_ok[field.path] = np.zeros(n, dtype=bool)
            container_ok[field.path][rows[ok]] = True
            if field.column:
                out[field.column] = _scatter(texts.filter(pa.array(ok)), container_ok[field.path])
            continue
        if field.kind == JsonType.TIME:
            is_string, is_number = head == _QUOTE, _is_number_start(head)
            checks.fail_at(rows[~(is_string | is_number)], expected)
            strings = _string_values(texts.filter(pa.array(is_string)))
            rfc = np.asarray(pc.fill_null(pc.match_substring_regex(strings, RFC3339), False))
            checks.fail_at(rows[is_string][~rfc], "ts is not an RFC 3339 time with a zone")
            text_rows = np.zeros(n, dtype=bool)
            text_rows[rows[is_string]] = True
            out["ts_text"] = _scatter(strings, text_rows)
            number_rows = np.zeros(n, dtype=bool)
            number_rows[rows[is_number]] = True
            out["ts_seconds"] = _scatter(
                pc.cast(texts.filter(pa.array(is_number)), pa.float64()), number_rows
            )
            continue
        assert field.column is not None
        if field.kind == JsonType.STRING:
            ok = head == _QUOTE
            values = _string_values(texts)
        elif field.kind == JsonType.BOOLEAN:
            ok = (head == _T) | (head == _F)
            values = pc.equal(texts, "true")
        else:
            ok = _is_number_start(head)
            if field.kind == JsonType.INTEGER:
                ok &= np.asarray(
                    pc.fill_null(pc.match_substring_regex(texts, _INTEGER_TEXT), False)
                )
            numbers = pc.if_else(pa.array(ok), texts, pa.scalar(None, texts.type))
            values = pc.cast(
                numbers, pa.int64() if field.kind == JsonType.INTEGER else pa.float64()
            )
            if field.kind == JsonType.NUMBER:
                # -nan, -Infinity and 1E400 start as numbers do; none is one.
                ok &= np.asarray(pc.fill_null(pc.is_finite(values), True))
            if field.non_negative:
                negative = np.asarray(pc.fill_null(pc.less(values, 0), False))
                checks.fail_at(rows[negative], f"{field.path} must be >= 0")
        checks.fail_at(rows[~ok], expected)
        values = pc.if_else(pa.array(ok), values, pa.scalar(None, values.type))
        out[field.column] = _scatter(values, present)

    for name in NAMES:
        length = pc.fill_null(pc.utf8_length(out[name]), 1).to_numpy(zero_copy_only=False)
        checks.fail(
            (length == 0) | (length > NAME_LENGTH), f"{name} must be 1-{NAME_LENGTH} characters"
        )
        control = pc.match_substring_regex(out[name], CONTROL_CHARACTER)
        checks.fail(np.asarray(pc.fill_null(control, False)), f"{name} holds a control character")
    event_length = pc.fill_null(pc.utf8_length(out["event"]), 1).to_numpy(zero_copy_only=False)
    checks.fail(event_length == 0, "event must not be empty")
    out["reason"] = checks.reasons()
    return pa.table(out)


# `validated` (the output of validate_fields) -> the same rows with `ts` parsed and the
# last checks that need it. Unix seconds may be fractional; DuckDB reads a `T` and a `Z`
# in upper case only.
FINALIZE_SQL = f"""
WITH timed AS (
    SELECT *,
           CASE WHEN ts_text IS NOT NULL THEN try_cast(upper(ts_text) AS TIMESTAMPTZ)
                WHEN ts_seconds IS NOT NULL AND isfinite(ts_seconds)
                    THEN try(to_timestamp(ts_seconds)) END AS parsed_ts
    FROM validated
),
checked AS (
    SELECT *,
           coalesce(reason,
               CASE WHEN parsed_ts IS NULL THEN 'ts is not a valid time'
                    WHEN ({_OUTSIDE_SQL}) AND ts_text IS NOT NULL THEN '{_OUTSIDE}'
                    WHEN {_OUTSIDE_SQL}
                        THEN '{_OUTSIDE_SECONDS}'
               END) AS final_reason
    FROM timed
)
SELECT * EXCLUDE (reason, ts_text, ts_seconds, parsed_ts, final_reason),
       CASE WHEN final_reason IS NULL THEN parsed_ts END AS ts,
       final_reason AS reason
FROM checked
"""
