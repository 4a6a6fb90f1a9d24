"""The admin's alert pages: a rule is checked as the API checks it; states are read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.alerts.models import AlertRule

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(db: None) -> Client:
    user = User.objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def _post_rule(client: Client, **fields: str) -> int:
    data = {
        "name": "stall",
        "kind": "commit_stall",
        "scope": "{}",
        "threshold": "",
        "for_seconds": "0",
        "params": '{"factor": 5, "floor": "5m"}',
        "repeat_seconds": "14400",
        "enabled": "on",
        **fields,
    }
    return client.post("/admin/analytics/alertrule/add/", data).status_code


def test_the_admin_saves_a_rule_that_makes_sense(admin_client_: Client) -> None:
    assert _post_rule(admin_client_) == 302
    assert AlertRule.objects.get().params == {"factor": 5, "floor": "5m"}


def test_the_admin_refuses_a_rule_that_does_not_with_the_reason(admin_client_: Client) -> None:
    response = admin_client_.post(
        "/admin/analytics/alertrule/add/",
        {
            "name": "stall",
            "kind": "commit_stall",
            "scope": "{}",
            "params": "{}",
            "for_seconds": "0",
            "repeat_seconds": "0",
        },
    )
    assert response.status_code == 200
    assert "commit_stall needs params.min_gap" in response.content.decode()
    assert not AlertRule.objects.exists()


def test_every_alert_admin_page_answers(admin_client_: Client) -> None:
    for model in (
        "alertrule",
        "alertstate",
        "channel",
        "silence",
        "evaluation",
        "notification",
        "deliveryattempt",
    ):
        assert admin_client_.get(f"/admin/analytics/{model}/").status_code == 200, model
