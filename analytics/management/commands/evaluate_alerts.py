"""`manage.py evaluate_alerts [--at T]`: evaluate every enabled alert rule once, as of now
or as of T (backfills, tests), then deliver the notifications that are due."""

from argparse import ArgumentParser
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError

import warehouse
from analytics.alerts.delivery import send_due_notifications
from analytics.alerts.engine import evaluate_rules
from lib.durations import parse_time
from lib.errors import ParameterError


class Command(BaseCommand):
    help = "Evaluate every alert rule once (as of now or --at T) and send due notifications."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--at", help="evaluate as of this RFC 3339 time (default: now)")
        parser.add_argument(
            "--no-send", action="store_true", help="queue notifications without sending them"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            at = parse_time(options["at"], name="--at")
        except ParameterError as exc:
            raise CommandError(str(exc)) from None
        try:
            outcome = evaluate_rules(at)
        except warehouse.WarehouseError as exc:
            raise CommandError(f"warehouse unavailable: {exc}") from None
        result = outcome.as_dict()
        if not options["no_send"]:
            delivered = send_due_notifications()
            result["delivery"] = vars(delivered)
        self.stdout.write(orjson.dumps(result).decode())
