"""`manage.py maintain_warehouse`: merge small files, expire old snapshots, delete old files."""

from argparse import ArgumentParser
from typing import Any

import orjson
from django.core.management.base import BaseCommand

import warehouse


class Command(BaseCommand):
    help = "Merge small Parquet files, expire old snapshots and delete files no snapshot needs."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--keep-days", type=int, default=7, help="snapshots to keep (days)")

    def handle(self, *args: Any, **options: Any) -> None:
        result = warehouse.run_maintenance(keep_snapshots_days=options["keep_days"])
        self.stdout.write(orjson.dumps(result).decode())
