"""The Serving pages, the Overview page and the chart JSON they load."""

import csv
import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import orjson
import pytest
from django.test import Client

import warehouse
from analytics.serving.models import ModelConfig
from ingest.parsers.vllm import parse_scrape
from ingest.pipelines import run_rollups
from ingest.pipelines.vllm_scrape import PendingScrape, load_scrapes
from tests.vllm_text import EngineState, v1_text

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RANGE = "start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z"


@pytest.fixture
def client(user: object) -> Client:
    c = Client()
    c.force_login(user)  # type: ignore[arg-type]
    return c


@pytest.fixture
def scraped(lake: Path) -> None:
    """An instance whose name needs escaping, 2 engines, a preemption, then a failed scrape."""
    scrapes = [
        PendingScrape(
            "gpu<a>",
            T0 + timedelta(minutes=i),
            scrape=parse_scrape(
                v1_text({"0": EngineState(0.25 * i, preemptions=i), "1": EngineState(0.5)})
            ),
        )
        for i in range(3)
    ]
    scrapes.append(
        PendingScrape("gpu<a>", T0 + timedelta(minutes=3), error="HTTP 503 Service Unavailable")
    )
    load_scrapes(scrapes)


def test_pages_need_a_login(lake: Path, db: None) -> None:
    for path in ("/serving/", "/overview/", "/serving/charts/kv.json", "/overview/chart.json"):
        response = Client().get(path)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_serving_overview_lists_instances_with_escaped_names(client: Client, scraped: None) -> None:
    html = client.get("/serving/").content.decode()
    assert "gpu&lt;a&gt;" in html and "gpu<a>" not in html
    assert "HTTP 503 Service Unavailable" in html
    assert 'class="badge bad">down' in html


def test_instance_page_shows_the_last_scrape_error_and_capacity(
    client: Client, scraped: None
) -> None:
    response = client.get("/serving/instance/gpu<a>/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Last scrape error" in html and "HTTP 503 Service Unavailable" in html
    assert "32,000 tokens" in html  # 1000 blocks x 16 tokens x 2 engines
    assert client.get("/serving/instance/nope/").status_code == 404


def test_instance_charts_answer_plotly_json(client: Client, scraped: None) -> None:
    for name in ("kv", "queue", "preemptions", "prefix", "ttft", "itl", "e2e", "throughput"):
        response = client.get(
            f"/serving/instance/charts/{name}.json?instance=gpu%3Ca%3E&{RANGE}&bucket=1m"
        )
        assert response.status_code == 200, name
        figure = orjson.loads(response.content)
        assert "data" in figure and "layout" in figure
    preemptions = orjson.loads(
        client.get(
            f"/serving/instance/charts/preemptions.json?instance=gpu%3Ca%3E&{RANGE}&bucket=1m"
        ).content
    )
    assert preemptions["data"][0]["y"] == [0.0, 1.0, 1.0]
    bad = client.get("/serving/instance/charts/kv.json?instance=gpu%3Ca%3E&bucket=never")
    assert bad.status_code == 422
    assert client.get("/serving/instance/charts/nope.json?instance=gpu%3Ca%3E").status_code == 404


def test_charts_read_from_and_to_as_start_and_end(client: Client, scraped: None) -> None:
    path = "/serving/instance/charts/preemptions.json?instance=gpu%3Ca%3E&bucket=1m&"
    asked = client.get(path + "from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z")
    assert asked.status_code == 200
    assert asked.content == client.get(path + RANGE).content
    assert orjson.loads(asked.content)["data"][0]["y"] == [0.0, 1.0, 1.0]


def test_model_config_form_needs_csrf_and_saves(user: object, scraped: None) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)  # type: ignore[arg-type]
    data = {
        "model": "meta-llama/Llama-3.1-8B",
        "num_layers": 32,
        "num_kv_heads": 8,
        "head_dim": 128,
        "dtype_bytes": 2,
    }
    assert strict.post("/serving/model-config/", data).status_code == 403
    page = strict.get("/serving/instance/gpu<a>/")
    token = page.cookies["csrftoken"].value
    response = strict.post(
        "/serving/model-config/",
        {**data, "csrfmiddlewaretoken": token, "next": "/serving/instance/gpu<a>/"},
    )
    assert response.status_code == 302
    assert ModelConfig.objects.get(model="meta-llama/Llama-3.1-8B").kv_bytes_per_token == 131072
    html = strict.get("/serving/instance/gpu<a>/").content.decode()
    # 2 x 32 x 8 x 128 x 2 = 131,072 bytes = 128 KiB per token; 32,000 tokens of it are
    # 4,194,304,000 bytes = 3.906 GiB.
    assert '<div class="value">128 KiB</div>' in html
    assert '<div class="value">3.9 GiB</div>' in html
    # A size is never spelled "KB" (a CSRF token may hold the letters, so words only).
    assert not re.search(r"\d\s*KB\b", html)


def _insert_commits(run: str, minutes: list[int]) -> None:
    def work(cur: duckdb.DuckDBPyConnection) -> None:
        for i, minute in enumerate(minutes):

            def bind(stamp: datetime, i: int = i, minute: int = minute) -> list[object]:
                return [run, T0 + timedelta(minutes=minute), f"sha{i}", stamp]

            run_rollups.insert_events(
                cur,
                "INSERT INTO events (run, agent, ts, event, ok, commit_sha, source_kind, source,"
                " ingested_at) VALUES (?, 'a1', ?, 'commit', true, ?, 'test', 'test', ?)",
                bind,
            )

    warehouse.write(work)


def test_overview_puts_commits_next_to_kv_usage_and_preemptions(
    client: Client, scraped: None
) -> None:
    _insert_commits("run-1", [0, 0, 2])
    html = client.get("/overview/").content.decode()
    assert "run-1" in html and 'href="/overview/"' in html
    figure = orjson.loads(client.get(f"/overview/chart.json?run=run-1&{RANGE}&bucket=1m").content)
    by_name = {trace["name"]: trace for trace in figure["data"]}
    assert by_name["commits"]["y"][:3] == [2, 0, 1]
    assert by_name["gpu<a> preemptions"]["y"] == [0.0, 1.0, 1.0]
    # one shared time axis: the upper three follow the bottom one
    assert [figure["layout"][f"xaxis{i}"]["matches"] for i in ("", 2, 3)] == ["x4"] * 3
    assert client.get("/overview/?run=nope").status_code == 404


def test_overview_counts_have_separators_and_the_bucket_reads_as_a_duration(
    client: Client, scraped: None
) -> None:
    def work(cur: duckdb.DuckDBPyConnection) -> None:
        run_rollups.insert_events(
            cur,
            "INSERT INTO events (run, agent, ts, event, ok, commit_sha, source_kind, source,"
            " ingested_at) SELECT 'run-1', 'a1', ?::TIMESTAMPTZ + to_minutes(i % 3), 'commit',"
            " true, 'sha' || i, 'test', 'test', ? FROM range(1001) AS t(i)",
            lambda stamp: [T0, stamp],
        )

    warehouse.write(work)  # 1,001 commits in one statement
    html = client.get(f"/overview/?run=run-1&{RANGE}&bucket=15m").content.decode()
    assert '<div class="label">Commits</div><div class="value">1,001</div>' in html
    assert "buckets of 15m" in html
    assert "900 s" not in html


def test_the_picker_shows_the_absolute_range_it_uses(client: Client, scraped: None) -> None:
    html = client.get(f"/serving/?{RANGE}&bucket=1m").content.decode()
    assert (
        'Showing <time datetime="2026-01-01T00:00:00Z">2026-01-01 00:00</time> to '
        '<time datetime="2026-01-01T01:00:00Z">2026-01-01 01:00</time> '
        '<span class="tz" data-zone-label>UTC</span>, buckets of 1m'
    ) in html
    assert '<option value="1m" selected>1m</option>' in html


def test_a_bad_range_keeps_the_form_and_says_why_with_422(client: Client, scraped: None) -> None:
    answer = client.get("/serving/?start=2026-01-01T02:00&end=2026-01-01T01:00&refresh=30")
    html = answer.content.decode()
    assert answer.status_code == 422
    assert 'name="start" step="1" value="2026-01-01T02:00"' in html
    assert 'name="end" step="1" value="2026-01-01T01:00"' in html
    assert '<option value="30" selected>30s</option>' in html
    assert '<p class="error timerange-problem" role="alert">start must be before end</p>' in html
    typo = client.get("/overview/?start=yesterday")
    assert typo.status_code == 422
    assert '<input type="text" name="start" step="1" value="yesterday">' in typo.content.decode()
    instance = client.get("/serving/instance/gpu<a>/?bucket=7x&engine=1").content.decode()
    assert '<option value="7x" selected>7x</option>' in instance
    assert '<input type="hidden" name="engine" value="1">' in instance


def test_a_chart_with_a_bad_range_answers_json_with_the_reason(
    client: Client, scraped: None
) -> None:
    answer = client.get("/serving/charts/kv.json?start=2026-01-01T02:00&end=2026-01-01T01:00")
    assert (answer.status_code, answer.json()) == (422, {"detail": "start must be before end"})
    overview = client.get("/overview/chart.json?bucket=7x")
    assert overview.json() == {"detail": "bucket must look like 30s, 5m, 1h or 1d, got '7x'"}


def test_the_instance_table_as_csv_holds_the_tables_rows(client: Client, scraped: None) -> None:
    html = client.get(f"/serving/?{RANGE}").content.decode()
    kept = "start=2026-01-01T00%3A00%3A00Z&amp;end=2026-01-01T01%3A00%3A00Z"
    assert f'href="/serving/?{kept}&amp;format=csv&amp;table=instances"' in html
    answer = client.get(f"/serving/?{RANGE}&format=csv&table=instances")
    assert (
        answer["Content-Disposition"] == 'attachment; filename="fleetscope-serving-instances.csv"'
    )
    body = b"".join(answer.streaming_content).decode()  # type: ignore[attr-defined]
    header, *rows = list(csv.reader(io.StringIO(body)))
    assert header[:2] == ["instance", "up"] and header[-2:] == ["last_error", "last_error_at"]
    # One instance (the fixture's), down at its last attempt with its HTTP 503, 2 engines;
    # engine 0's preemption counter went 0, 1, 2 within the hour: 2 preemptions.
    (row,) = rows
    cells = dict(zip(header, row, strict=True))
    assert (cells["instance"], cells["up"], cells["engines"]) == ("gpu<a>", "false", "2")
    assert cells["preemptions_1h"] == "2"
    assert cells["last_error"] == "HTTP 503 Service Unavailable"
    assert cells["last_error_at"] == "2026-01-01T00:03:00+00:00"
