"""The channel registry: one Transport class per ChannelKind (slack.py, webhook.py,
email.py; base.py has what they share). Adding a kind: a ChannelKind value, a module with
its Transport subclass, and a line in TRANSPORTS."""

from __future__ import annotations

from analytics.alerts.channels.base import Transport, TransportError
from analytics.alerts.channels.email import EmailTransport
from analytics.alerts.channels.slack import SlackTransport
from analytics.alerts.channels.webhook import WebhookTransport
from analytics.alerts.models import Channel, ChannelKind

TRANSPORTS: dict[ChannelKind, type[Transport]] = {
    ChannelKind.SLACK: SlackTransport,
    ChannelKind.WEBHOOK: WebhookTransport,
    ChannelKind.EMAIL: EmailTransport,
}


def transport_for(channel: Channel) -> Transport:
    """The transport for the channel's kind; TransportError (permanent) for an unknown kind."""
    try:
        kind = ChannelKind(channel.kind)
    except ValueError:
        raise TransportError(f"unknown channel kind {channel.kind!r}", permanent=True) from None
    return TRANSPORTS[kind]()


__all__ = ["TRANSPORTS", "Transport", "TransportError", "transport_for"]
