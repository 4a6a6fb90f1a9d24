"""`manage.py scrape URL [--instance NAME] [--every SECONDS [--count N]]`: scrape a vLLM
`/metrics` endpoint once (or every N seconds until stopped), store each scrape and print
one JSON summary line. It registers nothing: a target the beat task scrapes is
`add_scrape_target`'s (removed by `remove_scrape_target`). A failed last scrape is stored
too, and the command then exits non-zero with one line on stderr."""

from __future__ import annotations

import signal
import sys
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.pipelines.vllm_scrape import LoadResult, collect_scrape, load_scrapes
from ingest.scrape_targets import ROLLUP_GRACE, check_target
from warehouse import WarehouseError


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise CommandError(f"--label must look like key=value, got {text!r}")
    return key, value


class Command(BaseCommand):
    help = "Scrape a vLLM /metrics endpoint once, or every N seconds; registers nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        parser.add_argument("--instance", help="instance name (default host:port)")
        parser.add_argument("--every", type=float, help="scrape every N seconds until stopped")
        parser.add_argument("--count", type=int, help="with --every: stop after N scrapes")
        parser.add_argument("--timeout", type=float, default=5.0, help="seconds (default 5)")
        parser.add_argument(
            "--label", action="append", default=[], help="refused: labels are a target's"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        every = opts["every"]
        if every is not None and every <= 0:
            raise CommandError("--every must be positive")
        if opts["label"]:
            raise CommandError(
                "labels belong to a registered target: manage.py add_scrape_target URL"
                " --instance NAME --label key=value"
            )
        try:
            name = check_target(opts["url"], opts["instance"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        stop = {"now": False}

        def _stop(signum: int, frame: object) -> None:
            stop["now"] = True

        signal.signal(signal.SIGTERM, _stop)
        total = LoadResult()
        runs = 0
        last_error: str | None = None
        try:
            while True:
                started = time.monotonic()
                pending = collect_scrape(name, opts["url"], timeout_s=opts["timeout"])
                now = datetime.now(UTC)
                result = load_scrapes([pending], rollup_until=now - ROLLUP_GRACE)
                total.add(result)
                last_error = None if pending.up else pending.error or "scrape failed"
                runs += 1
                last = every is None or (opts["count"] and runs >= opts["count"]) or stop["now"]
                # A failed last scrape's one line is the CommandError's, below.
                if not (last and last_error):
                    state = "up" if last_error is None else f"down: {last_error}"
                    print(f"{name}: {state}, {result.samples} samples", file=sys.stderr)
                if last:
                    break
                time.sleep(max(0.0, every - (time.monotonic() - started)))
                if stop["now"]:
                    break
        except KeyboardInterrupt:
            pass
        except WarehouseError as exc:
            raise CommandError(str(exc)) from None
        summary = {**total.summary(), "instance": name, "up": last_error is None and runs > 0}
        self.stdout.write(orjson.dumps(summary).decode())
        if last_error is not None:
            raise CommandError(f"{name}: down: {last_error}")
