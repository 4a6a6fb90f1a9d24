"""For the rule tests: a rule built as the API builds it and evaluated once, at T0 plus
some minutes, over facts loaded for its own horizon; and events ingested through the
agent-event pipeline, none quarantined."""

from __future__ import annotations

from datetime import timedelta

import orjson

from analytics.alerts.facts import Facts
from analytics.alerts.rules import Finding, build_rule
from ingest.pipelines.agent_events import ingest_body
from tests.analytics.alerts.scenarios import T0


def evaluate(
    kind: str, threshold: float | None, at_minutes: float, **fields: object
) -> dict[str, Finding]:
    rule = build_rule(
        kind,
        threshold,
        fields.get("scope", {}),  # type: ignore[arg-type]
        fields.get("params", {}),  # type: ignore[arg-type]
        int(fields.get("for_seconds", 0)),  # type: ignore[call-overload]
    )
    at = T0 + timedelta(minutes=at_minutes)
    return {f.subject: f for f in rule.evaluate(Facts(at, at, rule.horizon()), at)}


def ingest_events(events: list[dict[str, object]]) -> None:
    summary = ingest_body(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
    assert summary.quarantined == 0
