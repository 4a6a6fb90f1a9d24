"""The demo's serving history: the stand-in engine's scrapes over the demo runs' hours,
loaded once, with a preemption storm under browser-demo's stall that the API and Overview
answer as the raw scrapes count it."""

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import mean

import orjson
import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from ingest import demo, demo_serving
from ingest.parsers.vllm import parse_scrape
from ingest.synthetic.harness import build_events

NOW = datetime(2026, 3, 2, 12, 30, 45, tzinfo=UTC)
# browser-demo runs 00:30-12:30 with its stall 6.5 h in, for 1.5 h; compiler-demo starts
# at 23:30 the day before (10 h, ended 3 h ago), so the history starts at 23:00.
STALL = (datetime(2026, 3, 2, 7, 0, tzinfo=UTC), datetime(2026, 3, 2, 8, 30, tzinfo=UTC))
BEFORE = (STALL[0] - timedelta(minutes=90), STALL[0])
PREEMPTIONS = re.compile(r'^vllm:num_preemptions_total\{engine="0",[^}]*\} (\S+)$', re.M)
KV_USAGE = re.compile(r'^vllm:kv_cache_usage_perc\{engine="0",[^}]*\} (\S+)$', re.M)


def raw_scrapes(folder: Path) -> list[tuple[datetime, str]]:
    lines = (folder / demo_serving.HISTORY_FILE).read_bytes().splitlines()
    return [(datetime.fromisoformat(r["ts"]), r["metrics"]) for r in map(orjson.loads, lines)]


def increase_by_hand(scrapes: list[tuple[datetime, str]], span: tuple[datetime, datetime]) -> float:
    """The counter at the last scrape before the end minus at the last one before the start
    (a scrape at the start carries its increase into the range); the engine never restarts."""

    def before(t: datetime) -> float:
        text = [text for ts, text in scrapes if ts < t][-1]
        [value] = PREEMPTIONS.findall(text)
        return float(value)

    return before(span[1]) - before(span[0])


def kv_usage_in(
    scrapes: list[tuple[datetime, str]], span: tuple[datetime, datetime]
) -> list[float]:
    return [float(KV_USAGE.findall(text)[0]) for ts, text in scrapes if span[0] <= ts < span[1]]


def test_the_history_covers_browser_demos_first_to_last_event_hour() -> None:
    history = demo.serving_history(NOW)
    times = history.scrape_times()
    events = build_events(demo.spec_at(demo.BROWSER, NOW))
    first = datetime.fromtimestamp(int(events.ts_ms.min()) / 1000, UTC)
    last = datetime.fromtimestamp(int(events.ts_ms.max()) / 1000, UTC)
    assert times[0] == datetime(2026, 3, 1, 23, 0, tzinfo=UTC)
    assert times[0] <= first.replace(minute=0, second=0, microsecond=0)
    assert times[-1] == datetime(2026, 3, 2, 12, 30, tzinfo=UTC) >= last
    assert len(times) == 13 * 30 + 15 + 1  # every 2 minutes from 23:00 to 12:30
    assert history.surge == STALL


@pytest.fixture
def serving_demo(monkeypatch: pytest.MonkeyPatch) -> list[demo.DemoStep]:
    steps = [s for s in demo.DEMO_STEPS if s.name == "serving-demo"]
    monkeypatch.setattr(demo, "DEMO_STEPS", steps)
    return steps


@pytest.mark.django_db
def test_the_stalls_preemption_storm_is_answered_as_the_raw_scrapes_count_it(
    lake: Path, tmp_path: Path, serving_demo: list[demo.DemoStep], user: object
) -> None:
    [first] = demo.run_demo_steps(tmp_path, now=NOW, progress=None)
    scrapes = raw_scrapes(tmp_path / "serving-demo")
    assert first.written and first.summary.quarantined == 0 and first.summary.duplicates == 0
    assert len(scrapes) == 13 * 30 + 15 + 1

    storm = increase_by_hand(scrapes, STALL)
    calm = increase_by_hand(scrapes, BEFORE)
    assert storm > 10 * calm > 0  # a storm under the stall, against the 90 minutes before
    assert mean(kv_usage_in(scrapes, STALL)) > 0.9 > 0.7 > mean(kv_usage_in(scrapes, BEFORE))

    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    span = f"start={STALL[0].isoformat()}&end={STALL[1].isoformat()}".replace("+00:00", "Z")
    answer = client.get(f"/api/serving/preemptions?instance=demo-vllm&{span}&bucket=30m").json()
    assert answer["total"] == pytest.approx(storm)

    # A second load finds every scrape stored: nothing is added, the answer stays.
    [again] = demo.run_demo_steps(tmp_path, now=NOW, progress=None)
    assert not again.written
    assert (again.summary.accepted, again.summary.duplicates) == (0, len(scrapes))
    repeat = client.get(f"/api/serving/preemptions?instance=demo-vllm&{span}&bucket=30m").json()
    assert repeat["total"] == answer["total"]

    # Overview at the demo's range draws the engine's rows next to the runs'.
    html = client.get(f"/overview/?{span}&bucket=30m").content.decode()
    assert re.search(r'Serving instances</div><div class="value">1</div>', html)
    figure = orjson.loads(client.get(f"/overview/chart.json?{span}&bucket=30m").content)
    by_name = {trace["name"]: trace for trace in figure["data"]}
    assert sum(by_name["demo-vllm preemptions"]["y"]) == pytest.approx(storm)
    assert len(by_name["demo-vllm preemptions"]["y"]) == 3
    assert min(by_name["demo-vllm KV"]["y"]) > 0.85  # each half hour's mean


def test_a_line_that_is_no_scrape_is_set_aside_with_its_position_and_the_rest_read(
    tmp_path: Path,
) -> None:
    start = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)
    history = demo_serving.History(start, start + timedelta(minutes=2), (start, start))
    demo_serving.write_history(tmp_path, history)
    path = tmp_path / demo_serving.HISTORY_FILE
    good = path.read_bytes().splitlines()
    bad_body = orjson.dumps({"ts": "2026-03-02T07:04:00+00:00", "metrics": "vllm:x{ 1\n"})
    path.write_bytes(b"\n".join([good[0], b"not json", bad_body, good[1]]) + b"\n")
    pending, bad = demo_serving.read_history(path)
    assert [p.ts.minute for p in pending] == [0, 4, 2]
    assert [p.up for p in pending] == [True, False, True]
    assert (pending[1].error or "").startswith(f"{path}:3: ")
    assert len(bad) == 1 and bad[0].startswith(f"{path}:2: not a scrape record")


def test_the_history_shows_spec_decoding_lora_and_the_kv_connector_for_their_views() -> None:
    start = datetime(2026, 3, 2, 7, 0, tzinfo=UTC)
    history = demo_serving.History(start, start + timedelta(minutes=40), (start, start))
    ts, text = demo_serving.simulate(history)[-1]
    assert ts == start + timedelta(minutes=40)
    families = {f.name: f for f in text_string_to_metric_families(text)}

    def total(name: str, **labels: str) -> float:
        return sum(
            s.value
            for s in families[name].samples
            if s.name in (name, f"{name}_total", f"{name}_count") and labels.items() <= s.labels.items()
        )  # fmt: skip

    per_pos = [
        total("vllm:spec_decode_num_accepted_tokens_per_pos", position=str(p)) for p in range(3)
    ]
    drafted = total("vllm:spec_decode_num_draft_tokens")
    assert drafted >= total("vllm:spec_decode_num_accepted_tokens") > 0
    assert per_pos[0] > per_pos[1] > per_pos[2] > 0
    running = {
        s.labels["running_lora_adapters"] for s in families["vllm:lora_requests_info"].samples
    }
    assert "sql-lora,support-lora" in running
    assert total("vllm:prompt_tokens_by_source", source="external_kv_transfer") > 0
    assert total("vllm:nixl_xfer_time_seconds") > 0
    assert total("vllm:request_time_per_output_token_seconds") > 0
    assert total("vllm:engine_sleep_state", sleep_state="awake") == 1.0
    scrape = parse_scrape(text)  # today's parser takes it whole
    assert {"kv_usage", "preemptions", "ttft", "itl", "queue_time"} <= set(
        filter(None, scrape.metrics)
    )
