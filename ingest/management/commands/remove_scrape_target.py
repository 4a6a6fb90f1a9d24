"""`manage.py remove_scrape_target NAME_OR_URL`: unregister a vLLM scrape target (by its
instance name, or by its URL when one target scrapes it), so the beat task stops scraping
it; its stored scrapes stay. Prints one JSON line; an unknown name is a one-line error."""

from __future__ import annotations

from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.scrape_targets import remove_target


class Command(BaseCommand):
    help = "Unregister a vLLM scrape target by instance name or URL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name_or_url")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            target = remove_target(opts["name_or_url"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(orjson.dumps({"removed": target.name, "url": target.url}).decode())
