"""`agent_rows` and `agent_links` kept in step with `events` (warehouse/schema/agents.py
says what they hold and why): every change to events that run_rollups makes, this
module makes to the copies, in the same transaction.

Rows stored are copied as stored (from their stamp, from the Arrow rows inserted or from
the Parquet file added); an UPDATE's scope is deleted and copied again from events after
it; a DELETE's runs are copied again whole, as their totals are counted again. A column
the stored rows do not carry is NULL, as it is in events. Must not decide which events
are new, nor read the copies (analytics/runs/agent.py does).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

import warehouse
from warehouse.schema.agents import AGENT_LINK_COLUMNS, AGENT_ROW_COLUMNS, LINK_ROW_SQL
from warehouse.schema.events import COLUMNS

Params = Sequence[Any] | dict[str, Any]

_TYPES = {c.name: c.sql_type for c in COLUMNS}
_COPIES = (
    ("agent_rows", AGENT_ROW_COLUMNS, "true"),
    ("agent_links", AGENT_LINK_COLUMNS, LINK_ROW_SQL),
)


def _select(columns: tuple[str, ...], present: set[str] | None) -> str:
    """The copy's columns from a relation holding `present` (every column when None)."""
    return ", ".join(
        name if present is None or name in present else f"CAST(NULL AS {_TYPES[name]}) AS {name}"
        for name in columns
    )


def _copy(
    cur: warehouse.Cursor, relation: str, where: str, params: Params, present: set[str] | None
) -> None:
    for table, columns, rows in _COPIES:
        cur.execute(
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"SELECT {_select(columns, present)} FROM {relation} WHERE ({where}) AND {rows}",
            params,
        )


def copy_stamped(cur: warehouse.Cursor, stamp: object) -> None:
    """Copy the events stored with ingested_at `stamp` (run_rollups.insert_events')."""
    _copy(cur, "events", "ingested_at = ?", [stamp], None)


def copy_registered(cur: warehouse.Cursor, name: str, present: Sequence[str]) -> None:
    """Copy the rows of the registered relation `name`, whose columns are `present`
    (named as events' own), just inserted into events."""
    _copy(cur, name, "true", [], set(present))


def copy_file(cur: warehouse.Cursor, path: Path) -> None:
    """Copy the rows of the Parquet file `path`, just added to events as it is."""
    present = set(pq.read_schema(path).names)
    _copy(cur, "read_parquet(?)", "true", [str(path)], present)


def delete_scope(cur: warehouse.Cursor, scope: str, params: Params) -> None:
    """Before an UPDATE of events: delete the copies of the rows of `scope` (a condition
    on events naming only columns both copies hold: run, agent, event, id, source_kind)."""
    for table, _, _ in _COPIES:
        cur.execute(f"DELETE FROM {table} WHERE {scope}", params)


def copy_scope(cur: warehouse.Cursor, scope: str, params: Params) -> None:
    """After that UPDATE: copy the rows of `scope` again, as they now are."""
    _copy(cur, "events", scope, params, None)


def copy_runs_again(cur: warehouse.Cursor, runs: str) -> None:
    """After rows of events are deleted: copy the runs of the registered relation `runs(run)`
    again, whole."""
    chosen = f"run IN (SELECT run FROM {runs})"
    for table, _, _ in _COPIES:
        cur.execute(f"DELETE FROM {table} WHERE {chosen}")
    _copy(cur, "events", chosen, [], None)
