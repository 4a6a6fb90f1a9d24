"""`manage.py import_prometheus URL --start T --end T [--step S]`: pull vLLM series from an
existing Prometheus server's HTTP API into the warehouse; ends with one JSON summary line."""

from __future__ import annotations

import sys
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.pipelines.prometheus_import import DEFAULT_QUERY, run_import
from lib.durations import parse_duration, parse_time
from lib.errors import ParameterError
from lib.http import FetchError
from warehouse import WarehouseError


class Command(BaseCommand):
    help = "Import vLLM metrics history from a Prometheus server (/api/v1/query_range)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url", help="the Prometheus server, e.g. http://prometheus:9090")
        parser.add_argument("--start", required=True, help="RFC 3339")
        parser.add_argument("--end", required=True, help="RFC 3339")
        parser.add_argument("--step", default="15s", help="evaluation step (default 15s)")
        parser.add_argument("--query", default=DEFAULT_QUERY, help="series selector")
        parser.add_argument(
            "--instance-label", default="instance", help="label naming the vLLM instance"
        )
        parser.add_argument("--drop-label", action="append", default=["job"])
        parser.add_argument("--instance", help="store everything under this instance name")
        parser.add_argument("--timeout", type=float, default=30.0)

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            start = parse_time(opts["start"], name="--start")
            end = parse_time(opts["end"], name="--end")
            step = parse_duration(opts["step"], name="--step").total_seconds()
        except ParameterError as exc:
            raise CommandError(str(exc)) from None
        assert start is not None and end is not None
        try:
            result = run_import(
                opts["url"],
                start,
                end,
                step,
                query=opts["query"],
                instance_label=opts["instance_label"],
                drop_labels=tuple(opts["drop_label"]),
                rename=opts["instance"],
                timeout_s=opts["timeout"],
                progress=lambda line: print(line, file=sys.stderr),
            )
        except (FetchError, ValueError, WarehouseError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(orjson.dumps(result.summary()).decode())
