"""`manage.py load_prices PATH [--valid-from YYYY-MM-DD]`: add prices to the price table
from a JSON/YAML file in Fleetscope's format or LiteLLM's model_prices_and_context_window.json
(whose prices carry no dates: they are valid from --valid-from, default today)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from analytics.costs.price_files import read_price_file, save_prices
from lib.errors import ParameterError


class Command(BaseCommand):
    help = "Load model prices (USD per million tokens) from a JSON or YAML file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--valid-from", type=date.fromisoformat, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        try:
            rows = read_price_file(path, options["valid_from"] or date.today())
        except ParameterError as exc:
            raise CommandError(str(exc)) from None
        saved = save_prices(rows, path.name)
        self.stdout.write(orjson.dumps({"saved": saved}).decode())
