"""`manage.py create_api_token USERNAME [--scope ingest|read|admin] [--expires DAYS]`:
print a new API token once (only its hash is stored); the audit log names the command."""

from argparse import ArgumentParser
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from analytics.access.audit import acting_as
from dashboard.models import ApiToken
from lib.access import Scope

COMMAND = "create_api_token"
MAX_DAYS = 36500  # a hundred years: past that, "never" says it better


class Command(BaseCommand):
    help = "Create an API token for a user and print it once; only its hash is stored."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label to recognise the token by")
        parser.add_argument(
            "--scope",
            default=Scope.READ.value,
            help="ingest (send data only), read (read only) or admin (all the user's role "
            "allows); default read",
        )
        parser.add_argument(
            "--expires", default=None, help="days until the token stops working (default never)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        scope = options["scope"]
        if scope not in {s.value for s in Scope}:
            raise CommandError(f"unknown scope {scope!r}: use ingest, read or admin")
        expires_at = None
        if options["expires"] is not None:
            days = options["expires"]
            if not str(days).isdigit() or not 1 <= int(days) <= MAX_DAYS:
                raise CommandError(
                    f"--expires must be a whole number of days, 1 to {MAX_DAYS}: {days!r}"
                )
            expires_at = timezone.now() + timedelta(days=int(days))
        user_model = get_user_model()
        try:
            user = user_model.objects.get(username=options["username"])
        except user_model.DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}") from None
        with acting_as(COMMAND):
            _, raw = ApiToken.issue(user, options["name"], Scope(scope), expires_at)
        self.stdout.write(raw)
