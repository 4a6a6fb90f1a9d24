"""analytics/runs/serving_load.py: the instances that served a run's models and their KV
usage and preemptions on the run's own buckets, against tests/analytics/runs/
serving_load_world.py's hand-made scrapes."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from analytics.runs.serving_load import serving_instances, serving_load
from analytics.serving.queries import KvPoint, PreemptionPoint
from lib.access import Seen
from lib.errors import NotFoundError
from lib.window import TimeRange
from tests.analytics.runs.serving_load_world import MODEL_A, MODEL_B, load_served


def at(minute: int) -> datetime:
    return datetime(2026, 1, 14, 10, minute, tzinfo=UTC)


@pytest.fixture
def served(lake: Path) -> None:
    load_served()


def test_the_instances_serving_the_runs_models_are_found_by_model_name(served: None) -> None:
    assert serving_instances([MODEL_A, MODEL_B, "org/nobody"], Seen.all()) == {
        "gpu-a": MODEL_A,
        "gpu-b": MODEL_B,
    }
    assert serving_instances([MODEL_A], Seen.nothing()) == {}


def test_each_instance_reads_on_the_runs_one_minute_buckets(served: None) -> None:
    load = serving_load("served", 60)
    assert (load.start, load.end) == (at(0), at(4))
    # Most tokens first: model-a's two calls before model-b's one.
    assert load.models == [MODEL_A, MODEL_B]
    [a, b] = load.instances
    assert (a.instance, a.model, b.instance, b.model) == ("gpu-a", MODEL_A, "gpu-b", MODEL_B)
    # (0.25 + 0.75) / 2, (0.5 + 1.0) / 2, 0.625 alone; the largest single sample beside.
    assert a.kv_usage == [
        KvPoint(at(0), 0.5, 0.75),
        KvPoint(at(1), 0.75, 1.0),
        KvPoint(at(2), 0.625, 0.625),
    ]
    # A first scrape has no increase; then 0, 3 and 2 (10:01), 0 (10:02).
    assert a.preemptions == [
        PreemptionPoint(at(0), 0.0),
        PreemptionPoint(at(1), 5.0),
        PreemptionPoint(at(2), 0.0),
    ]
    assert b.kv_usage == [KvPoint(at(2), 0.25, 0.375)]
    assert b.preemptions == [PreemptionPoint(at(2), 2.0)]


def test_an_asked_range_keeps_its_own_buckets_and_models(served: None) -> None:
    load = serving_load("served", 60, TimeRange(at(1), at(2)))
    assert (load.start, load.end, load.models) == (at(1), at(2), [MODEL_A])
    [a] = load.instances
    assert a.kv_usage == [KvPoint(at(1), 0.75, 1.0)]
    assert a.preemptions == [PreemptionPoint(at(1), 5.0)]


def test_a_run_no_instance_served_has_its_models_and_no_instance(served: None) -> None:
    load = serving_load("unserved", 60)
    assert (load.models, load.instances) == (["org/nobody"], [])


def test_a_run_the_reader_does_not_see_is_not_found(served: None) -> None:
    with pytest.raises(NotFoundError):
        serving_load("served", 60, seen=Seen.nothing())
    with pytest.raises(NotFoundError):
        serving_load("no-such-run", 60)


def test_a_reader_gets_only_the_instances_they_see(served: None) -> None:
    seen = Seen(everything=False, runs=frozenset({"served"}), instances=frozenset({"gpu-b"}))
    [b] = serving_load("served", 60, seen=seen).instances
    assert (b.instance, b.kv_usage) == ("gpu-b", [KvPoint(at(2), 0.25, 0.375)])
