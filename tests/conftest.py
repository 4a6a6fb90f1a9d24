"""Shared fixtures: a fresh warehouse per test, a user with an API token. The data dir is
a throwaway folder (tests/settings.py)."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from analytics import warehouse

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.fixture
def lake(tmp_path: Path, settings: object) -> Iterator[Path]:
    """A fresh, migrated DuckLake warehouse under this test's tmp dir."""
    lake_dir = tmp_path / "warehouse"
    lake_dir.mkdir()
    warehouse.close()
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{lake_dir / 'catalog.sqlite'}"  # type: ignore[attr-defined]
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(lake_dir / "data") + "/"  # type: ignore[attr-defined]
    warehouse.migrate()
    yield lake_dir
    warehouse.close()


@pytest.fixture
def user(db: None) -> object:
    from django.contrib.auth.models import User

    return User.objects.create_user("alice", "alice@example.com", "correct-horse-battery")


@pytest.fixture
def api_token(user: object) -> str:
    from dashboard.models import ApiToken

    _, raw = ApiToken.issue(user, "tests")
    return raw


@pytest.fixture
def auth_headers(api_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_token}"}


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    warehouse.close()
