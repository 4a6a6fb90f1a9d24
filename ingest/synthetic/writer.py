"""Writes synthetic events as agent-event JSONL, with the faults real logs have.

Owns the log's spelling: RFC 3339 times (mostly `Z`, some with an offset) or Unix
seconds, malformed lines mixed in, and optionally a last line still being written. The
events themselves come from ingest.synthetic.harness; nothing here decides what happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from ingest.synthetic.spec import KINDS, Events

# Lines the ingest must quarantine, each for a different reason; those that name a run
# name the run being written (`"run": "r"` stands for it), so its quarantine shows them.
MALFORMED = (
    b'{"ts": "2026-01-14T10:00:00Z", "run": "r", "agent": "w-1", "event": "tool_ca',
    b'{"ts": "2026-01-14T10:00:00Z", "agent": "w-1", "event": "tool_call"}',
    b'{"ts": true, "run": "r", "agent": "w-1", "event": "tool_call"}',
    b'{"ts": "2026-01-14T10:00:00Z", "run": "r", "agent": 17, "event": "llm_call"}',
    b"not json at all",
    b"[1, 2, 3]",
    b'{"ts": "yesterday", "run": "r", "agent": "w-1", "event": "stop"}',
    b'{"ts": 1768384800, "run": "r", "agent": "w-1", "event": "llm_call", "usage": 12}',
)
OFFSETS_MINUTES = (120, -300, 330)  # +02:00, -05:00, +05:30


def malformed_lines(run: str) -> tuple[bytes, ...]:
    """MALFORMED, naming `run` where a line names one."""
    named = b'"run": ' + orjson.dumps(run)
    return tuple(line.replace(b'"run": "r"', named) for line in MALFORMED)


@dataclass(frozen=True)
class Written:
    lines: int  # newline-terminated lines, malformed ones included
    accepted: int  # valid event lines
    quarantined: int  # malformed lines
    pending_bytes: int  # the unterminated tail, if any


def _times(ts_ms: np.ndarray, rng: np.random.Generator, epoch_fraction: float) -> list[object]:
    """Each event's `ts` as the log spells it: Unix seconds for about `epoch_fraction` of
    the lines, RFC 3339 otherwise (one in ten of those with a non-UTC offset)."""
    n = len(ts_ms)
    epoch = rng.random(n) < epoch_fraction
    offset = (rng.random(n) < 0.1) & ~epoch
    shift = np.zeros(n, np.int64)
    minutes = np.asarray(OFFSETS_MINUTES)[rng.integers(0, len(OFFSETS_MINUTES), n)]
    shift[offset] = minutes[offset] * 60_000
    local = np.datetime_as_string((ts_ms + shift).astype("datetime64[ms]"), unit="ms")
    suffix = {
        m: f"{'+' if m >= 0 else '-'}{abs(m) // 60:02d}:{abs(m) % 60:02d}" for m in OFFSETS_MINUTES
    }
    out: list[object] = [f"{text}Z" for text in local.tolist()]
    for i in np.flatnonzero(offset).tolist():
        out[i] = f"{local[i]}{suffix[int(minutes[i])]}"
    for i in np.flatnonzero(epoch).tolist():
        ms = int(ts_ms[i])
        out[i] = ms // 1000 if ms % 1000 == 0 else ms / 1000
    return out


def write_jsonl(
    events: Events,
    path: Path,
    *,
    seed: int = 1,
    malformed: int = 0,
    epoch_fraction: float = 0.0,
    partial_last_line: bool = False,
) -> Written:
    """Write the run to `path` (replacing it). Deterministic for the same arguments."""
    if not 0.0 <= epoch_fraction <= 1.0:
        raise ValueError("epoch_fraction must be between 0 and 1")
    rng = np.random.default_rng([seed, 7])
    times = _times(events.ts_ms, rng, epoch_fraction)
    names = [a.name for a in events.agents]
    kinds = events.kind.tolist()
    agents = events.agent.tolist()
    ok = events.ok.tolist()
    duplicate = events.duplicate.tolist()
    run = events.run
    lines: list[bytes] = []
    for i in range(len(events)):
        doc: dict[str, object] = {
            "ts": times[i],
            "run": run,
            "agent": names[agents[i]],
            "event": KINDS[kinds[i]],
            "id": f"{run}:{i}:again" if duplicate[i] else f"{run}:{i}",
        }
        if ok[i] >= 0:
            doc["ok"] = bool(ok[i])
        doc.update(events.extras[i])
        lines.append(orjson.dumps(doc))
    bad_at = np.sort(rng.integers(0, len(lines) + 1, malformed))
    bad = malformed_lines(run)
    for shift, at in enumerate(bad_at.tolist()):
        lines.insert(at + shift, bad[shift % len(bad)])
    body = b"\n".join(lines) + b"\n" if lines else b""
    pending = b""
    if partial_last_line:
        pending = b'{"ts": "' + str(times[-1]).encode() + b'", "run": "' + run.encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body + pending)
    return Written(len(lines), len(events), malformed, len(pending))
