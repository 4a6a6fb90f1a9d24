"""Who sees which serving instance through the API: a team's members see its targets, an
all-teams user and an admin see every instance (one-off scrapes of no team included), a
user in no team sees none; an instance one may not see answers as one that does not exist,
and fleet-wide figures sum only the visible instances (tests/serving_teams.py's data)."""

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.serving_teams import EVERY_INSTANCE, RANGE, People, load_two_teams


@pytest.fixture
def people(lake: Path, db: None) -> People:
    return load_two_teams()


def _json(client: Client, path: str) -> tuple[int, Any]:
    response = client.get(path)
    return response.status_code, response.json()


# The window, and what some endpoints require besides (the SLO's target); the others ignore it.
ASKED = RANGE + "&target_seconds=1"


def _serving_paths() -> dict[str, bool]:
    """Every GET path of the serving router -> whether it takes `instance`, read from the
    API's own OpenAPI description, so a new endpoint is walked without being listed here."""
    from dashboard.api import api

    paths = api.get_openapi_schema()["paths"]
    return {
        path: any(p["name"] == "instance" for p in ops["get"].get("parameters", []))
        for path, ops in paths.items()
        if path.startswith("/api/serving/") and "get" in ops
    }


def _instances(client: Client) -> list[str]:
    status, body = _json(client, "/api/serving/instances")
    assert status == 200
    return [row["instance"] for row in body]


def test_each_user_lists_exactly_the_instances_of_their_teams(people: People) -> None:
    # gpu-a-new is alpha's registered target, not scraped yet; oneoff is nobody's.
    assert _instances(people.alpha) == ["gpu-a", "gpu-a-new"]
    assert _instances(people.beta) == ["gpu-b"]
    assert _instances(people.no_team) == []
    assert _instances(people.all_teams) == [*EVERY_INSTANCE, "gpu-a-new"]
    assert _instances(people.admin) == [*EVERY_INSTANCE, "gpu-a-new"]


def test_the_walk_covers_the_instance_endpoints() -> None:
    taking = {path for path, named in _serving_paths().items() if named}
    # At least every endpoint there was when this test was written.
    assert taking >= {
        f"/api/serving/{p}"
        for p in (
            "kv-usage",
            "prefix-cache",
            "preemptions",
            "latency",
            "throughput",
            "queue",
            "kv-capacity",
            "scrapes",
        )
    }


def test_every_instance_endpoint_is_404_for_an_outsider_as_for_an_unknown_instance(
    people: People,
) -> None:
    for path, named in _serving_paths().items():
        if not named:
            continue
        for client, instance in (
            (people.beta, "gpu-a"),
            (people.alpha, "gpu-b"),
            (people.alpha, "oneoff"),
            (people.no_team, "gpu-a"),
        ):
            hidden = _json(client, f"{path}?instance={instance}&{ASKED}")
            assert hidden == (404, {"detail": f"no instance named {instance!r}"}), path
            status, body = _json(client, f"{path}?instance=nope&{ASKED}")
            assert (status, body) == (404, {"detail": "no instance named 'nope'"}), path
        for client, instance in (
            (people.alpha, "gpu-a"),
            (people.beta, "gpu-b"),
            (people.all_teams, "oneoff"),
            (people.admin, "gpu-b"),
        ):
            status, _ = _json(client, f"{path}?instance={instance}&{ASKED}")
            assert status == 200, (path, instance)


def test_no_fleet_answer_names_an_instance_the_user_may_not_see(people: People) -> None:
    for path, named in _serving_paths().items():
        query = f"?{ASKED}" if named else ""
        for client, hidden in (
            (people.alpha, ("gpu-b", "oneoff")),
            (people.beta, ("gpu-a", "oneoff")),
            (people.no_team, ("gpu-a", "gpu-b", "oneoff")),
        ):
            response = client.get(f"{path}{query}")
            if response.status_code == 422:  # an endpoint that needs its instance
                continue
            assert response.status_code == 200, path
            text = response.content.decode()
            assert not any(name in text for name in hidden), path


def test_fleet_kv_usage_and_preemptions_are_over_the_visible_instances_only(
    people: People,
) -> None:
    def fleet(client: Client) -> tuple[list[float], float]:
        _, kv = _json(client, f"/api/serving/kv-usage?{ASKED}")
        _, pre = _json(client, f"/api/serving/preemptions?{ASKED}")
        return [p["usage"] for p in kv["points"]], pre["total"]

    # One bucket of both scrapes: alpha's gpu-a alone, (0.25 + 0.75) / 2 and 2 - 0.
    assert fleet(people.alpha) == ([0.5], 2.0)
    # beta's gpu-b alone: (0.125 + 0.375) / 2 and 4 - 0.
    assert fleet(people.beta) == ([0.25], 4.0)
    assert fleet(people.no_team) == ([], 0.0)
    # Everyone's: (0.25 + 0.75 + 0.125 + 0.375 + 1.0 + 1.0) / 6 and 2 + 4 + 8.
    for client in (people.all_teams, people.admin):
        usage, total = fleet(client)
        assert usage == [pytest.approx(3.5 / 6)] and total == 14.0


def test_a_fleet_answer_of_a_team_of_one_instance_is_that_instances_answer(
    people: People,
) -> None:
    for path, named in _serving_paths().items():
        if not named or path.endswith(("/kv-capacity", "/scrapes")):
            continue  # those two are of one instance only
        _, fleet = _json(people.alpha, f"{path}?{ASKED}")
        _, own = _json(people.alpha, f"{path}?instance=gpu-a&{ASKED}")
        own.pop("unit", None)  # the prefix cache's unit is said for one instance only
        fleet.pop("unit", None)
        assert {**fleet, "instance": "gpu-a"} == own, path
    _, queue = _json(people.alpha, f"/api/serving/queue?{ASKED}")
    # gpu-a ran 1 then 3 requests: a mean of 2, a peak of 3.
    assert [(p["running"], p["running_max"]) for p in queue["points"]] == [(2.0, 3.0)]


def test_the_fleet_windows_default_range_is_that_of_the_visible_instances(
    people: People,
) -> None:
    # Without start/end the window is the data's own range: none for a user who sees none.
    _, mine = _json(people.alpha, "/api/serving/kv-usage?bucket=1h")
    assert [p["t"] for p in mine["points"]] == ["2026-01-01T00:00:00Z"]
    _, nobody = _json(people.no_team, "/api/serving/kv-usage?bucket=1h")
    assert nobody["points"] == []


def test_the_queries_read_only_what_their_seen_allows(people: People) -> None:
    from datetime import timedelta

    from analytics.serving import queries as serving
    from analytics.serving.instances import data_range, list_instances
    from lib.access import Seen
    from tests.serving_teams import T0

    alpha = Seen(everything=False, instances=frozenset({"gpu-a", "gpu-a-new"}))
    assert [r.instance for r in list_instances(seen=alpha)] == ["gpu-a"]
    assert list_instances("gpu-b", seen=alpha) == []
    assert data_range(None, alpha) == (T0, T0 + timedelta(minutes=1))
    assert data_range("gpu-b", alpha) is None
    summary = serving.fleet_summary(T0, T0 + timedelta(hours=1), alpha)
    # gpu-a's two scrapes: KV (0.25 + 0.75) / 2, preemptions 2 - 0.
    assert list(summary) == ["gpu-a"]
    assert (summary["gpu-a"].kv_usage_mean, summary["gpu-a"].preemptions) == (0.5, 2.0)
    assert serving.fleet_summary(T0, T0 + timedelta(hours=1), Seen.nothing()) == {}
