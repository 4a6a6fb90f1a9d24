"""`manage.py migrate_warehouse`: apply pending warehouse schema changes (`manage.py migrate`
does too, after Django's own)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

import warehouse


def migrate_warehouse() -> str:
    """Apply the pending warehouse migrations; one line saying what was done."""
    try:
        applied = warehouse.migrate()
        version = warehouse.schema_version()
    except warehouse.WarehouseError as exc:
        raise CommandError(str(exc).splitlines()[0]) from exc
    if applied:
        return f"applied warehouse migrations {applied}; schema version {version}"
    return f"warehouse is up to date at schema version {version}"


class Command(BaseCommand):
    help = "Create or upgrade the warehouse tables (DuckLake)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(migrate_warehouse())
