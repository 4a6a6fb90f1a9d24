"""The warehouse: the only package that opens DuckDB/DuckLake (the ground floor).

Callers `import warehouse` and use the names below; `warehouse.lake` holds the connection,
the reads, the writes and the lake's settings (patch those there), `warehouse.schema` the
migrations.
"""

from warehouse import lake
from warehouse.lake import (
    ORPHANS_OLDER_THAN_HOURS,
    Conflict,
    Cursor,
    InvalidInput,
    Migration,
    WarehouseError,
    add_data_file,
    all_migrations,
    close,
    cursor,
    fetch_all,
    fetch_one,
    is_embedded,
    local_table_dir,
    migrate,
    run_maintenance,
    schema_version,
    single_threaded,
    transaction,
    write,
)

__all__ = [
    "ORPHANS_OLDER_THAN_HOURS",
    "Conflict",
    "Cursor",
    "InvalidInput",
    "Migration",
    "WarehouseError",
    "add_data_file",
    "all_migrations",
    "close",
    "cursor",
    "fetch_all",
    "fetch_one",
    "is_embedded",
    "lake",
    "local_table_dir",
    "migrate",
    "run_maintenance",
    "schema_version",
    "single_threaded",
    "transaction",
    "write",
]
