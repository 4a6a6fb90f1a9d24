"""What a transcript said, as rows of `session_turns` and `session_labels`
(warehouse/schema/sessions.py): the turns of a session (prompts, responses, thinking,
tool calls and their results) and the facts that name it (project folder, git branch,
first prompt).

Pure and shared by the transcript parsers (claude_code_turns.py, codex_turns.py): they
add rows here, the pipelines load `turns_table()` and `labels_table()` in the
transaction of the chunk's events (ingest/pipelines/session_loading.py). Must not read
any log format itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

# A turn's text is kept up to this many characters (`text_chars` is its full length): a
# tool result can be a whole file or a build log, and a replay shows the first lines.
TEXT_LIMIT = 32 * 1024
PROMPT_LIMIT = 200  # session_labels.first_prompt holds this many characters at most


class TurnKind:
    PROMPT = "prompt"
    RESPONSE = "response"
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"


TURN_SCHEMA = pa.schema(
    [
        ("run", pa.string()),
        ("agent", pa.string()),
        ("ts", pa.string()),  # RFC 3339, cast by the load
        ("source", pa.string()),
        ("source_line", pa.int64()),
        ("seq", pa.int32()),
        ("kind", pa.string()),
        ("tool", pa.string()),
        ("tool_use_id", pa.string()),
        ("is_error", pa.bool_()),
        ("captured", pa.bool_()),
        ("text", pa.string()),
        ("text_chars", pa.int64()),
    ]
)
LABEL_SCHEMA = pa.schema(
    [
        ("run", pa.string()),
        ("source", pa.string()),
        ("project", pa.string()),
        ("cwd", pa.string()),
        ("branch", pa.string()),
        ("first_prompt", pa.string()),
        ("first_ts", pa.string()),
    ]
)


def project_of(cwd: str) -> str | None:
    """A working folder's last name (`/home/me/src/shop/` -> `shop`; `C:\\src\\shop`
    too), None for a root or an empty path."""
    name = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return name or None


@dataclass
class _Label:
    cwd: str | None = None
    branch: str | None = None
    first_prompt: str | None = None
    first_ts: str | None = None
    first_ms: float | None = None


@dataclass
class SessionRows:
    """Turns and labels of one batch (several files), in the order the lines were read."""

    turns: list[tuple[Any, ...]] = field(default_factory=list)
    labels: dict[tuple[str, str], _Label] = field(default_factory=dict)

    def turn(
        self,
        *,
        run: str,
        agent: str,
        ts: str,
        source: str,
        line_no: int,
        seq: int,
        kind: str,
        text: str | None,
        tool: str | None = None,
        tool_use_id: str | None = None,
        is_error: bool | None = None,
    ) -> None:
        """One turn; `text` None means the source said the turn happened without its
        content (not captured). Text past TEXT_LIMIT is cut; `text_chars` keeps the length."""
        chars = None if text is None else len(text)
        kept = None if text is None else text[:TEXT_LIMIT]
        head = (run, agent, ts, source, line_no, seq, kind, tool, tool_use_id, is_error)
        self.turns.append((*head, text is not None, kept, chars))

    def label(
        self,
        run: str,
        source: str,
        ts: str,
        ts_ms: float,
        *,
        cwd: str | None = None,
        branch: str | None = None,
        prompt: str | None = None,
    ) -> None:
        """What a main-agent line says about its session: the first of each fact wins."""
        label = self.labels.setdefault((run, source), _Label())
        if label.first_ms is None or ts_ms < label.first_ms:
            label.first_ts, label.first_ms = ts, ts_ms
        if label.cwd is None and cwd:
            label.cwd = cwd
        if label.branch is None and branch:
            label.branch = branch
        if label.first_prompt is None and prompt and prompt.strip():
            label.first_prompt = " ".join(prompt.split())[:PROMPT_LIMIT]

    def turns_table(self) -> pa.Table:
        columns = list(zip(*self.turns, strict=True)) if self.turns else [()] * len(TURN_SCHEMA)
        return pa.table(
            [pa.array(list(c), f.type) for c, f in zip(columns, TURN_SCHEMA, strict=True)],
            schema=TURN_SCHEMA,
        )

    def labels_table(self) -> pa.Table:
        rows = [
            (run, source, project_of(lb.cwd or ""), lb.cwd, lb.branch, lb.first_prompt, lb.first_ts)
            for (run, source), lb in self.labels.items()
        ]
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(LABEL_SCHEMA)
        return pa.table(
            [pa.array(list(c), f.type) for c, f in zip(columns, LABEL_SCHEMA, strict=True)],
            schema=LABEL_SCHEMA,
        )
