"""Every answer under /api/ is JSON with a one-line `detail` and the right status: 401
without credentials (POSTs too), 403 for a session POST without its CSRF token, 404 for an
unknown path, 405, 413, 422, and a 500 that shows no traceback (dashboard/api_answers.py)."""

import json
import logging
import math
from typing import Any

import pytest
from django.test import Client

from dashboard.api_answers import FiniteJSONRenderer, finite, one_line
from lib.bounds import MAX_BODY_BYTES


def strict_json(text: str | bytes) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def detail(response: Any) -> str:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = strict_json(response.content)
    assert set(body) == {"detail"}
    assert isinstance(body["detail"], str) and "\n" not in body["detail"]
    return body["detail"]


@pytest.fixture
def api(db: None) -> Client:
    client = Client(raise_request_exception=False)
    return client


POSTS = [
    "/api/ingest/agent-events",
    "/api/ingest/requests",
    "/api/tokens/count",
    "/api/prices",
    "/api/channels",
    "/api/alert-rules",
    "/api/alert-rules/preview",
    "/api/silences",
]


@pytest.mark.parametrize("path", POSTS)
def test_a_post_without_credentials_is_401(api: Client, path: str) -> None:
    response = api.post(path, b"{}", content_type="application/json")
    assert (response.status_code, detail(response)) == (401, "Unauthorized")
    wrong = api.post(
        path, b"{}", content_type="application/json", headers={"Authorization": "Bearer fs_wrong"}
    )
    assert (wrong.status_code, detail(wrong)) == (401, "Unauthorized")


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_a_method_no_endpoint_has_is_a_json_405_with_or_without_credentials(
    api: Client, method: str
) -> None:
    response = api.generic(method, "/api/prices", b"[]", content_type="application/json")
    assert (response.status_code, detail(response)) == (405, "Method Not Allowed")
    assert response["Allow"] == "POST"


def test_a_post_without_credentials_is_401_even_when_csrf_is_enforced(db: None) -> None:
    client = Client(enforce_csrf_checks=True)
    response = client.post("/api/ingest/agent-events", b"{}", content_type="application/x-ndjson")
    assert (response.status_code, detail(response)) == (401, "Unauthorized")
    put = client.put("/api/prices", b"[]", content_type="application/json")
    assert put.status_code in (401, 405)
    detail(put)


def test_a_logged_in_post_without_its_csrf_token_stays_403(user: object, lake: object) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)  # type: ignore[arg-type]
    response = client.post("/api/ingest/agent-events", b"", content_type="application/x-ndjson")
    assert (response.status_code, detail(response)) == (403, "CSRF check Failed")


def test_a_logged_in_get_needs_no_csrf_token(user: object, lake: object) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)  # type: ignore[arg-type]
    assert client.get("/api/runs").status_code == 200


def test_an_unknown_api_path_is_a_json_404(api: Client, auth_headers: dict[str, str]) -> None:
    response = api.get("/api/no-such-thing", headers=auth_headers)
    assert (response.status_code, detail(response)) == (404, "no such API path: /api/no-such-thing")
    assert api.get("/api/runs/x/nope/deeper").status_code == 404


def test_a_page_404_is_still_a_page(api: Client) -> None:
    response = api.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_wrong_method_is_a_json_405_keeping_allow(
    api: Client, auth_headers: dict[str, str]
) -> None:
    response = api.delete("/api/health", headers=auth_headers)
    assert (response.status_code, detail(response)) == (405, "Method Not Allowed")
    assert response["Allow"] == "GET"


def test_a_declared_body_past_the_bound_is_413_before_it_is_read(
    api: Client, auth_headers: dict[str, str], lake: object
) -> None:
    for path in ("/api/ingest/agent-events", "/api/ingest/requests"):
        response = api.post(
            path,
            b"{}\n",
            content_type="application/x-ndjson",
            headers={**auth_headers, "Content-Length": str(MAX_BODY_BYTES + 1)},
        )
        assert (response.status_code, detail(response)) == (
            413,
            "body larger than 256 MiB; split it",
        )


def test_django_caps_a_body_read_whole_at_the_same_bound(settings: Any) -> None:
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == MAX_BODY_BYTES == 256 * 1024 * 1024


def test_a_form_body_past_djangos_cap_is_a_json_413(
    api: Client, auth_headers: dict[str, str], settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10
    response = api.post(
        "/api/prices",
        b"[" + b" " * 20 + b"]",
        content_type="application/json",
        headers=auth_headers,
    )
    assert (response.status_code, detail(response)) == (413, "body larger than 256 MiB; split it")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "runs/x/commit-rate?bucket=99999999999999999999s",
            "bucket must be at most 3650d, got '99999999999999999999s'",
        ),
        (
            "serving/kv-usage?start=9999-12-31T23:00:00-05:00",
            "start is outside 1970-2199, got '9999-12-31T23:00:00-05:00'",
        ),
        (
            "serving/queue?end=0001-01-01T00:00:00%2B05:00",
            "end is outside 1970-2199, got '0001-01-01T00:00:00+05:00'",
        ),
        ("costs/daily?date=9999-12-31", "date is outside 1970-2199, got '9999-12-31'"),
        ("costs/daily?date=1969-12-31", "date is outside 1970-2199, got '1969-12-31'"),
        (
            "serving/scrapes?instance=a&limit=lots",
            "limit: Input should be a valid integer, unable to parse string as an integer",
        ),
        (
            "serving/latency?quantile=99999999999999999999999999999999999e999",
            "quantile must be a number between 0 and 1",
        ),
    ],
)
def test_a_parameter_out_of_range_is_a_422_naming_it(
    api: Client, auth_headers: dict[str, str], lake: object, query: str, expected: str
) -> None:
    response = api.get(f"/api/{query}", headers=auth_headers)
    assert (response.status_code, detail(response)) == (422, expected)


def test_anything_unexpected_is_a_json_500_logged_not_shown(
    api: Client,
    auth_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from analytics.runs import api as runs_api

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals: /srv/fleetscope/db")

    # GET /api/runs reads its page through analytics/runs/listing.py's list_runs_page.
    monkeypatch.setattr(runs_api, "list_runs_page", broken)
    with caplog.at_level(logging.ERROR, logger="dashboard.api_answers"):
        response = api.get("/api/runs", headers=auth_headers)
    assert (response.status_code, detail(response)) == (
        500,
        "internal error; the server log has the details",
    )
    assert b"secret" not in response.content and b"Traceback" not in response.content
    assert "secret internals" in caplog.text  # with its traceback, server-side
    assert caplog.records[0].exc_info is not None


def test_non_finite_floats_render_as_null() -> None:
    data = {"usage": math.nan, "points": [{"max": math.inf}, {"max": -math.inf}, 0.5], "n": 3}
    text = FiniteJSONRenderer().render(None, data, response_status=200)  # type: ignore[arg-type]
    assert strict_json(text) == {
        "usage": None,
        "points": [{"max": None}, {"max": None}, 0.5],
        "n": 3,
    }
    assert finite((1.0, math.nan)) == [1.0, None]


def test_a_finite_answer_renders_as_before() -> None:
    data = {"t": "2026-01-14T10:00:00Z", "v": [1, 2.5]}
    assert FiniteJSONRenderer().render(None, data, response_status=200) == json.dumps(data)  # type: ignore[arg-type]


def test_a_detail_is_one_short_line() -> None:
    assert one_line("a\nb\r\n  c") == "a b c"
    assert len(one_line("x" * 1000)) == 300
