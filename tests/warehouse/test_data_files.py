"""Parquet files written to join the lake as they are: their encodings."""

from pathlib import Path

import warehouse


def test_staged_files_keep_dictionaries_only_for_values_that_repeat(
    lake: Path, tmp_path: Path
) -> None:
    cur = warehouse.cursor()
    cur.execute(
        "CREATE TEMP TABLE staged AS SELECT 'task-' || (i % 5000) AS task, "
        "'w' || (i % 600) AS agent, i AS source_line FROM range(40000) AS t(i)"
    )
    path = tmp_path / "staged.parquet"
    warehouse.data_files.copy_to_parquet(cur, "SELECT * FROM staged", path)
    encodings = dict(
        cur.execute(
            "SELECT path_in_schema, encodings FROM parquet_metadata(?)", [str(path)]
        ).fetchall()
    )
    # 5,000 values, each 8 times: DuckDB's default would build a dictionary for them.
    # Parquet's version 2 encodings: delta-length strings, delta-packed integers.
    assert encodings == {
        "task": "DELTA_LENGTH_BYTE_ARRAY",
        "agent": "RLE_DICTIONARY",
        "source_line": "DELTA_BINARY_PACKED",
    }
    cur.execute("DROP TABLE staged")
