"""Two people of two teams sending Claude Code telemetry, for the people tests.

`ann@example.com` (team `infra`): session `s-ann-1` on 2026-03-10 (two sonnet calls, one
logging $0.05 (1,000 in, 200 out), one unlogged (2,000 in, 100 out: 2,000 x $3 + 100 x
$15 per million = $0.0075), a commit event at 09:10; cumulative active time 30, 90, 20
(a restart), 50 s at 09:00, 09:10, 09:20, 09:30; delta lines of code +10, +5, -3; edit
decisions 3 accept, 1 reject; commit.count 2, ignored: the session logged its commit);
`s-ann-2` on 2026-03-11 (a call logging $0.01, 1,000 in); `s-ann-3` on 2026-03-11 known
only from its metrics (cumulative active time 10 s).
`bob@example.com` (team `web`): `s-bob-1` on 2026-03-10 (a call logging $0.02, 500 in, 50
out; delta active time 45 s; commit.count 1, counted: no commit event).
"""

from datetime import date
from decimal import Decimal
from typing import Any

import warehouse
from ingest.parsers.event_rows import EventRows
from ingest.parsers.otlp import Sender
from ingest.parsers.otlp_sources import map_request
from ingest.pipelines import otlp, otlp_spool
from ingest.pipelines.adapter_loading import Dedup, insert_new
from ingest.sources.otlp import Signal
from tests.otlp import CUMULATIVE, DELTA, metrics_request, sum_metric

ANN, BOB = "ann@example.com", "bob@example.com"
SONNET = "claude-sonnet-4-5"


def set_sonnet_price() -> None:
    from analytics.costs.models import ModelPrice

    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model=SONNET,
        input_per_mtok=Decimal("3"),
        cached_input_per_mtok=Decimal("0.3"),
        cache_write_per_mtok=Decimal("3.75"),
        output_per_mtok=Decimal("15"),
        valid_from=date(2025, 1, 1),
    )


def insert_events(*events: dict[str, Any]) -> None:
    rows = EventRows()
    for n, event in enumerate(events):
        rows.add(agent="main", id=f"e{n}", **event)
    table = rows.table()
    warehouse.write(
        lambda cur: insert_new(cur, table, source_kind="otlp", source="otlp/test", dedup=Dedup.RUN)
    )


def send_metrics(team: str, metrics: list[Any]) -> None:
    request = metrics_request({"service.name": "claude-code", "team.id": team}, metrics)
    batch = map_request(Signal.METRICS, request, Sender("alice"))
    otlp_spool.append(batch, Sender("alice"), otlp_spool.body_digest(request.SerializeToString()))
    otlp.drain(seconds=10)


def _call(run: str, ts: str, person: str, team: str, i: int, o: int, cost: float | None):
    return {
        "run": run,
        "ts": ts,
        "event": "llm_call",
        "model": SONNET,
        "input_tokens": i,
        "output_tokens": o,
        "cost_usd": cost,
        "person": person,
        "team": team,
    }


def build() -> None:
    set_sonnet_price()
    insert_events(
        _call("s-ann-1", "2026-03-10T09:00:00Z", ANN, "infra", 1000, 200, 0.05),
        _call("s-ann-1", "2026-03-10T09:05:00Z", ANN, "infra", 2000, 100, None),
        {
            "run": "s-ann-1",
            "ts": "2026-03-10T09:10:00Z",
            "event": "commit",
            "commit_sha": "abc123",
            "person": ANN,
            "team": "infra",
        },
        _call("s-ann-2", "2026-03-11T10:00:00Z", ANN, "infra", 1000, 0, 0.01),
        _call("s-bob-1", "2026-03-10T12:00:00Z", BOB, "web", 500, 50, 0.02),
    )
    ann1 = {"session.id": "s-ann-1", "user.email": ANN}
    ann3 = {"session.id": "s-ann-3", "user.email": ANN}
    active = [("2026-03-10T09:00:00", 30, ann1), ("2026-03-10T09:10:00", 90, ann1)]
    active += [("2026-03-10T09:20:00", 20, ann1), ("2026-03-10T09:30:00", 50, ann1)]
    send_metrics(
        "infra",
        [
            sum_metric("claude_code.active_time.total", active, CUMULATIVE, unit="s"),
            sum_metric(
                "claude_code.active_time.total",
                [("2026-03-11T11:00:00", 10, ann3)],
                CUMULATIVE,
                unit="s",
            ),
            sum_metric(
                "claude_code.lines_of_code.count",
                [
                    ("2026-03-10T09:05:00", 10, {**ann1, "type": "added"}),
                    ("2026-03-10T09:15:00", 5, {**ann1, "type": "added"}),
                    ("2026-03-10T09:05:00", 3, {**ann1, "type": "removed"}),
                ],
                DELTA,
            ),
            sum_metric(
                "claude_code.code_edit_tool.decision",
                [
                    ("2026-03-10T09:05:00", 3, {**ann1, "decision": "accept", "tool": "Edit"}),
                    ("2026-03-10T09:06:00", 1, {**ann1, "decision": "reject", "tool": "Edit"}),
                ],
                DELTA,
            ),
            sum_metric("claude_code.commit.count", [("2026-03-10T09:10:00", 2, ann1)], DELTA),
        ],
    )
    bob1 = {"session.id": "s-bob-1", "user.email": BOB}
    send_metrics(
        "web",
        [
            sum_metric("claude_code.active_time.total", [("2026-03-10T12:00:00", 45, bob1)], DELTA),
            sum_metric("claude_code.commit.count", [("2026-03-10T12:05:00", 1, bob1)], DELTA),
        ],
    )
