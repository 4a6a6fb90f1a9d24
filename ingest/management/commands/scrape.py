"""`manage.py scrape URL [--instance NAME] [--every SECONDS]`: register the target and
scrape it once, or every N seconds until stopped; ends with one JSON summary line."""

from __future__ import annotations

import signal
import sys
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.pipelines.vllm_scrape import LoadResult, collect_scrape, load_scrapes
from ingest.scrape_targets import ROLLUP_GRACE, register_target
from warehouse import WarehouseError


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise CommandError(f"--label must look like key=value, got {text!r}")
    return key, value


class Command(BaseCommand):
    help = "Scrape a vLLM /metrics endpoint once, or every N seconds until stopped."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        parser.add_argument("--instance", help="instance name (default host:port)")
        parser.add_argument("--every", type=float, help="scrape every N seconds until stopped")
        parser.add_argument("--count", type=int, help="with --every: stop after N scrapes")
        parser.add_argument("--timeout", type=float, default=5.0, help="seconds (default 5)")
        parser.add_argument("--label", action="append", default=[], help="key=value")

    def handle(self, *args: Any, **opts: Any) -> None:
        every = opts["every"]
        if every is not None and every <= 0:
            raise CommandError("--every must be positive")
        try:
            target = register_target(
                opts["url"],
                opts["instance"],
                interval_s=max(1, round(every)) if every else None,
                labels=dict(_label(x) for x in opts["label"]),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        stop = {"now": False}

        def _stop(signum: int, frame: object) -> None:
            stop["now"] = True

        signal.signal(signal.SIGTERM, _stop)
        total = LoadResult()
        runs = 0
        last_up = False
        try:
            while True:
                started = time.monotonic()
                pending = collect_scrape(target.name, target.url, timeout_s=opts["timeout"])
                now = datetime.now(UTC)
                result = load_scrapes([pending], rollup_until=now - ROLLUP_GRACE)
                total.add(result)
                last_up = pending.up
                runs += 1
                state = "up" if pending.up else f"down: {pending.error}"
                print(f"{target.name}: {state}, {result.samples} samples", file=sys.stderr)
                if every is None or (opts["count"] and runs >= opts["count"]) or stop["now"]:
                    break
                time.sleep(max(0.0, every - (time.monotonic() - started)))
                if stop["now"]:
                    break
        except KeyboardInterrupt:
            pass
        except WarehouseError as exc:
            raise CommandError(str(exc)) from None
        summary = {**total.summary(), "instance": target.name, "up": last_up}
        self.stdout.write(orjson.dumps(summary).decode())
