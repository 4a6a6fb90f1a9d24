"""The analytics app's models, as Django finds them: each topic defines its own in
`analytics/<topic>/models.py`, and this module imports them all.

The scrape targets and model configurations (analytics/serving/models.py) keep their
`ingest` app label and tables: they were defined there first, and moving a model between
apps would rewrite both apps' migrations for no change in behaviour.
"""

from analytics.access.models import Access, AuditEntry, LoginFailure
from analytics.alerts.models import (
    AlertRule,
    AlertState,
    Channel,
    DeliveryAttempt,
    Evaluation,
    Notification,
    Silence,
    Transition,
)
from analytics.costs.models import (
    GpuPrice,
    ModelPrice,
    RecipientKind,
    ReportDelivery,
    ReportRecipient,
    Team,
)
from analytics.serving.models import KvDtype, ModelConfig, ScrapeTarget

__all__ = [
    "Access",
    "AlertRule",
    "AlertState",
    "AuditEntry",
    "Channel",
    "DeliveryAttempt",
    "Evaluation",
    "GpuPrice",
    "KvDtype",
    "LoginFailure",
    "ModelConfig",
    "ModelPrice",
    "Notification",
    "RecipientKind",
    "ReportDelivery",
    "ReportRecipient",
    "ScrapeTarget",
    "Silence",
    "Team",
    "Transition",
]
