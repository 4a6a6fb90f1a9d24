"""The daily cost report on real Claude Code transcripts and on agent events: priced at
given prices to the cent, split lines priced once, logged costs winning, unpriced models
listed, day boundaries in UTC or a given zone."""

from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import orjson
import pytest

from analytics.costs.models import GpuPrice, ModelPrice, Team
from analytics.costs.report import TeamCost, TrendPoint, build_daily_report
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.agent_events import ingest_body
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.codex import run_codex
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from lib.access import Seen
from tests.conftest import FIXTURE_ROOT
from tests.vllm_text import EngineState, v1_text

pytestmark = pytest.mark.usefixtures("lake")

FIXTURES = FIXTURE_ROOT / "agent-logs"
SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
CLAUDE_FILES = [
    FIXTURES / "claude-code-session-start-and-subagent-call.jsonl",
    FIXTURES / "claude-code-commit-and-tool-error.jsonl",
    FIXTURES / "claude-code-subagent-agent-aac57f5.jsonl",
]


def set_price(model: str, i: str, c: str, w: str, o: str, valid_from: str = "2025-01-01") -> None:
    ModelPrice.objects.create(
        model=model,
        input_per_mtok=Decimal(i),
        cached_input_per_mtok=Decimal(c),
        cache_write_per_mtok=Decimal(w),
        output_per_mtok=Decimal(o),
        valid_from=date.fromisoformat(valid_from),
    )


def ingest_events(*events: dict[str, object]) -> None:
    ingest_body(b"".join(orjson.dumps(e) + b"\n" for e in events))


def llm_call(ts: str, run: str, model: str, i: int, c: int, w: int, o: int, **extra: object):
    usage = {
        "input_tokens": i,
        "cached_input_tokens": c,
        "cache_write_tokens": w,
        "output_tokens": o,
    }
    return {
        "ts": ts,
        "run": run,
        "agent": "a",
        "event": "llm_call",
        "model": model,
        "usage": usage,
        **extra,
    }


def claude_response(
    message_id: str,
    usage: dict[str, object],
    *,
    model: str = "claude-sonnet-4-5-20250929",
    **extra: object,
) -> dict[str, object]:
    """One Claude Code transcript line: an API response of session s1 on 2026-01-14."""
    return {
        "type": "assistant",
        "sessionId": "s1",
        "timestamp": "2026-01-14T10:00:00.000Z",
        "requestId": f"req_{message_id}",
        "message": {
            "id": message_id,
            "type": "message",
            "model": model,
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
        },
        **extra,
    }


def ingest_transcript(folder: Path, *lines: dict[str, object]) -> None:
    path = folder / "s1.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    run_claude_code([str(path)])


@pytest.fixture
def priced(db: None) -> None:
    ModelPrice.objects.all().delete()
    set_price("claude-haiku-4-5", "1", "0.1", "1.25", "5")
    set_price("claude-sonnet-4-5", "3", "0.3", "3.75", "15")


def test_claude_code_lines_split_per_content_block_are_priced_once(priced: None) -> None:
    run_claude_code([str(p) for p in CLAUDE_FILES])
    report = build_daily_report(date(2026, 2, 12), seen=Seen.all())
    by_model = {m.model: m for m in report.by_model}
    # Haiku: 11 x 1 + 384,921 x 0.1 + 41,517 x 1.25 + 608 x 5 = 93,439.35 per million.
    assert by_model["claude-haiku-4-5-20251001"].usd == pytest.approx(0.09343935, abs=1e-9)
    assert by_model["claude-haiku-4-5-20251001"].priced_as == "claude-haiku-4-5"
    # Sonnet: 2,408 x 3 + 29,274 x 0.3 + 18,814 x 3.75 + 944 x 15 = 100,718.7 per million.
    assert by_model["claude-sonnet-4-5-20250929"].usd == pytest.approx(0.1007187, abs=1e-9)
    assert round(report.total_usd, 2) == 0.19
    assert [asdict(r) for r in report.by_run] == [
        {
            "run": SESSION,
            "usd": pytest.approx(0.19415805, abs=1e-9),
            "calls": 15,
            "unpriced_calls": 5,
        }
    ]
    # Opus 4.6 has no price here: listed, its 5 calls add nothing, never a silent zero.
    assert report.unpriced == ["claude-opus-4-6"]
    assert by_model["claude-opus-4-6"].unpriced_calls == 5
    assert by_model["claude-opus-4-6"].computed_usd is None
    # Cache savings: reads at the input price minus their price.
    assert report.cache_savings_usd == pytest.approx((384921 * 0.9 + 29274 * 2.7) / 1e6, abs=1e-9)


def test_a_team_can_be_the_log_files_its_calls_came_from(priced: None) -> None:
    run_claude_code([str(p) for p in CLAUDE_FILES])
    Team.objects.create(name="subagents", source_patterns=["*/claude-code-subagent-*"])
    Team.objects.create(name="everyone", run_patterns=["*"], source_patterns=["*"])
    report = build_daily_report(date(2026, 2, 12), seen=Seen.all())
    assert [asdict(t) for t in report.by_team] == [
        {"team": "everyone", "usd": pytest.approx(0.19415805, abs=1e-9), "daily_budget_usd": None},
        # The subagent's three Sonnet calls: 100,718.7 per million.
        {"team": "subagents", "usd": pytest.approx(0.1007187, abs=1e-9), "daily_budget_usd": None},
    ]


def test_a_codex_rollout_is_priced_with_cached_tokens_apart(priced: None) -> None:
    set_price("gpt-5.5", "5", "0.5", "5", "30")
    run_codex([str(FIXTURES / "codex-rollout-0.135.jsonl")])
    report = build_daily_report(date(2026, 6, 5), seen=Seen.all())
    # Its cumulative total: 22,539 input of which 20,864 cached, 10 output:
    # 1,675 x 5 + 20,864 x 0.5 + 10 x 30 = 19,107 per million.
    assert report.total_usd == pytest.approx(0.019107, abs=1e-9)
    assert report.unpriced == []


def test_a_logged_cost_wins_and_the_computed_one_is_kept(priced: None) -> None:
    ingest_events(
        llm_call(
            "2026-01-14T10:00:00Z", "r1", "claude-haiku-4-5", 1_000_000, 0, 0, 0, cost_usd=0.5
        ),
        llm_call("2026-01-14T11:00:00Z", "r1", "claude-haiku-4-5", 0, 0, 0, 100_000),
    )
    report = build_daily_report(date(2026, 1, 14), seen=Seen.all())
    assert report.total_usd == pytest.approx(0.5 + 0.5)
    assert report.logged_usd == pytest.approx(0.5)
    assert report.computed_usd == pytest.approx(1.0 + 0.5)


def test_days_are_utc_unless_a_zone_is_given(priced: None) -> None:
    ingest_events(
        llm_call("2026-01-14T23:30:00Z", "r1", "claude-haiku-4-5", 1_000_000, 0, 0, 0),
        llm_call("2026-01-15T00:30:00Z", "r1", "claude-haiku-4-5", 2_000_000, 0, 0, 0),
    )
    assert build_daily_report(date(2026, 1, 14), seen=Seen.all()).total_usd == pytest.approx(1.0)
    # In New York (UTC-5) both calls fall on the 14th.
    ny = build_daily_report(date(2026, 1, 14), "America/New_York", seen=Seen.all())
    assert ny.total_usd == pytest.approx(3.0)
    # A price from the 15th (UTC) applies to the part of New York's 14th after UTC midnight.
    set_price("claude-haiku-4-5", "2", "0.2", "2.5", "10", valid_from="2026-01-15")
    ny = build_daily_report(date(2026, 1, 14), "America/New_York", seen=Seen.all())
    assert ny.total_usd == pytest.approx(1.0 + 4.0)


def test_trend_teams_and_gpu_cost(priced: None) -> None:
    ingest_events(
        llm_call("2026-01-13T10:00:00Z", "browser-1", "claude-haiku-4-5", 1_000_000, 0, 0, 0),
        llm_call("2026-01-14T10:00:00Z", "browser-1", "claude-haiku-4-5", 2_000_000, 0, 0, 0),
        llm_call("2026-01-14T10:00:00Z", "solver-1", "claude-haiku-4-5", 0, 0, 0, 200_000),
    )
    Team.objects.create(name="browser", run_patterns=["browser-*"], daily_budget_usd=5)
    GpuPrice.objects.create(
        target="vllm-a", gpus=2, usd_per_gpu_hour=Decimal("2.5"), valid_from=date(2026, 1, 1)
    )
    report = build_daily_report(date(2026, 1, 14), seen=Seen.all())
    assert report.previous_day_usd == pytest.approx(1.0)
    assert report.change_usd == pytest.approx(2.0)
    assert report.change_pct == pytest.approx(200.0)
    assert report.trend[-1] == TrendPoint(date="2026-01-13", usd=1.0)
    assert report.mean_7d_usd == pytest.approx(1 / 7, abs=1e-6)
    assert report.by_team == [TeamCost(team="browser", usd=2.0, daily_budget_usd=5.0)]
    assert [r.run for r in report.top_runs] == ["browser-1", "solver-1"]
    assert report.gpu[0].usd == pytest.approx(2 * 2.5 * 24)
    assert report.gpu[0].usd_per_mtok is None  # nothing scraped: no tokens generated
    assert report.total_usd == pytest.approx(3.0 + 120.0)


def test_a_call_without_a_model_is_unpriced(priced: None) -> None:
    ingest_events(
        {
            "ts": "2026-01-14T10:00:00Z",
            "run": "r",
            "agent": "a",
            "event": "llm_call",
            "usage": {"input_tokens": 5, "output_tokens": 5},
        }
    )
    report = build_daily_report(date(2026, 1, 14), seen=Seen.all())
    assert report.unpriced == ["(no model)"]
    assert report.total_usd == 0.0


def test_gpu_cost_per_million_generated_tokens_comes_from_the_scrapes(priced: None) -> None:
    t0 = datetime(2026, 1, 14, 10, tzinfo=UTC)
    # The generation counter goes 1,000,000 -> 3,000,000 -> (restart) 500,000: a reset is
    # a reset, so 2,000,000 + 500,000 tokens were generated.
    counts = [1_000_000, 3_000_000, 500_000]
    load_scrapes(
        [
            PendingScrape(
                "vllm-a",
                t0 + timedelta(minutes=i),
                scrape=parse_scrape(v1_text({"0": EngineState(generation_tokens=n)})),
            )
            for i, n in enumerate(counts)
        ]
    )
    GpuPrice.objects.create(
        target="vllm-a", gpus=1, usd_per_gpu_hour=Decimal("2"), valid_from=date(2026, 1, 1)
    )
    [gpu] = build_daily_report(date(2026, 1, 14), seen=Seen.all()).gpu
    assert gpu.generated_tokens == 2_500_000
    assert gpu.usd == pytest.approx(48.0)
    assert gpu.usd_per_mtok == pytest.approx(48.0 / 2.5)


def test_a_call_past_200k_prompt_tokens_is_billed_whole_at_long_context_rates(
    db: None, tmp_path: Path
) -> None:
    ingest_transcript(
        tmp_path,
        # Prompt 10,000 + 150,000 + 100,000 = 260,000 tokens: long context.
        claude_response(
            "msg_long",
            {
                "input_tokens": 10_000,
                "cache_read_input_tokens": 150_000,
                "cache_creation_input_tokens": 100_000,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": 60_000,
                    "ephemeral_1h_input_tokens": 40_000,
                },
                "output_tokens": 2_000,
            },
        ),
        # Prompt 1,000 + 100,000 + 50,000 = 151,000 tokens: standard.
        claude_response(
            "msg_short",
            {
                "input_tokens": 1_000,
                "cache_read_input_tokens": 100_000,
                "cache_creation_input_tokens": 50_000,
                "output_tokens": 1_000,
            },
        ),
    )
    report = build_daily_report(date(2026, 1, 14), seen=Seen.all())
    # At the shipped Sonnet 4.5 prices (3 / 0.3 / 3.75 / 6 / 15; long context 6 / 0.6 /
    # 7.5 / 12 / 22.5), per million tokens:
    # long:  10,000 x 6 + 150,000 x 0.6 + 60,000 x 7.5 + 40,000 x 12 + 2,000 x 22.5
    #        = 60,000 + 90,000 + 450,000 + 480,000 + 45,000 = 1,125,000
    # short: 1,000 x 3 + 100,000 x 0.3 + 50,000 x 3.75 + 1,000 x 15
    #        = 3,000 + 30,000 + 187,500 + 15,000 = 235,500
    assert report.total_usd == pytest.approx(1.3605, abs=1e-9)


OPUS, FEB_12 = "claude-opus-4-6", "2026-02-12T10:00:00.000Z"  # Opus 4.6 is priced from 02-05


def test_a_fast_mode_call_is_priced_at_the_models_fast_rates(db: None, tmp_path: Path) -> None:
    usage: dict[str, object] = {
        "input_tokens": 100,
        "cache_read_input_tokens": 20_000,
        "cache_creation_input_tokens": 1_000,
        "output_tokens": 500,
    }
    ingest_transcript(
        tmp_path,
        claude_response("msg_fast", {**usage, "speed": "fast"}, model=OPUS, timestamp=FEB_12),
        claude_response("msg_standard", usage, model=OPUS, timestamp=FEB_12),
    )
    [opus] = build_daily_report(date(2026, 2, 12), seen=Seen.all()).by_model
    # The shipped Opus 4.6 row, per million tokens: standard 5 / 0.5 / 6.25 / 25, fast
    # six times that, 30 / 3 / 37.5 / 150.
    # fast:     100 x 30 + 20,000 x 3 + 1,000 x 37.5 + 500 x 150 = 175,500
    # standard: 100 x 5 + 20,000 x 0.5 + 1,000 x 6.25 + 500 x 25 = 29,250
    assert opus.usd == pytest.approx(0.20475, abs=1e-9)
    assert opus.calls == 2
    # Cache reads at the input price minus their price, at each call's rates:
    # 20,000 x (30 - 3) + 20,000 x (5 - 0.5) = 540,000 + 90,000 per million.
    assert opus.cache_savings_usd == pytest.approx(0.63, abs=1e-9)


def test_an_advisors_tokens_in_a_response_are_priced_at_the_advisors_model(
    db: None, tmp_path: Path
) -> None:
    usage = {
        "input_tokens": 1_000,
        "cache_read_input_tokens": 10_000,
        "cache_creation_input_tokens": 0,
        "output_tokens": 2_000,
        "iterations": [
            # The executor's own part: already in the top-level figures above.
            {"type": "message", "input_tokens": 400, "output_tokens": 500},
            {
                "type": "advisor_message",
                "model": OPUS,
                "input_tokens": 12_000,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
                "output_tokens": 700,
            },
        ],
    }
    ingest_transcript(tmp_path, claude_response("msg_advised", usage, timestamp=FEB_12))
    report = build_daily_report(date(2026, 2, 12), seen=Seen.all())
    by_model = {m.model: (m.calls, m.usd) for m in report.by_model}
    # Sonnet 4.5 (the executor): 1,000 x 3 + 10,000 x 0.3 + 2,000 x 15 = 36,000 per million.
    # Opus 4.6 (the advisor): 12,000 x 5 + 700 x 25 = 77,500 per million.
    assert by_model == {
        OPUS: (1, pytest.approx(0.0775, abs=1e-9)),
        "claude-sonnet-4-5-20250929": (1, pytest.approx(0.036, abs=1e-9)),
    }
    assert report.total_usd == pytest.approx(0.1135, abs=1e-9)
