"""The session replay's part of bench/bench_explore.py: a long Claude Code session and a
session known only from OpenTelemetry, loaded in bulk beside the explorer's 10M-event
run, and the replay's server time through Django and django-ninja.

The transcript session (SESSION, TURNS turns) is what ingest/pipelines/session_loading.py
and the Claude Code adapter write for one: its turns in `session_turns` (a prompt,
thinking, four responses and seven tool calls with their results, paired by tool_use_id,
in every cycle of 20 turns; a main agent and six subagents, each in its own file; a
result of 32 KiB cut from a longer one in every seventh cycle, a pasted log in a prompt
in every 25th), its label in `session_labels`, and its events (an llm_call per response,
a tool_call per call, a spawn per subagent) in `events` with the run totals. The
OpenTelemetry sessions (OTLP_SESSIONS of OTLP_EVENTS_PER_SESSION events each: prompts,
api requests as llm_calls, tool results as tool_calls) are interleaved in time and in
their bodies, as a collector's batches carry many sessions at once; OTLP_SESSION is one
of them. Everything is generated inside DuckDB (INSERT ... SELECT over range()). Each
figure is the median and p90 of REPEAT requests after one warm-up. Figures:
bench/explore.md ("Session replay").

Must not time anything else of the explorer: bench_explore.run() calls `bench_replay`.
"""

from __future__ import annotations

import statistics
import time
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings

import warehouse
from ingest.pipelines import run_rollups

SESSION = "3f2a9c1e-7b4d-4e8a-9c61-5d2b0e8f4a17"
TURNS = 20_000
CYCLE = 20  # turns per cycle: see TURNS_SQL
SUBAGENTS = 6
PROJECT_DIR = "/home/dev/.claude/projects/-home-dev-src-shop"
SESSION_START = 1768300000  # 2026-01-13T10:26:40Z, 1.5 s between turns
OTLP_SESSIONS = 50
OTLP_EVENTS_PER_SESSION = 20_000
OTLP_SESSION = "9d1c7e52-0a4b-4f3e-8d27-61b5c0e9a3f4"  # the 8th of the OTLP sessions
OTLP_START = 1768200000  # 2026-01-12T06:40:00Z, 0.05 s between events of all sessions
OTLP_CHUNK = 500_000  # events per transaction
PAGE_LIMIT = 200  # the replay's default page

# Turn i of the session, by p = i % 20 in its cycle c = i // 20: 0 prompt, 1 thinking (not
# captured), 2/7/14/19 response, 3 Read (in the line of the response before it, seq 1),
# 5/15 Bash, 8 Edit, 10 Grep, 12 Task, 17 Read, each call's result right after it (one
# Bash result in nine fails). Cycles with c % 10 in (4, 5, 6) are a subagent's, in its
# own file; the rest the main agent's.
_AGENT = f"""CASE WHEN c % 10 IN (4, 5, 6)
    THEN 'agent-' || substr(md5('sub' || (c // 10) % {SUBAGENTS}), 1, 8) ELSE 'main' END"""
_KIND = """CASE WHEN p = 0 THEN 'prompt' WHEN p = 1 THEN 'thinking'
    WHEN p IN (2, 7, 14, 19) THEN 'response'
    WHEN p IN (3, 5, 8, 10, 12, 15, 17) THEN 'tool_call' ELSE 'tool_result' END"""
_TOOL = """CASE WHEN p IN (3, 17) THEN 'Read' WHEN p IN (5, 15) THEN 'Bash' WHEN p = 8 THEN 'Edit'
    WHEN p = 10 THEN 'Grep' WHEN p = 12 THEN 'Task' END"""
_TEXT = """CASE
    WHEN p = 0 AND c % 25 = 0 THEN 'This log, please:' || chr(10)
        || repeat('2026-01-13 10:27:01 ERROR cart.total: Decimal overflow' || chr(10), 150)
    WHEN p = 0 THEN 'Case ' || c || ': the cart total is wrong when a coupon and a gift card '
        || 'are both applied; find where the discount is counted twice and fix it, with a test.'
    WHEN p = 1 THEN NULL
    WHEN p = 19 THEN repeat('I changed the discount order and added a test for it. ', 36)
    WHEN p IN (2, 7, 14) THEN repeat('Reading the cart module before I change it. ', 12)
    WHEN p IN (3, 17) THEN '{"file_path":"/home/dev/src/shop/src/cart_' || c % 50 || '.py"}'
    WHEN p IN (5, 15) THEN '{"command":"pytest -q tests/test_cart.py -k case_' || c || '"}'
    WHEN p = 8 THEN '{"file_path":"/home/dev/src/shop/src/cart.py","old_string":"'
        || repeat('total -= discount; ', 40) || '","new_string":"'
        || repeat('total -= min(discount, total); ', 30) || '"}'
    WHEN p = 10 THEN '{"pattern":"def total","path":"/home/dev/src/shop"}'
    WHEN p = 12 THEN '{"description":"Check the coupons","prompt":"'
        || repeat('Look at every coupon rule. ', 10) || '"}'
    WHEN p IN (4, 18) AND c % 7 = 3 THEN
        repeat('    total = sum(item.price * item.quantity for item in items)' || chr(10), 540)
    WHEN p IN (4, 18) THEN
        repeat('    total = sum(item.price * item.quantity for item in items)' || chr(10), 90)
    WHEN p IN (6, 16) AND c % 9 = 4 THEN 'FAILED tests/test_cart.py::test_case_' || c
        || ' - AssertionError: 90.00 != 80.00' || chr(10) || repeat('E   assert ', 30)
    WHEN p IN (6, 16) THEN repeat('.', 40) || ' [100%]' || chr(10) || '40 passed in 1.92s'
    WHEN p = 9 THEN 'The file /home/dev/src/shop/src/cart.py has been updated.'
    WHEN p = 11 THEN repeat('src/cart.py:' || c % 300 || ': def total(self):' || chr(10), 20)
    ELSE repeat('The coupon rules apply in order; two of them stack. ', 30) END"""
# The cut of a 32 KiB-limited text (ingest/parsers/session_turns.TEXT_LIMIT), as ingest
# keeps it: the first 32,768 characters, `text_chars` the length before the cut.
TURNS_SQL = f"""
INSERT INTO session_turns (run, agent, ts, source_kind, source, source_line, seq, kind, tool,
                           tool_use_id, is_error, captured, text, text_chars, ingested_at)
SELECT $run, agent, to_timestamp($start + (i - (p = 3)::INTEGER) * 1.5), 'claude-code',
       CASE WHEN agent = 'main' THEN $dir || '/' || $run || '.jsonl'
            ELSE $dir || '/' || $run || '/subagents/' || agent || '.jsonl' END,
       i + 1 - (p = 3)::INTEGER, (p = 3)::INTEGER, kind, CASE WHEN kind = 'tool_call' THEN tool END,
       CASE WHEN kind = 'tool_call' THEN 'toolu_' || md5($run || i)
            WHEN kind = 'tool_result' THEN 'toolu_' || md5($run || (i - 1)) END,
       CASE WHEN kind = 'tool_result' THEN p IN (6, 16) AND c % 9 = 4 END,
       p <> 1, left(text, 32768), length(text), now()
FROM (
    SELECT i, p, c, {_AGENT} AS agent, {_KIND} AS kind, {_TOOL} AS tool, {_TEXT} AS text
    FROM (SELECT i, i % 20 AS p, i // 20 AS c FROM range($turns) AS t(i))
)
"""
LABEL_SQL = """
INSERT INTO session_labels (run, source_kind, source, project, cwd, branch, first_prompt,
                            first_ts, ingested_at)
VALUES ($run, 'claude-code', $dir || '/' || $run || '.jsonl', 'shop', '/home/dev/src/shop',
        'feature/coupons', 'This log, please:', to_timestamp($start), now())
"""
# The events the Claude Code adapter logs for the same session: a tool_call per call (its
# tool_use_id as id, failed when its result is), an llm_call per response, a spawn per
# subagent at its first prompt (cycle 10 s + 4 is subagent s's first).
SESSION_EVENTS_SQL = f"""
INSERT INTO events (run, agent, ts, event, id, parent, role, model, input_tokens,
                    cached_input_tokens, output_tokens, tool, ok, duration_ms,
                    source_kind, source, source_line, ingested_at)
SELECT $run, agent, to_timestamp($start + (i - (p = 3)::INTEGER) * 1.5),
       CASE WHEN kind = 'tool_call' THEN 'tool_call' WHEN kind = 'response' THEN 'llm_call'
            ELSE 'spawn' END,
       CASE WHEN kind = 'tool_call' THEN 'toolu_' || md5($run || i)
            WHEN kind = 'response' THEN 'msg_' || md5($run || i) || ':req'
            ELSE 'spawn:' || agent END,
       CASE WHEN kind = 'prompt' THEN 'main' END,
       CASE WHEN agent = 'main' THEN 'main' END,
       'claude-sonnet-4-5-20250929',
       CASE WHEN kind = 'response' THEN 4 + i % 7 END,
       CASE WHEN kind = 'response' THEN 60000 + i % 9000 END,
       CASE WHEN kind = 'response' THEN 300 + i % 700 END,
       CASE WHEN kind = 'tool_call' THEN tool END,
       CASE WHEN kind = 'tool_call' THEN NOT (p IN (5, 15) AND c % 9 = 4) END,
       CASE WHEN kind = 'tool_call' THEN 1500.0 END,
       'claude-code',
       CASE WHEN agent = 'main' THEN $dir || '/' || $run || '.jsonl'
            ELSE $dir || '/' || $run || '/subagents/' || agent || '.jsonl' END,
       i + 1 - (p = 3)::INTEGER, $stamp
FROM (
    SELECT i, p, c, {_AGENT} AS agent, {_KIND} AS kind, {_TOOL} AS tool
    FROM (SELECT i, i % 20 AS p, i // 20 AS c FROM range($turns) AS t(i))
)
WHERE kind IN ('tool_call', 'response')
   OR (kind = 'prompt' AND c % 10 = 4 AND c // 10 < {SUBAGENTS})
"""
# OpenTelemetry events, event j of all: session j % sessions (named by md5, OTLP_SESSION
# the 8th), its k-th event (k = j // sessions): 0 a prompt (its text captured but in one
# of four prompts), 1/3/5/7/9 an api request (llm_call), 2/4/6/8 a tool result
# (tool_call; one in 13 failed), by k % 10; in bodies of 512 records.
OTLP_EVENTS_SQL = """
INSERT INTO events (run, agent, ts, event, id, model, input_tokens, cached_input_tokens,
                    output_tokens, cost_usd, tool, ok, duration_ms, attrs,
                    source_kind, source, source_line, ingested_at)
SELECT run, 'main', to_timestamp($start + j * 0.05),
       CASE WHEN k % 10 = 0 THEN 'prompt' WHEN k % 2 = 1 THEN 'llm_call' ELSE 'tool_call' END,
       CASE WHEN k % 2 = 1 THEN 'req:' || md5(run || k) ELSE 'seq:' || k END,
       CASE WHEN k % 2 = 1 THEN 'claude-sonnet-4-5-20250929' END,
       CASE WHEN k % 2 = 1 THEN 6 + k % 5 END,
       CASE WHEN k % 2 = 1 THEN 48000 + k % 4000 END,
       CASE WHEN k % 2 = 1 THEN 250 + k % 600 END,
       CASE WHEN k % 2 = 1 THEN 0.0412 END,
       CASE WHEN k % 10 IN (2, 6) THEN 'Bash' WHEN k % 10 = 4 THEN 'Read'
            WHEN k % 10 = 8 THEN 'Edit' END,
       CASE WHEN k % 10 IN (2, 4, 6, 8) THEN k % 13 <> 0 END,
       CASE WHEN k % 2 = 1 THEN 4200.0 WHEN k % 10 <> 0 THEN 813.0 END,
       CASE WHEN k % 40 = 0 THEN '{"prompt_length": 812}'
            WHEN k % 10 = 0 THEN CAST(json_object('prompt_length', length(prompt), 'prompt', prompt)
                                      AS VARCHAR) END,
       'otlp', 'otlp:' || md5('body' || j // 512), j % 512, $stamp
FROM (
    SELECT j, j // $sessions AS k,
           CASE WHEN j % $sessions = 7 THEN $session
                ELSE substr(md5('otlp-session' || j % $sessions), 1, 36) END AS run,
           'Case ' || j // $sessions || ': make the checkout total match the invoice.' AS prompt
    FROM range($first, $last) AS t(j)
)
"""


def load_sessions(
    turns: int = TURNS, sessions: int = OTLP_SESSIONS, per_session: int = OTLP_EVENTS_PER_SESSION
) -> None:
    """Store the transcript session (`turns` turns) and `sessions` OpenTelemetry sessions
    of `per_session` events (at least 8: OTLP_SESSION is the 8th), in transactions of at
    most OTLP_CHUNK events, with the run totals."""
    started = time.perf_counter()
    session = {"run": SESSION, "start": SESSION_START, "dir": PROJECT_DIR, "turns": turns}

    def transcript(cur: warehouse.Cursor) -> None:
        cur.execute(TURNS_SQL, {k: session[k] for k in ("run", "start", "dir", "turns")})
        cur.execute(LABEL_SQL, {k: session[k] for k in ("run", "start", "dir")})
        run_rollups.insert_events(
            cur, SESSION_EVENTS_SQL, lambda stamp: {**session, "stamp": stamp}
        )

    warehouse.write(transcript)
    total = sessions * per_session
    for first in range(0, total, OTLP_CHUNK):
        params = {
            "start": OTLP_START,
            "sessions": sessions,
            "session": OTLP_SESSION,
            "first": first,
            "last": min(first + OTLP_CHUNK, total),
        }

        def otlp(cur: warehouse.Cursor, params: dict[str, object] = params) -> None:
            run_rollups.insert_events(
                cur, OTLP_EVENTS_SQL, lambda stamp: {**params, "stamp": stamp}
            )

        warehouse.write(otlp)
    row = warehouse.fetch_one("SELECT count(*) AS n FROM session_turns WHERE run = ?", [SESSION])
    stored = row["n"] if row else 0
    print(
        f"   loaded a {stored:,}-turn session and {total:,} OpenTelemetry events"
        f" ({sessions} sessions) in {time.perf_counter() - started:.1f} s",
        flush=True,
    )


# The page's static files under their own names, as in tests/settings.py: the bench
# collects no static files, and the manifest storage would refuse their hashed names.
_UNHASHED_STATIC = {
    **settings.STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}


def _timed(client: Client, path: str, repeat: int) -> tuple[float, float, Any]:
    warm = client.get(path)
    assert warm.status_code == 200, warm.content[:300]
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path)
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:200]
    ordered = sorted(timings)
    return statistics.median(timings), ordered[int(len(ordered) * 0.9)], warm


def _line(name: str, median: float, p90: float) -> None:
    print(f"   {name:<34} median {median:6.1f} ms  p90 {p90:6.1f} ms", flush=True)


def bench_replay(api: Client, user: User, repeat: int) -> None:
    """Load the sessions and time their replay: `api` sends the Bearer token, the page is
    asked as `user` logged in."""
    load_sessions()
    base = f"/api/runs/{SESSION}/replay"
    median, p90, first = _timed(api, base, repeat)
    body = first.json()
    assert (body["origin"], len(body["turns"])) == ("transcript", PAGE_LIMIT), body["origin"]
    assert body["agents"][-1] == "main" and len(body["agents"]) == SUBAGENTS + 1
    worst = median
    _line(f"replay, {TURNS:,} turns, first page", median, p90)
    median, p90, _ = _timed(api, f"{base}?cursor={quote(body['next'])}", repeat)
    worst = max(worst, median)
    _line("replay, next page", median, p90)
    subagent = body["agents"][0]
    median, p90, agent_page = _timed(api, f"{base}?agent={subagent}", repeat)
    assert {t["agent"] for t in agent_page.json()["turns"]} == {subagent}
    worst = max(worst, median)
    _line("replay, one subagent's first page", median, p90)
    page = Client()
    page.force_login(user)
    with override_settings(STORAGES=_UNHASHED_STATIC):
        median, p90, html = _timed(page, f"/runs/{SESSION}/replay/", repeat)
    assert b"Tool call" in html.content
    worst = max(worst, median)
    _line("replay page (HTML), first page", median, p90)
    otlp = f"/api/runs/{OTLP_SESSION}/replay"
    median, p90, first = _timed(api, otlp, repeat)
    body = first.json()
    assert (body["origin"], len(body["turns"])) == ("otlp", PAGE_LIMIT), body["origin"]
    worst = max(worst, median)
    _line(f"OTLP replay, {OTLP_EVENTS_PER_SESSION:,} events, first", median, p90)
    median, p90, _ = _timed(api, f"{otlp}?cursor={quote(body['next'])}", repeat)
    worst = max(worst, median)
    _line("OTLP replay, next page", median, p90)
    print(f"   slowest replay median: {worst:.1f} ms (target < 300 ms)", flush=True)
