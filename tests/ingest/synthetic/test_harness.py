"""The synthetic harness run has the shape the demo and the acceptance checks rely on."""

from datetime import timedelta

import numpy as np

from ingest.synthetic import ErrorTrend, Role, RunSpec
from ingest.synthetic.harness import build_events
from ingest.synthetic.spec import KIND
from ingest.synthetic.truth import GroundTruth

BIG = RunSpec(run="big", seed=3, stall_at=6.5, duplicate_commits=25)


def truth_of(spec: RunSpec) -> GroundTruth:
    events = build_events(spec)
    return GroundTruth(spec, events, len(events), 0, 0)


def test_the_same_seed_gives_the_same_run() -> None:
    spec = RunSpec(run="r", seed=11, hours=3, workers=40, peak_commits_per_hour=200)
    first, second = build_events(spec), build_events(spec)
    assert np.array_equal(first.ts_ms, second.ts_ms)
    assert first.extras == second.extras
    other = build_events(RunSpec(run="r", seed=12, hours=3, workers=40, peak_commits_per_hour=200))
    assert not np.array_equal(first.ts_ms[:100], other.ts_ms[:100])


def test_a_big_run_ramps_to_about_a_thousand_commits_an_hour_and_stalls() -> None:
    truth = truth_of(BIG)
    per_hour = list(truth.commits_per_bucket(3600).values())
    assert len(per_hour) == 12
    assert 900 <= max(per_hour) <= 1100
    assert per_hour[0] < 0.6 * max(per_hour)  # the ramp
    assert per_hour[7] == 0  # 16:30 to 18:00 nothing lands
    [(start, end)] = truth.stalls(timedelta(minutes=30))
    assert (end - start) >= timedelta(minutes=90)
    assert start.hour == 16 and end.hour == 18
    assert 85_000 <= len(truth.events) <= 110_000


def test_agents_keep_working_through_the_stall() -> None:
    truth = truth_of(BIG)
    attempts = [a for a, _ in truth.errors_per_bucket(3600).values()]
    assert attempts[7] > 4000


def test_the_tree_is_root_planners_subplanners_and_hundreds_of_workers() -> None:
    events = build_events(BIG)
    roles = [a.role for a in events.agents]
    assert roles.count(Role.ROOT_PLANNER) == 1
    assert roles.count(Role.PLANNER) == 8 + 16
    assert roles.count(Role.WORKER) == 300
    parents = {a.name: a.parent for a in events.agents}
    assert parents["root"] is None
    assert parents["p-css"] == "root"
    assert parents["sp-css-1"] == "p-css"
    workers = [a for a in events.agents if a.role == Role.WORKER]
    assert {parents[w.parent or ""] for w in workers} <= {"root"} | {
        p for p in parents if p.startswith("p-")
    }
    spawned = events.ts_ms[events.kind == KIND["spawn"]]
    assert spawned.max() - spawned.min() > 8 * 3600 * 1000  # workers keep arriving


def test_a_few_workers_are_placed_by_their_first_event_instead_of_a_spawn() -> None:
    events = build_events(BIG)
    spawnless = {i for i, a in enumerate(events.agents) if not a.logs_spawn}
    assert 3 <= len(spawnless) <= 20
    first_rows: dict[int, int] = {}
    for row, who in enumerate(events.agent.tolist()):
        first_rows.setdefault(who, row)
    for who in spawnless:
        extras = events.extras[first_rows[who]]
        assert extras["role"] == "worker"
        assert extras["parent"] == events.agents[who].parent


def test_commits_logged_twice_come_later_with_the_same_sha() -> None:
    events = build_events(BIG)
    again = np.flatnonzero(events.duplicate)
    assert len(again) == 25
    first_seen: dict[str, int] = {}
    for row in np.flatnonzero(events.kind == KIND["commit"]).tolist():
        sha = events.extras[row]["commit"].get("sha")
        if sha and not events.duplicate[row]:
            first_seen[sha] = row
    for row in again.tolist():
        original = first_seen[events.extras[row]["commit"]["sha"]]
        assert events.ts_ms[row] > events.ts_ms[original]


def test_a_rising_run_fails_more_every_hour_and_a_flat_one_does_not() -> None:
    rising = RunSpec(
        run="r",
        seed=5,
        hours=10,
        workers=48,
        peak_commits_per_hour=160,
        error_trend=ErrorTrend.RISING,
        finished=True,
    )
    rates = [e / a for a, e in truth_of(rising).errors_per_bucket(3600).values()]
    assert rates[-1] > 3 * rates[0]
    flat = [e / a for a, e in truth_of(BIG).errors_per_bucket(3600).values()]
    assert max(flat) - min(flat) < 0.02


def test_a_finished_run_ends_with_every_agent_stopping_the_root_last() -> None:
    spec = RunSpec(run="r", seed=2, hours=4, workers=30, peak_commits_per_hour=120, finished=True)
    events = build_events(spec)
    stops = np.flatnonzero(events.kind == KIND["stop"])
    assert len(stops) == len(events.agents)
    assert events.agents[events.agent[stops[-1]]].name == "root"
    assert events.ts_ms[stops[-1]] == events.ts_ms.max()
