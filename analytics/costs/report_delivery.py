"""Sends the daily cost report to every enabled recipient and records each attempt.

E-mail: the HTML report (charts as bar tables) with a plain-text part and the CSV
attached, through Django's configured e-mail backend. Webhooks: a Slack-compatible
`{"text": ...}` POST through lib.http (the one outbound HTTP module). Every
attempt is a ReportDelivery row, failures included; a recipient that already received a
day's report is skipped, so a repeated task never sends twice, and one that failed
MAX_ATTEMPTS times for a day is given up on for that day.

A recipient of a team gets that team's report, one of no team the whole fleet's: the
caller passes `seen_for_team` (analytics.access.visibility's), because who sees what is
decided there and costs may not import it; each team's report is built once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import orjson
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db.models import Exists, OuterRef, QuerySet

from analytics.costs import report_formats as formats
from analytics.costs.models import RecipientKind, ReportDelivery, ReportRecipient, Team
from analytics.costs.report import DailyReport, build_daily_report
from analytics.templatetags.humanize_usd import usd
from lib import http
from lib.access import Seen

# The beat task runs every quarter hour after the report time: a failing recipient is
# retried on the next ticks, at most this many times per day.
MAX_ATTEMPTS = 3

# What a report of a team (None: of no team) covers: analytics.access.visibility.seen_for_team.
SeenForTeam = Callable[[Team | None], Seen]


class DeliveryError(RuntimeError):
    """Sending failed; the message is one line."""


def _of_team(team: str | None) -> str:
    return f" of team {team}" if team else ""


def summary_text(report: DailyReport, team: str | None = None) -> str:
    """A few lines for webhooks and the plain-text part of the e-mail (`team`: whose
    report it is, None for the whole fleet's)."""
    lines = [
        f"Fleetscope costs{_of_team(team)} for {report.date} ({report.tz}):"
        f" {usd(report.total_usd)}"
        f" (API {usd(report.api_usd)}, GPUs {usd(report.gpu_usd)})",
        f"Day over day: {usd(report.change_usd)}; 7-day mean {usd(report.mean_7d_usd)};"
        f" cache savings {usd(report.cache_savings_usd)}",
    ]
    for m in report.by_model[:5]:
        lines.append(f"  {m.model}: {usd(m.usd)} ({m.calls} calls)")
    for r in report.top_runs[:5]:
        lines.append(f"  run {r.run}: {usd(r.usd)}")
    if report.unpriced:
        lines.append("Unpriced models (not in any total): " + ", ".join(report.unpriced))
    return "\n".join(lines)


def send_email(report: DailyReport, address: str, team: str | None = None) -> None:
    message = EmailMultiAlternatives(
        subject=f"Fleetscope cost report{_of_team(team)} {report.date}: {usd(report.total_usd)}",
        body=summary_text(report, team),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[address],
    )
    message.attach_alternative(formats.to_html(report), "text/html")
    message.attach(f"fleetscope-costs-{report.date}.csv", formats.to_csv(report), "text/csv")
    try:
        message.send(fail_silently=False)
    except OSError as exc:  # smtplib's errors are OSErrors too
        raise DeliveryError(f"{exc.__class__.__name__}: {exc}") from None


def send_webhook(report: DailyReport, url: str, team: str | None = None) -> None:
    try:
        http.post_json(
            url,
            orjson.dumps({"text": summary_text(report, team)}),
            allow_private=settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS,
        )
    except http.FetchError as exc:
        raise DeliveryError(str(exc)) from None


_SENDERS = {RecipientKind.EMAIL: send_email, RecipientKind.WEBHOOK: send_webhook}


@dataclass
class DeliveryOutcome:
    sent: int = 0
    failed: int = 0
    skipped: int = 0


def visible_deliveries(seen: Seen) -> QuerySet[ReportDelivery]:
    """Delivery attempts to the recipients of the teams `seen` covers, newest first (those
    to recipients of no team, or since removed, only for all-seeing users)."""
    deliveries = ReportDelivery.objects.all()
    if seen.everything:
        return deliveries
    ours = ReportRecipient.objects.filter(
        kind=OuterRef("kind"), target=OuterRef("target"), team__in=sorted(seen.team_ids)
    )
    return deliveries.filter(Exists(ours))


def deliver_report(
    day: date, tz: str | None = None, *, seen_for_team: SeenForTeam
) -> DeliveryOutcome:
    """Build the day's report once per team (and once for the fleet) and send it to each
    enabled recipient not yet served: a team's recipients get only that team's report."""
    outcome = DeliveryOutcome()
    pending = []
    for recipient in ReportRecipient.objects.filter(enabled=True).select_related("team"):
        attempts = ReportDelivery.objects.filter(
            report_date=day, kind=recipient.kind, target=recipient.target
        )
        if attempts.filter(ok=True).exists() or attempts.count() >= MAX_ATTEMPTS:
            outcome.skipped += 1
        else:
            pending.append(recipient)
    reports: dict[int | None, DailyReport] = {}
    for recipient in pending:
        key = recipient.team_id
        if key not in reports:
            reports[key] = build_daily_report(day, tz, seen=seen_for_team(recipient.team))
        report = reports[key]
        error = ""
        try:
            team = recipient.team.name if recipient.team else None
            _SENDERS[RecipientKind(recipient.kind)](report, recipient.target, team)
        except DeliveryError as exc:
            error = str(exc)[:1000]
        ReportDelivery.objects.create(
            report_date=day,
            kind=recipient.kind,
            target=recipient.target,
            ok=not error,
            error=error,
        )
        if error:
            outcome.failed += 1
        else:
            outcome.sent += 1
    return outcome
