"""Agent-event JSONL (docs/agent-events.md) -> typed event rows, in bulk.

Pure: no files, no Django, no warehouse. Two paths, the pipeline choosing per line:
- fast: `TYPED_ROWS_SQL` reads each line's typed fields with DuckDB's json_transform
  (TYPED_STRUCTURE), checks and converts them in one statement; a line whose text could
  hide a mistyped value (SUSPECT_LINE) takes the exact path instead, and so does a line
  the fast path rejects (for its reason);
- exact: `LINES_TO_FIELDS_SQL` reads each line's fields as their JSON text (types are
  checked here, never silently converted), `validate_fields()` checks each field's JSON
  type from its first byte, vectorised with Arrow and NumPy, and `FINALIZE_SQL` parses
  timestamps.
A line that fails any check keeps the first reason.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from warehouse.schema.events import CONTRACT_COLUMNS

SOURCE_KIND = "agent-events"
RAW_TEXT_LIMIT = 64 * 1024  # quarantined lines keep at most 64 KiB of their raw text


class JsonType:
    """JSON value classes, told apart by a value's first byte."""

    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    OBJECT = "object"
    TIME = "time"  # an RFC 3339 string or a number of Unix seconds


_EXPECTED = {
    JsonType.STRING: "a string",
    JsonType.INTEGER: "an integer",
    JsonType.NUMBER: "a number",
    JsonType.BOOLEAN: "a boolean",
    JsonType.OBJECT: "an object",
    JsonType.TIME: "an RFC 3339 string or Unix seconds",
}


@dataclass(frozen=True)
class Field:
    """One JSON path of the contract, the type it must have, and the column it fills."""

    path: str  # dotted, as the contract writes it: "usage.input_tokens"
    kind: str
    column: str | None = None
    required: bool = False
    non_negative: bool = False

    @property
    def container(self) -> str | None:
        return self.path.split(".", 1)[0] if "." in self.path else None

    @property
    def leaf(self) -> str:
        return self.path.rsplit(".", 1)[-1]


FIELDS: tuple[Field, ...] = (
    Field("ts", JsonType.TIME, required=True),
    Field("run", JsonType.STRING, "run", required=True),
    Field("agent", JsonType.STRING, "agent", required=True),
    Field("event", JsonType.STRING, "event", required=True),
    Field("id", JsonType.STRING, "id"),
    Field("parent", JsonType.STRING, "parent"),
    Field("role", JsonType.STRING, "role"),
    Field("model", JsonType.STRING, "model"),
    Field("usage", JsonType.OBJECT),
    Field("usage.input_tokens", JsonType.INTEGER, "input_tokens", non_negative=True),
    Field("usage.cached_input_tokens", JsonType.INTEGER, "cached_input_tokens", non_negative=True),
    Field("usage.cache_write_tokens", JsonType.INTEGER, "cache_write_tokens", non_negative=True),
    Field("usage.output_tokens", JsonType.INTEGER, "output_tokens", non_negative=True),
    Field("cost_usd", JsonType.NUMBER, "cost_usd", non_negative=True),
    Field("tool", JsonType.STRING, "tool"),
    Field("ok", JsonType.BOOLEAN, "ok"),
    Field("duration_ms", JsonType.NUMBER, "duration_ms", non_negative=True),
    Field("task", JsonType.STRING, "task"),
    Field("commit", JsonType.OBJECT),
    Field("commit.sha", JsonType.STRING, "commit_sha"),
    Field("commit.files", JsonType.INTEGER, "commit_files", non_negative=True),
    Field("commit.insertions", JsonType.INTEGER, "commit_insertions", non_negative=True),
    Field("commit.deletions", JsonType.INTEGER, "commit_deletions", non_negative=True),
    Field("commit.message", JsonType.STRING, "commit_message"),
    Field("push", JsonType.OBJECT),
    Field("push.conflict", JsonType.BOOLEAN, "push_conflict"),
    Field("error", JsonType.OBJECT),
    Field("error.kind", JsonType.STRING, "error_kind"),
    Field("error.message", JsonType.STRING, "error_message"),
    Field("handoff", JsonType.OBJECT),
    Field("handoff.to", JsonType.STRING, "handoff_to"),
    Field("handoff.status", JsonType.STRING, "handoff_status"),
    Field("handoff.notes", JsonType.STRING, "handoff_notes"),
    Field("attrs", JsonType.OBJECT, "attrs"),
)

# The events columns this format fills, in the table's order.
EVENT_COLUMNS: tuple[str, ...] = tuple(column.name for column in CONTRACT_COLUMNS)

TOP_LEVEL = tuple(f.path for f in FIELDS if f.container is None)
CONTAINERS = tuple(f.path for f in FIELDS if f.kind == JsonType.OBJECT and f.column is None)


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
    SELECT line_no, byte_offset, text, coalesce(json_valid(text), false) AS valid
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


# Strict RFC 3339: a date, `T` or space, a time, and a zone (`Z` or an offset).
RFC3339 = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"

_SQL_TYPES = {
    JsonType.STRING: "VARCHAR",
    JsonType.INTEGER: "BIGINT",
    JsonType.NUMBER: "DOUBLE",
    JsonType.BOOLEAN: "BOOLEAN",
    JsonType.TIME: "VARCHAR",
}


def _typed_structure() -> str:
    """json_transform's structure: numbers and booleans read as their SQL types (for
    130,000 events, 50 ms less than reading them as text and casting that), strings and
    ts as text. Only lines that SUSPECT_LINE clears are read so: their values have the
    contract's JSON types, and none is converted from another."""
    parts = []
    for path in TOP_LEVEL:
        field = next(f for f in FIELDS if f.path == path)
        if path in CONTAINERS:
            leaves = ", ".join(
                f'"{f.leaf}": "{_SQL_TYPES[f.kind]}"' for f in FIELDS if f.container == path
            )
            parts.append(f'"{path}": {{{leaves}}}')
        elif field.kind == JsonType.OBJECT:
            parts.append(f'"{path}": "JSON"')
        else:
            parts.append(f'"{path}": "{_SQL_TYPES[field.kind]}"')
    return "{" + ", ".join(parts) + "}"


def _keys(kind: str) -> str:
    return "|".join(sorted({f.leaf for f in FIELDS if f.kind == kind}))


# The fastest path reads typed fields. DuckDB converts mistyped values silently there
# (5 -> '5', 1.5 -> 2, "1.5" -> 1.5, a scalar for an object -> NULLs, an integer beyond
# BIGINT -> NULL), so every line whose text could hold a mistyped value goes to the exact
# path instead: a key of the contract followed by a value of the wrong JSON type, or an
# integer of 19 digits or more (the exact path's limit). DuckDB also reads nan, -nan,
# Infinity and -Infinity (in any case, as Python's json.dumps writes some of them), which
# no contract type allows: a value starting with n that is not null, or a minus that no
# digit follows, is suspect too (and 1E400, a number that reads as infinity, is rejected
# by the fast path's checks). A key that only looks like one (inside attrs, or inside a
# string) costs a detour through the exact path, never a wrong row.
TYPED_STRUCTURE = _typed_structure()
_NOT_NULL = "n[^u]"
_NOT_NUMBER = "-[^0-9]"
SUSPECT_LINE = (
    rf'"(?:{_keys(JsonType.STRING)})"\s*:\s*(?:[^"\sn]|{_NOT_NULL})'
    rf'|"(?:{_keys(JsonType.INTEGER)})"\s*:\s*'
    rf"(?:[^-0-9\sn]|{_NOT_NULL}|{_NOT_NUMBER}|-?[0-9]+[.eE]|-?[0-9]{{19}})"
    rf'|"(?:{_keys(JsonType.NUMBER)})"\s*:\s*(?:[^-0-9\sn]|{_NOT_NULL}|{_NOT_NUMBER})'
    rf'|"(?:{_keys(JsonType.BOOLEAN)})"\s*:\s*(?:[^tfn\s]|{_NOT_NULL})'
    rf'|"(?:{_keys(JsonType.OBJECT)})"\s*:\s*(?:[^{{\sn]|{_NOT_NULL})'
    rf'|"ts"\s*:\s*(?:"[-+0-9.eE\s]*"|[^"\-0-9\sn]|{_NOT_NULL}|{_NOT_NUMBER})'
)


def _typed_value(field: Field) -> str:
    return f'"{field.container}"."{field.leaf}"' if field.container else f'"{field.path}"'


TYPED_SELECT = ", ".join(
    [
        'CAST("ts" AS VARCHAR) AS ts_raw',
        *(f"{_typed_value(f)} AS {f.column}" for f in FIELDS if f.column and f.column != "attrs"),
        'CAST("attrs" AS VARCHAR) AS attrs_raw',
    ]
)


def _typed_rejected() -> str:
    """Whether the fast path rejects a line, which then goes through the exact path for
    its reason: a key written with escapes, or a check of the exact path's that typed
    values can still fail (a ts that is missing, or neither an RFC 3339 time nor seconds,
    reads as a NULL parsed_ts)."""
    checks = [
        "escaped_key",
        "parsed_ts IS NULL",
        "parsed_ts < TIMESTAMPTZ '1970-01-01 00:00:00+00' "
        "OR parsed_ts >= TIMESTAMPTZ '2200-01-01 00:00:00+00'",
    ]
    for field in FIELDS:
        if field.required and field.column:
            checks.append(f"{field.column} IS NULL")
        if field.non_negative and field.column:
            checks.append(f"{field.column} < 0")
        if field.kind == JsonType.NUMBER:  # 1E400 reads as infinity
            checks.append(f"NOT isfinite({field.column})")
    checks += [
        "attrs_raw <> 'null' AND NOT starts_with(attrs_raw, '{')",
        "run = '' OR length(run) > 200",
        "agent = '' OR length(agent) > 200",
        "event = ''",
    ]
    return "CASE " + " ".join(f"WHEN {check} THEN true" for check in checks) + " ELSE false END"


# A key spelled with \u escapes ("\u0069d" is "id" to json_transform) escapes
# SUSPECT_LINE, which reads keys as written: such a line is rejected here and so takes the
# exact path. Only lines holding a \u escape are searched (DuckDB's contains finds them),
# which spares the 30 ms per 130,000 events that one more alternative in SUSPECT_LINE
# costs.
ESCAPED_KEY = r'\\u[0-9a-fA-F]{4}(?:[^"\\]|\\.)*"\s*:'


# `chunk_lines(line_no, text, suspect)` -> one row per line that is not suspect: line_no
# and the event columns, ts NULL when the line is rejected (a line that is not an object
# or not UTF-8 reads as all NULL). The pipeline sends every rejected line through the
# exact path, which gives its reason. A line that is not JSON at all stops the statement
# with duckdb.InvalidInputException: TYPED_ROWS_ANY_SQL reads it as all NULL instead
# (json_transform under try(), which costs 6-10 ms per 130,000 events when no line fails).
def _typed_rows(transform: str) -> str:
    return f"""
WITH fields AS (
    SELECT line_no,
           CASE WHEN contains(text, '\\u') THEN regexp_matches(text, '{ESCAPED_KEY}')
                ELSE false END AS escaped_key,
           unnest({transform})
    FROM chunk_lines
    WHERE NOT suspect
),
typed AS (
    SELECT line_no, escaped_key, {TYPED_SELECT} FROM fields
),
shaped AS (
    SELECT *, regexp_matches(ts_raw, '{RFC3339}') AS ts_is_rfc3339 FROM typed
),
timed AS (
    SELECT *,
           CASE WHEN ts_is_rfc3339 THEN try_cast(ts_raw AS TIMESTAMPTZ)
                ELSE try(to_timestamp(try_cast(ts_raw AS DOUBLE))) END AS parsed_ts
    FROM shaped
),
checked AS (
    SELECT *, {_typed_rejected()} AS rejected FROM timed
)
SELECT line_no, {", ".join(c for c in EVENT_COLUMNS if c not in ("ts", "attrs"))},
       CASE WHEN starts_with(attrs_raw, '{{') THEN attrs_raw END AS attrs,
       CASE WHEN NOT rejected THEN parsed_ts END AS ts
FROM checked
"""


_TRANSFORM = f"json_transform(text, '{TYPED_STRUCTURE}')"
TYPED_ROWS_SQL = _typed_rows(_TRANSFORM)
TYPED_ROWS_ANY_SQL = _typed_rows(f"try({_TRANSFORM})")


def split_lines(data: bytes | memoryview, *, first_line_no: int, base_offset: int) -> pa.Table:
    """Complete lines of `data` (which must end with a newline) as an Arrow table.

    Columns: `line_no` (1-based in the file), `byte_offset` (of the line's first byte in
    the file), `text` (the line, newline included; zero-copy over `data` when the chunk is
    UTF-8, as it nearly always is) and `raw_base64` (only for a line that is not UTF-8).
    """
    if len(data) and data[-1] != _NEWLINE:
        raise ValueError("split_lines needs whole lines: data must end with a newline")
    newlines = _newlines(data)
    offsets = np.empty(len(newlines) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = newlines + 1
    count = len(newlines)
    text = pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        text.validate(full=True)  # checks UTF-8 in place, where bytes.decode would copy
    except pa.ArrowInvalid:
        text, raw_base64 = _split_mixed(data, offsets)
    else:
        raw_base64 = pa.nulls(count, pa.large_string())
    return pa.table(
        {
            "line_no": pa.array(np.arange(first_line_no, first_line_no + count)),
            "byte_offset": pa.array(offsets[:-1] + base_offset),
            "text": text,
            "raw_base64": raw_base64,
        }
    )


_NEWLINE_BLOCK = 1 << 20
_NEWLINE = ord("\n")


def _newlines(data: bytes | memoryview) -> np.ndarray:
    """Offsets of the newlines in `data`, a block at a time: each block's comparison stays
    in cache (17 ms for 32 MiB, against 24-33 ms in one pass)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    return np.concatenate(
        [
            np.flatnonzero(raw[start : start + _NEWLINE_BLOCK] == 10) + start
            for start in range(0, len(raw), _NEWLINE_BLOCK)
        ]
        or [np.empty(0, dtype=np.int64)]
    )


def _split_mixed(data: bytes | memoryview, offsets: np.ndarray) -> tuple[pa.Array, pa.Array]:
    """Line by line, for the rare chunk holding bytes that are not UTF-8."""
    texts: list[str | None] = []
    raws: list[str | None] = []
    for start, end in pairwise(offsets):
        line = bytes(data[start:end])
        try:
            texts.append(line.decode("utf-8"))
            raws.append(None)
        except UnicodeDecodeError:
            texts.append(None)
            raws.append(base64.b64encode(line[:RAW_TEXT_LIMIT]).decode("ascii"))
    return pa.array(texts, pa.large_string()), pa.array(raws, pa.large_string())


def nonblank_lines(lines: pa.Table) -> pa.Table:
    """The lines that are not only whitespace. Only short lines are looked at: a longer
    line of whitespace alone is not a real case, and the fast path reads it as rejected,
    so the exact path drops it as blank."""
    text = lines.column("text")  # not combined: that copies the chunk (27 ms for 32 MiB)
    lengths = pc.fill_null(pc.binary_length(text), 0).to_numpy()
    short = np.flatnonzero(lengths < 64)
    if len(short) == 0:
        return lines
    blank = pc.fill_null(pc.match_substring_regex(text.take(short), r"^[ \t\r\n]*$"), False)
    drop = np.zeros(lines.num_rows, dtype=bool)
    drop[short[np.asarray(blank)]] = True
    return lines.filter(pa.array(~drop)) if drop.any() else lines


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

    for name in ("run", "agent"):
        length = pc.fill_null(pc.utf8_length(out[name]), 1).to_numpy(zero_copy_only=False)
        checks.fail((length == 0) | (length > 200), f"{name} must be 1-200 characters")
    event_length = pc.fill_null(pc.utf8_length(out["event"]), 1).to_numpy(zero_copy_only=False)
    checks.fail(event_length == 0, "event must not be empty")
    out["reason"] = checks.reasons()
    return pa.table(out)


# `validated` (the output of validate_fields) -> the same rows with `ts` parsed and the
# last checks that need it. Unix seconds may be fractional.
FINALIZE_SQL = """
WITH timed AS (
    SELECT *,
           CASE WHEN ts_text IS NOT NULL THEN try_cast(ts_text AS TIMESTAMPTZ)
                WHEN ts_seconds IS NOT NULL AND isfinite(ts_seconds)
                    THEN try(to_timestamp(ts_seconds)) END AS parsed_ts
    FROM validated
),
checked AS (
    SELECT *,
           coalesce(reason,
               CASE WHEN parsed_ts IS NULL THEN 'ts is not a valid time'
                    WHEN parsed_ts < TIMESTAMPTZ '1970-01-01 00:00:00+00'
                      OR parsed_ts >= TIMESTAMPTZ '2200-01-01 00:00:00+00'
                        THEN 'ts is outside 1970-2199 (milliseconds given as seconds?)'
               END) AS final_reason
    FROM timed
)
SELECT * EXCLUDE (reason, ts_text, ts_seconds, parsed_ts, final_reason),
       CASE WHEN final_reason IS NULL THEN parsed_ts END AS ts,
       final_reason AS reason
FROM checked
"""
