"""The preview: the state machine replayed over a past range, in memory, with the same
incidents a live evaluation would have recorded and nothing written."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from analytics.alerts.models import AlertState, Evaluation
from analytics.alerts.preview import preview
from analytics.alerts.rules import build_rule
from lib.access import Seen
from lib.durations import format_time
from tests.analytics.alerts import scenarios
from tests.analytics.alerts.scenarios import T0

pytestmark = pytest.mark.django_db


def test_the_preview_replays_a_rule_over_a_past_day_without_writing(lake: Path) -> None:
    scenarios.load_flapping_kv()
    rule = build_rule("kv_usage", 0.95, {}, {}, 300)
    found = preview(rule, T0, T0 + timedelta(minutes=80), seen=Seen.all())
    assert [
        (i.subject, format_time(i.fired_at), format_time(i.resolved_at)) for i in found.incidents
    ] == [("gpu-flap", "2026-01-14T08:33:59Z", "2026-01-14T08:42:59Z")]
    assert found.evaluations == 80
    assert AlertState.objects.count() == 0 and Evaluation.objects.count() == 0
