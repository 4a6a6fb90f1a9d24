"""What the agents of a synthetic run do: commits with their pushes and handoffs, model
and tool calls (some failing), the planners' tasks and reports, spawns and stops.

Each function appends one family of events to the rows; all randomness comes from the
generator passed in, so a seed fixes the run. Pure: arrays in, rows out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ingest.synthetic.spec import HOUR_MS, MINUTE_MS, Agent, ErrorTrend, Role, Rows, RunSpec

AREAS = (
    "css",
    "layout",
    "dom",
    "js",
    "net",
    "paint",
    "text",
    "fonts",
    "images",
    "a11y",
    "devtools",
    "build",
    "media",
    "storage",
    "workers",
    "svg",
)
TOOLS = (
    "cargo build",
    "cargo test",
    "cargo clippy",
    "rg",
    "read_file",
    "apply_patch",
    "git rebase",
    "run_wpt",
)
# Which error kind a failed tool reports.
TOOL_ERROR_KIND = ("build", "test", "build", "tool", "tool", "tool", "merge", "test")
TOOL_ERROR_MESSAGE = (
    "E0308 mismatched types",
    "3 tests failed: layout::flex::wrap_reverse",
    "clippy: needless_borrow (deny)",
    "rg: regex parse error",
    "read_file: path outside the worktree",
    "apply_patch: hunk 2 did not apply",
    "rebase stopped: CONFLICT (content) in src/lib.rs",
    "wpt: 12 subtests regressed",
)
VERBS = ("implement", "fix", "handle", "parse", "refactor", "speed up", "test", "support")
OBJECTS = (
    "@layer ordering",
    "margin collapsing",
    "flex wrap",
    "grid auto-placement",
    "table borders",
    "text shaping",
    "event dispatch",
    "cookie parsing",
    "font fallback",
    "image decoding",
    "scroll anchoring",
    "shadow DOM slots",
    "z-index stacking",
)
PLANNER_MODEL = "gpt-5.2"
WORKER_MODELS = ("gpt-5.1-codex", "gpt-5.2")


def poisson_times(
    rng: np.random.Generator, per_minute: np.ndarray, minutes: np.ndarray, end_ms: int
) -> np.ndarray:
    counts = rng.poisson(per_minute)
    times = np.repeat(minutes * MINUTE_MS, counts) + rng.integers(0, MINUTE_MS, int(counts.sum()))
    return np.sort(times[times < end_ms])


def pick_spawned(rng: np.random.Generator, times: np.ndarray, spawn: np.ndarray) -> np.ndarray:
    """For each time, a worker already spawned then (index into spawn, which is sorted by
    worker, not time): uniform among them, so busy hours spread over many workers."""
    order = np.argsort(spawn, kind="stable")
    spawned = np.searchsorted(spawn[order], times, side="right")
    spawned = np.maximum(spawned, 1)
    return np.asarray(order[(rng.random(len(times)) * spawned).astype(np.int64)])


def commits(
    spec: RunSpec,
    rng: np.random.Generator,
    rows: Rows,
    agents: list[Agent],
    times: np.ndarray,
    who: np.ndarray,
) -> None:
    """Each landed commit: commit, push (a conflict first, sometimes), handoff upward."""
    n = len(times)
    shas = [f"{a:016x}{b:016x}{c:08x}"[:40] for a, b, c in rng.integers(0, 2**63, (n, 3)).tolist()]
    files = 1 + rng.geometric(0.35, n)
    insertions = np.round(rng.lognormal(3.6, 1.0, n)).astype(int)
    deletions = np.round(insertions * rng.random(n) * 0.6).astype(int)
    areas = [agents[w].parent or "" for w in who.tolist()]
    message_parts = rng.integers(0, len(VERBS), n), rng.integers(0, len(OBJECTS), n)
    tasks = [f"t-{i + 1}" for i in range(n)]
    files_, insertions_, deletions_ = files.tolist(), insertions.tolist(), deletions.tolist()
    verbs, objects = message_parts[0].tolist(), message_parts[1].tolist()
    messages = [
        f"{area.split('-')[1] if '-' in area else 'core'}: {VERBS[v]} {OBJECTS[o]}"
        for area, v, o in zip(areas, verbs, objects, strict=True)
    ]
    commits: list[dict[str, Any]] = [
        {
            "task": tasks[i],
            "commit": {
                "sha": shas[i],
                "files": files_[i],
                "insertions": insertions_[i],
                "deletions": deletions_[i],
                "message": messages[i],
            },
        }
        for i in range(n)
    ]
    rows.add("commit", times, who, commits, ok=np.ones(n, np.int8))
    again = np.sort(rng.choice(n, min(spec.duplicate_commits, n), replace=False))
    rows.add(
        "commit",
        times[again] + rng.integers(1_000, 90_000, len(again)),
        who[again],
        [commits[i] for i in again],
        ok=np.ones(len(again), np.int8),
        duplicate=True,
    )

    push_at = times + rng.integers(2_000, 40_000, n)
    conflict = rng.random(n) < 0.07
    rows.add(
        "push",
        push_at,
        who,
        [{"task": tasks[i], "push": {"conflict": c}} for i, c in enumerate(conflict.tolist())],
        ok=(~conflict).astype(np.int8),
    )
    retry = np.flatnonzero(conflict)
    retry_at = push_at[retry] + rng.integers(20_000, 180_000, len(retry))
    rows.add(
        "push",
        retry_at,
        who[retry],
        [{"task": tasks[i], "push": {"conflict": False}} for i in retry],
        ok=np.ones(len(retry), np.int8),
    )
    done_at = np.where(conflict, 0, push_at)
    done_at[retry] = retry_at
    done_at = done_at + rng.integers(5_000, 60_000, n)
    status = rng.choice(np.array(["done", "partial", "blocked"]), n, p=[0.85, 0.12, 0.03])
    rows.add(
        "handoff",
        done_at,
        who,
        [
            {
                "task": tasks[i],
                "handoff": {"to": areas[i] or "root", "status": state, "notes": message},
            }
            for i, (state, message) in enumerate(zip(status.tolist(), messages, strict=True))
        ],
    )


def failure_probability(spec: RunSpec, hours: np.ndarray) -> np.ndarray:
    if spec.error_trend == ErrorTrend.RISING:
        return np.asarray(0.03 + 0.27 * hours / spec.hours, float)
    return np.full(len(hours), 0.06)


def work(
    spec: RunSpec,
    rng: np.random.Generator,
    rows: Rows,
    times: np.ndarray,
    who: np.ndarray,
    end_ms: int,
) -> None:
    """Workers' model and tool calls (some failing, with an error event), failed commits,
    context summaries: the activity that goes on whether or not anything lands."""
    n = len(times)
    draw = rng.random(n)
    llm = draw < 0.52
    tool = (draw >= 0.52) & (draw < 0.975)
    failed_commit = (draw >= 0.975) & (draw < 0.985)
    summary = draw >= 0.985
    llm_calls(rng, rows, times[llm], who[llm], WORKER_MODELS, llm_failure=0.004)

    at, by = times[tool], who[tool]
    k = len(at)
    tool_index = rng.integers(0, len(TOOLS), k)
    fails = rng.random(k) < failure_probability(spec, at / HOUR_MS)
    durations = np.round(rng.lognormal(8.0, 1.2, k)).astype(int)
    rows.add(
        "tool_call",
        at,
        by,
        [
            {"tool": TOOLS[t], "duration_ms": d}
            for t, d in zip(tool_index.tolist(), durations.tolist(), strict=True)
        ],
        ok=(~fails).astype(np.int8),
    )
    reported = np.flatnonzero(fails & (rng.random(k) < 0.7))
    rows.add(
        "error",
        np.minimum(at[reported] + rng.integers(300, 3_000, len(reported)), end_ms - 1),
        by[reported],
        [
            {"error": {"kind": TOOL_ERROR_KIND[i], "message": TOOL_ERROR_MESSAGE[i]}}
            for i in tool_index[reported].tolist()
        ],
    )
    m = int(failed_commit.sum())
    rows.add(
        "commit",
        times[failed_commit],
        who[failed_commit],
        [
            {"commit": {"files": 1, "insertions": 0, "deletions": 0, "message": "wip"}}
            for _ in range(m)
        ],
        ok=np.zeros(m, np.int8),
    )
    s = int(summary.sum())
    tokens = rng.integers(150_000, 260_000, s)
    rows.add(
        "summary",
        times[summary],
        who[summary],
        [{"attrs": {"tokens_before": t}} for t in tokens.tolist()],
    )


def llm_calls(
    rng: np.random.Generator,
    rows: Rows,
    times: np.ndarray,
    who: np.ndarray,
    models: tuple[str, ...],
    llm_failure: float,
) -> None:
    n = len(times)
    model = rng.choice(len(models), n, p=[0.7, 0.3] if len(models) == 2 else None)
    fresh = np.round(rng.lognormal(7.6, 0.8, n)).astype(int)
    cached = np.round(rng.lognormal(9.9, 0.6, n)).astype(int)
    written = np.where(rng.random(n) < 0.1, np.round(rng.lognormal(7.5, 0.5, n)), 0).astype(int)
    output = np.round(rng.lognormal(6.4, 0.9, n)).astype(int)
    duration = np.round(rng.lognormal(8.8, 0.6, n)).astype(int)
    fails = rng.random(n) < llm_failure
    # Plain lists: building dicts from numpy scalars is several times slower.
    names = [models[m] for m in model.tolist()]
    fresh_, cached_, written_ = fresh.tolist(), cached.tolist(), written.tolist()
    output_, duration_ = np.where(fails, 0, output).tolist(), duration.tolist()
    rows.add(
        "llm_call",
        times,
        who,
        [
            {
                "model": names[i],
                "usage": {
                    "input_tokens": fresh_[i],
                    "cached_input_tokens": cached_[i],
                    "cache_write_tokens": written_[i],
                    "output_tokens": output_[i],
                },
                "duration_ms": duration_[i],
            }
            for i in range(n)
        ],
        ok=(~fails).astype(np.int8),
    )
    failed = np.flatnonzero(fails)
    rows.add(
        "error",
        times[failed] + 1,
        who[failed],
        [{"error": {"kind": "model", "message": "429 rate limited; retrying"}} for _ in failed],
    )


def planning(
    spec: RunSpec,
    rng: np.random.Generator,
    rows: Rows,
    agents: list[Agent],
    planners: np.ndarray,
    spawn_ms: np.ndarray,
    commit_times: np.ndarray,
    commit_agents: np.ndarray,
    work_times: np.ndarray,
    work_end_ms: int,
) -> None:
    """Planners think (an llm call every few minutes each, busier when the fleet is, so
    the mix of attempts, and with it a flat error rate, holds through the ramp), create
    the tasks workers commit, and hand progress up to their own planner."""
    index = {a.name: i for i, a in enumerate(agents)}
    calls_t: list[np.ndarray] = []
    calls_a: list[np.ndarray] = []
    notes_t: list[np.ndarray] = []
    notes_a: list[np.ndarray] = []
    calls = rng.poisson(len(planners) * work_end_ms / (4 * MINUTE_MS)) if len(work_times) else 0
    at = np.sort(
        work_times[rng.integers(0, len(work_times), calls)] + rng.integers(0, 30_000, calls)
    )
    calls_t.append(at)
    calls_a.append(planners[pick_spawned(rng, at, spawn_ms[planners])])
    for p in planners:
        start = int(spawn_ms[p]) + 1_000
        span = max(work_end_ms - start, 1)
        if agents[p].parent is not None:
            ups = rng.poisson(span / (45 * MINUTE_MS))
            notes_t.append(np.sort(start + rng.integers(0, span, ups)))
            notes_a.append(np.full(ups, p))
    llm_calls(
        rng,
        rows,
        np.concatenate(calls_t),
        np.concatenate(calls_a),
        (PLANNER_MODEL,),
        llm_failure=0.002,
    )
    up_t, up_a = np.concatenate(notes_t), np.concatenate(notes_a)
    status = rng.choice(np.array(["partial", "done"]), len(up_t), p=[0.8, 0.2])
    rows.add(
        "handoff",
        up_t,
        up_a,
        [
            {
                "handoff": {
                    "to": agents[a].parent or "root",
                    "status": str(status[i]),
                    "notes": "progress report: tasks landed, follow-ups planned",
                }
            }
            for i, a in enumerate(up_a)
        ],
    )
    # Most commits answer a task their worker's planner wrote a few minutes earlier.
    planned = np.flatnonzero(rng.random(len(commit_times)) < 0.6)
    owners = np.array([index[agents[w].parent or "root"] for w in commit_agents[planned]], int)
    created = commit_times[planned] - rng.integers(2 * MINUTE_MS, 40 * MINUTE_MS, len(planned))
    # A task cannot predate its planner: those were written in the planner's first minutes.
    earliest = spawn_ms[owners] + rng.integers(500, 5 * MINUTE_MS, len(owners))
    created = np.maximum(created, earliest)
    rows.add("task", created, owners, [{"task": f"t-{i + 1}"} for i in planned])


def lifecycle(
    spec: RunSpec,
    rng: np.random.Generator,
    rows: Rows,
    agents: list[Agent],
    spawn_ms: np.ndarray,
    end_ms: int,
) -> None:
    """Spawn events (skipped for the few whose spawn was lost) and, in a finished run,
    stops: workers first, then subplanners, planners, the root last."""
    logged = np.flatnonzero([a.logs_spawn for a in agents])
    rows.add(
        "spawn",
        spawn_ms[logged],
        logged,
        [
            {
                "role": str(agents[i].role),
                **({"parent": agents[i].parent} if agents[i].parent else {}),
            }
            for i in logged
        ],
    )
    if not spec.finished:
        return
    wind_down = end_ms - 15 * MINUTE_MS
    stop_at = np.empty(len(agents), np.int64)
    for i, a in enumerate(agents):
        if a.role == Role.WORKER:
            stop_at[i] = wind_down + int(rng.integers(0, 10 * MINUTE_MS))
        elif a.role == Role.PLANNER:
            depth = 1 if a.parent == "root" else 0
            stop_at[i] = wind_down + (11 + depth) * MINUTE_MS + int(rng.integers(0, MINUTE_MS))
        else:
            stop_at[i] = end_ms - 1_000
    rows.add("stop", stop_at, np.arange(len(agents)), [{} for _ in agents])


def area_name(i: int) -> str:
    """The area the i-th planner owns: css, layout, ..., then css-16, layout-17, ..."""
    return AREAS[i % len(AREAS)] + ("" if i < len(AREAS) else f"-{i}")
