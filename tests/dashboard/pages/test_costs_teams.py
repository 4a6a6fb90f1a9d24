"""The Costs and Overview pages' team filter (`?team=`) and the Costs tables as CSV: a
team's figures are its runs by pattern and by its members' events, never another team's;
the team stays in every link and chart URL; a team the reader may not see is refused
without a word about it. Hand figures in tests/analytics/costs/team_calls.py."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any, cast

import orjson
import pytest
from django.http import StreamingHttpResponse
from django.test import Client

from tests.analytics.costs.team_calls import Teams, load_team_calls
from tests.analytics.costs.two_teams import make_user
from tests.analytics.people.world import insert_events


@pytest.fixture
def teams(lake: object, db: None) -> Teams:
    return load_team_calls()


@pytest.fixture
def admin(user: object) -> Client:
    c = Client()
    c.force_login(user)  # type: ignore[arg-type]
    return c


@pytest.fixture
def wendy(teams: Teams, django_user_model: Any) -> Client:
    """A viewer in team web only."""
    c = Client()
    c.force_login(make_user(django_user_model, "wendy", teams=(teams.web,)))
    return c


def csv_rows(answer: Any) -> list[list[str]]:
    assert answer.status_code == 200
    assert isinstance(answer, StreamingHttpResponse)
    return list(
        csv.reader(io.StringIO(b"".join(cast(Iterator[bytes], answer.streaming_content)).decode()))
    )


def test_the_runs_table_of_a_team_is_its_runs_by_pattern_and_by_its_members(admin, teams):
    every = csv_rows(admin.get("/costs/", {"date": "2026-01-14", "format": "csv", "table": "runs"}))
    assert every == [
        ["run", "calls", "usd", "unpriced_calls"],
        ["beta-1", "1", "6.75", "0"],
        ["s-pair", "1", "2.5", "0"],
        ["alpha-1", "1", "0.5", "0"],
    ]
    web = admin.get(
        "/costs/", {"date": "2026-01-14", "team": "web", "format": "csv", "table": "runs"}
    )
    assert web["Content-Disposition"] == 'attachment; filename="fleetscope-costs-runs.csv"'
    assert csv_rows(web)[1:] == [["s-pair", "1", "2.5", "0"], ["alpha-1", "1", "0.5", "0"]]


def test_the_days_table_holds_tokens_and_usd_per_day_for_every_chart_day(admin, teams):
    query = {"date": "2026-01-14", "team": "web", "format": "csv", "table": "days"}
    rows = csv_rows(admin.get("/costs/", query))
    assert rows[0] == [
        "day",
        "calls",
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "usd",
    ]
    assert len(rows) == 1 + 30  # every day of the charts, latest first
    assert rows[1] == ["2026-01-14", "2", "2400000", "0", "0", "0", "3.0"]
    assert rows[2] == ["2026-01-13", "1", "1000000", "100000", "200000", "50000", "2.353125"]
    assert rows[3] == ["2026-01-12", "0", "0", "0", "0", "0", "0.0"]
    assert rows[-1][0] == "2025-12-16"


def test_the_tokens_chart_stacks_the_teams_tokens_by_kind(admin, teams):
    fig = orjson.loads(
        admin.get("/costs/charts/tokens.json", {"date": "2026-01-14", "team": "web"}).content
    )
    assert {t["name"]: t["y"][-2:] for t in fig["data"]} == {
        "input": [1_000_000, 2_400_000],
        "output": [100_000, 0],
        "cache read": [200_000, 0],
        "cache write": [50_000, 0],
    }
    assert fig["data"][0]["x"][-1] == "2026-01-14"


def test_the_team_stays_in_every_link_and_chart_url(admin, teams):
    html = admin.get("/costs/", {"date": "2026-01-14", "team": "web"}).content.decode()
    for chart in ("model", "run", "tokens"):
        assert (
            f'data-src="/costs/charts/{chart}.json?date=2026-01-14&amp;tz=UTC&amp;team=web"' in html
        )
    assert 'href="/costs/report.csv?date=2026-01-14&amp;tz=UTC&amp;team=web"' in html
    assert 'href="/costs/?date=2026-01-14&amp;team=web&amp;format=csv&amp;table=days"' in html
    assert '<option value="web" selected>web</option>' in html
    assert "/api/costs/daily" not in html  # the API has no team filter: no link that drops it
    assert "beta-1" not in html
    report = admin.get("/costs/report.csv", {"date": "2026-01-14", "team": "web"}).content.decode()
    assert "run,s-pair,1," in report and "beta-1" not in report


def test_a_team_the_reader_does_not_see_is_refused_like_one_that_does_not_exist(wendy):
    for name in ("ops", "no-such-team"):
        page = wendy.get("/costs/", {"date": "2026-01-14", "team": name})
        assert page.status_code == 403
        assert f"You see no team named &#x27;{name}&#x27;." in page.content.decode()
        assert "beta-1" not in page.content.decode() and "6.75" not in page.content.decode()
        chart = wendy.get("/costs/charts/tokens.json", {"date": "2026-01-14", "team": name})
        assert chart.status_code == 403
        assert chart.json() == {"detail": f"you see no team named {name!r}"}
        assert wendy.get("/costs/report.csv", {"team": name}).status_code == 403
        table = {"date": "2026-01-14", "team": name, "format": "csv", "table": "runs"}
        assert wendy.get("/costs/", table).status_code == 403
    mine = wendy.get("/costs/", {"date": "2026-01-14"}).content.decode()
    assert '<option value="web" >web</option>' in mine and 'value="ops"' not in mine


def test_every_costs_table_is_a_csv_and_an_unknown_one_is_404(admin, teams):
    day = {"date": "2026-01-14", "team": "web", "format": "csv"}
    models = csv_rows(admin.get("/costs/", {**day, "table": "models"}))
    assert models[1] == [
        "gpt-5", "gpt-5", "2", "2400000", "0", "0", "0", "3.0", "0.0", "0"
    ]  # fmt: skip
    people = csv_rows(admin.get("/costs/", {**day, "table": "people"}))
    assert people == [
        ["person", "team", "calls", "usd", "unpriced_calls"],
        ["cy@example.com", "web", "1", "2.5", "0"],
    ]
    assert csv_rows(admin.get("/costs/", {**day, "table": "teams"})) == [
        ["team", "usd", "daily_budget_usd"],
        ["web", "3.0", ""],
    ]
    assert csv_rows(admin.get("/costs/", {**day, "table": "gpu"})) == [
        ["target", "gpus", "usd_per_gpu_hour", "hours", "usd", "generated_tokens", "usd_per_mtok"]
    ]
    assert csv_rows(admin.get("/costs/", {**day, "table": "deliveries"}))[0][0] == "attempted_at"
    assert admin.get("/costs/", {**day, "table": "nope"}).status_code == 404


def test_a_cell_a_spreadsheet_would_run_is_escaped(admin, teams):
    insert_events(
        {
            "run": "=HYPERLINK(1)",
            "ts": "2026-01-14T12:00:00Z",
            "event": "llm_call",
            "model": "gpt-5",
        }
    )
    rows = csv_rows(admin.get("/costs/", {"date": "2026-01-14", "format": "csv", "table": "runs"}))
    assert ["'=HYPERLINK(1)", "1", "0.0", "0"] in rows


def test_overview_shows_the_teams_runs_and_keeps_the_team_in_its_urls(admin, teams):
    html = admin.get("/overview/", {"team": "web", "last": "all"}).content.decode()
    assert '<option value="alpha-1"' in html and '<option value="s-pair"' in html
    assert 'value="beta-1"' not in html
    assert 'data-src="/overview/chart.json?last=all&amp;run=s-pair&amp;team=web"' in html
    assert '<input type="hidden" name="team" value="web">' in html  # the run and time pickers
    assert admin.get("/overview/chart.json", {"team": "web", "run": "beta-1"}).status_code == 404
    every = admin.get("/overview/", {"last": "all"}).content.decode()
    assert 'value="beta-1"' in every


def test_overview_refuses_a_team_the_reader_does_not_see(wendy):
    page = wendy.get("/overview/", {"team": "ops"})
    assert page.status_code == 403 and "beta-1" not in page.content.decode()
    assert wendy.get("/overview/chart.json", {"team": "ops"}).status_code == 403
    assert wendy.get("/overview/", {"team": "web"}).status_code == 200
