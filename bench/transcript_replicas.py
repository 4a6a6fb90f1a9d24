"""Claude Code transcripts for benchmarks: the real session shipped for the demo
(ingest/demo_data/agent_logs: a main transcript with a Task subagent, a commit and a
failed tool call) replicated under new ids.

Each replica is the same session with every id renamed (session, messages, requests,
tool calls, the subagent, line uuids), laid out as Claude Code does:
`<project>/<session>.jsonl` and `<project>/<session>/subagents/agent-<id>.jsonl`.
"""

from __future__ import annotations

import re
from pathlib import Path

SESSION = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
PROJECT = (
    Path(__file__).resolve().parent.parent
    / "ingest/demo_data/agent_logs/claude-code/-home-USER-projects-spotter-worktrees-spotter-4te"
)
SESSION_FILES = (f"{SESSION}.lines-1-110.jsonl", f"{SESSION}.lines-647-690.jsonl")
SUBAGENT_FILE = f"{SESSION}/subagents/agent-aac57f5.jsonl"
SUBAGENT_ID = "aac57f5"
EVENTS_PER_REPLICA = 49  # what one copy of the session loads (tests/ingest/pipelines)

# Ids to rename: uuids (session, line uuids), msg_/req_/toolu_ ids, the agent id.
_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|msg_[0-9A-Za-z]+|req_[0-9A-Za-z]+|toolu_[0-9A-Za-z]+|agent_msg_[0-9A-Za-z]+|" + SUBAGENT_ID
)


class Template:
    """A text cut at every id, so a replica is one join with renamed ids."""

    def __init__(self, text: str) -> None:
        self.pieces: list[str] = []
        self.ids: list[str] = []
        last = 0
        for match in _ID.finditer(text):
            self.pieces.append(text[last : match.start()])
            self.ids.append(match.group(0))
            last = match.end()
        self.pieces.append(text[last:])

    def render(self, replica: int) -> str:
        out = [self.pieces[0]]
        for original, piece in zip(self.ids, self.pieces[1:], strict=True):
            out.append(rename(original, replica))
            out.append(piece)
        return "".join(out)


def rename(original: str, replica: int) -> str:
    tag = f"{replica:08x}"
    if original == SUBAGENT_ID:
        return f"a{replica:06x}"[-7:] if replica < 0x1000000 else f"a{replica:x}"
    if "-" in original and len(original) == 36:  # a uuid: keep its shape
        return tag + original[8:]
    return f"{original}x{tag}"


def write_replicas(out: Path, target_bytes: int, fixtures: Path = PROJECT) -> tuple[int, int]:
    """Write replicas under `out` until `target_bytes`; returns (replicas, bytes)."""
    session = Template("".join((fixtures / name).read_text() for name in SESSION_FILES))
    subagent = Template((fixtures / SUBAGENT_FILE).read_text())
    project = out / "-home-user-projects-fleet"
    project.mkdir(parents=True, exist_ok=True)
    written = replicas = 0
    while written < target_bytes:
        sid = rename(SESSION, replicas)
        main = session.render(replicas).encode()
        (project / f"{sid}.jsonl").write_bytes(main)
        folder = project / sid / "subagents"
        folder.mkdir(parents=True)
        side = subagent.render(replicas).encode()
        (folder / f"agent-{rename(SUBAGENT_ID, replicas)}.jsonl").write_bytes(side)
        written += len(main) + len(side)
        replicas += 1
    return replicas, written
