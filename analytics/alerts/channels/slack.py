"""Slack-compatible incoming webhooks (Slack, Mattermost, Rocket.Chat, ...): a POST of
`{"text": ...}` with two or three readable lines built from the notification payload."""

from __future__ import annotations

from typing import Any

import orjson

from analytics.alerts.channels.base import Transport, format_since, headline, post_json
from analytics.alerts.models import Channel


def escape(text: str) -> str:
    # Slack reads <...> as links and mentions (<!channel>); it asks for these three
    # escaped, and nothing else.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def build_text(payload: dict[str, Any]) -> str:
    """`[FIRING] rule: subject`, then the summary, then when the state began."""
    lines = [headline(payload)]
    summary = " ".join(str(payload.get("summary") or "").split())
    if summary:
        lines.append(summary)
    since = format_since(payload.get("since"))
    if since:
        lines.append(f"since {since}")
    return escape("\n".join(lines))


class SlackTransport(Transport):
    def send(self, channel: Channel, payload: dict[str, Any]) -> None:
        post_json(channel.target, orjson.dumps({"text": build_text(payload)}))
