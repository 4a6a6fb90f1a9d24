import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

import warehouse
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines.scrape_baselines import forget_cached_states
from ingest.pipelines.vllm_scrape import PendingScrape, collect_scrape, load_scrapes
from tests.loopback import loopback
from tests.vllm_text import EngineState, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_scrape_stores_every_sample_with_instance_labels_and_time(lake: Path) -> None:
    text = v1_text({"0": EngineState(kv_usage=0.5), "1": EngineState(kv_usage=0.25)})
    with loopback() as server:
        server.serve_text("/metrics", text)
        pending = collect_scrape("gpu-a", server.url("/metrics"), now=T0)
    result = load_scrapes([pending])
    exposed = sum(1 for line in text.splitlines() if not line.startswith("#"))
    assert (result.scrapes, result.samples, result.failed) == (1, exposed, 0)
    row = warehouse.fetch_one(
        "SELECT instance, ts, labels, value FROM serving_samples "
        "WHERE name = 'vllm:kv_cache_usage_perc' AND engine = '1'"
    )
    assert row == {
        "instance": "gpu-a",
        "ts": T0,
        "labels": orjson.dumps({"engine": "1", "model_name": "meta-llama/Llama-3.1-8B"}).decode(),
        "value": 0.25,
    }
    scrape = warehouse.fetch_one(
        "SELECT up, error, samples, engine_kind, engines FROM serving_scrapes"
    )
    assert scrape == {
        "up": True,
        "error": None,
        "samples": exposed,
        "engine_kind": "v1",
        "engines": 2,
    }


def test_failed_scrapes_are_recorded_with_a_one_line_reason_and_no_samples(lake: Path) -> None:
    with loopback() as server:
        server.serve_text("/garbage", "<html>\n<body>oops</body></html>\n")
        server.serve_text("/error", "boom", status=500)
        server.serve_text("/slow", v1_text({"0": EngineState()}))
        server.serve_text(
            "/labels",
            '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{gpu="3"} 1\n',
        )
        pending = [
            collect_scrape("garbage", server.url("/garbage"), now=T0),
            collect_scrape("error", server.url("/error"), now=T0),
            collect_scrape("labels", server.url("/labels"), now=T0),
        ]
        server.delay_s = 0.5
        pending.append(collect_scrape("slow", server.url("/slow"), timeout_s=0.1, now=T0))
    pending.append(collect_scrape("down", f"http://127.0.0.1:{_free_port()}/metrics", now=T0))
    result = load_scrapes(pending)
    assert (result.scrapes, result.failed, result.samples) == (0, 5, 0)
    errors = {
        r["instance"]: r["error"]
        for r in warehouse.fetch_all("SELECT instance, error FROM serving_scrapes WHERE NOT up")
    }
    assert errors["garbage"].startswith("not the Prometheus text format")
    assert errors["error"] == "HTTP 500 Internal Server Error"
    assert errors["labels"] == "unexpected labels gpu on vllm:num_requests_running"
    assert errors["slow"] == "timed out after 0.1 s"
    assert errors["down"] == "connection refused"
    assert all("\n" not in e for e in errors.values())
    assert warehouse.fetch_one("SELECT count(*) AS n FROM serving_samples") == {"n": 0}


def test_loading_the_same_scrape_twice_stores_it_once(lake: Path) -> None:
    with loopback() as server:
        server.serve_text("/metrics", v1_text({"0": EngineState(preemptions=3)}))
        pending = collect_scrape("gpu-a", server.url("/metrics"), now=T0)
    first = load_scrapes([pending])
    again = load_scrapes([pending])
    assert (first.duplicates, again.duplicates, again.samples) == (0, 1, 0)
    assert warehouse.fetch_one("SELECT count(*) AS n FROM serving_scrapes") == {"n": 1}


def test_increases_are_computed_against_the_previous_stored_scrape(lake: Path) -> None:
    with loopback() as server:
        state = EngineState(preemptions=3)
        server.serve_text("/metrics", v1_text({"0": state}))
        first = collect_scrape("gpu-a", server.url("/metrics"), now=T0)
        load_scrapes([first])
        state.preemptions = 10
        server.serve_text("/metrics", v1_text({"0": state}))
        second = collect_scrape("gpu-a", server.url("/metrics"), now=T0 + timedelta(seconds=15))
    forget_cached_states()  # force reading the baseline back from the warehouse
    load_scrapes([second])
    rows = warehouse.fetch_all(
        "SELECT ts, delta FROM serving_samples"
        " WHERE name = 'vllm:num_preemptions_total' ORDER BY ts"
    )
    assert [r["delta"] for r in rows] == [None, 7.0]


def test_a_start_time_that_moves_backwards_is_no_restart_in_memory_or_read_back(
    lake: Path,
) -> None:
    # preemptions 3, 10, 12, 4 with `_created` 100, 90, 100, 110: 10 - 3 = 7 and 12 - 10 = 2
    # (90 is older and 100 not newer than the newest seen), then 110 is newer: a restart,
    # the increase is the new value 4. The same whether the baseline is remembered by the
    # process or read back from the warehouse.
    steps = ((3.0, 100.0), (10.0, 90.0), (12.0, 100.0), (4.0, 110.0))
    for read_back in (False, True):
        instance = f"gpu-{read_back}"
        for i, (value, created) in enumerate(steps):
            if read_back:
                forget_cached_states()
            text = v1_text({"0": EngineState(preemptions=value, created=created)})
            ts = T0 + timedelta(seconds=15 * i)
            load_scrapes([PendingScrape(instance, ts, scrape=parse_scrape(text))])
        rows = warehouse.fetch_all(
            "SELECT delta FROM serving_samples WHERE instance = ? "
            "AND name = 'vllm:num_preemptions_total' ORDER BY ts",
            [instance],
        )
        assert [r["delta"] for r in rows] == [None, 7.0, 2.0, 4.0], instance
        resets = warehouse.fetch_one(
            "SELECT sum(resets) AS n FROM serving_scrapes WHERE instance = ?", [instance]
        )
        # five counter families and the TTFT histogram's four buckets, count and sum all
        # carry the same start time, so each restart is counted once per series
        assert resets is not None and resets["n"] == 5 + 6
