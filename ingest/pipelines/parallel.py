"""Parallel texts for the token tax: read -> parse -> count -> load, one transaction a batch.

Owns `manage.py ingest parallel PATH...` (`run_parallel`). Each text is counted under
every configured encoding at load time; an (id, language) already stored is a duplicate
and changes nothing. A file's read position is committed with its rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

import pyarrow as pa

import warehouse
from analytics.tokens.counting import count_tokens
from analytics.tokens.vocabularies import configured_encodings
from ingest.parsers.json_lines import RawLine
from ingest.parsers.parallel import SOURCE_KIND, ParallelText, ParsedTexts, parse_lines
from ingest.pipelines.line_files import ingest_files
from ingest.pipelines.loading import IngestSummary, Position, advance_position, insert_quarantine
from ingest.pipelines.requests import rejected_table

TEXT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("language", pa.string()),
        ("text", pa.string()),
        ("chars", pa.int64()),
        ("bytes", pa.int64()),
        ("source", pa.string()),
        ("source_line", pa.int64()),
    ]
)
TOKEN_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("language", pa.string()),
        ("encoding", pa.string()),
        ("tokens", pa.int64()),
    ]
)

# Counts first, while parallel_texts does not yet hold this batch (as for requests).
INSERT_TOKENS_SQL = """
INSERT INTO parallel_tokens BY NAME
SELECT t.* FROM batch_parallel_tokens AS t
WHERE NOT EXISTS (
    SELECT 1 FROM parallel_texts AS p WHERE p.id = t.id AND p.language = t.language
)
"""
INSERT_TEXTS_SQL = """
INSERT INTO parallel_texts BY NAME
SELECT b.*, now() AS ingested_at FROM batch_parallel_texts AS b
WHERE NOT EXISTS (
    SELECT 1 FROM parallel_texts AS p WHERE p.id = b.id AND p.language = b.language
)
"""


def prepare_texts(
    texts: Sequence[ParallelText], source: str, encodings: Sequence[str]
) -> tuple[pa.Table, pa.Table]:
    """Arrow tables of the texts (first of a repeated (id, language) wins) and counts."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for text in texts:
        if (text.id, text.language) not in seen:
            seen.add((text.id, text.language))
            unique.append(text)
    table = pa.table(
        {
            "id": [t.id for t in unique],
            "language": [t.language for t in unique],
            "text": [t.text for t in unique],
            "chars": [len(t.text) for t in unique],
            "bytes": [len(t.text.encode("utf-8", "surrogatepass")) for t in unique],
            "source": [source] * len(unique),
            "source_line": [t.line_no for t in unique],
        },
        schema=TEXT_SCHEMA,
    )
    strings = [t.text for t in unique]
    tokens = pa.concat_tables(
        [
            pa.table(
                {
                    "id": table.column("id"),
                    "language": table.column("language"),
                    "encoding": pa.array([name] * len(unique), pa.string()),
                    "tokens": pa.array(count_tokens(strings, name), pa.int64()),
                },
                schema=TOKEN_SCHEMA,
            )
            for name in encodings
        ]
    )
    return table, tokens


def load_texts(
    parsed: ParsedTexts,
    source: str,
    encodings: Sequence[str],
    positions: tuple[Position | None, Position],
) -> IngestSummary:
    """Load one parsed batch and the file position it reaches in one transaction."""
    table, tokens = prepare_texts(parsed.texts, source, encodings)
    rejected = rejected_table(parsed.rejected)

    def load(cur: warehouse.Cursor) -> IngestSummary:
        advance_position(cur, SOURCE_KIND, source, *positions)
        accepted = 0
        if table.num_rows:
            cur.register("batch_parallel_texts", table)
            cur.register("batch_parallel_tokens", tokens)
            try:
                cur.execute(INSERT_TOKENS_SQL)
                row = cur.execute(INSERT_TEXTS_SQL).fetchone()
                accepted = int(row[0]) if row else 0
            finally:
                cur.unregister("batch_parallel_texts")
                cur.unregister("batch_parallel_tokens")
        quarantined = insert_quarantine(cur, SOURCE_KIND, source, rejected)
        return IngestSummary(
            accepted=accepted, quarantined=quarantined, duplicates=len(parsed.texts) - accepted
        )

    return warehouse.write(load)


def run_parallel(paths: list[str], *, progress: IO[str] | None = None) -> IngestSummary:
    """`manage.py ingest parallel PATH...`: every file from where its last run stopped."""
    encodings = configured_encodings()

    def load(
        lines: list[RawLine], source: str, stored: Position | None, reached: Position
    ) -> IngestSummary:
        return load_texts(parse_lines(lines), source, encodings, (stored, reached))

    return ingest_files(paths, SOURCE_KIND, load, progress)
