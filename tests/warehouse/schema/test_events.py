"""The facts about events stated once in warehouse/schema/events.py: the table's columns as
the migrations leave it, the event kinds as the contract lists them, and which events
are attempts and errors."""

import re
from itertools import product
from pathlib import Path

import pytest

import warehouse
from warehouse.schema.events import (
    ATTEMPT_SQL,
    COLUMNS,
    ERROR_SQL,
    LANDED_COMMIT_SQL,
    SHA_COMMIT_SQL,
    EventKind,
)

CONTRACT = Path(__file__).resolve().parents[3] / "docs" / "agent-events.md"
# How DuckDB's information_schema spells the types COLUMNS names.
_SPELLED = {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE"}


def test_the_migrated_events_table_has_exactly_the_columns_in_their_order(lake: Path) -> None:
    rows = warehouse.fetch_all(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns"
        " WHERE table_name = 'events' ORDER BY ordinal_position"
    )
    assert [(r["column_name"], r["data_type"], r["is_nullable"]) for r in rows] == [
        (c.name, _SPELLED.get(c.sql_type, c.sql_type), "NO" if c.required else "YES")
        for c in COLUMNS
    ]


def test_the_event_kinds_are_those_the_contract_lists() -> None:
    section = CONTRACT.read_text().split("## Event kinds", 1)[1].split("##", 1)[0]
    named = re.findall(r"`([a-z_]+)`", re.sub(r"\([^)]*\)", "", section))  # not the asides
    assert named == [kind.value for kind in EventKind]


@pytest.mark.parametrize(
    ("event", "ok", "sha"), list(product([*EventKind, "other"], [True, False, None], ["s", None]))
)
def test_attempts_and_errors_are_the_contracts(
    event: str, ok: bool | None, sha: str | None
) -> None:
    row = warehouse.fetch_one(
        f"SELECT coalesce({ATTEMPT_SQL}, false) AS attempt, coalesce({ERROR_SQL}, false) AS error,"
        f" coalesce({LANDED_COMMIT_SQL}, false) AS landed, {SHA_COMMIT_SQL} AS sha_commit"
        " FROM (SELECT ?::VARCHAR AS event, ?::BOOLEAN AS ok, ?::VARCHAR AS commit_sha)",
        [event, ok, sha],
    )
    # docs/agent-events.md, "Definitions the dashboard uses".
    attempt = event in ("tool_call", "llm_call", "commit", "push")
    assert row == {
        "attempt": attempt,
        "error": event == "error" or (attempt and ok is False),
        "landed": event == "commit" and ok is not False,
        "sha_commit": event == "commit" and sha is not None,
    }
