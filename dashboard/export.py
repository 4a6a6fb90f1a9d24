"""Tables as files: any page's table as CSV, the events explorer's filter as JSONL, both
streamed (StreamingHttpResponse over an iterator of rows, so memory stays flat however
many rows) and both named by `filename`.

A CSV cell that a spreadsheet would run as a formula (text starting with =, +, -, @, a
tab or a carriage return) is written with a leading apostrophe (OWASP's CSV-injection
advice); numbers are written as they are, datetimes as ISO 8601, None as an empty cell.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from typing import Any

from django.http import StreamingHttpResponse

from lib.downloads import FORMULA_START as _FORMULA_START
from lib.downloads import attachment as _attachment

_BATCH = 1000  # rows per chunk written to the socket


def csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, int | float):
        return value
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_chunks(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[bytes]:
    """The CSV text of a header and its rows, in chunks of _BATCH rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    count = 0
    for row in rows:
        writer.writerow([csv_cell(v) for v in row])
        count += 1
        if count % _BATCH == 0:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode()


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def jsonl_chunks(records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """One JSON object per line, in chunks of _BATCH records."""
    lines: list[str] = []
    for record in records:
        lines.append(json.dumps(record, default=_json_default, separators=(",", ":")))
        if len(lines) == _BATCH:
            yield ("\n".join(lines) + "\n").encode()
            lines = []
    if lines:
        yield ("\n".join(lines) + "\n").encode()


def csv_response(
    filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]
) -> StreamingHttpResponse:
    return _attachment(csv_chunks(header, rows), "text/csv; charset=utf-8", filename)


def jsonl_response(filename: str, records: Iterable[dict[str, Any]]) -> StreamingHttpResponse:
    return _attachment(jsonl_chunks(records), "application/x-ndjson", filename)
