"""`manage.py load_demo`: the demo, ready to look at. Migrates both databases, writes and
ingests the demo runs (ingest.demo; nothing is loaded twice however often it runs) and
creates the `demo` login if it is missing, and the demo alert rules (analytics.alerts.demo).

After the steps it prints every run as the runs list shows it (agents, commits, status,
from the same analytics.runs questions), so what it says and what the pages say agree. It
prints what the system sees (every team's runs, lib.access.Seen.all()), as an all-teams
user's runs list shows them.

The password comes from FLEETSCOPE_DEMO_PASSWORD or is generated once and kept in
`<data dir>/demo/password` (mode 0600) so later runs can print it again. The last line on
stdout is the login, for scripts/run.sh to show.
"""

from __future__ import annotations

import os
import secrets
import sys
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

import warehouse
from analytics.alerts.demo import ensure_demo_rules
from analytics.runs.queries import list_runs
from analytics.runs.status import run_statuses
from ingest.demo import DEMO_STEPS, run_demo_steps
from ingest.sources.files import SourceError
from lib.access import Seen
from warehouse import WarehouseError

DEMO_USERNAME = "demo"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def run_lines() -> list[str]:
    """Each run as the runs list shows it: agents, commits, quarantined lines aside, and
    where it stands (a stall with its minutes, counted to now as on every page)."""
    system = Seen.all()
    statuses = run_statuses(seen=system)
    lines = []
    for run in list_runs(system):
        status = statuses.get(run.run)
        state = str(status.state) if status else "idle"
        if status is not None and status.stalled_minutes is not None:
            state += f" for {round(status.stalled_minutes)} min"
        lines.append(
            f"  run {run.run}: {_count(run.agents, 'agent')}, {_count(run.commits, 'commit')}, "
            f"{_count(run.errors, 'error')}; {state}"
        )
    return [f"runs: {len(lines)}", *lines]


class Command(BaseCommand):
    help = "Load the demo runs (idempotent) and create the demo login if missing."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--quiet", action="store_true", help="no progress bars on stderr")

    def handle(self, *args: Any, **options: Any) -> None:
        demo_dir = Path(settings.DATA_DIR) / "demo"
        demo_dir.mkdir(parents=True, exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        try:
            warehouse.migrate()
            results = run_demo_steps(demo_dir, progress=None if options["quiet"] else sys.stderr)
        except (WarehouseError, SourceError, ValueError) as exc:
            raise CommandError(str(exc).splitlines()[0]) from exc
        described = {s.name: s.description for s in DEMO_STEPS}
        for result in results:
            s = result.summary
            state = "written and loaded" if result.written else "already there"
            self.stdout.write(
                f"{result.step}: {state}; accepted {s.accepted}, quarantined {s.quarantined}, "
                f"duplicates {s.duplicates} ({described.get(result.step, '')})"
            )
        for line in run_lines():
            self.stdout.write(line)
        made = ensure_demo_rules()
        self.stdout.write(f"alert rules: {made} demo rules added" if made else "alert rules: there")
        self.stdout.write(self._login(demo_dir))

    def _login(self, demo_dir: Path) -> str:
        users = get_user_model()
        password_file = demo_dir / "password"
        from_env = os.environ.get("FLEETSCOPE_DEMO_PASSWORD", "")
        user = users.objects.filter(username=DEMO_USERNAME).first()
        if user is None:
            password = _checked_password(from_env) if from_env else _generated_password()
            users.objects.create_superuser(DEMO_USERNAME, password=password)  # admin reachable
            if not from_env:
                password_file.write_text(password)
                password_file.chmod(0o600)
            return f"login: {DEMO_USERNAME} / {password}"
        for candidate in (from_env, password_file.read_text() if password_file.exists() else ""):
            if candidate and user.check_password(candidate):
                return f"login: {DEMO_USERNAME} / {candidate}"
        return f"login: {DEMO_USERNAME} (password changed since the demo set it)"


def _generated_password() -> str:
    """16 random URL-safe characters, drawn again in the rare case the validators refuse
    them (all digits, say)."""
    while True:
        password = secrets.token_urlsafe(12)
        if _password_problem(password) is None:
            return password


def _checked_password(password: str) -> str:
    problem = _password_problem(password)
    if problem is not None:
        raise CommandError(f"FLEETSCOPE_DEMO_PASSWORD is refused: {problem}")
    return password


def _password_problem(password: str) -> str | None:
    """What AUTH_PASSWORD_VALIDATORS say against this password for the demo user, if
    anything, on one line."""
    try:
        password_validation.validate_password(password, get_user_model()(username=DEMO_USERNAME))
    except ValidationError as exc:
        return " ".join(exc.messages)
    return None
