"""The Celery queues' lengths, read from the broker, for `GET /metrics`.

Owns asking the broker the Celery app is configured with (Redis in production, kombu's
filesystem transport under the data dir by default) how many messages wait in each of our
queues, the way its kombu transport stores them: the transport's own count (Redis: LLEN of
the queue's list for each priority step; filesystem: the queue's message files). Must not
consume, declare or change anything, and must not fail a scrape: a broker that does not
answer within BROKER_TIMEOUT_S gives `None` (exposed as `fleetscope_queue_up 0`).
"""

from __future__ import annotations

import logging

from dashboard.api_answers import one_line
from dashboard.celery import app

log = logging.getLogger(__name__)

QUEUES = ("celery", "warehouse")  # dashboard/celery.py: the default queue and task_routes'
BROKER_TIMEOUT_S = 1


def queue_lengths() -> dict[str, int] | None:
    """{queue: messages waiting}, or None when the broker cannot be asked."""
    options = {
        **app.conf.broker_transport_options,
        "socket_timeout": BROKER_TIMEOUT_S,
        "socket_connect_timeout": BROKER_TIMEOUT_S,
    }
    try:
        with app.connection_for_read(
            transport_options=options, connect_timeout=BROKER_TIMEOUT_S
        ) as connection:
            connection.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_S)
            channel = connection.default_channel
            # `_size` is kombu's virtual transports' count of one queue (kombu pinned in
            # pyproject.toml): the one place that knows how each transport stores messages.
            return {queue: int(channel._size(queue)) for queue in QUEUES}  # type: ignore[attr-defined]
    except Exception as exc:  # any broker failure is a figure (up 0), never a failed scrape
        log.warning("broker did not answer the queue lengths: %s", one_line(str(exc)))
        return None
