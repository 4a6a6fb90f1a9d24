"""The Costs page: login, the report for a day with escaped labels and the unpriced
warning, the charts equal to the report, the CSV download, budgets and deliveries."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import orjson
import pytest
from django.test import Client

from analytics.costs.models import ModelPrice, RecipientKind, ReportDelivery, Team
from ingest.pipelines.agent_events import ingest_body

RUN = "<script>alert(1)</script>"


@pytest.fixture
def client(user: object) -> Client:
    c = Client()
    c.force_login(user)  # type: ignore[arg-type]
    return c


@pytest.fixture
def spend(lake: object, db: None) -> None:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="gpt-5",
        input_per_mtok=Decimal("1.25"),
        output_per_mtok=Decimal(10),
        valid_from=date(2025, 8, 7),
    )
    lines = [
        {
            "ts": "2026-01-13T10:00:00Z",
            "run": RUN,
            "agent": "w",
            "event": "llm_call",
            "model": "gpt-5",
            "usage": {"input_tokens": 800_000, "output_tokens": 0},
        },
        {
            "ts": "2026-01-14T10:00:00Z",
            "run": RUN,
            "agent": "w",
            "event": "llm_call",
            "model": "gpt-5",
            "usage": {"input_tokens": 1_000_000, "output_tokens": 100_000},
        },
        {
            "ts": "2026-01-14T11:00:00Z",
            "run": "r2",
            "agent": "w",
            "event": "llm_call",
            "model": "mystery-1",
            "usage": {"input_tokens": 10, "output_tokens": 10},
        },
    ]
    ingest_body(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    Team.objects.create(name="web", run_patterns=["<script>*"], daily_budget_usd=2)


def test_the_page_needs_a_login(db: None) -> None:
    answer = Client().get("/costs/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_the_page_shows_the_day_escaped_with_the_unpriced_warning(client, spend) -> None:
    ReportDelivery.objects.create(
        report_date=date(2026, 1, 14),
        kind=RecipientKind.EMAIL,
        target="ops@example.com",
        ok=False,
        error="refused",
    )
    html = client.get("/costs/?date=2026-01-14").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Unpriced models" in html and "mystery-1" in html
    assert "$2.25" in html
    assert "112.5% over budget" in html
    assert "refused" in html
    assert 'href="/costs/report.csv?date=2026-01-14&amp;tz=UTC"' in html


def test_the_charts_stack_daily_spend_like_the_report(client, spend) -> None:
    fig = orjson.loads(client.get("/costs/charts/model.json?date=2026-01-14").content)
    [trace] = fig["data"]
    assert trace["name"] == "gpt-5"
    assert trace["x"][-2:] == ["2026-01-13", "2026-01-14"]
    assert trace["y"][-2:] == [pytest.approx(1.0), pytest.approx(2.25)]
    by_run = orjson.loads(client.get("/costs/charts/run.json?date=2026-01-14").content)
    assert [t["name"] for t in by_run["data"]] == [RUN]  # r2 only used an unpriced model
    assert client.get("/costs/charts/nope.json").status_code == 404


def test_the_csv_downloads(client, spend) -> None:
    answer = client.get("/costs/report.csv?date=2026-01-14")
    assert answer["Content-Disposition"] == (
        'attachment; filename="fleetscope-costs-2026-01-14.csv"'
    )
    assert "total,all,,,,,,2.250000," in answer.content.decode()


def test_a_bad_day_is_422_with_the_form_as_typed_and_the_reason(client, lake) -> None:
    answer = client.get("/costs/?date=tomorrow&tz=UTC")
    html = answer.content.decode()
    assert answer.status_code == 422
    assert '<input type="text" name="date" value="tomorrow">' in html
    assert (
        '<p class="error timerange-problem" role="alert">'
        "date must be YYYY-MM-DD, got &#x27;tomorrow&#x27;</p>"
    ) in html
    zone = client.get("/costs/?date=2026-01-14&tz=Nowhere/Else")
    assert zone.status_code == 422
    zone_html = zone.content.decode()
    assert '<input type="date" name="date" value="2026-01-14">' in zone_html
    assert 'name="tz" value="Nowhere/Else"' in zone_html
    assert 'role="alert">unknown time zone &#x27;Nowhere/Else&#x27;</p>' in zone_html
    chart = client.get("/costs/charts/model.json?date=tomorrow")
    assert (chart.status_code, chart.json()) == (
        422,
        {"detail": "date must be YYYY-MM-DD, got 'tomorrow'"},
    )


def test_without_a_day_the_page_opens_on_the_latest_day_with_spend(client, spend) -> None:
    # The latest call (2026-01-15) used a model without a price: the 14th is the latest
    # day with spend, 1M input x $1.25 + 100k output x $10 / 1M = $2.25.
    late = {
        "ts": "2026-01-15T09:00:00Z",
        "run": "r2",
        "agent": "w",
        "event": "llm_call",
        "model": "mystery-1",
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    ingest_body(orjson.dumps(late) + b"\n")
    html = client.get("/costs/").content.decode()
    assert '<input type="date" name="date" value="2026-01-14">' in html
    assert "$2.25" in html
    assert "/costs/charts/model.json?date=2026-01-14&amp;tz=UTC" in html
    # In Tokyo the 10:00 UTC calls of the 14th fall on the 14th too (19:00 JST).
    tokyo = client.get("/costs/?tz=Asia/Tokyo").content.decode()
    assert '<input type="date" name="date" value="2026-01-14">' in tokyo


def test_before_any_call_the_page_opens_on_yesterday(client, lake) -> None:
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    html = client.get("/costs/").content.decode()
    assert f'<input type="date" name="date" value="{yesterday}">' in html
