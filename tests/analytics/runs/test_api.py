"""The runs API: authentication, contract shapes, 404 and 422."""

from datetime import UTC, datetime

import orjson
import pytest
from django.test import Client

from analytics.runs import status
from ingest.pipelines.agent_events import ingest_body


@pytest.fixture
def run_data(lake: object) -> None:
    lines = [
        {
            "ts": "2026-01-14T10:00:00Z",
            "run": "team/run-1",
            "agent": "root",
            "event": "spawn",
            "role": "root_planner",
        },
        {
            "ts": "2026-01-14T10:05:00Z",
            "run": "team/run-1",
            "agent": "w",
            "event": "spawn",
            "role": "worker",
            "parent": "root",
        },
        {
            "ts": "2026-01-14T10:10:00Z",
            "run": "team/run-1",
            "agent": "w",
            "event": "commit",
            "commit": {"sha": "x"},
        },
        {"ts": 1768389000, "run": "team/run-1", "agent": "w", "event": "tool_call", "ok": False},
    ]
    ingest_body(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def test_health_needs_no_login(client: Client, lake: object) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["warehouse"] == "ok"


@pytest.mark.parametrize(
    "path",
    [
        "/api/runs",
        "/api/runs/x/commit-rate",
        "/api/runs/x/stalls",
        "/api/runs/x/error-rate",
        "/api/runs/x/agents",
    ],
)
def test_every_runs_endpoint_needs_credentials(client: Client, db: None, path: str) -> None:
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer fs_wrong"}).status_code == 401


def test_ingest_needs_credentials(client: Client, db: None) -> None:
    response = client.post("/api/ingest/agent-events", b"{}", content_type="application/x-ndjson")
    assert response.status_code == 401


@pytest.mark.usefixtures("run_data")
class TestWithData:
    def test_runs_list(self, client: Client, auth_headers: dict) -> None:
        (run,) = client.get("/api/runs", headers=auth_headers).json()
        assert run == {
            "run": "team/run-1",
            "first_ts": "2026-01-14T10:00:00Z",
            "last_ts": "2026-01-14T11:10:00Z",
            "agents": 2,
            "events": 4,
            "commits": 1,
            "errors": 1,
            "input_tokens": 0,
            "output_tokens": 0,
            "source_kind": "agent-events",
            # What the list's paging added (tests/analytics/runs/test_listing_api.py):
            "status": "idle",
            "tokens": 0,
            "label": None,
            "project": None,
            "cwd": None,
            "branch": None,
            "first_prompt": None,
        }

    def test_a_session_works_too(self, client: Client, user: object) -> None:
        client.force_login(user)  # type: ignore[arg-type]
        assert client.get("/api/runs").status_code == 200

    def test_commit_rate(self, client: Client, auth_headers: dict) -> None:
        body = client.get(
            "/api/runs/team/run-1/commit-rate?bucket=30m", headers=auth_headers
        ).json()
        assert body["bucket_seconds"] == 1800
        assert body["points"] == [
            {"t": "2026-01-14T10:00:00Z", "commits": 1},
            {"t": "2026-01-14T10:30:00Z", "commits": 0},
            {"t": "2026-01-14T11:00:00Z", "commits": 0},
        ]
        assert (body["total"], body["peak"]) == (1, {"t": "2026-01-14T10:00:00Z", "commits": 1})

    def test_stalls_and_error_rate(
        self, client: Client, auth_headers: dict, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # 10 minutes after the last event (11:10), 70 after the last commit (10:10).
        monkeypatch.setattr(status, "now_utc", lambda: datetime(2026, 1, 14, 11, 20, tzinfo=UTC))
        stalls = client.get("/api/runs/team/run-1/stalls?min_gap=30m", headers=auth_headers).json()
        assert stalls["stalls"] == []
        assert stalls["current"] == {"since": "2026-01-14T10:10:00Z", "minutes": 70.0}
        errors = client.get(
            "/api/runs/team/run-1/error-rate?bucket=1h", headers=auth_headers
        ).json()
        assert [(p["attempts"], p["errors"], p["rate"]) for p in errors["points"]] == [
            (1, 0, 0.0),
            (1, 1, 1.0),
        ]
        assert errors["drift"]["trend"] == "flat"

    def test_agents(self, client: Client, auth_headers: dict) -> None:
        agents = client.get("/api/runs/team/run-1/agents", headers=auth_headers).json()
        assert [
            (a["agent"], a["parent"], a["role"], a["commits"], a["errors"]) for a in agents
        ] == [
            ("root", None, "root_planner", 0, 0),
            ("w", "root", "worker", 1, 1),
        ]

    @pytest.mark.parametrize("suffix", ["commit-rate", "stalls", "error-rate", "agents"])
    def test_an_unknown_run_is_404(self, client: Client, auth_headers: dict, suffix: str) -> None:
        response = client.get(f"/api/runs/nope/{suffix}", headers=auth_headers)
        assert response.status_code == 404
        assert response.json() == {"detail": "unknown run 'nope'"}

    @pytest.mark.parametrize(
        "query",
        [
            "commit-rate?bucket=fast",
            "commit-rate?bucket=0s",
            "error-rate?bucket=1.5s",
            "stalls?min_gap=-5m",
            "commit-rate?start=yesterday",
            "commit-rate?start=2026-01-14T12:00:00Z&end=2026-01-14T11:00:00Z",
        ],
    )
    def test_bad_parameters_are_422(self, client: Client, auth_headers: dict, query: str) -> None:
        response = client.get(f"/api/runs/team/run-1/{query}", headers=auth_headers)
        assert response.status_code == 422
        assert "detail" in response.json()

    @pytest.mark.parametrize(
        ("query", "detail"),
        [
            ("commit-rate?bucket=fast", "bucket must look like 30s, 5m, 1h or 1d, got 'fast'"),
            ("error-rate?end=soon", "end must be an RFC 3339 time, got 'soon'"),
            ("stalls?min_gap=-5m", "min_gap must look like 30s, 5m, 1h or 1d, got '-5m'"),
            (
                "agents?start=2026-01-14T12:00:00Z&end=2026-01-14T11:00:00Z",
                "start must be before end",
            ),
            ("work-and-claims?bucket=1.5s", "bucket must be a whole number of seconds, got '1.5s'"),
        ],
    )
    def test_a_bad_parameter_is_one_line_naming_it(
        self, client: Client, auth_headers: dict, query: str, detail: str
    ) -> None:
        response = client.get(f"/api/runs/team/run-1/{query}", headers=auth_headers)
        assert (response.status_code, response.json()) == (422, {"detail": detail})

    def test_ingest_over_http(self, client: Client, auth_headers: dict) -> None:
        body = b'{"ts":"2026-01-14T12:00:00Z","run":"team/run-1","agent":"w","event":"stop","id":"s1"}\nnot json\n'
        response = client.post(
            "/api/ingest/agent-events",
            body,
            content_type="application/x-ndjson",
            headers=auth_headers,
        )
        assert response.json() == {"accepted": 1, "quarantined": 1, "duplicates": 0}
        again = client.post(
            "/api/ingest/agent-events",
            body[: body.index(b"\n") + 1],
            content_type="application/x-ndjson",
            headers=auth_headers,
        )
        assert again.json() == {"accepted": 0, "quarantined": 0, "duplicates": 1}


def test_tokens_are_stored_hashed(api_token: str) -> None:
    from dashboard.models import ApiToken, hash_token

    stored = ApiToken.objects.get()
    assert stored.token_hash == hash_token(api_token)
    assert api_token not in (stored.token_hash, stored.prefix)
