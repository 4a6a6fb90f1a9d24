"""The events explorer's current filter as a file: CSV or JSONL, streamed as the events
are read (analytics/runs/events.export_batches: time slices as Arrow), so memory stays
at a slice and a million events leave as fast as Arrow writes them, never a Python object
per cell. The CSV's text cells get lib.downloads' formula rule (the rule every table's
CSV follows, dashboard/export.py), column by column.

No SQL here; the response headers are lib.downloads.attachment's.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.csv as pa_csv
from django.http import StreamingHttpResponse

from analytics.runs.events import export_batches
from analytics.runs.events_filters import EventFilter, ExportFormat
from analytics.runs.status import SYSTEM_VIEW
from lib.access import Seen
from lib.downloads import attachment, escape_formulas

CONTENT_TYPES = {
    ExportFormat.CSV: "text/csv; charset=utf-8",
    ExportFormat.JSONL: "application/x-ndjson",
}
# Lines end as every other CSV of ours (dashboard/export.py): CRLF.
_HEADER = pa_csv.WriteOptions(eol="\r\n", batch_size=8192, quoting_header="none")
_ROWS = pa_csv.WriteOptions(include_header=False, eol="\r\n", batch_size=8192)


def _escaped(table: pa.Table) -> pa.Table:
    for index, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            table = table.set_column(index, field.name, escape_formulas(table.column(index)))
    return table


def csv_chunks(tables: Iterator[pa.Table]) -> Iterator[bytes]:
    """Each table's rows as CSV, the first's with a header line of its columns."""
    options = _HEADER
    for table in tables:
        sink = io.BytesIO()
        pa_csv.write_csv(_escaped(table), sink, options)
        options = _ROWS
        yield sink.getvalue()


def jsonl_chunks(tables: Iterator[pa.Table]) -> Iterator[bytes]:
    """Each table's `line` column, one JSON object per line."""
    for table in tables:
        lines = table.column("line").to_pylist()
        if lines:
            yield ("\n".join(lines) + "\n").encode()


def export_response(
    run: str, flt: EventFilter, fmt: ExportFormat, seen: Seen = SYSTEM_VIEW
) -> StreamingHttpResponse:
    """The filter's events as an attachment named after the run (NotFoundError first for
    a run not seen)."""
    jsonl = fmt is ExportFormat.JSONL
    tables = export_batches(run, flt, seen, jsonl=jsonl)
    chunks = jsonl_chunks(tables) if jsonl else csv_chunks(tables)
    return attachment(chunks, CONTENT_TYPES[fmt], f"{run}-events.{fmt.value}")
