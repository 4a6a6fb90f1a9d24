"""A file a response streams to its reader, for the pages (dashboard/export.py) and the
API routers alike: the attachment's headers, and the CSV rule that a cell a spreadsheet
would run as a formula (text starting with =, +, -, @, a tab or a carriage return) is
written with a leading apostrophe (OWASP's CSV-injection advice), stated once here for a
cell (dashboard/export.py) and for a whole Arrow column (escape_formulas).

Writes nothing itself: the caller gives the chunks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from django.http import StreamingHttpResponse

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_FIRSTS = pa.array(FORMULA_START)


def escape_formulas(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A string column with an apostrophe before each cell that starts like a formula."""
    if column.null_count == len(column):
        return column
    risky = pc.is_in(pc.utf8_slice_codeunits(column, 0, 1), value_set=_FORMULA_FIRSTS)
    if not pc.any(risky).as_py():  # most columns: left as they are, no copy
        return column
    return pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)


def attachment(chunks: Iterator[bytes], content_type: str, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunks, content_type=content_type)
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in filename)
    response["Content-Disposition"] = f'attachment; filename="{safe}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
