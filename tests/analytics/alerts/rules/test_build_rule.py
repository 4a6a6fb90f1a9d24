"""build_rule refuses a rule that cannot be evaluated as written, whatever is wrong with
it (an unknown kind, a threshold, a scope, params), in one line."""

from __future__ import annotations

from typing import Any

import pytest

from analytics.alerts.rules import build_rule


@pytest.mark.parametrize(
    ("kind", "threshold", "scope", "params", "message"),
    [
        ("nope", 1, {}, {}, "unknown rule kind"),
        ("kv_usage", 1.5, {}, {}, "between 0 and 1"),
        ("kv_usage", None, {}, {}, "needs a threshold"),
        ("kv_usage", 0.9, {"run": "x"}, {}, "scope must be"),
        ("commit_stall", None, {}, {}, "needs params.min_gap"),
        ("commit_stall", None, {}, {"min_gap": "5m", "factor": 3}, "not both"),
        ("commit_stall", None, {}, {"min_gap": "soon"}, "params.min_gap must look like"),
        ("preemption_rate", 1, {}, {"window": "90s"}, "whole number of minutes"),
        ("error_drift", None, {}, {"colour": "red"}, "does not take params"),
        ("daily_spend", None, {}, {}, "needs a threshold"),
    ],
)
def test_a_rule_that_makes_no_sense_is_refused_in_one_line(
    kind: str, threshold: float | None, scope: dict[str, Any], params: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        build_rule(kind, threshold, scope, params)
    assert "\n" not in str(caught.value)
