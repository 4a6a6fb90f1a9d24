"""Shared fixtures: a fresh warehouse per test, a user with an API token. The data dir is
a throwaway folder (tests/settings.py)."""

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

import warehouse

# Property tests draw the same examples on every run, so CI's verdict is the one a developer
# reproduces; FLEETSCOPE_HYPOTHESIS_EXPLORE=1 draws new ones (and keeps what fails in
# .hypothesis/) to hunt for cases.
hypothesis_settings.register_profile("fleetscope", derandomize=True, database=None)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(
    "explore" if os.environ.get("FLEETSCOPE_HYPOTHESIS_EXPLORE") else "fleetscope"
)

# Real logs, scrapes and commit histories, with their provenance and licences (NOTICE.md).
FIXTURE_ROOT = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def _shipped_prices_after_a_flush(
    request: pytest.FixtureRequest, django_db_blocker: object
) -> Iterator[None]:
    """A test with a real transaction (a live server's) ends with a flush of every table,
    the prices the migrations loaded with them; they are put back after it, so a test that
    reads them finds them whichever test ran before it on the same worker. Set up before
    the test's own fixtures, so torn down after their flush."""
    yield
    if {"transactional_db", "live_server"} & set(request.fixturenames):
        from analytics.costs.price_files import load_shipped_prices

        with django_db_blocker.unblock():  # type: ignore[attr-defined]
            load_shipped_prices()


@pytest.fixture(scope="session")
def lake_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty catalog, made once per session: copying it is much faster than
    creating every table again for each test."""
    from django.conf import settings

    folder = tmp_path_factory.mktemp("lake-template")
    saved = (settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA)
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{folder / 'catalog.sqlite'}"
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(folder / "data") + "/"
    try:
        warehouse.close()
        warehouse.migrate()
    finally:
        warehouse.close()
        settings.FLEETSCOPE_WAREHOUSE, settings.FLEETSCOPE_WAREHOUSE_DATA = saved
    return folder / "catalog.sqlite"


@pytest.fixture
def lake(tmp_path: Path, settings: object, lake_template: Path) -> Iterator[Path]:
    """A fresh, migrated DuckLake warehouse under this test's tmp dir."""
    lake_dir = tmp_path / "warehouse"
    lake_dir.mkdir()
    catalog = lake_dir / "catalog.sqlite"
    data_path = str(lake_dir / "data") + "/"
    source = sqlite3.connect(lake_template)
    target = sqlite3.connect(catalog)
    try:
        source.backup(target)
        # DuckLake keeps its data path in the catalog; the template's has no files in it.
        target.execute(
            "UPDATE ducklake_metadata SET value = ? WHERE key = 'data_path'", [data_path]
        )
        target.commit()
    finally:
        source.close()
        target.close()
    warehouse.close()
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{catalog}"  # type: ignore[attr-defined]
    settings.FLEETSCOPE_WAREHOUSE_DATA = data_path  # type: ignore[attr-defined]
    yield lake_dir
    warehouse.close()


@pytest.fixture
def user(db: None) -> object:
    from django.contrib.auth.models import User

    from tests.people import grant

    return grant(User.objects.create_user("alice", "alice@example.com", "correct-horse-battery"))


@pytest.fixture
def api_token(user: object) -> str:
    from dashboard.models import ApiToken
    from lib.access import Scope

    _, raw = ApiToken.issue(user, "tests", scope=Scope.ADMIN)
    return raw


@pytest.fixture
def auth_headers(api_token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_token}"}


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    warehouse.close()
