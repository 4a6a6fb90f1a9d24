"""Pages and the API over a warehouse never migrated: a 503 page saying so, and a 503 JSON
answer whose detail is the same one line (the data dir and the command to run); a warehouse
failing for now is a 503 a client may retry after the time it names."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

import warehouse


@pytest.fixture
def bare(tmp_path: Path, settings: Any) -> Iterator[str]:
    settings.DATA_DIR = tmp_path
    settings.FLEETSCOPE_WAREHOUSE = f"ducklake:sqlite:{tmp_path / 'catalog.sqlite'}"
    settings.FLEETSCOPE_WAREHOUSE_DATA = str(tmp_path / "lake") + "/"
    warehouse.close()
    yield (
        f"the warehouse in {tmp_path} has not been migrated: "
        f"run `FLEETSCOPE_DATA_DIR={tmp_path} python manage.py migrate`"
    )
    warehouse.close()


def test_the_runs_page_says_the_warehouse_is_not_migrated(
    client: Client, user: object, bare: str
) -> None:
    client.force_login(user)  # type: ignore[arg-type]
    answer = client.get("/")
    assert answer.status_code == 503
    html = answer.content.decode()
    assert "The warehouse is not migrated" in html
    assert f'<p class="error" data-problem>{bare}</p>' in html


def test_the_api_answers_503_with_the_same_line(
    client: Client, auth_headers: dict[str, str], bare: str
) -> None:
    answer = client.get("/api/runs", headers=auth_headers)
    assert answer.status_code == 503
    assert answer.json() == {"detail": bare}
    assert "Retry-After" not in answer  # an operator must migrate: retrying changes nothing


def test_a_warehouse_failing_for_now_is_a_503_to_retry_after_5_seconds(
    client: Client, auth_headers: dict[str, str], lake: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise warehouse.WarehouseBroken("the warehouse failed a read: INTERNAL Error: x")

    monkeypatch.setattr(warehouse.lake, "_read", broken)
    answer = client.get("/api/runs", headers=auth_headers)
    assert (answer.status_code, answer["Retry-After"]) == (503, "5")
    assert answer.json() == {"detail": "the warehouse failed a read: INTERNAL Error: x"}


def test_the_web_database_out_of_reach_is_a_503_to_retry(
    client: Client, auth_headers: dict[str, str], lake: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    from dashboard.models import ApiToken

    def unreachable(token: str) -> None:
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed')

    monkeypatch.setattr(ApiToken, "authenticate", unreachable)
    answer = client.get("/api/runs", headers=auth_headers)
    assert (answer.status_code, answer["Retry-After"]) == (503, "5")
    assert answer.json() == {"detail": "the web database is unreachable; try again shortly"}
