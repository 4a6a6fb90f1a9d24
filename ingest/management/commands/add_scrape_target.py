"""`manage.py add_scrape_target URL --instance NAME [--every S] [--label k=v]`: register a
vLLM `/metrics` endpoint for the beat task to scrape, without scraping it now."""

from __future__ import annotations

from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.management.commands.scrape import _label
from ingest.scrape_targets import register_target


class Command(BaseCommand):
    help = "Register (or update) a vLLM scrape target."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        parser.add_argument("--instance", help="instance name (default host:port)")
        parser.add_argument("--every", type=int, help="scrape interval in seconds (default 15)")
        parser.add_argument("--label", action="append", default=[], help="key=value")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            target = register_target(
                opts["url"],
                opts["instance"],
                interval_s=opts["every"],
                labels=dict(_label(x) for x in opts["label"]),
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            orjson.dumps(
                {"instance": target.name, "url": target.url, "every": target.interval_seconds}
            ).decode()
        )
