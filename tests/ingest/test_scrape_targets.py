"""The beat tick: due targets are claimed once, scraped, spooled and loaded together."""

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import warehouse
from analytics.serving.models import ScrapeTarget
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines import serving_spool
from ingest.pipelines.vllm_scrape import PendingScrape
from ingest.scrape_targets import claim_due_targets, register_target, scrape_due_targets
from tests.loopback import loopback
from tests.vllm_text import EngineState, v1_text

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _count(table: str) -> int:
    row = warehouse.fetch_one(f"SELECT count(*) AS n FROM {table}")
    return int(row["n"]) if row else 0


def test_a_due_target_is_claimed_once_per_interval(db: None) -> None:
    register_target("http://127.0.0.1:9/metrics", "a", interval_s=15)
    assert [t.name for t in claim_due_targets(NOW)] == ["a"]
    assert claim_due_targets(NOW + timedelta(seconds=5)) == []
    assert [t.name for t in claim_due_targets(NOW + timedelta(seconds=15))] == ["a"]


def test_ticks_spool_scrapes_and_load_them_in_one_commit_when_due(lake: Path, db: None) -> None:
    with loopback() as server:
        server.serve_text("/metrics", v1_text({"0": EngineState(kv_usage=0.5)}))
        register_target(server.url("/metrics"), "gpu-a", interval_s=15)
        register_target(server.url("/missing"), "gpu-b", interval_s=15)
        first = scrape_due_targets(NOW, flush_s=30)
        assert first == {"scraped": 2, "loaded_scrapes": 0}
        assert len(serving_spool.pending_files()) == 2 and _count("serving_scrapes") == 0
        second = scrape_due_targets(NOW + timedelta(seconds=30), flush_s=30)
    assert second == {"scraped": 2, "loaded_scrapes": 4}
    assert serving_spool.pending_files() == []
    rows = warehouse.fetch_all(
        "SELECT instance, count(*) AS n, bool_and(up) AS up, any_value(error) AS error"
        " FROM serving_scrapes GROUP BY instance ORDER BY instance"
    )
    assert rows == [
        {"instance": "gpu-a", "n": 2, "up": True, "error": None},
        {"instance": "gpu-b", "n": 2, "up": False, "error": "HTTP 404 Not Found"},
    ]
    assert ScrapeTarget.objects.get(name="gpu-a").last_attempt_at == NOW + timedelta(seconds=30)


def test_a_spooled_scrape_comes_back_exactly(db: None) -> None:
    """Every float survives the spool: the +Inf bucket bound and NaN values included."""
    text = v1_text({"0": EngineState(kv_usage=0.5)}) + "vllm:odd_gauge NaN\n"
    scrape = parse_scrape(text)
    assert math.inf in scrape.les
    path = serving_spool.append(PendingScrape("gpu-a", NOW, scrape=scrape))
    try:
        (back,) = serving_spool.read([path])
    finally:
        serving_spool.discard([path])
    assert back.instance == "gpu-a" and back.ts == NOW and back.scrape is not None
    assert back.scrape.les == scrape.les
    assert [str(v) for v in back.scrape.values] == [str(v) for v in scrape.values]
    assert "nan" in [str(v) for v in back.scrape.values]
    same = {"values"}
    assert {k: v for k, v in vars(back.scrape).items() if k not in same} == {
        k: v for k, v in vars(scrape).items() if k not in same
    }


def test_an_unreadable_spool_file_is_set_aside_not_loaded(db: None) -> None:
    bad = serving_spool.spool_dir() / "1700000000000000-1-1.json"
    bad.write_text("{not json")
    try:
        assert serving_spool.read([bad]) == []
        assert (serving_spool.spool_dir() / "rejected" / bad.name).exists()
        assert not bad.exists()
    finally:
        (serving_spool.spool_dir() / "rejected" / bad.name).unlink(missing_ok=True)


def test_a_flush_that_finds_another_flushing_leaves_the_files_to_it(lake: Path, db: None) -> None:
    from ingest.scrape_targets import flush_spool
    from lib.file_locks import held_alone

    scrape = parse_scrape(v1_text({"0": EngineState(kv_usage=0.5)}))
    serving_spool.append(PendingScrape("gpu-a", NOW, scrape=scrape))
    # Another worker of this machine holds the spool's flush lock meanwhile.
    with held_alone(serving_spool.spool_dir() / ".flush.lock") as held:
        assert held
        assert flush_spool(NOW).scrapes == 0
        assert len(serving_spool.pending_files()) == 1 and _count("serving_scrapes") == 0
    assert flush_spool(NOW).scrapes == 1
    assert serving_spool.pending_files() == [] and _count("serving_scrapes") == 1
