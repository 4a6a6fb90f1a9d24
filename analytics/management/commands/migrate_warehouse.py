"""`manage.py migrate_warehouse`: apply pending warehouse schema changes."""

from typing import Any

from django.core.management.base import BaseCommand

import warehouse


class Command(BaseCommand):
    help = "Create or upgrade the warehouse tables (DuckLake)."

    def handle(self, *args: Any, **options: Any) -> None:
        applied = warehouse.migrate()
        version = warehouse.schema_version()
        if applied:
            self.stdout.write(f"applied warehouse migrations {applied}; schema version {version}")
        else:
            self.stdout.write(f"warehouse is up to date at schema version {version}")
