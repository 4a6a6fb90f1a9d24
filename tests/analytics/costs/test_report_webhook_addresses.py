"""A cost report's webhook is held to public addresses as an alert channel's is: refused
when saved (the model's clean, which the admin's form runs) and when sent, unless
FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS allows private receivers."""

from datetime import date
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from analytics.costs.models import RecipientKind, ReportRecipient
from analytics.costs.report import build_daily_report
from analytics.costs.report_delivery import DeliveryError, send_webhook
from lib.access import Seen

pytestmark = pytest.mark.django_db


def test_a_private_webhook_is_refused_when_saved_unless_allowed(settings: Any) -> None:
    settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS = False
    for url in ("http://127.0.0.1:8080/hook", "http://0x7f000001/hook", "http://10.0.0.5/hook"):
        with pytest.raises(ValidationError, match="private address"):
            ReportRecipient(kind=RecipientKind.WEBHOOK, target=url).full_clean()
    with pytest.raises(ValidationError, match="http"):
        ReportRecipient(kind=RecipientKind.WEBHOOK, target="file:///etc/passwd").full_clean()
    ReportRecipient(kind=RecipientKind.WEBHOOK, target="https://93.184.216.34/hook").full_clean()
    ReportRecipient(kind=RecipientKind.EMAIL, target="ops@example.com").full_clean()
    settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS = True
    ReportRecipient(kind=RecipientKind.WEBHOOK, target="http://127.0.0.1:8080/hook").full_clean()


def test_a_private_webhook_is_refused_when_sent(settings: Any, lake: object) -> None:
    settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS = False
    report = build_daily_report(date(2026, 1, 14), seen=Seen.all())
    with pytest.raises(DeliveryError, match="private address"):
        send_webhook(report, "http://localhost:9/hook")
