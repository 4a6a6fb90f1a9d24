"""The run page's "Serving under this run" section (dashboard/pages/run_serving.py and
analytics/runs/serving_charts.py): the KV-cache and preemption figures of the instances
that served the run's models, each bucket linked to the run's events explorer on exactly
that bucket and model, and the section's text and empty states, against
tests/analytics/runs/serving_load_world.py."""

from pathlib import Path
from typing import Any

import orjson
import pytest
from django.test import Client

from tests.analytics.runs.serving_load_world import load_served

EXPLORER = "/runs/served/events/"
KV = "/runs/served/charts/serving-kv.json?bucket=1m&last=all"
PREEMPTIONS = "/runs/served/charts/serving-preemptions.json?bucket=1m&last=all"
A, B = "org%2Fmodel-a", "org%2Fmodel-b"


@pytest.fixture
def signed_in(lake: Path, client: Client, user: Any) -> Client:
    load_served()
    client.force_login(user)
    return client


def figure(client: Client, url: str) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    return dict(orjson.loads(response.content))


def bucket(model: str, minute: int) -> str:
    return (
        f"{EXPLORER}?model={model}&start=2026-01-14T10:{minute:02d}:00Z"
        f"&end=2026-01-14T10:{minute + 1:02d}:00Z"
    )


def test_the_kv_figure_draws_each_instance_in_the_middle_of_its_buckets(signed_in: Client) -> None:
    fig = figure(signed_in, KV)
    [a, b] = fig["data"]
    assert (a["name"], b["name"]) == ("gpu-a · org/model-a", "gpu-b · org/model-b")
    assert a["x"] == [
        "2026-01-14T10:00:30+00:00",
        "2026-01-14T10:01:30+00:00",
        "2026-01-14T10:02:30+00:00",
    ]
    assert a["y"] == [0.5, 0.75, 0.625]
    assert (b["x"], b["y"]) == (["2026-01-14T10:02:30+00:00"], [0.25])
    assert fig["layout"]["xaxis"]["range"] == [
        "2026-01-14T10:00:00+00:00",
        "2026-01-14T10:04:00+00:00",
    ]
    # Two models: a click reads the point under it, not every trace at that time.
    assert fig["layout"]["hovermode"] == "closest"


def test_a_kv_bucket_opens_the_explorer_on_exactly_that_bucket_and_model(signed_in: Client) -> None:
    links = figure(signed_in, KV)["layout"]["meta"]["links"]["points"]
    assert links == {
        "0": [bucket(A, 0), bucket(A, 1), bucket(A, 2)],
        "1": [bucket(B, 2)],
    }


def test_a_preemption_bar_opens_its_bucket_and_a_bucket_without_none(signed_in: Client) -> None:
    fig = figure(signed_in, PREEMPTIONS)
    [a, b] = fig["data"]
    assert (a["y"], b["y"]) == ([0.0, 5.0, 0.0], [2.0])
    assert a["x"] == [
        "2026-01-14T10:00:00+00:00",
        "2026-01-14T10:01:00+00:00",
        "2026-01-14T10:02:00+00:00",
    ]
    assert (a["offset"], a["width"]) == (0, 60_000 * 0.92)
    assert fig["layout"]["meta"]["links"]["points"] == {
        "0": [None, bucket(A, 1), None],
        "1": [bucket(B, 2)],
    }


def test_an_hour_bucket_links_the_whole_hour(signed_in: Client) -> None:
    fig = figure(signed_in, "/runs/served/charts/serving-kv.json?bucket=1h&last=all")
    hour = "start=2026-01-14T10:00:00Z&end=2026-01-14T11:00:00Z"
    assert fig["layout"]["meta"]["links"]["points"] == {
        "0": [f"{EXPLORER}?model={A}&{hour}"],
        "1": [f"{EXPLORER}?model={B}&{hour}"],
    }
    # (0.25 + 0.75 + 0.5 + 1.0 + 0.625) / 5 scrapes
    assert fig["data"][0]["y"] == [0.625]


def test_one_model_reads_its_instances_at_once(signed_in: Client) -> None:
    url = "/runs/served/charts/serving-kv.json?bucket=1m&start=2026-01-14T10:00:00&end=2026-01-14T10:02:00"
    fig = figure(signed_in, url)
    assert [t["name"] for t in fig["data"]] == ["gpu-a · org/model-a"]
    assert fig["layout"]["hovermode"] == "x unified"


def test_the_section_names_the_instances_and_their_models(signed_in: Client) -> None:
    html = signed_in.get("/runs/served/?last=all&bucket=1m").content.decode()
    section = html[html.index('id="run-serving-load"') :]
    section = section[: section.index("</section>")]
    assert '<a href="/serving/instance/gpu-a/">gpu-a</a> served <code>org/model-a</code>' in section
    assert '<a href="/serving/instance/gpu-b/">gpu-b</a> served <code>org/model-b</code>' in section
    assert "gpu-z" not in section
    assert (
        'data-src="/runs/served/charts/serving-kv.json?bucket=1m&amp;min_gap=30m&amp;last=all"'
        in section
    )
    assert "KV cache usage per 1m" in section and "Preemptions per 1m" in section


def test_a_run_no_instance_served_says_what_to_do(signed_in: Client) -> None:
    html = signed_in.get("/runs/unserved/").content.decode()
    section = html[html.index('id="run-serving-load"') :]
    section = section[: section.index("</section>")]
    assert "No scraped vLLM instance served <code>org/nobody</code>" in section
    assert "point a scrape target at the vLLM server serving them" in section
    assert "data-src" not in section
    fig = figure(signed_in, "/runs/unserved/charts/serving-kv.json?last=all")
    [note] = fig["layout"]["annotations"]
    assert (
        note["text"]
        .replace("<br>", " ")
        .startswith(
            "No scraped vLLM instance served org/nobody: point a scrape target at the vLLM server"
        )
    )
    assert "links" not in (fig["layout"].get("meta") or {})


def test_a_markup_model_name_is_text_in_the_figure(lake: Path, client: Client, user: Any) -> None:
    from ingest.parsers.vllm import parse_scrape
    from ingest.pipelines.agent_events import ingest_body
    from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
    from tests.analytics.runs.serving_load_world import T0
    from tests.vllm_text import EngineState, v1_text

    model = "<b>bold</b>"
    event = {
        "ts": "2026-01-14T10:00:10Z",
        "run": "odd",
        "agent": "w",
        "event": "llm_call",
        "model": model,
    }
    ingest_body(orjson.dumps(event) + b"\n")
    text = v1_text({"0": EngineState(0.5)}, model=model.replace('"', ""))
    load_scrapes([PendingScrape("gpu-odd", T0, scrape=parse_scrape(text))])
    client.force_login(user)
    [trace] = figure(client, "/runs/odd/charts/serving-kv.json?last=all&bucket=1m")["data"]
    assert trace["name"] == "gpu-odd · &lt;b&gt;bold&lt;/b&gt;"


def test_a_run_the_reader_does_not_see_has_no_serving_figures(
    lake: Path, client: Client, django_user_model: Any
) -> None:
    from tests.people import grant

    load_served()
    client.force_login(grant(django_user_model.objects.create_user("nia"), role="viewer"))
    assert client.get(KV).status_code == 404
    assert client.get(PREEMPTIONS).status_code == 404
