"""A warehouse never migrated, or missing a schema change, says so in one line naming the
data dir and the command to run, wherever a statement first needs a table: a read, a
write, the events table's folder; a migrated one keeps DuckDB's own errors."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import warehouse
from warehouse import migrations


@pytest.fixture
def bare(tmp_path: Path, settings: Any) -> Iterator[Path]:
    """A data dir whose warehouse was never migrated."""
    settings.DATA_DIR = tmp_path
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}"
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(tmp_path / "lake") + "/"
    warehouse.close()
    yield tmp_path
    warehouse.close()


def _line(data_dir: Path, state: str = "has not been migrated") -> str:
    return (
        f"the warehouse in {data_dir} {state}: "
        f"run `FLEETSCOPE_DATA_DIR={data_dir} python manage.py migrate`"
    )


def test_a_read_of_a_warehouse_never_migrated_names_the_data_dir_and_the_command(
    bare: Path,
) -> None:
    with pytest.raises(warehouse.NotMigrated) as raised:
        warehouse.fetch_all("SELECT * FROM read_positions")
    assert str(raised.value) == _line(bare)
    assert isinstance(raised.value.__cause__, duckdb.CatalogException)


def test_a_write_and_a_tuple_read_say_the_same(bare: Path) -> None:
    def insert(cur: warehouse.Cursor) -> None:
        cur.execute("INSERT INTO read_positions VALUES (1)")

    with pytest.raises(warehouse.NotMigrated, match=r"^the warehouse in .* has not been"):
        warehouse.write(insert)
    with pytest.raises(warehouse.NotMigrated):
        warehouse.fetch_rows("SELECT run FROM events")
    with pytest.raises(warehouse.NotMigrated):
        warehouse.local_table_dir("events")


def test_once_migrated_the_same_reads_work(bare: Path) -> None:
    assert warehouse.pending() == [m.version for m in warehouse.all_migrations()]
    warehouse.migrate()
    assert warehouse.pending() == []
    assert warehouse.schema_problem() is None
    assert warehouse.fetch_all("SELECT count(*) AS n FROM events") == [{"n": 0}]


def test_a_warehouse_missing_a_later_change_lists_its_versions(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse.migrate()
    later = warehouse.Migration(9001, "a later change", ("CREATE TABLE later (x INTEGER)",))
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, later))
    with pytest.raises(warehouse.NotMigrated) as raised:
        warehouse.fetch_all("SELECT x FROM later")
    assert str(raised.value) == _line(bare, "lacks 1 schema change(s) (versions [9001])")


def test_a_migrated_warehouse_keeps_duckdbs_own_error(lake: Path) -> None:
    with pytest.raises(duckdb.CatalogException, match="no_such_table"):
        warehouse.fetch_all("SELECT * FROM no_such_table")

    def bad(cur: warehouse.Cursor) -> None:
        cur.execute("SELECT no_such_column FROM events")

    with pytest.raises(duckdb.BinderException):
        warehouse.write(bad)
