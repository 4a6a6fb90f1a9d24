"""The session replay page, `/runs/<run>/replay/` (`agent`, `limit`, `cursor`, `before`):
a session's conversation in order, each tool call with its result beneath it, long
content folded, from analytics/runs/replay.py (the question the API asks too).

View only: no SQL. Login required; a run the user does not see is the 404 of a run that
does not exist; a bad parameter is runs/bad_parameter.html's friendly 422.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from analytics.runs import replay
from analytics.runs.replay import Turn
from dashboard.pages.run_links import page_link
from ingest.parsers.session_turns import TEXT_LIMIT
from lib.access import seen_of
from lib.errors import NotFoundError, ParameterError

PREVIEW_LINES = 6  # what a folded text shows before "show all"
PREVIEW_CHARS = 600
TRANSCRIPT_SOURCES = {"claude-code": "claude-code", "codex": "codex"}
KIND_LABELS = {
    "prompt": "Prompt",
    "response": "Response",
    "thinking": "Thinking",
    "tool_call": "Tool call",
    "tool_result": "Result",
}


@dataclass(frozen=True)
class Shown:
    """A turn as the page draws it: its text whole, or its first lines and the rest folded."""

    turn: Turn
    label: str
    preview: str | None  # the first lines of a folded text
    lines: int
    sub: bool  # a subagent's turn (indented)
    result: Shown | None


def _shown(turn: Turn) -> Shown:
    text = turn.text or ""
    lines = text.count("\n") + 1 if text else 0
    folded = lines > PREVIEW_LINES or len(text) > PREVIEW_CHARS
    preview = "\n".join(text.split("\n", PREVIEW_LINES)[:PREVIEW_LINES])[:PREVIEW_CHARS]
    return Shown(
        turn,
        KIND_LABELS.get(turn.kind, turn.kind),
        preview if folded else None,
        lines,
        turn.agent != "main",
        _shown(turn.result) if turn.result is not None else None,
    )


def _int(value: str | None, name: str) -> int | None:
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ParameterError(f"{name} {value[:40]!r} is not an integer") from None


@login_required
def run_replay(request: HttpRequest, run: str) -> HttpResponse:
    agent = request.GET.get("agent") or None
    try:
        limit = _int(request.GET.get("limit"), "limit")
        page = replay.replay_page(
            run,
            seen_of(request),
            agent=agent,
            limit=limit,
            cursor=request.GET.get("cursor") or None,
            before=request.GET.get("before") or None,
        )
    except NotFoundError:
        raise Http404(f"There is no run named {run!r}.") from None
    except ParameterError as exc:
        return render(request, "runs/bad_parameter.html", {"message": str(exc)}, status=422)
    run_url = reverse("run", kwargs={"run": run})
    kept = {k: v for k, v in (("agent", agent), ("limit", limit)) if v is not None}

    link = page_link(request, kept)

    context = {
        "nav": "runs",
        "run": run,
        "page": page,
        "agent": agent,
        "turns": [_shown(t) for t in page.turns],
        "run_url": run_url,
        "events_url": reverse("run-events", kwargs={"run": run}),
        "api_url": reverse("api:run_replay", kwargs={"run": run}),
        "newer_url": link(cursor=page.next) if page.next else None,
        "older_url": link(before=page.previous) if page.previous else None,
        "first_url": link() if page.previous else None,
        "transcript_source": page.source_kind in TRANSCRIPT_SOURCES,
        "ingest_command": f"python manage.py ingest {page.source_kind} PATH"
        if page.source_kind in TRANSCRIPT_SOURCES
        else "python manage.py ingest claude-code ~/.claude/projects",
        "text_limit_kib": TEXT_LIMIT // 1024,
    }
    return render(request, "runs/replay.html", context)
