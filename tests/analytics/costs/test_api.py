"""The costs API: GET /api/costs/daily per the contract, POST /api/prices, credentials
and bad parameters."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import orjson
import pytest
from django.test import Client

from analytics.costs.models import ModelPrice
from ingest.pipelines.agent_events import ingest_body

PRICES = [
    {
        "model": "acme-coder",
        "input_per_mtok": 2,
        "cached_input_per_mtok": 0.5,
        "cache_write_per_mtok": 2.5,
        "output_per_mtok": 8,
        "valid_from": "2026-01-01",
    },
]


@pytest.fixture
def calls(lake: object) -> None:
    usage = {
        "input_tokens": 400_000,
        "cached_input_tokens": 2_000_000,
        "cache_write_tokens": 100_000,
        "output_tokens": 50_000,
    }
    lines = [
        {
            "ts": "2026-01-14T10:00:00Z",
            "run": "r1",
            "agent": "a",
            "event": "llm_call",
            "model": "acme-coder",
            "usage": usage,
        },
        {
            "ts": "2026-01-14T10:01:00Z",
            "run": "r2",
            "agent": "a",
            "event": "llm_call",
            "model": "nobody-prices-me",
            "usage": usage,
        },
    ]
    ingest_body(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def test_costs_and_prices_need_credentials(client: Client, db: None) -> None:
    assert client.get("/api/costs/daily?date=2026-01-14").status_code == 401
    assert client.post("/api/prices", PRICES, content_type="application/json").status_code == 401


def test_posted_prices_price_the_day(client: Client, calls: None, auth_headers) -> None:
    saved = client.post(
        "/api/prices", PRICES, content_type="application/json", headers=auth_headers
    )
    assert saved.json() == {"saved": 1}
    body = client.get("/api/costs/daily?date=2026-01-14", headers=auth_headers).json()
    # 0.4 x 2 + 2 x 0.5 + 0.1 x 2.5 + 0.05 x 8 = 2.45
    assert body["total_usd"] == pytest.approx(2.45)
    assert body["date"] == "2026-01-14"
    assert body["unpriced"] == ["nobody-prices-me"]
    assert body["by_run"][0] == {"run": "r1", "usd": 2.45, "calls": 1, "unpriced_calls": 0}
    [acme] = [m for m in body["by_model"] if m["model"] == "acme-coder"]
    assert {
        k: acme[k]
        for k in (
            "input_tokens",
            "cached_input_tokens",
            "cache_write_tokens",
            "output_tokens",
            "usd",
        )
    } == {
        "input_tokens": 400_000,
        "cached_input_tokens": 2_000_000,
        "cache_write_tokens": 100_000,
        "output_tokens": 50_000,
        "usd": 2.45,
    }
    assert body["cache_savings_usd"] == pytest.approx(2 * 1.5)


def test_posting_the_same_model_and_day_replaces_the_price(client, db: None, auth_headers):
    client.post("/api/prices", PRICES, content_type="application/json", headers=auth_headers)
    changed = [{**PRICES[0], "output_per_mtok": 9}]
    client.post("/api/prices", changed, content_type="application/json", headers=auth_headers)
    [row] = ModelPrice.objects.filter(model="acme-coder")
    assert (float(row.output_per_mtok), row.valid_from) == (9.0, date(2026, 1, 1))


@pytest.mark.parametrize(
    "query", ["date=2026-13-01", "date=yesterday", "date=2026-01-14&tz=Mars/Olympus"]
)
def test_bad_parameters_are_422(client: Client, lake: object, auth_headers, query: str) -> None:
    assert client.get(f"/api/costs/daily?{query}", headers=auth_headers).status_code == 422


def test_negative_prices_are_422(client: Client, db: None, auth_headers) -> None:
    bad = [{**PRICES[0], "input_per_mtok": -1}]
    answer = client.post("/api/prices", bad, content_type="application/json", headers=auth_headers)
    assert answer.status_code == 422


def test_a_price_past_a_million_dollars_per_million_tokens_is_kept_and_prices_the_day(
    client: Client, lake: object, auth_headers
) -> None:
    dear = [{**PRICES[0], "model": "dear-coder", "input_per_mtok": 2_500_000}]
    saved = client.post("/api/prices", dear, content_type="application/json", headers=auth_headers)
    assert saved.json() == {"saved": 1}
    ingest_body(
        orjson.dumps(
            {
                "ts": "2026-01-14T10:00:00Z",
                "run": "r1",
                "agent": "a",
                "event": "llm_call",
                "model": "dear-coder",
                "usage": {"input_tokens": 1_000, "output_tokens": 0},
            }
        )
        + b"\n"
    )
    body = client.get("/api/costs/daily?date=2026-01-14", headers=auth_headers).json()
    # 1,000 input tokens x 2,500,000 USD per million = 2,500 USD.
    assert body["total_usd"] == pytest.approx(2_500.0)
    assert ModelPrice.objects.get(model="dear-coder").input_per_mtok == 2_500_000


def test_the_dearest_price_in_range_is_saved_and_read_back_to_the_last_digit(
    client: Client, db: None, auth_headers
) -> None:
    top = [{**PRICES[0], "input_per_mtok": 999_999_999.999999, "output_per_mtok": 0.000001}]
    saved = client.post("/api/prices", top, content_type="application/json", headers=auth_headers)
    assert saved.json() == {"saved": 1}
    row = ModelPrice.objects.get(model="acme-coder")
    assert row.input_per_mtok == Decimal("999999999.999999")
    assert row.output_per_mtok == Decimal("0.000001")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1_000_000_000, "1000000000.0"),  # one micro-dollar past the range
        (123_456_789_012, "123456789012.0"),  # issue 20: saved, then unreadable
        (999_999_999_999_999_900, "9.999999999999999e+17"),  # under the old limit, 10^18
        (1e30, "1e+30"),  # issue 20: a 500
    ],
)
def test_a_price_past_the_range_is_a_422_naming_the_entry_and_the_field(
    client: Client, db: None, auth_headers, value: float, shown: str
) -> None:
    bad = [PRICES[0], {**PRICES[0], "model": "dear", "output_per_mtok": value}]
    answer = client.post("/api/prices", bad, content_type="application/json", headers=auth_headers)
    assert answer.status_code == 422
    assert answer.json() == {
        "detail": "entry 2 (dear): output_per_mtok is over 999,999,999.999999 USD per million"
        f" tokens, got {shown}"
    }
    assert not ModelPrice.objects.filter(source="api").exists()  # nothing half-saved


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"input_per_mtok": -1}, "entry 1 (acme-coder): input_per_mtok is negative, got -1.0"),
        ({"model": ""}, "entry 1: `model` is empty"),
        ({"model": "x" * 201}, "entry 1: `model` is longer than 200 characters"),
        ({"aliases": ["ok", ""]}, "entry 1 (acme-coder): aliases an alias is empty"),
        (
            {"valid_from": "2300-01-01"},
            "entry 1 (acme-coder): valid_from 2300-01-01 is outside 1970-2199",
        ),
    ],
)
def test_other_bad_prices_are_a_422_with_one_line(
    client: Client, db: None, auth_headers, change: dict[str, object], detail: str
) -> None:
    bad = [{**PRICES[0], **change}]
    answer = client.post("/api/prices", bad, content_type="application/json", headers=auth_headers)
    assert (answer.status_code, answer.json()) == (422, {"detail": detail})


def test_posted_prices_carry_fast_mode_and_long_context_cache_writes(
    client, db: None, auth_headers
):
    tiers = {
        "fast_input_per_mtok": 12,
        "long_input_per_mtok": 4,
        "long_cache_write_per_mtok": 5,
        "long_cache_write_1h_per_mtok": 8,
    }
    body = [{**PRICES[0], **tiers}]
    client.post("/api/prices", body, content_type="application/json", headers=auth_headers)
    row = ModelPrice.objects.get(model="acme-coder")
    assert {name: getattr(row, name) for name in tiers} == {
        "fast_input_per_mtok": Decimal(12),
        "long_input_per_mtok": Decimal(4),
        "long_cache_write_per_mtok": Decimal(5),
        "long_cache_write_1h_per_mtok": Decimal(8),
    }
