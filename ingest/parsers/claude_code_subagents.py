"""Claude Code subagents: the Task/Agent call that starts one, the link from that call
to the subagent's own transcript, its end (the call's result), and the correction of its
last response's output count from the usage that result reports.

Pure: values in, values and rows out; ingest/parsers/claude_code.py calls these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ingest.parsers.event_rows import EventRows, check_count, check_name
from warehouse.schema.events import EventKind

MAIN_AGENT = "main"
SUBAGENT_TOOLS = ("Task", "Agent")  # the tool that starts a subagent, renamed in 2.1


def agent_name(agent_id: str) -> str:
    """A subagent's agent name; Reject when it is not a valid name (lib.bounds)."""
    return check_name(f"agent-{agent_id}", "agent")


@dataclass(frozen=True)
class SubagentLink:
    """A subagent (`agent_id`) started by the tool call `tool_use_id` of `parent`."""

    run: str
    parent: str
    tool_use_id: str
    agent_id: str
    ts: str
    line_no: int
    source: str | None = None


@dataclass(frozen=True)
class SubagentCall:
    """The Task/Agent call that starts a subagent: its type and description."""

    ts: str
    subagent_type: str | None
    description: str | None


def subagent_call(ts: str, tool_input: dict[str, Any]) -> SubagentCall:
    """What a Task/Agent call's input says of the subagent it starts."""
    kind = tool_input.get("subagent_type")
    description = tool_input.get("description")
    return SubagentCall(
        ts,
        kind if isinstance(kind, str) else None,
        description[:200] if isinstance(description, str) else None,
    )


def count_of(usage: dict[str, Any], key: str) -> int | None:
    """A token count: None when absent or null; Reject when not an integer
    0 <= n < 10^18 (lib.bounds.count_problem)."""
    value = usage.get(key)
    return None if value is None else check_count(value, f"usage.{key}")


def subagent_outcome(outcome: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int] | None]:
    """The `stop` event's attrs from a Task/Agent result's `toolUseResult`, and the final
    response's usage it reports (None when incomplete)."""
    usage = outcome.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    final = {
        "input_tokens": count_of(usage, "input_tokens"),
        "cached_input_tokens": count_of(usage, "cache_read_input_tokens"),
        "cache_write_tokens": count_of(usage, "cache_creation_input_tokens"),
        "output_tokens": count_of(usage, "output_tokens"),
    }
    complete = {key: value for key, value in final.items() if value is not None}
    attrs = {
        "status": outcome.get("status"),
        "total_tokens": outcome.get("totalTokens"),
        "tool_uses": outcome.get("totalToolUseCount"),
        "final_usage": complete if len(complete) == len(final) else None,
    }
    return attrs, attrs["final_usage"]


def spawn_rows(links: list[SubagentLink], calls: dict[str, SubagentCall]) -> EventRows:
    """One `spawn` per subagent, at its Task/Agent call with the subagent type as its role
    (that call from this chunk or stored; when it was never read, at the first line that
    named the subagent, with the role `subagent`)."""
    rows = EventRows()
    for link in links:
        call = calls.get(link.tool_use_id)
        description = call.description if call else None
        rows.add(
            run=link.run,
            agent=agent_name(link.agent_id),
            ts=call.ts if call else link.ts,
            event=EventKind.SPAWN,
            id=f"spawn:{link.tool_use_id}",
            parent=link.parent,
            role=(call.subagent_type if call else None) or "subagent",
            task=link.tool_use_id,
            attrs=orjson.dumps({"description": description}).decode() if description else None,
            source_line=link.line_no,
            source=link.source,
        )
    return rows


def correct_final_outputs(
    rows: EventRows, llm_rows: dict[str, int], final_usages: dict[tuple[str, str], dict[str, int]]
) -> set[str]:
    """Raise a subagent's last response to the output its Task result reports, when both
    are in this batch; returns the runs left to settle against stored events (a result
    or a subagent response whose counterpart was not read with it)."""
    responses: dict[tuple[str, str], list[int]] = {}
    for row in llm_rows.values():
        agent = rows.get(row, "agent")
        if agent != MAIN_AGENT:
            responses.setdefault((rows.get(row, "run"), agent), []).append(row)
    unsettled = {run for run, agent in responses if (run, agent) not in final_usages}
    for (run, agent), final in final_usages.items():
        matched = False
        for row in responses.get((run, agent), []):
            values = rows.rows[row]
            if (
                values.get("input_tokens") == final["input_tokens"]
                and values.get("cached_input_tokens") == final["cached_input_tokens"]
                and values.get("cache_write_tokens") == final["cache_write_tokens"]
            ):
                matched = True
                if (values.get("output_tokens") or 0) < final["output_tokens"]:
                    values["output_tokens"] = final["output_tokens"]
        if not matched:
            unsettled.add(run)
    return unsettled
