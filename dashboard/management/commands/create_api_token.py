"""`manage.py create_api_token USERNAME`: print a new API token (stored only as a hash)."""

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from dashboard.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for a user and print it once; only its hash is stored."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label to recognise the token by")

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        try:
            user = user_model.objects.get(username=options["username"])
        except user_model.DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}") from None
        _, raw = ApiToken.issue(user, options["name"])
        self.stdout.write(raw)
