"""E-mail: one message per notification through Django's configured e-mail backend, with
a plain-text and an HTML body (templates/alerts/email.txt and .html; the HTML is
autoescaped and loads nothing from outside the message).

SMTP failures are sorted by reply code (RFC 5321): 5xx refusals of the sender or the
recipients, and addresses that are not addresses, are permanent; 4xx replies ("try again
later", greylisting) and connection failures are transient.
"""

from __future__ import annotations

import smtplib
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.validators import validate_email
from django.template.loader import render_to_string

from analytics.alerts.channels.base import Transport, TransportError, format_since, headline
from analytics.alerts.models import Channel

SMTP_TIMEOUT_S = 30.0  # used when settings.EMAIL_TIMEOUT is unset (Django's default: none)


def build_context(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "headline": headline(payload),
        "reminder": bool(payload.get("reminder")),
        "rule": payload.get("rule", ""),
        "kind": payload.get("kind", ""),
        "state": payload.get("state", ""),
        "subject": payload.get("subject", ""),
        "summary": payload.get("summary", ""),
        "since": format_since(payload.get("since")),
        "value": payload.get("value"),
    }


def build_message(address: str, payload: dict[str, Any]) -> EmailMultiAlternatives:
    context = build_context(payload)
    message = EmailMultiAlternatives(
        subject=context["headline"],
        body=render_to_string("alerts/email.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[address],
    )
    message.attach_alternative(render_to_string("alerts/email.html", context), "text/html")
    return message


def is_permanent(exc: Exception) -> bool:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return any(code >= 500 for code, _ in exc.recipients.values())
    if isinstance(exc, smtplib.SMTPConnectError):
        return False
    if isinstance(exc, smtplib.SMTPResponseException):  # sender refused, data, auth...
        return exc.smtp_code >= 500
    if isinstance(exc, smtplib.SMTPNotSupportedError):  # e.g. TLS configured, not offered
        return True
    return isinstance(exc, ValueError)  # Django's answer to an address it cannot parse


class EmailTransport(Transport):
    def send(self, channel: Channel, payload: dict[str, Any]) -> None:
        try:
            validate_email(channel.target)
        except ValidationError:
            raise TransportError(
                f"not an e-mail address: {channel.target!r}", permanent=True
            ) from None
        timeout = getattr(settings, "EMAIL_TIMEOUT", None) or SMTP_TIMEOUT_S
        message = build_message(channel.target, payload)
        message.connection = get_connection(timeout=timeout)
        try:
            message.send(fail_silently=False)
        except (OSError, ValueError) as exc:  # smtplib's errors are OSErrors too
            raise TransportError(
                f"{exc.__class__.__name__}: {exc}", permanent=is_permanent(exc)
            ) from None
