"""Who sees which serving instance on the pages and in their chart JSON, and who may save
a model config (tests/serving_teams.py's teams, instances and people)."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from analytics.serving.models import ModelConfig
from tests.serving_teams import RANGE, People, load_two_teams

INSTANCE_CHARTS = ("kv", "queue", "preemptions", "prefix", "ttft", "itl", "e2e", "throughput")


@pytest.fixture
def people(lake: Path, db: None) -> People:
    return load_two_teams()


def _html(client: Client, path: str) -> tuple[int, str]:
    response = client.get(path)
    return response.status_code, response.content.decode()


def _trace_names(client: Client, chart: str) -> list[str]:
    response = client.get(f"/serving/charts/{chart}.json?{RANGE}")
    assert response.status_code == 200
    return sorted(t["name"] for t in orjson.loads(response.content)["data"] if "name" in t)


def _instance_links(html: str) -> list[str]:
    return [name for name in ("gpu-a", "gpu-b", "oneoff") if f"/serving/instance/{name}/" in html]


def test_the_serving_table_lists_only_the_users_instances(people: People) -> None:
    status, alpha = _html(people.alpha, f"/serving/?{RANGE}")
    assert status == 200
    assert _instance_links(alpha) == ["gpu-a"]
    assert "<code>gpu-a-new</code>" in alpha  # registered by alpha, not scraped yet
    assert "gpu-b" not in alpha and "oneoff" not in alpha and "model-b" not in alpha
    _, beta = _html(people.beta, f"/serving/?{RANGE}")
    assert _instance_links(beta) == ["gpu-b"] and "gpu-a" not in beta
    _, nobody = _html(people.no_team, f"/serving/?{RANGE}")
    assert _instance_links(nobody) == [] and "No instance of your teams" in nobody
    for client in (people.all_teams, people.admin):
        _, html = _html(client, f"/serving/?{RANGE}")
        assert _instance_links(html) == ["gpu-a", "gpu-b", "oneoff"]


def test_the_fleet_charts_draw_only_the_users_instances(people: People) -> None:
    for chart in ("kv", "preemptions"):
        assert _trace_names(people.alpha, chart) == ["gpu-a"]
        assert _trace_names(people.beta, chart) == ["gpu-b"]
        assert _trace_names(people.no_team, chart) == []
        assert _trace_names(people.all_teams, chart) == ["gpu-a", "gpu-b", "oneoff"]


def test_the_fleet_kv_chart_of_a_team_holds_its_instances_values(people: People) -> None:
    response = people.alpha.get(f"/serving/charts/kv.json?{RANGE}")
    traces: list[dict[str, Any]] = orjson.loads(response.content)["data"]
    # gpu-a's one bucket: (0.25 + 0.75) / 2.
    assert [list(t["y"]) for t in traces if t.get("name") == "gpu-a"] == [[0.5]]


def test_the_overview_counts_and_draws_only_the_users_instances(people: People) -> None:
    _, html = _html(people.alpha, f"/overview/?{RANGE}")
    assert '<div class="label">Serving instances</div><div class="value">1</div>' in html
    _, everyone = _html(people.admin, f"/overview/?{RANGE}")
    assert '<div class="label">Serving instances</div><div class="value">3</div>' in everyone
    chart = orjson.loads(people.alpha.get(f"/overview/chart.json?{RANGE}").content)
    names = {t.get("name") for t in chart["data"]}
    assert "gpu-a" in str(names) and "gpu-b" not in str(names) and "oneoff" not in str(names)


def test_an_instance_page_is_404_for_an_outsider_as_for_an_unknown_instance(
    people: People,
) -> None:
    assert people.alpha.get("/serving/instance/gpu-a/").status_code == 200
    assert people.all_teams.get("/serving/instance/oneoff/").status_code == 200
    for client, instance in (
        (people.beta, "gpu-a"),
        (people.alpha, "gpu-b"),
        (people.alpha, "oneoff"),
        (people.no_team, "gpu-a"),
        (people.alpha, "nope"),
    ):
        assert client.get(f"/serving/instance/{instance}/").status_code == 404


def test_every_instance_chart_is_404_json_for_an_outsider(people: People) -> None:
    for chart in INSTANCE_CHARTS:
        path = f"/serving/instance/charts/{chart}.json?{RANGE}"
        assert people.alpha.get(f"{path}&instance=gpu-a").status_code == 200
        for client, instance in ((people.beta, "gpu-a"), (people.alpha, "oneoff")):
            response = client.get(f"{path}&instance={instance}")
            assert response.status_code == 404, chart
            assert response.json() == {"detail": f"no instance named {instance!r}"}


MODEL_A = {
    "model": "org/model-a",
    "num_layers": 32,
    "num_kv_heads": 8,
    "head_dim": 128,
    "dtype_bytes": 2,
    "next": "/serving/instance/gpu-a/",
}


def test_a_viewer_may_not_save_a_model_config(people: People) -> None:
    assert people.alpha.post("/serving/model-config/", MODEL_A).status_code == 403
    assert not ModelConfig.objects.exists()


def test_an_editor_saves_the_config_of_a_model_their_instance_serves(people: People) -> None:
    response = people.alpha_editor.post("/serving/model-config/", MODEL_A)
    assert (response.status_code, response["Location"]) == (302, "/serving/instance/gpu-a/")
    # 2 x 32 x 8 x 128 x 2 bytes per token.
    assert ModelConfig.objects.get(model="org/model-a").kv_bytes_per_token == 131072


def test_an_editor_may_not_save_the_config_of_another_teams_model(people: People) -> None:
    for model in ("org/model-b", "org/model-x"):
        response = people.alpha_editor.post("/serving/model-config/", {**MODEL_A, "model": model})
        assert response.status_code == 404
    assert not ModelConfig.objects.exists()
