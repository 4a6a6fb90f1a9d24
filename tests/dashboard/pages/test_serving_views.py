"""dashboard/pages/serving_views.py: the fleet, KV cache, speculative decoding, request
lengths and SLO views, from scrapes whose figures are worked out by hand here; each view
filters by instance and model, and a user in a team sees only their team's instances."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from django.test import Client

from analytics.costs.models import Team
from analytics.serving.models import ScrapeTarget
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.people import grant

PASSWORD = "serving-views-password"
START = datetime(2026, 1, 14, 10, 0, tzinfo=UTC)
WINDOW = "start=2026-01-14T09:59:00Z&end=2026-01-14T10:05:00Z&bucket=1m"


def body(step: int, model: str) -> str:
    """A V1 scrape; counters and histograms grow by `step` units of the figures below."""
    labels = f'engine="0",model_name="{model}"'
    drafts, draft_tokens, accepted = 100 * step, 300 * step, 150 * step
    by_position = (80 * step, 50 * step, 20 * step)
    ttft = (10 * step, 30 * step, 35 * step, 40 * step)  # le 0.1, 0.5, 1.0, +Inf
    prompt = (4 * step, 6 * step, 8 * step)  # le 100, 1000, +Inf
    lines = [
        "# TYPE vllm:kv_cache_usage_perc gauge",
        f"vllm:kv_cache_usage_perc{{{labels}}} 0.25",
        "# TYPE vllm:num_requests_running gauge",
        f"vllm:num_requests_running{{{labels}}} 3",
        "# TYPE vllm:num_requests_waiting gauge",
        f"vllm:num_requests_waiting{{{labels}}} 1",
        "# TYPE vllm:spec_decode_num_drafts counter",
        f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts}",
        "# TYPE vllm:spec_decode_num_draft_tokens counter",
        f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {draft_tokens}",
        "# TYPE vllm:spec_decode_num_accepted_tokens counter",
        f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {accepted}",
        "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter",
        *(
            f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{p}"}} {n}'
            for p, n in enumerate(by_position)
        ),
        "# TYPE vllm:time_to_first_token_seconds histogram",
        *(
            f'vllm:time_to_first_token_seconds_bucket{{{labels},le="{le}"}} {n}'
            for le, n in zip(("0.1", "0.5", "1.0", "+Inf"), ttft, strict=True)
        ),
        f"vllm:time_to_first_token_seconds_count{{{labels}}} {ttft[-1]}",
        f"vllm:time_to_first_token_seconds_sum{{{labels}}} {12 * step}",
        "# TYPE vllm:request_prompt_tokens histogram",
        *(
            f'vllm:request_prompt_tokens_bucket{{{labels},le="{le}"}} {n}'
            for le, n in zip(("100.0", "1000.0", "+Inf"), prompt, strict=True)
        ),
        f"vllm:request_prompt_tokens_count{{{labels}}} {prompt[-1]}",
        f"vllm:request_prompt_tokens_sum{{{labels}}} {2000 * step}",
        "# TYPE vllm:request_prefill_time_seconds histogram",
        *(
            f'vllm:request_prefill_time_seconds_bucket{{{labels},le="{le}"}} {n}'
            for le, n in zip(("0.1", "1.0", "+Inf"), (5 * step, 8 * step, 10 * step), strict=True)
        ),
        f"vllm:request_prefill_time_seconds_count{{{labels}}} {10 * step}",
        f"vllm:request_prefill_time_seconds_sum{{{labels}}} {3 * step}",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def served(lake: object, db: None, django_user_model: Any) -> None:
    """gpu-a (team a, model-a) and gpu-b (no team, model-b): two scrapes each, a minute
    apart, the second one step above the first."""
    team = Team.objects.create(name="a", run_patterns=["a-*"])
    ScrapeTarget.objects.create(name="gpu-a", url="http://gpu-a/metrics", team=team)
    pending = []
    for instance, model in (("gpu-a", "model-a"), ("gpu-b", "model-b")):
        for step in (1, 2):
            text = body(step, model)
            ts = START + timedelta(minutes=step)
            pending.append(PendingScrape(instance, ts, scrape=parse_scrape(text)))
    load_scrapes(pending)
    grant(django_user_model.objects.create_user("ops", password=PASSWORD), "admin")
    grant(django_user_model.objects.create_user("ann", password=PASSWORD), "viewer", teams=(team,))


def _client(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def _chart(client: Client, name: str, query: str) -> dict[str, Any]:
    answer = client.get(f"/serving/views/charts/{name}.json?{query}")
    assert answer.status_code == 200, answer.content
    return orjson.loads(answer.content)


def test_the_spec_decode_view_shows_rates_worked_out_by_hand(served: None) -> None:
    client = _client("ops")
    page = client.get(f"/serving/spec-decode/?instance=gpu-a&{WINDOW}").content.decode()
    # One minute of growth: 150 accepted of 300 draft tokens in 100 drafts.
    assert "50.0%" in page
    assert "2.50" in page  # 1 + 150 / 100
    positions = _chart(client, "positions", f"instance=gpu-a&{WINDOW}")["data"][0]
    assert positions["x"] == ["0", "1", "2"]
    assert positions["y"] == pytest.approx([0.8, 0.5, 0.2])  # 80, 50, 20 of 100 drafts
    spec = _chart(client, "spec", f"instance=gpu-a&{WINDOW}")["data"]
    assert [v for v in spec[0]["y"] if v is not None] == [0.5]


def test_the_fleet_sums_both_instances_and_a_model_filters_to_one(served: None) -> None:
    client = _client("ops")
    whole = client.get(f"/serving/spec-decode/?{WINDOW}").content.decode()
    assert re.search(r"Drafts</div><div class=\"value\">200<", whole)  # 100 each
    one = client.get(f"/serving/spec-decode/?model=model-b&{WINDOW}").content.decode()
    assert re.search(r"Drafts</div><div class=\"value\">100<", one)


def test_slo_attainment_counts_the_bucket_at_the_target_and_says_when_it_is_not_a_bound(
    served: None,
) -> None:
    client = _client("ops")
    exact = client.get(f"/serving/slo/?instance=gpu-a&ttft_target=0.5&{WINDOW}").content.decode()
    # 30 of 40 requests had a TTFT at or under 0.5 s.
    assert re.search(
        r"<td class=\"num\">30</td>\s*<td class=\"num\">40</td>\s*<td class=\"num\">75.0%", exact
    )
    near = client.get(f"/serving/slo/?instance=gpu-a&ttft_target=0.7&{WINDOW}").content.decode()
    assert "approximate" in near  # 0.7 is not a bound: 0.5's count is used
    assert re.search(r"75.0%", near)
    bad = client.get(f"/serving/slo/?instance=gpu-a&ttft_target=soon&{WINDOW}")
    assert bad.status_code == 422
    assert "ttft_target must be a number of seconds" in bad.content.decode()


def test_the_lengths_heatmap_counts_requests_per_bucket(served: None) -> None:
    client = _client("ops")
    heat = _chart(client, "request_prompt_tokens", f"instance=gpu-a&{WINDOW}")["data"][0]
    assert heat["type"] == "heatmap"
    assert heat["y"] == ["≤ 100", "≤ 1000", "+Inf"]
    # In the minute of growth: 4 prompts up to 100 tokens, 2 more up to 1000, 2 above.
    columns = [[row[i] or 0 for row in heat["z"]] for i in range(len(heat["x"]))]
    assert sorted(columns, key=sum)[-1] == [4, 2, 2]
    assert sum(map(sum, columns)) == 8


def test_the_fleet_table_has_a_row_per_instance_and_engine(served: None) -> None:
    client = _client("ops")
    page = client.get(f"/serving/fleet/?{WINDOW}").content.decode()
    assert "gpu-a" in page and "gpu-b" in page
    assert "25.0%" in page  # KV usage
    balance = _chart(client, "balance", WINDOW)["data"]
    assert balance[0]["x"] == ["gpu-a", "gpu-b"]
    assert balance[0]["y"] == [3, 3]


def test_a_team_member_sees_only_their_teams_instance_in_every_view(served: None) -> None:
    client = _client("ann")
    for view in ("fleet", "kv-cache", "spec-decode", "lengths", "slo"):
        page = client.get(f"/serving/{view}/?{WINDOW}")
        assert page.status_code == 200, view
        text = page.content.decode()
        assert "gpu-a" in text and "gpu-b" not in text and "model-b" not in text, view
        assert client.get(f"/serving/{view}/?instance=gpu-b&{WINDOW}").status_code == 404
    # Without an instance the member's own is shown, never the fleet's sums.
    own = client.get(f"/serving/spec-decode/?{WINDOW}").content.decode()
    assert re.search(r"Drafts</div><div class=\"value\">100<", own)
    assert client.get(f"/serving/views/charts/spec.json?instance=gpu-b&{WINDOW}").status_code == 404


def test_the_instance_page_charts_latency_by_phase(served: None) -> None:
    client = _client("ops")
    page = client.get(f"/serving/instance/gpu-a/?{WINDOW}").content.decode()
    for name in ("queue_phase", "prefill", "decode", "inference", "tpot"):
        assert f"/serving/instance/charts/{name}.json" in page
    answer = client.get(f"/serving/instance/charts/prefill.json?instance=gpu-a&{WINDOW}")
    prefill = orjson.loads(answer.content)
    by_name = {t["name"]: [v for v in t["y"] if v is not None] for t in prefill["data"]}
    # Of 10 prefills in the minute, 5 took up to 0.1 s, 3 more up to 1 s, 2 longer:
    # p50 is the 5th, at the top of the first bucket; p95 lies past the last finite bound,
    # which Prometheus answers with that bound.
    assert by_name["p50"] == [pytest.approx(0.1)]
    assert by_name["p95"] == [pytest.approx(1.0)]
