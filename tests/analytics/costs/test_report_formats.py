"""analytics/costs/report_formats.py: the JSON is the report's fields in their order, as the
download and `manage.py cost_report --format json` have always written them."""

from datetime import date
from decimal import Decimal

import orjson
import pytest

from analytics.costs.models import ModelPrice
from analytics.costs.report import build_daily_report
from analytics.costs.report_formats import to_json
from ingest.pipelines.agent_events import ingest_body
from lib.access import Seen

pytestmark = pytest.mark.usefixtures("lake")


def test_the_json_lists_the_reports_fields_in_their_order(db: None) -> None:
    ModelPrice.objects.create(
        model="acme-coder",
        input_per_mtok=Decimal(2),
        output_per_mtok=Decimal(8),
        valid_from=date(2026, 1, 1),
    )
    call = {
        "ts": "2026-01-14T10:00:00Z",
        "run": "r1",
        "agent": "a",
        "event": "llm_call",
        "model": "acme-coder",
        "usage": {"input_tokens": 1_000_000, "output_tokens": 0},
    }
    ingest_body(orjson.dumps(call) + b"\n")

    answer = orjson.loads(to_json(build_daily_report(date(2026, 1, 14), seen=Seen.all())))

    assert list(answer) == [
        "date",
        "tz",
        "start",
        "end",
        "total_usd",
        "api_usd",
        "gpu_usd",
        "logged_usd",
        "computed_usd",
        "cache_savings_usd",
        "calls",
        "by_model",
        "by_run",
        "top_runs",
        "by_team",
        "gpu",
        "by_person",
        "unpriced",
        "price_problems",
        "previous_day_usd",
        "change_usd",
        "change_pct",
        "trend",
        "mean_7d_usd",
    ]
    assert (answer["start"], answer["end"]) == (
        "2026-01-14T00:00:00+00:00",
        "2026-01-15T00:00:00+00:00",
    )
    assert answer["by_model"] == [
        {
            "model": "acme-coder",
            "priced_as": "acme-coder",
            "calls": 1,
            "input_tokens": 1_000_000,
            "cached_input_tokens": 0,
            "cache_write_tokens": 0,
            "output_tokens": 0,
            "usd": 2.0,
            "logged_usd": 0.0,
            "computed_usd": 2.0,
            "cache_savings_usd": 0.0,
            "unpriced_calls": 0,
        }
    ]
    assert answer["top_runs"] == [{"run": "r1", "usd": 2.0, "calls": 1, "unpriced_calls": 0}]
    assert answer["trend"][0] == {"date": "2026-01-07", "usd": 0.0}
