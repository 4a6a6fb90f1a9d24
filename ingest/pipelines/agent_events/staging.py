"""Staging a chunk: its whole lines parsed, checked and written, stamped as events stores
them, to a Parquet file the load can add to the lake as it is (StagedChunk).

Owns the fast path (one statement from the typed rows to the file), the exact path for
suspect and rejected lines, the first line of each run + id within the chunk, and the
quarantine rows of rejected lines. It runs in the worker threads (workers.py) and must
not write to the lake: whether the chunk's events are stored already, and storing them,
is store.py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import warehouse
from ingest.parsers import agent_events as parser
from ingest.pipelines import run_rollups
from ingest.pipelines.agent_events import dedup
from ingest.pipelines.agent_events.dedup import Load, repeats, sorted_hashes


@dataclass
class StagedChunk:
    """A chunk's lines parsed and ready to load: its new-looking events (valid, and the
    first line of each run + id) stamped as events stores them, in a Parquet file
    (`file`) or, when they are few enough to be inlined in the catalog, in memory
    (`rows`). The load keeps only their key hashes, runs and what they add to the run
    totals in memory; their ids, when it needs them, it reads from the file (store.py)."""

    keys: pa.Table | None  # the candidates' run, id, source_line and key_hash (KEYS_SQL)
    hashes: np.ndarray  # the key hashes of those with an id, sorted (sorted_hashes)
    runs: list[str]  # the candidates' runs
    count: int  # the candidates
    rejected: pa.Table  # line_no, byte_offset, reason, raw_text
    lines: int  # lines consumed, blank ones included
    valid: int  # valid events, repeated ids included
    size: int  # bytes parsed (the chunk's own are not kept: they would hold memory)
    file: Path | None = None
    rows: pa.Table | None = None
    # What the staged file's rows add to the run totals (run_rollups.reduce_rows), worked
    # out in the worker: the load only merges it when it stores every row.
    reduced: run_rollups.Reduced | None = None
    added: bool = False  # the file was added to events as it is (load_chunk)

    def discard(self) -> None:
        """Delete the staged file: once its rows are copied into the lake, or when they
        will not be loaded."""
        if self.file is not None:
            self.file.unlink(missing_ok=True)

    def release(self) -> None:
        """Drop the chunk's tables once it is loaded: until its transaction ends, only
        its file's fate is kept."""
        self.keys = self.rejected = _NO_ROWS
        self.hashes = _NO_HASHES
        self.runs = []
        self.rows = self.reduced = None


_NO_ROWS = pa.table({})
_NO_HASHES = np.empty(0, dtype=np.uint64)
_NO_REJECTED = pa.schema(
    [
        ("line_no", pa.int64()),
        ("byte_offset", pa.int64()),
        ("reason", pa.string()),
        ("raw_text", pa.string()),
    ]
)


# The fast path, from the parsed lines to a staged file in one statement: DuckDB's rows
# never pass through Arrow (328 ms a chunk against 391 ms, bench/agent_events.md), and the
# chunk is not copied to a temporary file for read_json (no faster). Rejected lines are
# written too, with a NULL ts, and taken out again if there are any. A chunk holding a
# line that is not JSON is staged again by _STAGE_ANY_SQL (parser.TYPED_ROWS_ANY_SQL).
# source_kind, the same in every row, is an ENUM of one value, which the Parquet writer
# stores without looking each row up in its dictionary (read back, it is a VARCHAR).
def _stage_sql(typed_rows: str) -> str:
    return f"""
SELECT {", ".join(parser.EVENT_COLUMNS)}, line_no AS source_line,
       '{parser.SOURCE_KIND}'::ENUM('{parser.SOURCE_KIND}') AS source_kind, ?::VARCHAR AS source,
       ?::TIMESTAMPTZ AS ingested_at
FROM ({typed_rows})
"""


_STAGE_SQL = _stage_sql(parser.TYPED_ROWS_SQL)
_STAGE_ANY_SQL = _stage_sql(parser.TYPED_ROWS_ANY_SQL)
# What the load needs of a staged file besides its totals, in the same scan (reduce_sql):
# its key hashes, how many rows it holds, and how many the fast path rejected (NULL ts:
# their reasons come from the exact path).
_STAGED_EXTRA = """,
       list({key_hash}) FILTER (WHERE id IS NOT NULL) AS key_hashes,
       count(*) AS candidates,
       count(*) FILTER (WHERE ts IS NULL) AS rejected"""
# The ids of a staged file's rows (StagedChunk.keys), read when the load needs them.
KEYS_SQL = """
SELECT run, id, source_line, CASE WHEN id IS NOT NULL THEN {key_hash} END AS key_hash
FROM {rows}
"""


def discard_after(chunks: Iterable[StagedChunk], *, committing: bool) -> None:
    """Delete the staged files a transaction leaves: all of them when it rolled back
    before its COMMIT, else those it did not add to events (which the lake now owns; if
    the COMMIT itself failed, run_maintenance deletes them as orphans)."""
    for chunk in chunks:
        if not (committing and chunk.added):
            chunk.discard()


def stage_lines(lines: pa.Table, load: Load, folder: Path, *, size: int) -> StagedChunk:
    """Parse and check whole lines (parser.split_lines, numbered as in the file) and stage
    their new-looking events in a Parquet file in `folder`, stamped for `load`.

    The fast path writes the file straight from the typed rows. When any line needs the
    exact path (a suspect line, or one the fast path rejected), an id repeats within the
    chunk, or the rows are few enough to be inlined, they are read back, completed and
    staged again (_restaged)."""
    cur = warehouse.cursor()
    nonblank = parser.nonblank_lines(lines)
    suspect = pc.fill_null(
        pc.match_substring_regex(nonblank.column("text"), parser.SUSPECT_LINE), False
    )
    file = warehouse.data_files.staged_file(folder)
    cur.register(
        "chunk_lines", nonblank.select(["line_no", "text"]).append_column("suspect", suspect)
    )
    try:
        stamped = [load.source, load.stamp]
        try:
            warehouse.data_files.copy_to_parquet(cur, _STAGE_SQL, file, stamped)
        except (
            warehouse.InvalidInput,
            UnicodeDecodeError,
        ):  # a line that is not JSON (the file is rewritten); DuckDB may cut its message mid-character
            warehouse.data_files.copy_to_parquet(cur, _STAGE_ANY_SQL, file, stamped)
        reduced = cur.execute(
            run_rollups.reduce_sql(
                "read_parquet(?)", _STAGED_EXTRA.format(key_hash=dedup.KEY_HASH_SQL)
            ),
            [str(file)],
        ).to_arrow_table()
        hashes = sorted_hashes(pc.list_flatten(reduced.column("key_hashes")))
        count = pc.sum(reduced.column("candidates")).as_py() or 0
        if (
            not pc.any(suspect).as_py()
            and not _refused_runs(load, reduced.column("run"))
            and not pc.sum(reduced.column("rejected")).as_py()
            and not repeats(hashes)
            and count > warehouse.lake.INLINED_ROWS_UP_TO
        ):
            return StagedChunk(
                None,
                hashes,
                pc.unique(reduced.column("run")).to_pylist(),
                count,
                _NO_REJECTED.empty_table(),
                lines.num_rows,
                count,
                size,
                file=file,
                reduced=run_rollups.Reduced.of(
                    reduced.drop_columns(["key_hashes", "candidates", "rejected"])
                ),
            )
    except BaseException:
        file.unlink(missing_ok=True)
        raise
    finally:
        cur.unregister("chunk_lines")
    return _restaged(
        cur, lines, file, nonblank.column("line_no").filter(suspect), load, folder, size
    )


def _restaged(
    cur: warehouse.Cursor,
    lines: pa.Table,
    file: Path,
    suspect: pa.ChunkedArray,
    load: Load,
    folder: Path,
    size: int,
) -> StagedChunk:
    """A chunk the fast path staged in `file` whose lines need the exact path (the
    `suspect` ones, and those it rejected), whose ids repeat, or whose rows are few: its
    valid rows, those of the exact path added, and only the first line of each run + id
    kept, staged again (the first file is deleted)."""
    columns = ", ".join(parser.EVENT_COLUMNS)
    try:
        staged = cur.execute(
            f"SELECT {columns}, source_line AS line_no FROM read_parquet(?)", [str(file)]
        ).to_arrow_table()
    finally:
        file.unlink(missing_ok=True)
    fast_rejected = pc.is_null(staged.column("ts"))
    typed = staged.filter(pc.invert(fast_rejected))
    recheck = pa.chunked_array(
        [*suspect.chunks, *staged.column("line_no").filter(fast_rejected).chunks], pa.int64()
    )
    rejected = _NO_REJECTED.empty_table()
    valid = typed
    if len(recheck):
        exact = _exact_path(cur, lines.filter(pc.is_in(lines.column("line_no"), value_set=recheck)))
        reasons = exact.column("reason")
        rejected = _rejected(exact.filter(pc.is_valid(reasons)), lines)
        checked = exact.filter(pc.is_null(reasons)).select(typed.column_names)
        valid = pa.concat_tables([typed, checked.cast(typed.schema)]).sort_by("line_no")
    refused = _refused_runs(load, valid.column("run"))
    if refused:
        valid, not_theirs = _without_runs(valid, refused, lines)
        rejected = pa.concat_tables([rejected, not_theirs]).sort_by("line_no")
    return _stage_rows(
        cur,
        _candidates(valid),
        (rejected, lines.num_rows, valid.num_rows, size),
        load,
        folder,
    )


def _refused_runs(load: Load, runs: pa.ChunkedArray) -> list[str]:
    """The runs among `runs` the load's sender may not write (none when it may write all)."""
    if load.run_allowed is None:
        return []
    return [r for r in pc.unique(runs).to_pylist() if r is not None and not load.run_allowed(r)]


def _without_runs(
    valid: pa.Table, refused: list[str], lines: pa.Table
) -> tuple[pa.Table, pa.Table]:
    """Split off the rows of `refused` runs as quarantine rows, each with its reason."""
    mine = pc.invert(pc.is_in(valid.column("run"), value_set=pa.array(refused, pa.string())))
    theirs = valid.filter(pc.invert(mine))
    index = pc.subtract(theirs.column("line_no"), lines.column("line_no")[0])
    reasons = [
        f"run {run} is not one of your teams' runs" for run in theirs.column("run").to_pylist()
    ]
    bad = pa.table(
        {
            "line_no": theirs.column("line_no").cast(pa.int64()),
            "byte_offset": lines.column("byte_offset").take(index).cast(pa.int64()),
            "reason": pa.array(reasons, pa.string()),
        }
    )
    return valid.filter(mine), _rejected(bad, lines)


def _candidates(valid: pa.Table) -> pa.Table:
    """Of valid rows sharing a run + id, the first line's (the rows are filtered only when
    an id repeats)."""
    with_id = valid.select(["run", "id", "line_no"]).filter(pc.is_valid(valid.column("id")))
    if with_id.num_rows == 0:
        return valid
    firsts = with_id.group_by(["run", "id"]).aggregate([("line_no", "min")])
    if firsts.num_rows == with_id.num_rows:
        return valid
    keep = pc.or_(
        pc.is_null(valid.column("id")),
        pc.is_in(valid.column("line_no"), value_set=firsts.column("line_no_min")),
    )
    return valid.filter(keep)


def _run_on(cur: warehouse.Cursor, name: str, table: pa.Table, sql: str) -> pa.Table:
    cur.register(name, table)
    try:
        return cur.execute(sql).to_arrow_table()
    finally:
        cur.unregister(name)


def _exact_path(cur: warehouse.Cursor, lines: pa.Table) -> pa.Table:
    """Every field's JSON type checked, line by line: slower, and exact for any input."""
    fields = _run_on(cur, "raw_lines", lines, parser.LINES_TO_FIELDS_SQL)
    return _run_on(cur, "validated", parser.validate_fields(fields), parser.FINALIZE_SQL)


def _rejected(bad: pa.Table, lines: pa.Table) -> pa.Table:
    """The quarantine rows of rejected lines (`bad`: line_no, byte_offset, reason), with
    their raw text from `lines`."""
    if bad.num_rows == 0:
        return _NO_REJECTED.empty_table()
    index = pc.subtract(bad.column("line_no"), lines.column("line_no")[0])
    text = lines.column("text").take(index).cast(pa.string())
    raw_base64 = lines.column("raw_base64").take(index).cast(pa.string())
    cut = pc.utf8_slice_codeunits(pc.utf8_rtrim(text, characters="\r\n"), 0, parser.RAW_TEXT_LIMIT)
    raw_text = pc.coalesce(cut, pc.binary_join_element_wise("base64:", raw_base64, ""))
    return pa.table(
        {
            "line_no": bad.column("line_no"),
            "byte_offset": bad.column("byte_offset"),
            "reason": bad.column("reason"),
            "raw_text": raw_text,
        },
        schema=_NO_REJECTED,
    )


def _stage_rows(
    cur: warehouse.Cursor,
    candidates: pa.Table,
    chunk: tuple[pa.Table, int, int, int],
    load: Load,
    folder: Path,
) -> StagedChunk:
    """Stamp a chunk's candidates (EVENT_COLUMNS and line_no) and write them to a Parquet
    file in `folder` (kept in memory instead when the catalog would inline them). `chunk`
    is the rest of the StagedChunk: rejected, lines, valid and size."""
    rows = _stamped(candidates, load)
    cur.register("staged_rows", rows)
    try:
        keys = cur.execute(
            KEYS_SQL.format(key_hash=dedup.KEY_HASH_SQL, rows="staged_rows")
        ).to_arrow_table()
        staged = StagedChunk(
            keys,
            sorted_hashes(keys.column("key_hash")),
            pc.unique(rows.column("run")).to_pylist(),
            rows.num_rows,
            *chunk,
        )
        if rows.num_rows <= warehouse.lake.INLINED_ROWS_UP_TO:
            staged.rows = rows
        else:
            staged.reduced = run_rollups.reduce_rows(cur, "staged_rows")
            staged.file = warehouse.data_files.staged_file(folder)
            warehouse.data_files.copy_to_parquet(cur, "SELECT * FROM staged_rows", staged.file)
    finally:
        cur.unregister("staged_rows")
    return staged


def _stamped(rows: pa.Table, load: Load) -> pa.Table:
    """The rows as events stores them: line_no as source_line, with the source, its kind
    and the load's stamp (one-value dictionaries: no copy per row)."""
    n = rows.num_rows
    zeros = pa.array(np.zeros(n, dtype=np.int32))

    def constant(value: object, kind: pa.DataType) -> pa.Array:
        return pa.DictionaryArray.from_arrays(zeros, pa.array([value], kind))

    return (
        rows.rename_columns([*parser.EVENT_COLUMNS, "source_line"])
        .append_column("source_kind", constant(parser.SOURCE_KIND, pa.string()))
        .append_column("source", constant(load.source, pa.string()))
        .append_column("ingested_at", constant(load.stamp, pa.timestamp("us", tz="UTC")))
    )
