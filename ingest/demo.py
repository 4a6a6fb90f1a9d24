"""The demo data `manage.py load_demo` loads: a list of steps, each writing its files once
under `<data dir>/demo/<step>/` and ingesting them through the ordinary pipelines.

Idempotent: a step's files are written only when its folder is missing (written to a
temporary folder first, then renamed, so a crash never leaves half a step), and the
pipelines' read positions make a second ingest load nothing. To add demo data, append a
DemoStep to DEMO_STEPS (or call `register`) with a `prepare` that writes files and a
`load` that ingests the folder.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from ingest import demo_logs, demo_otlp, demo_serving
from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.loading import IngestSummary
from ingest.synthetic import ErrorTrend, RunSpec, generate_run


@dataclass(frozen=True)
class DemoStep:
    name: str  # folder under <data dir>/demo/, and what the command prints
    description: str
    prepare: Callable[[Path, datetime], None]  # write the step's files into the folder
    load: Callable[[Path, IO[str] | None], IngestSummary]  # ingest the folder, idempotently


def _minute(now: datetime) -> datetime:
    return now.astimezone(UTC).replace(second=0, microsecond=0)


def write_synthetic(
    spec: RunSpec, *, malformed: int = 0, epoch_fraction: float = 0.0
) -> Callable[[Path, datetime], None]:
    """A step that writes one synthetic run, placed in time by `spec_at`."""

    def prepare(folder: Path, now: datetime) -> None:
        generate_run(
            spec_at(spec, now),
            folder / f"{spec.run}.jsonl",
            malformed=malformed,
            epoch_fraction=epoch_fraction,
        )

    return prepare


def spec_at(spec: RunSpec, now: datetime) -> RunSpec:
    """The spec moved so the run ends at `now` minus the hours its name slot asks for."""
    ends_ago = _ENDS_AGO.get(spec.run, timedelta(0))
    start = _minute(now) - ends_ago - timedelta(hours=spec.hours)
    return RunSpec(**{**spec.__dict__, "start": start})


def load_agent_events(folder: Path, progress: IO[str] | None) -> IngestSummary:
    return run_agent_events([str(folder)], progress=progress)


# The fleet the demo shows: a big run still going, with a stall in the middle and a few
# commits logged twice; a smaller run whose error rate rose until it was stopped; a run
# that is stalled right now, with a few malformed lines in its log.
BROWSER = RunSpec(
    run="browser-demo", seed=7, hours=12, workers=300, stall_at=6.5, stall_hours=1.5,
    duplicate_commits=25,
)  # fmt: skip
COMPILER = RunSpec(
    run="compiler-demo", seed=5, hours=10, workers=48, planners=4,
    peak_commits_per_hour=160, error_trend=ErrorTrend.RISING, finished=True,
)  # fmt: skip
DOCS = RunSpec(
    run="docs-demo", seed=11, hours=4, workers=40, planners=3, peak_commits_per_hour=120,
    stall_at=3.3, stall_hours=1.0,
)  # fmt: skip
_ENDS_AGO = {"compiler-demo": timedelta(hours=3)}


def serving_history(now: datetime) -> demo_serving.History:
    """From the hour the earliest demo run starts to now, surging over browser-demo's stall."""
    starts = [spec_at(spec, now).start for spec in (BROWSER, COMPILER, DOCS)]
    browser = spec_at(BROWSER, now)
    if browser.stall_at is None:
        raise ValueError("browser-demo has no stall for the serving history to surge under")
    stall = browser.start + timedelta(hours=browser.stall_at)
    return demo_serving.History(
        start=min(starts).replace(minute=0),
        end=_minute(now),
        surge=(stall, stall + timedelta(hours=browser.stall_hours)),
    )


def prepare_serving(folder: Path, now: datetime) -> None:
    demo_serving.write_history(folder, serving_history(now))


DEMO_STEPS: list[DemoStep] = [
    DemoStep(
        "browser-demo",
        "12 h, a ramp to ~1,000 commits/h, a 90-minute stall, commits logged twice",
        write_synthetic(BROWSER, epoch_fraction=0.3),
        load_agent_events,
    ),
    DemoStep(
        "compiler-demo",
        "10 h, error rate rising until the run was stopped 3 h ago",
        write_synthetic(COMPILER, epoch_fraction=0.1),
        load_agent_events,
    ),
    DemoStep(
        "docs-demo",
        "4 h, no commit in its last 42 minutes of logging (stalled), 5 malformed lines",
        write_synthetic(DOCS, malformed=5),
        load_agent_events,
    ),
    DemoStep(
        "agent-logs-demo",
        "real Claude Code (a session with a subagent and a commit) and Codex transcripts",
        demo_logs.prepare_agent_logs,
        demo_logs.load_agent_logs,
    ),
    DemoStep(
        "aero-demo",
        "Aero's real history as a git-sourced run: 31,667 commits, 1,388 in its busiest hour",
        demo_logs.prepare_fleet_history,
        demo_logs.load_fleet_history,
    ),
    DemoStep(
        "serving-demo",
        "the stand-in vLLM engine's scrapes over the runs' hours, a surge under the stall",
        prepare_serving,
        demo_serving.load_history,
    ),
    DemoStep(
        "otlp-demo",
        "Claude Code over OpenTelemetry: three people of two teams, a session each",
        demo_otlp.prepare,
        demo_otlp.load,
    ),
]


def register(step: DemoStep) -> None:
    """Add a step (for other sources' demo data); a step of the same name is replaced."""
    DEMO_STEPS[:] = [s for s in DEMO_STEPS if s.name != step.name] + [step]


@dataclass(frozen=True)
class StepResult:
    step: str
    written: bool  # files were written this time (first load)
    summary: IngestSummary


def run_demo_steps(
    demo_dir: Path, *, now: datetime | None = None, progress: IO[str] | None = sys.stderr
) -> list[StepResult]:
    now = now or datetime.now(UTC)
    results = []
    for step in DEMO_STEPS:
        folder = demo_dir / step.name
        written = False
        if not folder.exists():
            staging = demo_dir / f".{step.name}.partial"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            step.prepare(staging, now)
            staging.rename(folder)
            written = True
        results.append(StepResult(step.name, written, step.load(folder, progress)))
    return results
