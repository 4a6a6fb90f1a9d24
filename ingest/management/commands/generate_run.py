"""`manage.py generate_run OUT.jsonl`: write a synthetic harness run and print its truth.

For demos, load tests and checking the dashboard against known answers: the file is
agent-event JSONL (docs/agent-events.md); the JSON line on stdout is the
ground truth (commits per hour, stalls, the error trend, counts the ingest must report).
"""

from __future__ import annotations

from argparse import ArgumentParser
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError

from ingest.synthetic import ErrorTrend, RunSpec, generate_run
from lib.durations import format_time, parse_duration, parse_time
from lib.errors import ParameterError


class Command(BaseCommand):
    help = "Write a synthetic multi-agent harness run as agent-event JSONL; print its truth."

    def add_arguments(self, parser: ArgumentParser) -> None:
        defaults = RunSpec()
        parser.add_argument("out", metavar="OUT.jsonl", help="file to write (replaced)")
        parser.add_argument("--run", default=None, help="run name (default synthetic-SEED)")
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument(
            "--start", default=None, help="RFC 3339 start (default 2026-01-14T10:00:00Z)"
        )
        parser.add_argument("--hours", type=float, default=defaults.hours)
        parser.add_argument("--workers", type=int, default=defaults.workers)
        parser.add_argument("--planners", type=int, default=defaults.planners)
        parser.add_argument(
            "--peak",
            type=float,
            default=defaults.peak_commits_per_hour,
            help="peak commits per hour",
        )
        parser.add_argument("--stall-at", type=float, default=None, help="hours after start")
        parser.add_argument("--stall-hours", type=float, default=defaults.stall_hours)
        parser.add_argument("--error-trend", choices=[t.value for t in ErrorTrend], default="flat")
        parser.add_argument("--finished", action="store_true", help="everyone stops at the end")
        parser.add_argument("--malformed", type=int, default=0, help="malformed lines mixed in")
        parser.add_argument("--duplicate-commits", type=int, default=0, help="commits logged twice")
        parser.add_argument(
            "--epoch-fraction", type=float, default=0.0, help="share of lines with Unix-seconds ts"
        )
        parser.add_argument(
            "--partial-last-line", action="store_true", help="end with a line still being written"
        )
        parser.add_argument("--min-gap", default="30m", help="stall threshold for the truth")
        parser.add_argument("--truth", default=None, help="also write the full truth JSON here")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            start = parse_time(options["start"], name="start")
            min_gap = parse_duration(options["min_gap"], name="min_gap")
            spec = RunSpec(
                run=options["run"] or f"synthetic-{options['seed']}",
                seed=options["seed"],
                start=start or RunSpec.start,
                hours=options["hours"],
                workers=options["workers"],
                planners=options["planners"],
                peak_commits_per_hour=options["peak"],
                stall_at=options["stall_at"],
                stall_hours=options["stall_hours"],
                error_trend=ErrorTrend(options["error_trend"]),
                finished=options["finished"],
                duplicate_commits=options["duplicate_commits"],
            )
            truth = generate_run(
                spec,
                Path(options["out"]),
                malformed=options["malformed"],
                epoch_fraction=options["epoch_fraction"],
                partial_last_line=options["partial_last_line"],
            )
        except (ValueError, ParameterError, OSError) as exc:
            raise CommandError(str(exc).splitlines()[0]) from exc
        summary = truth.summary(min_gap)
        if options["truth"]:
            Path(options["truth"]).write_bytes(orjson.dumps(_full_truth(truth, min_gap)))
        headline = {k: v for k, v in summary.items() if k != "commits_per_hour"}
        self.stdout.write(orjson.dumps({**headline, "events": len(truth.events)}).decode())


def _full_truth(truth: Any, min_gap: timedelta) -> dict[str, Any]:
    summary = truth.summary(min_gap)
    errors = truth.errors_per_bucket(3600)
    summary["errors_per_hour"] = {
        format_time(t): {"attempts": a, "errors": e} for t, (a, e) in errors.items()
    }
    summary["roles"] = truth.roles()
    summary["parents"] = truth.parents()
    return summary
