"""The demo's alert rules (`manage.py load_demo`): one per kind over the demo fleet and
the stand-in vLLM server, notifying an e-mail channel that, without EMAIL_HOST, prints
to the worker's log. Created once by name; edits made on the page are kept."""

from __future__ import annotations

from typing import Any

from analytics.alerts.models import AlertRule, Channel, ChannelKind
from analytics.alerts.rules import build_rule

DEMO_CHANNEL = {"name": "demo e-mail", "kind": ChannelKind.EMAIL, "target": "oncall@localhost"}

# (name, kind, threshold, for seconds, params)
DEMO_RULES: tuple[tuple[str, str, float | None, int, dict[str, Any]], ...] = (
    ("Commit stall (5x the run's pace, at least 10 min)", "commit_stall", None, 0,
     {"factor": 5, "floor": "10m"}),
    ("Commit rate fell below 30% of the 3 hours before", "commit_decay", 0.3, 600, {}),
    ("Error rate rising", "error_drift", None, 0, {"window": "12h"}),
    ("KV cache above 90% for 5 min", "kv_usage", 0.9, 300, {}),
    ("Preemption burst (over 0.5/s for 5 min)", "preemption_rate", 0.5, 0, {"window": "5m"}),
    ("vLLM target down", "target_down", None, 60, {}),
    ("Daily token spend over $500", "daily_spend", 500.0, 0, {}),
    ("Requests waiting for KV capacity (over 4 for 5 min)", "waiting_capacity", 4.0, 300, {}),
    ("Spec-decode acceptance under 40%", "spec_acceptance", 0.4, 300, {"window": "15m"}),
    ("TTFT SLO: under 95% of requests within 1 s", "slo_attainment", 0.95, 300,
     {"metric": "ttft", "target": "1s", "window": "15m"}),
    ("vLLM engine asleep", "engine_asleep", None, 0, {}),
    ("Corrupted requests", "corrupted_requests", 0.0, 0, {}),
    ("Requests refused at admission (over 10 in 5 min)", "admission_rejections", 10.0, 0, {}),
)  # fmt: skip


def ensure_demo_rules() -> int:
    """Create the demo channel and rules that are missing; returns how many rules were made."""
    channel, _ = Channel.objects.get_or_create(
        name=DEMO_CHANNEL["name"],
        defaults={"kind": DEMO_CHANNEL["kind"], "target": DEMO_CHANNEL["target"]},
    )
    made = 0
    for name, kind, threshold, for_seconds, params in DEMO_RULES:
        build_rule(kind, threshold, {}, params, for_seconds)  # a demo rule must make sense
        rule, created = AlertRule.objects.get_or_create(
            name=name,
            defaults={
                "kind": kind,
                "threshold": threshold,
                "for_seconds": for_seconds,
                "params": params,
            },
        )
        if created:
            rule.channels.add(channel)
            made += 1
    return made
