"""The state machine alone, with no database: where one alert goes given a finding."""

from __future__ import annotations

from datetime import timedelta

from analytics.alerts.rules import Finding
from analytics.alerts.state import FIRING, OK, PENDING, RESOLVED, Step, next_states
from tests.analytics.alerts.scenarios import T0

AT = T0 + timedelta(minutes=10)


def _holds(since_minutes: float | None = None) -> Finding:
    since = T0 + timedelta(minutes=since_minutes) if since_minutes is not None else None
    return Finding("gpu", True, 0.97, "high", since)


def test_a_condition_fires_at_once_when_the_rule_has_no_for() -> None:
    assert next_states(OK, _holds(), None, 0, AT) == Step([FIRING], AT)


def test_a_condition_waits_in_pending_until_it_has_held_for_the_rules_for() -> None:
    assert next_states(OK, _holds(8), None, 300, AT) == Step([PENDING], T0 + timedelta(minutes=8))
    assert next_states(PENDING, _holds(), T0 + timedelta(minutes=8), 300, AT) == Step(
        [], T0 + timedelta(minutes=8)
    )
    assert next_states(PENDING, _holds(), T0 + timedelta(minutes=5), 300, AT) == Step(
        [FIRING], T0 + timedelta(minutes=5)
    )


def test_a_condition_the_data_says_began_long_ago_passes_pending_on_its_way_to_firing() -> None:
    assert next_states(OK, _holds(2), None, 300, AT) == Step(
        [PENDING, FIRING], T0 + timedelta(minutes=2)
    )


def test_a_start_after_the_evaluation_time_counts_from_the_evaluation_time() -> None:
    assert next_states(OK, _holds(12), None, 300, AT) == Step([PENDING], AT)


def test_a_firing_alert_stays_firing_while_the_condition_holds() -> None:
    assert next_states(FIRING, _holds(), T0, 300, AT) == Step([], T0)


def test_a_condition_that_stops_resolves_a_firing_alert_and_quiets_a_pending_one() -> None:
    stopped = Finding("gpu", False, 0.5, "low")
    assert next_states(FIRING, stopped, T0, 300, AT) == Step([RESOLVED], None)
    assert next_states(PENDING, stopped, T0, 300, AT) == Step([OK], None)
    assert next_states(OK, stopped, None, 300, AT) == Step([], None)
    assert next_states(RESOLVED, stopped, None, 300, AT) == Step([], None)
