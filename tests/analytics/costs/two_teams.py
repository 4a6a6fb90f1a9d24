"""Two teams' spend for the visibility tests: runs of known token counts at a known price,
serving targets with GPU prices, and users who see one team, no team or every team.

gpt-5 costs $1.25 per million input tokens and $10 per million output tokens. On
2026-01-14 (UTC):
  alpha-1 (team A): 1,000,000 in + 100,000 out = $1.25 + $1.00 = $2.25
  alpha-2 (team A):   400,000 in               = $0.50
  beta-1  (team B): 2,000,000 in + 200,000 out = $2.50 + $2.00 = $4.50
  solo    (no team):   80,000 in               = $0.10
and the day before, alpha-1 800,000 in ($1.00) and beta-1 1,600,000 in ($2.00).
GPUs for the whole day (24 hours): gpu-a (team A) 1 x $2/h = $48, gpu-b (team B)
2 x $0.50/h = $24.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from analytics.costs.models import GpuPrice, ModelPrice, Team
from analytics.serving.models import ScrapeTarget
from ingest.pipelines.agent_events import ingest_body
from tests.people import grant

DAY = date(2026, 1, 14)


@dataclass(frozen=True)
class TwoTeams:
    a: Team
    b: Team


def _call(ts: str, run: str, input_tokens: int, output_tokens: int) -> dict[str, object]:
    return {
        "ts": ts,
        "run": run,
        "agent": "w",
        "event": "llm_call",
        "model": "gpt-5",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def load_two_teams() -> TwoTeams:
    ModelPrice.objects.all().delete()
    ModelPrice.objects.create(
        model="gpt-5",
        input_per_mtok=Decimal("1.25"),
        output_per_mtok=Decimal(10),
        valid_from=date(2025, 8, 7),
    )
    calls = [
        _call("2026-01-13T10:00:00Z", "alpha-1", 800_000, 0),
        _call("2026-01-13T11:00:00Z", "beta-1", 1_600_000, 0),
        _call("2026-01-14T10:00:00Z", "alpha-1", 1_000_000, 100_000),
        _call("2026-01-14T10:30:00Z", "alpha-2", 400_000, 0),
        _call("2026-01-14T11:00:00Z", "beta-1", 2_000_000, 200_000),
        _call("2026-01-14T12:00:00Z", "solo", 80_000, 0),
    ]
    ingest_body(b"".join(orjson.dumps(c) + b"\n" for c in calls))
    a = Team.objects.create(name="A", run_patterns=["alpha-*"], daily_budget_usd=5)
    b = Team.objects.create(name="B", run_patterns=["beta-*"])
    for name, team, gpus, usd in (("gpu-a", a, 1, "2"), ("gpu-b", b, 2, "0.5")):
        ScrapeTarget.objects.create(name=name, url=f"http://{name}.example:8000/metrics", team=team)
        GpuPrice.objects.create(
            target=name, gpus=gpus, usd_per_gpu_hour=Decimal(usd), valid_from=date(2026, 1, 1)
        )
    return TwoTeams(a, b)


def make_user(
    django_user_model: Any,
    name: str,
    *,
    role: str = "viewer",
    teams: tuple[Team, ...] = (),
    all_teams: bool = False,
) -> Any:
    user = django_user_model.objects.create_user(name, f"{name}@example.com", "correct-horse-9")
    return grant(user, role=role, teams=teams, all_teams=all_teams)


@contextmanager
def webhook_receiver() -> Iterator[tuple[str, list[bytes]]]:
    """A webhook on loopback: its URL and the bodies it received."""
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", bodies
    finally:
        server.shutdown()
        server.server_close()
