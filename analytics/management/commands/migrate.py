"""`manage.py migrate`: Django's migrate, then the warehouse's (warehouse.migrate), so one
command prepares both databases (`migrate_warehouse` still migrates the warehouse alone).

Only a whole migrate of the default database migrates the warehouse: one that names an app
or a migration, or only plans, checks or prunes, leaves it as it is.
"""

from typing import Any

from django.core.management.commands import migrate
from django.db import DEFAULT_DB_ALIAS

from analytics.management.commands.migrate_warehouse import migrate_warehouse


class Command(migrate.Command):
    help = migrate.Command.help + " Then creates or upgrades the warehouse tables (DuckLake)."

    def handle(self, *args: Any, **options: Any) -> None:
        super().handle(*args, **options)
        whole = not options.get("app_label") and not options.get("migration_name")
        looks_only = options.get("plan") or options.get("check_unapplied") or options.get("prune")
        if options["database"] == DEFAULT_DB_ALIAS and whole and not looks_only:
            message = migrate_warehouse()
            if options["verbosity"] >= 1:
                self.stdout.write(message)
