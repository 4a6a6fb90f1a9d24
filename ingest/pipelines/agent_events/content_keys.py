"""Content keys for events POSTed without an `id`, so an HTTP ingest is idempotent as a
file's is (a file has its read position; a body has nothing but its lines).

Owns the key: an event line that is a JSON object without an `id` member gets
`"id": "line:<md5 of the line's minified JSON>"`, so a client retrying a request, or
sending the same lines split into other requests, stores each once (run + id, as for any
id: dedup.py). Identical lines of one run are therefore one event. It must not parse or
check events: the line is still judged whole by the parser afterwards.
"""

from __future__ import annotations

import pyarrow as pa

import warehouse

CONTENT_KEY_PREFIX = "line:"

# `body_lines` (parser.split_lines' columns) -> the same, with the key written at the start
# of each object that has no `id`. json(text) is the line minified, so whitespace does not
# change the key; a line that is not an object, or not UTF-8, is left as it is.
KEYED_LINES_SQL = f"""
SELECT line_no, byte_offset,
       CASE WHEN raw_base64 IS NULL AND json_valid(text) AND json_type(text) = 'OBJECT'
                 AND NOT json_exists(text, '$.id')
            THEN '{{"id":"{CONTENT_KEY_PREFIX}' || md5(json(text)) || '"'
                 || CASE WHEN len(json_keys(text)) > 0 THEN ',' ELSE '' END
                 || substr(ltrim(text, E' \\t\\r\\n'), 2)
            ELSE text END AS text,
       raw_base64
FROM body_lines
"""


def with_content_keys(lines: pa.Table) -> pa.Table:
    """Lines (parser.split_lines) with a content key in each object lacking an `id`."""
    if lines.num_rows == 0:
        return lines
    cur = warehouse.cursor()
    cur.register("body_lines", lines)
    try:
        keyed = cur.execute(KEYED_LINES_SQL).to_arrow_table()
    finally:
        cur.unregister("body_lines")
    return keyed.cast(lines.schema)
