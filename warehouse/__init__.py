"""The warehouse: the only package that opens DuckDB/DuckLake (the ground floor).

Callers `import warehouse` and use the names below. `warehouse.lake` holds the connection,
the reads, the writes, the conflict retry and the lake's settings (patch those there),
`warehouse.data_files` the Parquet files a load adds to a table as they are,
`warehouse.maintenance` compaction, snapshot expiry and file cleanup,
`warehouse.migrations` applying the schema changes that `warehouse.schema` gathers.
"""

from warehouse import data_files, lake
from warehouse.data_files import add_data_file, local_table_dir
from warehouse.lake import (
    ORPHANS_OLDER_THAN_HOURS,
    Conflict,
    Cursor,
    InvalidInput,
    NotMigrated,
    WarehouseBroken,
    WarehouseError,
    WarehouseUnreachable,
    claim,
    close,
    cursor,
    fetch_all,
    fetch_arrow,
    fetch_one,
    fetch_rows,
    is_embedded,
    retry_on_conflict,
    separate_cursor,
    single_threaded,
    transaction,
    write,
)
from warehouse.maintenance import run_maintenance
from warehouse.migrations import all_migrations, migrate, pending, schema_problem, schema_version
from warehouse.schema.migration import Migration

__all__ = [
    "ORPHANS_OLDER_THAN_HOURS",
    "Conflict",
    "Cursor",
    "InvalidInput",
    "Migration",
    "NotMigrated",
    "WarehouseBroken",
    "WarehouseError",
    "WarehouseUnreachable",
    "add_data_file",
    "all_migrations",
    "claim",
    "close",
    "cursor",
    "data_files",
    "fetch_all",
    "fetch_arrow",
    "fetch_one",
    "fetch_rows",
    "is_embedded",
    "lake",
    "local_table_dir",
    "migrate",
    "pending",
    "retry_on_conflict",
    "run_maintenance",
    "schema_problem",
    "schema_version",
    "separate_cursor",
    "single_threaded",
    "transaction",
    "write",
]
