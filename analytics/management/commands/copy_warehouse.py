"""`manage.py copy_warehouse --to URL --to-data PATH`: copy the configured warehouse into
an empty one (the embedded default into PostgreSQL + S3, or a lake into a folder as a
backup); warehouse/copy.py says what is copied and why it is safe to run again."""

from argparse import ArgumentParser
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError

import warehouse
from warehouse.copy import Copied, copy_warehouse


class Command(BaseCommand):
    help = (
        "Copy the configured warehouse (FLEETSCOPE_WAREHOUSE, FLEETSCOPE_WAREHOUSE_DATA) into "
        "an empty one, as of one snapshot; S3 paths use the FLEETSCOPE_S3_* settings."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--to",
            required=True,
            metavar="URL",
            help="the destination's catalog, as FLEETSCOPE_WAREHOUSE takes it "
            "(ducklake:postgres:dbname=... or ducklake:sqlite:/path/catalog.sqlite)",
        )
        parser.add_argument(
            "--to-data",
            required=True,
            metavar="PATH",
            help="the destination's data path (s3://bucket/prefix/ or a local folder)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        def tell(done: Copied) -> None:
            self.stderr.write(f"copied {done.table}: {done.rows:,} rows")

        try:
            copied = copy_warehouse(options["to"], options["to_data"], progress=tell)
        except warehouse.WarehouseError as exc:
            raise CommandError(str(exc).splitlines()[0]) from exc
        summary = {
            "tables": len(copied),
            "rows": sum(c.rows for c in copied),
            "events": next((c.rows for c in copied if c.table == "events"), 0),
        }
        self.stdout.write(orjson.dumps(summary).decode())
