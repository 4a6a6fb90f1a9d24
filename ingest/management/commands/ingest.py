"""`manage.py ingest SOURCE PATH...`: load logs into the warehouse; prints one JSON summary.

Each source is a subcommand backed by a pipeline's `run_*` function; progress goes to
stderr, the summary line to stdout. Exit 0 when the run completed (quarantined lines are
not a failure: the first few are named on stderr); exit 2, the summary still printed,
when some files could not be read (each named on stderr, and in the summary's `failed`;
everything else is loaded); a one-line reason on stderr and exit 1 when it could not run.
"""

from __future__ import annotations

import gc
import sys
from argparse import ArgumentParser
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError

from ingest.parsers import parallel as parallel_parser
from ingest.parsers import requests as requests_parser
from ingest.pipelines import agent_events, claude_code, codex, git
from ingest.pipelines.agent_events import run_agent_events
from ingest.pipelines.claude_code import run_claude_code
from ingest.pipelines.codex import run_codex
from ingest.pipelines.git import run_git
from ingest.pipelines.loading import IngestSummary, now_utc, quarantined_since
from ingest.pipelines.parallel import run_parallel
from ingest.pipelines.requests import run_requests
from ingest.sources.files import SourceError
from warehouse import WarehouseError


def _agent_events(options: dict[str, Any]) -> IngestSummary:
    return run_agent_events(options["paths"], progress=sys.stderr)


def _requests(options: dict[str, Any]) -> IngestSummary:
    return run_requests(options["paths"], progress=sys.stderr)


def _parallel(options: dict[str, Any]) -> IngestSummary:
    return run_parallel(options["paths"], progress=sys.stderr)


def _claude_code(options: dict[str, Any]) -> IngestSummary:
    return run_claude_code(options["paths"], progress=sys.stderr)


def _codex(options: dict[str, Any]) -> IngestSummary:
    return run_codex(options["paths"], progress=sys.stderr)


def _git(options: dict[str, Any]) -> IngestSummary:
    if len(options["paths"]) != 1:
        raise ValueError("ingest git takes one repository (and --run NAME)")
    return run_git(
        options["paths"][0],
        options["run"],
        claims_folder=options["claims_folder"],
        ref=options["ref"],
        progress=sys.stderr,
    )


def _git_options(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--run", required=True, metavar="NAME", help="the run these commits belong to"
    )
    parser.add_argument(
        "--claims-folder",
        default="current_tasks/",
        metavar="FOLDER",
        help="commits that only add or remove files here are task claims ('' for none)",
    )
    parser.add_argument("--ref", default="HEAD", help="the branch or commit to read (default HEAD)")


# subcommand -> (help, runner). Runners take the parsed options and return a summary.
SOURCES: dict[str, tuple[str, Callable[[dict[str, Any]], IngestSummary]]] = {
    "agent-events": ("agent-event JSONL files or folders (*.jsonl, *.jsonl.gz)", _agent_events),
    "requests": ("per-request records: JSONL files or folders (*.jsonl, *.ndjson)", _requests),
    "parallel": ("parallel texts for the token tax: JSONL files or folders", _parallel),
    "claude-code": (
        "Claude Code transcripts: ~/.claude/projects, session folders or files",
        _claude_code,
    ),
    "codex": ("Codex CLI rollouts: ~/.codex/sessions, day folders or files", _codex),
    "git": ("a repository's commit history as commit events of --run NAME", _git),
}


# subcommand -> the source_kind its quarantined lines are stored under.
SOURCE_KINDS = {
    "agent-events": agent_events.SOURCE_KIND,
    "requests": requests_parser.SOURCE_KIND,
    "parallel": parallel_parser.SOURCE_KIND,
    "claude-code": claude_code.SOURCE_KIND,
    "codex": codex.SOURCE_KIND,
    "git": git.SOURCE_KIND,
}
# How many failed files and quarantined lines are named on stderr (the rest are counted).
NAMED_UP_TO = 10
FAILED_EXIT_STATUS = 2


class Command(BaseCommand):
    # System checks import every URL and view (seconds at start-up); ingest needs none.
    requires_system_checks: list[str] = []
    help = (
        "Ingest logs into the warehouse. Resumable and idempotent: re-running loads only new lines."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")
        for name, (help_text, _) in SOURCES.items():
            source_parser = sub.add_parser(name, help=help_text)
            source_parser.add_argument("paths", nargs="+", metavar="PATH")
            add_options = SOURCE_OPTIONS.get(name)
            if add_options is not None:
                add_options(source_parser)

    def handle(self, *args: Any, **options: Any) -> None:
        _, runner = SOURCES[options["source"]]
        # What start-up loaded (Django, the apps, numpy, pyarrow) lives until exit: frozen, the
        # collector's full passes stop walking it (0.3 s of CPU per 256 MB of Claude Code
        # transcripts, measured).
        gc.freeze()
        started = now_utc()
        try:
            summary = runner(options)
        except (SourceError, WarehouseError, ValueError) as exc:
            raise CommandError(str(exc).splitlines()[0]) from exc
        self.stdout.write(orjson.dumps(summary.as_dict()).decode())
        if summary.quarantined:
            self._name_quarantined(SOURCE_KINDS[options["source"]], started, summary.quarantined)
        if summary.failed:
            for failed in summary.failed[:NAMED_UP_TO]:
                self.stderr.write(f"cannot read {failed.line}")
            count = len(summary.failed)
            more = f" ({count - NAMED_UP_TO} more in the summary)" if count > NAMED_UP_TO else ""
            raise CommandError(
                f"{count} file{'s' if count > 1 else ''} could not be read{more};"
                " everything else is loaded",
                returncode=FAILED_EXIT_STATUS,
            )

    def _name_quarantined(self, source_kind: str, started: datetime, count: int) -> None:
        """The first lines this run quarantined (file, line, reason), and how many more."""
        try:
            named = quarantined_since(source_kind, started, NAMED_UP_TO)
        except WarehouseError:
            return  # the summary has the count; the report is a courtesy
        for line in named:
            self.stderr.write(f"quarantined {line.line}")
        if count > len(named):
            self.stderr.write(f"... and {count - len(named)} more quarantined lines")


# Extra arguments per source (e.g. `git --run NAME`), added by the sources that need them.
SOURCE_OPTIONS: dict[str, Callable[[ArgumentParser], None]] = {"git": _git_options}
