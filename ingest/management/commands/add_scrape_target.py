"""`manage.py add_scrape_target URL --instance NAME [--every S] [--label k=v] [--team NAME]`:
register a vLLM `/metrics` endpoint for the beat task to scrape, without scraping it now.
`--team` says who sees the instance (a target of no team only all-teams users see); an
update without `--team` keeps the target's team."""

from __future__ import annotations

from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from analytics.costs.models import Team
from ingest.management.commands.scrape import _label
from ingest.scrape_targets import register_target


class Command(BaseCommand):
    help = "Register (or update) a vLLM scrape target."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("url")
        parser.add_argument("--instance", help="instance name (default host:port)")
        parser.add_argument("--every", type=int, help="scrape interval in seconds (default 15)")
        parser.add_argument("--label", action="append", default=[], help="key=value")
        parser.add_argument("--team", help="the team that sees this instance (its name)")

    def handle(self, *args: Any, **opts: Any) -> None:
        team = None
        if opts["team"] is not None:
            team = Team.objects.filter(name=opts["team"]).first()
            if team is None:
                raise CommandError(f"no team named {opts['team']!r}")
        try:
            with transaction.atomic():
                target = register_target(
                    opts["url"],
                    opts["instance"],
                    interval_s=opts["every"],
                    labels=dict(_label(x) for x in opts["label"]),
                )
                if team is not None:
                    target.team = team
                    target.save(update_fields=["team"])
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            orjson.dumps(
                {
                    "instance": target.name,
                    "url": target.url,
                    "every": target.interval_seconds,
                    "team": target.team.name if target.team else None,
                }
            ).decode()
        )
