#!/usr/bin/env python
"""Django's command-line entry point for Fleetscope."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings, where a bad variable stops us
    except ImproperlyConfigured as exc:
        # Django would print a traceback; the message already names the variable and value.
        sys.exit(f"{exc}")
    try:
        execute_from_command_line(sys.argv)
    except Exception as exc:
        from warehouse import NotMigrated

        if isinstance(exc, NotMigrated):  # any command: one line naming the data dir and fix
            sys.exit(f"CommandError: {exc}")
        raise


if __name__ == "__main__":
    main()
