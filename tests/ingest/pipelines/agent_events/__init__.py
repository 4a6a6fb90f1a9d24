"""The agent-event pipeline's modules, one test file each (the package's entry points are
tests/ingest/pipelines/test_agent_events.py); the event lines and counts they share."""

import orjson

import warehouse


def event(i: int, **extra: object) -> bytes:
    doc = {
        "ts": 1768384800 + i,
        "run": "r",
        "agent": f"w-{i % 3}",
        "event": "tool_call",
        "id": f"e{i}",
    }
    doc.update(extra)
    return orjson.dumps(doc) + b"\n"


def count(sql: str) -> int:
    row = warehouse.fetch_one(sql)
    assert row is not None
    return int(next(iter(row.values())))
