"""Six runs whose every listed figure is known, for the runs list's tests.

Times 2026-01-14 UTC; the tests judge statuses at NOW = 12:40.

| run | source | first | last | agents | events | commits | errors | tokens | status |
|---|---|---|---|---|---|---|---|---|---|
| alpha | agent-events | 10:00 | 10:20 | 2 | 5 | 1 | 0 | 150 | finished (root stop) |
| beta | agent-events | 11:00 | 12:30 | 2 | 4 | 1 | 0 | 0 | stalled (commit 11:05) |
| gamma | agent-events | 12:35 | 12:36 | 1 | 2 | 1 | 0 | 0 | active |
| delta | agent-events | 09:00 | 09:10 | 2 | 5 | 1 | 1 | 15 | idle |
| 5f0c-session-1 | claude-code | 08:00 | 08:30 | 1 | 2 | 0 | 0 | 1200 | idle |
| 7a2e-session-2 | codex | 07:00 | 07:30 | 2 | 4 | 0 | 2 | 75 | idle |

Models: alpha gpt-5.2, delta claude-x, session-1 claude-sonnet, session-2 gpt-5-codex.
Session-2's first event carries the telemetry team `core` (a person of that team);
session labels: session-1 `fleetscope` on `main` ("Fix the flaky login test in the
dashboard please and thanks a lot", 12 words), session-2 `billing` on `feat/Invoices`
("Add CSV export").
"""

from datetime import UTC, datetime
from typing import Any

import orjson

import warehouse
from ingest.pipelines import run_rollups
from ingest.pipelines.agent_events import ingest_body

NOW = datetime(2026, 1, 14, 12, 40, tzinfo=UTC)
SESSION_1 = "5f0c-session-1"
SESSION_2 = "7a2e-session-2"
PROMPT_1 = "Fix the flaky login test in the dashboard please and thanks a lot"


def _event(run: str, clock: str, agent: str, event: str, **extra: Any) -> dict[str, Any]:
    return {"ts": f"2026-01-14T{clock}Z", "run": run, "agent": agent, "event": event, **extra}


AGENT_EVENTS = [
    _event("alpha", "10:00:00", "root", "spawn", role="root_planner"),
    _event("alpha", "10:01:00", "w", "spawn", role="worker", parent="root"),
    _event(
        "alpha",
        "10:05:00",
        "w",
        "llm_call",
        model="gpt-5.2",
        usage={"input_tokens": 100, "output_tokens": 50},
    ),
    _event("alpha", "10:10:00", "w", "commit", commit={"sha": "a1"}),
    _event("alpha", "10:20:00", "root", "stop"),
    _event("beta", "11:00:00", "root", "spawn", role="root_planner"),
    _event("beta", "11:01:00", "w", "spawn", role="worker", parent="root"),
    _event("beta", "11:05:00", "w", "commit", commit={"sha": "b1"}),
    _event("beta", "12:30:00", "w", "tool_call", tool="rg", ok=True),
    _event("gamma", "12:35:00", "root", "spawn", role="root_planner"),
    _event("gamma", "12:36:00", "root", "commit", commit={"sha": "g1"}),
    _event("delta", "09:00:00", "root", "spawn", role="root_planner"),
    _event("delta", "09:01:00", "w", "spawn", role="worker", parent="root"),
    _event("delta", "09:05:00", "w", "commit", commit={"sha": "d1"}),
    _event(
        "delta",
        "09:06:00",
        "w",
        "llm_call",
        model="claude-x",
        usage={"input_tokens": 10, "output_tokens": 5},
    ),
    _event("delta", "09:10:00", "w", "error", error={"kind": "build", "message": "E1"}),
]

# run, agent, clock, event, model, input, output, ok, team, source_kind
SESSION_EVENTS = [
    (SESSION_1, "main", "08:00", "llm_call", "claude-sonnet", 1000, 200, None, None, "claude-code"),
    (SESSION_1, "main", "08:30", "tool_call", None, None, None, True, None, "claude-code"),
    (SESSION_2, "main", "07:00", "llm_call", "gpt-5-codex", 50, 25, None, "core", "codex"),
    (SESSION_2, "main", "07:10", "error", None, None, None, None, None, "codex"),
    (SESSION_2, "sub", "07:20", "tool_call", None, None, None, False, None, "codex"),
    (SESSION_2, "main", "07:30", "tool_call", None, None, None, True, None, "codex"),
]

_INSERT_EVENTS = """
INSERT INTO events (run, agent, ts, event, model, input_tokens, output_tokens, ok, team,
                    source_kind, source, source_line, ingested_at)
SELECT e.run, e.agent, e.ts, e.event, e.model, e.input_tokens, e.output_tokens, e.ok,
       e.team, e.source_kind, 'transcripts/' || e.run || '.jsonl', e.line, $stamp
FROM (SELECT unnest($rows, recursive := true)) AS e
"""

_INSERT_LABEL = """
INSERT INTO session_labels (run, source_kind, source, project, cwd, branch, first_prompt,
                            first_ts, ingested_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def _session_rows() -> list[dict[str, Any]]:
    names = ("run", "agent", "clock", "event", "model", "input_tokens", "output_tokens")
    rows = []
    for line, values in enumerate(SESSION_EVENTS, start=1):
        row: dict[str, Any] = dict(zip(names, values[:7], strict=True))
        hour, minute = (int(p) for p in str(row.pop("clock")).split(":"))
        row["ts"] = datetime(2026, 1, 14, hour, minute, tzinfo=UTC)
        row.update(ok=values[7], team=values[8], source_kind=values[9], line=line)
        rows.append(row)
    return rows


def load_listing_world() -> None:
    body = b"".join(orjson.dumps(e) + b"\n" for e in AGENT_EVENTS)
    summary = ingest_body(body)
    assert (summary.accepted, summary.quarantined) == (len(AGENT_EVENTS), 0)
    rows = _session_rows()

    def write(cur: warehouse.Cursor) -> None:
        run_rollups.insert_events(cur, _INSERT_EVENTS, lambda stamp: {"rows": rows, "stamp": stamp})
        at = datetime(2026, 1, 14, 13, 0, tzinfo=UTC)
        for label in (
            (SESSION_1, "claude-code", "t/1.jsonl", "fleetscope", "/home/ana/fleetscope", "main",
             PROMPT_1, datetime(2026, 1, 14, 8, 0, tzinfo=UTC), at),
            (SESSION_2, "codex", "t/2.jsonl", "billing", "/srv/billing", "feat/Invoices",
             "Add CSV export", datetime(2026, 1, 14, 7, 0, tzinfo=UTC), at),
        ):  # fmt: skip
            cur.execute(_INSERT_LABEL, list(label))

    warehouse.write(write)
