"""A price row out of range in the table (written before the range was checked, or by
hand): it prices nothing, the report says why, and the costs API, page and cost_report
all still answer."""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal
from io import StringIO

import orjson
import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from analytics.costs.models import ModelPrice
from analytics.costs.pricing import PriceBook
from ingest.pipelines.agent_events import ingest_body

BAD = (
    "acme-coder from 2026-01-01: input_per_mtok is over 999,999,999.999999 USD per million"
    " tokens (1e+20); not used"
)


@pytest.fixture
def bad_price(lake: object, db: None) -> None:
    """acme-coder at 1 / 2 from 2025-01-01, then a row from 2026-01-01 whose input price
    is 10^20: past the column's 18 digits, which the ORM cannot read back."""
    for valid_from, output in ((date(2025, 1, 1), 2), (date(2026, 1, 1), 4)):
        ModelPrice.objects.create(
            model="acme-coder",
            input_per_mtok=Decimal(1),
            output_per_mtok=Decimal(output),
            valid_from=valid_from,
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE analytics_modelprice SET input_per_mtok = %s WHERE valid_from = %s",
            [1e20, "2026-01-01"],
        )
    call = {"run": "r1", "agent": "a", "event": "llm_call", "model": "acme-coder"}
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
    ingest_body(
        b"".join(
            orjson.dumps({**call, "ts": ts, "usage": usage}) + b"\n"
            for ts in ("2025-06-01T10:00:00Z", "2026-01-14T10:00:00Z")
        )
    )


def test_the_row_is_not_used_and_its_period_is_unpriced(bad_price: None) -> None:
    book = PriceBook.load()
    assert book.problems == [BAD]
    older = book.price("acme-coder", date(2025, 6, 1))
    assert older is not None and (older.input, older.output) == (1.0, 2.0)
    # The older price does not stand in for the unusable one.
    assert book.price("acme-coder", date(2026, 1, 14)) is None


def test_the_daily_api_answers_with_the_model_unpriced_and_the_reason(
    client: Client, bad_price: None, auth_headers: dict[str, str]
) -> None:
    answer = client.get("/api/costs/daily?date=2026-01-14", headers=auth_headers)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["total_usd"], body["unpriced"], body["price_problems"]) == (
        0.0,
        ["acme-coder"],
        [BAD],
    )
    # The day priced by the older row: 1 x 1 + 1 x 2 = 3 USD.
    earlier = client.get("/api/costs/daily?date=2025-06-01", headers=auth_headers).json()
    assert earlier["total_usd"] == 3.0


def test_cost_report_runs_and_lists_the_reason(bad_price: None) -> None:
    out = StringIO()
    call_command("cost_report", "--date", "2026-01-14", "--format", "csv", stdout=out)
    rows = list(csv.reader(StringIO(out.getvalue())))
    assert ["price_problem", "", "", "", "", "", "", "", BAD] in rows
    out = StringIO()
    call_command("cost_report", "--date", "2026-01-14", stdout=out)
    assert orjson.loads(out.getvalue())["price_problems"] == [BAD]


def test_the_costs_page_shows_the_reason(client: Client, bad_price: None, user: object) -> None:
    client.login(username="alice", password="correct-horse-battery")
    page = client.get("/costs/?date=2026-01-14")
    assert page.status_code == 200
    assert "Price rows not used (fix them in the admin): " + BAD in page.content.decode()
    for name in ("model", "run"):
        chart = client.get(f"/costs/charts/{name}.json?date=2026-01-14")
        assert chart.status_code == 200
    csv_download = client.get("/costs/report.csv?date=2026-01-14")
    assert csv_download.status_code == 200 and BAD in csv_download.content.decode()
