"""Requests of two teams for the visibility tests: team A's run alpha-1 and instance
gpu-a, team B's run beta-1 (on gpu-b), and a request of no run and no instance; alpha-1's
reported usage is near our count, beta-1's far from it (a mismatch)."""

from __future__ import annotations

import orjson
import tiktoken

from ingest.pipelines.requests import ingest_body
from tests.analytics.costs.two_teams import TwoTeams, load_two_teams

A_RUN = "The weather is nice today."
A_INSTANCE = "இன்று வானிலை நன்றாக இருக்கிறது."
B_RUN = "Where is the nearest pharmacy? I need some medicine for a cold."
NOBODY = "Die Rechnung liegt bei; bitte bezahle sie bis Freitag."


def o200k(text: str) -> int:
    return len(tiktoken.get_encoding("o200k_base").encode(text))


def load_team_traffic() -> TwoTeams:
    teams = load_two_teams()  # teams A and B, their runs' events and serving targets
    requests = [
        {
            "ts": 1772359200,
            "request_id": "a-run",
            "run": "alpha-1",
            "model": "gpt-4o",
            "language": "en",
            "prompt": A_RUN,
            "usage": {"prompt_tokens": o200k(A_RUN) + 3},
        },
        {
            "ts": 1772359201,
            "request_id": "a-instance",
            "instance": "gpu-a",
            "language": "ta",
            "prompt": A_INSTANCE,
        },
        {
            "ts": 1772359202,
            "request_id": "b-run",
            "run": "beta-1",
            "instance": "gpu-b",
            "model": "gpt-4o",
            "language": "en",
            "prompt": B_RUN,
            "usage": {"prompt_tokens": o200k(B_RUN) + 400},
        },
        {"ts": 1772359203, "request_id": "nobody", "language": "de", "prompt": NOBODY},
    ]
    ingest_body(orjson.dumps(requests), "api:test")
    return teams
