"""A synthetic multi-agent harness run, as columns: who did what, when.

Owns the shape of a realistic run (the multi-agent harness article: a root planner, planners that own
an area, subplanners, hundreds of workers spawned over time that push to one branch and
hand off to the planner that asked): a commit rate that ramps to its peak and decays, an
optional stall (agents keep working, nothing lands), an error rate that stays flat or
rises. Deterministic for a seed. Pure: numbers in, arrays out; no files, no Django.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ingest.synthetic import activity
from ingest.synthetic.spec import (
    HOUR_MS,
    MINUTE_MS,
    Agent,
    Events,
    Role,
    Rows,
    RunSpec,
)


def commit_rate_per_hour(spec: RunSpec, hours: np.ndarray) -> np.ndarray:
    """The intended commit rate (per hour) at each time (in hours), before any stall."""
    ramp = max(spec.ramp_hours, 1e-9)
    rising = 0.25 + 0.75 * np.minimum(1.0, hours / ramp)
    tail = max(spec.hours - spec.ramp_hours, 1e-9)
    falling = 1.0 - spec.decay * np.clip((hours - spec.ramp_hours) / tail, 0.0, 1.0)
    return np.asarray(spec.peak_commits_per_hour * rising * falling, float)


def build_events(spec: RunSpec) -> Events:
    """Simulate the run. Same spec, same events."""
    rng = np.random.default_rng(spec.seed)
    end_ms = int(spec.hours * HOUR_MS)
    # A finished run winds down: no new work in its last 15 minutes, then everyone stops.
    work_end_ms = end_ms - 15 * MINUTE_MS if spec.finished else end_ms
    agents, spawn_ms = _tree(spec, rng, work_end_ms)
    workers = np.flatnonzero([a.role == Role.WORKER for a in agents])
    planners = np.flatnonzero([a.role != Role.WORKER for a in agents])
    worker_spawn = spawn_ms[workers]
    rows = Rows()

    minutes = np.arange(int(np.ceil(work_end_ms / MINUTE_MS)))
    rate = commit_rate_per_hour(spec, (minutes + 0.5) / 60) / 60
    rate[minutes < 3] = 0.0  # planners plan before anything lands
    work_times = activity.poisson_times(rng, rate * spec.work_per_commit, minutes, work_end_ms)
    if spec.stall_at is not None:
        stall_from = spec.stall_at * 60
        rate[(minutes >= stall_from) & (minutes < stall_from + spec.stall_hours * 60)] = 0.0
    commit_times = activity.poisson_times(rng, rate, minutes, work_end_ms)

    commit_agents = workers[activity.pick_spawned(rng, commit_times, worker_spawn)]
    activity.commits(spec, rng, rows, agents, commit_times, commit_agents)
    work_agents = workers[activity.pick_spawned(rng, work_times, worker_spawn)]
    activity.work(spec, rng, rows, work_times, work_agents, end_ms)
    activity.planning(
        spec,
        rng,
        rows,
        agents,
        planners,
        spawn_ms,
        commit_times,
        commit_agents,
        work_times,
        work_end_ms,
    )
    activity.lifecycle(spec, rng, rows, agents, spawn_ms, end_ms)
    return _finish(spec, rows, agents, end_ms)


def _tree(spec: RunSpec, rng: np.random.Generator, work_end_ms: int) -> tuple[list[Agent], Any]:
    """Agents (root, planners, subplanners, workers) and when each spawned (ms from start)."""
    agents = [Agent("root", Role.ROOT_PLANNER, None)]
    spawn = [0]
    areas = [activity.area_name(i) for i in range(spec.planners)]
    owners: list[int] = []
    for area in areas:
        agents.append(Agent(f"p-{area}", Role.PLANNER, "root"))
        planner_at = int(rng.integers(5_000, 120_000))
        spawn.append(planner_at)
        owners.append(len(agents) - 1)
        for k in range(spec.subplanners_per_planner):
            agents.append(Agent(f"sp-{area}-{k + 1}", Role.PLANNER, f"p-{area}"))
            spawn.append(planner_at + int(rng.integers(30_000, 20 * MINUTE_MS)))
            owners.append(len(agents) - 1)
    # Half the workers start during the ramp, the rest over the run, as tasks appear.
    ramp_ms = int(min(spec.ramp_hours * HOUR_MS, work_end_ms))
    early = spec.workers // 2 if ramp_ms < work_end_ms - HOUR_MS else spec.workers
    late_until = max(work_end_ms - 30 * MINUTE_MS, ramp_ms + 1)
    worker_spawn = np.sort(
        np.concatenate(
            [
                rng.integers(MINUTE_MS, max(ramp_ms, MINUTE_MS + 1), early),
                rng.integers(int(ramp_ms), int(late_until), spec.workers - early),
            ]
        )
    )
    # Most workers belong to a subplanner; some to a planner directly.
    owner_index = rng.integers(0, len(owners), spec.workers)
    spawnless = rng.random(spec.workers) < spec.spawnless_fraction
    spawnless[0] = False
    for i in range(spec.workers):
        parent = agents[owners[owner_index[i]]].name
        agents.append(Agent(f"w-{i + 1:04d}", Role.WORKER, parent, not bool(spawnless[i])))
        spawn.append(max(int(worker_spawn[i]), spawn[owners[owner_index[i]]] + 1000))
    return agents, np.asarray(spawn, np.int64)


def _finish(spec: RunSpec, rows: Rows, agents: list[Agent], end_ms: int) -> Events:
    ts = np.concatenate(rows.ts)
    keep = np.flatnonzero(ts < end_ms)
    order = keep[np.argsort(ts[keep], kind="stable")]
    start_ms = int(spec.start.timestamp() * 1000)
    extras = [rows.extras[i] for i in order]
    agent = np.concatenate(rows.agent)[order]
    # A worker whose spawn was not logged is placed by its first event instead.
    seen: set[int] = set()
    for row, who in enumerate(agent.tolist()):
        if who not in seen:
            seen.add(who)
            if not agents[who].logs_spawn:
                extras[row] = {
                    **extras[row],
                    "role": str(Role.WORKER),
                    "parent": agents[who].parent,
                }
    return Events(
        run=spec.run,
        agents=agents,
        ts_ms=ts[order] + start_ms,
        kind=np.concatenate(rows.kind)[order],
        agent=agent,
        ok=np.concatenate(rows.ok)[order],
        duplicate=np.concatenate(rows.duplicate)[order],
        extras=extras,
    )
