"""`manage.py cost_report [--date YYYY-MM-DD] [--tz ZONE] [--format html,csv,json]
[--output-dir DIR] [--team NAME] [--send]`: the daily cost report (yesterday by default).

The report printed is the whole fleet's (the command runs as the system), or with --team
only that team's, as its members and its report recipients see it. One format goes to
stdout; several need --output-dir (one file per format). --send also delivers the report
to the recipients configured in the admin, each its own team's (each attempt recorded),
and prints the outcome as one JSON line on stderr.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from analytics.access.visibility import seen_for_team
from analytics.costs import report_formats as formats
from analytics.costs.api import read_day
from analytics.costs.models import Team
from analytics.costs.report import build_daily_report
from analytics.costs.report_delivery import deliver_report
from lib.errors import ParameterError

_RENDER = {"html": formats.to_html, "csv": formats.to_csv, "json": formats.to_json}


class Command(BaseCommand):
    help = "Build the daily cost report; print or save it, and optionally send it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--date", default=None, help="YYYY-MM-DD (default: yesterday)")
        parser.add_argument("--tz", default=None, help="IANA time zone of the day (default UTC)")
        parser.add_argument("--format", default="json", help="html, csv, json, comma-separated")
        parser.add_argument("--output-dir", type=Path, default=None)
        parser.add_argument(
            "--team", default=None, help="print only this team's report (default: the fleet's)"
        )
        parser.add_argument("--send", action="store_true", help="deliver to the recipients")

    def handle(self, *args: Any, **options: Any) -> None:
        names = [f.strip() for f in options["format"].split(",") if f.strip()]
        unknown = [f for f in names if f not in _RENDER]
        if unknown or not names:
            raise CommandError(f"--format takes {', '.join(formats.FORMATS)}, got {unknown}")
        out_dir: Path | None = options["output_dir"]
        if len(names) > 1 and out_dir is None:
            raise CommandError("several formats need --output-dir")
        team = None
        if options["team"] is not None:
            team = Team.objects.filter(name=options["team"]).first()
            if team is None:
                raise CommandError(f"no team named {options['team']!r}")
        try:
            day: date = read_day(options["date"], options["tz"])
            report = build_daily_report(day, options["tz"], seen=seen_for_team(team))
        except ParameterError as exc:
            raise CommandError(str(exc)) from None
        for name in names:
            text = _RENDER[name](report)
            if out_dir is None:
                self.stdout.write(text, ending="" if text.endswith("\n") else "\n")
            else:
                out_dir.mkdir(parents=True, exist_ok=True)
                path = out_dir / f"fleetscope-costs-{report.date}.{name}"
                path.write_text(text, encoding="utf-8")
                self.stderr.write(f"wrote {path}")
        if options["send"]:
            outcome = deliver_report(day, options["tz"], seen_for_team=seen_for_team)
            self.stderr.write(orjson.dumps(vars(outcome)).decode())
