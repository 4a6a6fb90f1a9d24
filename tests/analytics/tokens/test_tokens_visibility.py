"""Request traffic covers only the requests whose run or serving instance the caller sees
(a request with neither: only all-teams users), in /api/tokens/traffic, the traffic tax
and /api/tokens/mismatches; the parallel texts' tax is the same for everyone."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from analytics.tokens import queries
from lib.access import Seen
from tests.analytics.costs.two_teams import TwoTeams, make_user
from tests.analytics.tokens.team_traffic import (
    A_INSTANCE,
    A_RUN,
    B_RUN,
    NOBODY,
    load_team_traffic,
    o200k,
)

pytestmark = pytest.mark.usefixtures("lake")


@pytest.fixture
def traffic(db: None) -> TwoTeams:
    return load_team_traffic()


def get(user: Any, path: str) -> Any:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.json()


def languages(user: Any) -> dict[str, tuple[int, int]]:
    """(requests, o200k tokens) per language of /api/tokens/traffic."""
    answer = get(user, "/api/tokens/traffic")
    return {
        row["language"]: (row["requests"], row["encodings"]["o200k_base"]["tokens"])
        for row in answer["languages"]
    }


def test_a_member_of_team_a_sees_its_runs_and_its_instances_requests(
    traffic, django_user_model
) -> None:
    ann = make_user(django_user_model, "ann", teams=(traffic.a,))
    assert languages(ann) == {"en": (1, o200k(A_RUN)), "ta": (1, o200k(A_INSTANCE))}
    assert get(ann, "/api/tokens/traffic")["requests"] == 2
    table = get(ann, "/api/tokens/tax?source=traffic&encoding=o200k_base")
    assert {(r["language"], r["samples"], r["tokens"]) for r in table["languages"]} == {
        ("en", 1, o200k(A_RUN)),
        ("ta", 1, o200k(A_INSTANCE)),
    }
    assert get(ann, "/api/tokens/mismatches") == {"compared": 1, "mismatched": 0, "requests": []}


def test_a_member_of_team_b_sees_only_its_request_and_its_mismatch(
    traffic, django_user_model
) -> None:
    bob = make_user(django_user_model, "bob", teams=(traffic.b,))
    assert languages(bob) == {"en": (1, o200k(B_RUN))}
    answer = get(bob, "/api/tokens/mismatches")
    assert (answer["compared"], answer["mismatched"]) == (1, 1)
    [far] = answer["requests"]
    assert (far["request_id"], far["reported_prompt_tokens"], far["counted_prompt_tokens"]) == (
        "b-run",
        o200k(B_RUN) + 400,
        o200k(B_RUN),
    )


def test_a_user_in_no_team_sees_no_traffic(traffic, django_user_model) -> None:
    nia = make_user(django_user_model, "nia")
    answer = get(nia, "/api/tokens/traffic")
    assert (answer["requests"], answer["languages"]) == (0, [])
    assert get(nia, "/api/tokens/tax?source=traffic")["languages"] == []
    assert get(nia, "/api/tokens/mismatches") == {"compared": 0, "mismatched": 0, "requests": []}


def test_an_all_teams_user_sees_every_request_including_those_of_no_run_or_instance(
    traffic, django_user_model
) -> None:
    val = make_user(django_user_model, "val", all_teams=True)
    assert languages(val) == {
        "en": (2, o200k(A_RUN) + o200k(B_RUN)),
        "ta": (1, o200k(A_INSTANCE)),
        "de": (1, o200k(NOBODY)),
    }
    answer = get(val, "/api/tokens/mismatches")
    assert (answer["compared"], answer["mismatched"]) == (2, 1)


def test_the_parallel_tax_is_the_same_for_everyone(traffic, django_user_model) -> None:
    path = "/api/tokens/tax?encoding=o200k_base&corpus=shipped"
    nobody = get(make_user(django_user_model, "nia"), path)
    everyone = get(make_user(django_user_model, "val", all_teams=True), path)
    assert nobody == everyone
    assert "ta" in {row["language"] for row in nobody["languages"]}


def test_a_run_seen_through_its_instance_alone_still_counts(traffic) -> None:
    # Seen of instance gpu-b only (no runs): b-run is on gpu-b, so it is seen.
    seen = Seen(everything=False, instances=frozenset({"gpu-b"}))
    assert [(r.language, r.requests) for r in queries.traffic_by_language(None, None, seen)] == [
        ("en", 1)
    ] * 3  # one row per configured encoding
