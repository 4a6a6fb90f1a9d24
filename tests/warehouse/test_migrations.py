"""Schema changes: each applied once, in version order, and the version they reach."""

from pathlib import Path

import pytest

import warehouse
from warehouse import migrations


def test_migrations_are_applied_once(lake: Path) -> None:
    assert warehouse.migrate() == []
    versions = warehouse.fetch_all("SELECT version FROM schema_versions ORDER BY version")
    assert [v["version"] for v in versions] == [m.version for m in warehouse.all_migrations()]


def test_the_schema_version_is_the_highest_applied(lake: Path) -> None:
    assert warehouse.schema_version() == max(m.version for m in warehouse.all_migrations())


def test_two_migrations_with_one_version_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    twice = (
        warehouse.Migration(7, "one", ("SELECT 1",)),
        warehouse.Migration(7, "other", ("SELECT 2",)),
    )
    monkeypatch.setattr(migrations, "MIGRATIONS", twice)
    with pytest.raises(warehouse.WarehouseError, match=r"duplicate warehouse migration versions"):
        warehouse.all_migrations()
