"""Generic JSON webhooks: a POST of exactly the notification payload (see
docs/api.md), signed when the channel has a secret so receivers can check
it came from us: `X-Fleetscope-Signature: sha256=<hex HMAC-SHA256 of the body bytes>`."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import orjson

from analytics.alerts.channels.base import Transport, post_json
from analytics.alerts.models import Channel

SIGNATURE_HEADER = "X-Fleetscope-Signature"


def sign(body: bytes, secret: str) -> str:
    """The header value for `body`: receivers compute the same over the bytes received."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookTransport(Transport):
    def send(self, channel: Channel, payload: dict[str, Any]) -> None:
        # The signature covers these exact bytes, so they are serialised once.
        body = orjson.dumps(payload)
        headers = {SIGNATURE_HEADER: sign(body, channel.secret)} if channel.secret else {}
        post_json(channel.target, body, headers)
