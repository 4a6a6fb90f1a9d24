"""The agent-event parser's fast path: one DuckDB statement (TYPED_ROWS_SQL) that reads
each line's fields typed with json_transform (TYPED_STRUCTURE), checks and converts them.

It never gives a reason: a line whose text could hide a mistyped value (SUSPECT_LINE)
is not read here, and a line that fails a check comes out with a NULL ts; the pipeline
sends both through the exact path (agent_events_exact.py), which words the reason.
Pure: SQL text and patterns, built from the fields (agent_events_fields.py).
"""

from __future__ import annotations

from ingest.parsers.agent_events_fields import (
    CONTAINERS,
    CONTROL_CHARACTER,
    EVENT_COLUMNS,
    FIELDS,
    MAYBE_TRAILING_COMMA,
    NAMES,
    TOP_LEVEL,
    TRAILING_COMMA,
    Field,
    JsonType,
)
from ingest.parsers.timestamps import EVENT_YEARS, RFC3339
from lib.bounds import NAME_LENGTH

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
    its reason: a key written with escapes, a trailing comma (which DuckDB's reader
    accepts), or a check of the exact path's that typed values can still fail (a ts that
    is missing, or neither an RFC 3339 time nor seconds, reads as a NULL parsed_ts).
    DuckDB reads a `T` and a `Z` in upper case only: ts is upper-cased first."""
    checks = [
        "escaped_key",
        "trailing_comma",
        "parsed_ts IS NULL",
        EVENT_YEARS.outside_sql("parsed_ts"),
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
        *(
            f"{name} = '' OR length({name}) > {NAME_LENGTH} "
            f"OR regexp_matches({name}, '{CONTROL_CHARACTER}')"
            for name in NAMES
        ),
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
           CASE WHEN regexp_matches(text, '{MAYBE_TRAILING_COMMA}')
                THEN regexp_matches(text, '{TRAILING_COMMA}') ELSE false END AS trailing_comma,
           unnest({transform})
    FROM chunk_lines
    WHERE NOT suspect
),
typed AS (
    SELECT line_no, escaped_key, trailing_comma, {TYPED_SELECT} FROM fields
),
shaped AS (
    SELECT *, regexp_matches(ts_raw, '{RFC3339}') AS ts_is_rfc3339 FROM typed
),
timed AS (
    SELECT *,
           CASE WHEN ts_is_rfc3339 THEN try_cast(upper(ts_raw) AS TIMESTAMPTZ)
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
