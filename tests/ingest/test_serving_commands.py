"""`manage.py scrape`, `add_scrape_target` and `import_prometheus` against loopback servers."""

import io
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.core.management import CommandError, ManagementUtility, call_command

from analytics.serving import queries as serving
from analytics.serving.instances import list_instances
from analytics.serving.latency import latency
from analytics.serving.models import ScrapeTarget
from ingest.sources.prometheus_api import MAX_POINTS_PER_SERIES, chunks
from lib.access import Seen
from tests.loopback import loopback
from tests.vllm_text import EngineState, v1_text

EVERYONE = Seen.all()  # an all-teams reader: these tests are about the figures


def _run(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return dict(orjson.loads(out.getvalue().strip().splitlines()[-1]))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _everything(instance: str) -> serving.Window:
    return serving.make_window(instance, None, None, 86400)


def test_scrape_once_stores_prints_registers_nothing_and_counts_a_restart_as_a_reset(
    lake: Path, db: None
) -> None:
    engine = EngineState(preemptions=4, created=1000.0)
    with loopback() as server:
        url = server.url("/metrics")
        server.serve_text("/metrics", v1_text({"0": engine}))
        first = _run("scrape", url, "--instance", "gpu-a")
        engine.preemptions = 6
        server.serve_text("/metrics", v1_text({"0": engine}))
        _run("scrape", url, "--instance", "gpu-a")
        restarted = EngineState(preemptions=1, created=2000.0)
        server.serve_text("/metrics", v1_text({"0": restarted}))
        last = _run("scrape", url, "--instance", "gpu-a")
    assert first["accepted"] == last["accepted"] and first["quarantined"] == 0
    assert last["resets"] > 0 and last["up"] is True and last["instance"] == "gpu-a"
    assert not ScrapeTarget.objects.exists()  # once means once: nothing to scrape again
    # 4 -> 6 is +2, the restart to 1 is +1
    assert serving.preemptions("gpu-a", _everything("gpu-a")).total == 3.0


def _exit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The command as manage.py runs it: its exit status, stdout and stderr."""
    status = 0
    try:
        ManagementUtility(["manage.py", *args]).execute()
    except SystemExit as ended:
        status = int(ended.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_a_failed_scrape_is_stored_and_exits_non_zero_with_one_line(
    lake: Path, db: None, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/metrics"
    status, out, err = _exit(capsys, "scrape", url, "--instance", "down")
    assert status == 1
    assert err == "CommandError: down: down: connection refused\n"
    summary = orjson.loads(out)
    assert (summary["accepted"], summary["quarantined"], summary["up"]) == (0, 1, False)
    with loopback() as server:
        server.serve_text("/metrics", "this is not an exposition\n")
        status, out, err = _exit(capsys, "scrape", server.url("/metrics"), "--instance", "garbage")
    assert status == 1 and err.count("\n") == 1
    assert err.startswith("CommandError: garbage: down: not the Prometheus text format: ")
    rows = {r.instance: r for r in list_instances(seen=EVERYONE)}
    assert rows["down"].up is False and rows["down"].last_error == "connection refused"
    assert rows["garbage"].up is False
    assert not ScrapeTarget.objects.exists()


def test_a_good_scrape_exits_zero(lake: Path, db: None, capsys: pytest.CaptureFixture[str]) -> None:
    with loopback() as server:
        server.serve_text("/metrics", v1_text({"0": EngineState()}))
        status, out, err = _exit(capsys, "scrape", server.url("/metrics"), "--instance", "ok")
    assert status == 0 and orjson.loads(out)["up"] is True
    assert err.startswith("ok: up, ")


def test_scrape_refuses_labels_and_bad_names_before_scraping(db: None) -> None:
    with pytest.raises(CommandError, match=r"^labels belong to a registered target: "):
        call_command("scrape", "http://127.0.0.1:9/metrics", "--label", "team=a")
    with pytest.raises(CommandError, match="name"):
        call_command("scrape", "http://127.0.0.1:9/metrics", "--instance", "a b/c")


def test_scrape_every_stops_after_count_and_registers_nothing(lake: Path, db: None) -> None:
    with loopback() as server:
        server.serve_text("/metrics", v1_text({"0": EngineState()}))
        summary = _run("scrape", server.url("/metrics"), "--every", "0.05", "--count", "3")
    assert summary["scrapes"] == 3
    assert not ScrapeTarget.objects.exists()


def test_remove_scrape_target_by_name_or_url(db: None) -> None:
    _run("add_scrape_target", "http://127.0.0.1:8001/metrics", "--instance", "a")
    _run("add_scrape_target", "http://127.0.0.1:8002/metrics", "--instance", "b")
    assert _run("remove_scrape_target", "a") == {
        "removed": "a",
        "url": "http://127.0.0.1:8001/metrics",
    }
    assert _run("remove_scrape_target", "http://127.0.0.1:8002/metrics")["removed"] == "b"
    assert not ScrapeTarget.objects.exists()


def test_remove_scrape_target_says_when_there_is_no_such_target_or_several(db: None) -> None:
    with pytest.raises(CommandError, match=r"^no scrape target named or scraping 'typo'$"):
        call_command("remove_scrape_target", "typo")
    url = "http://127.0.0.1:8001/metrics"
    _run("add_scrape_target", url, "--instance", "a")
    _run("add_scrape_target", url, "--instance", "b")
    with pytest.raises(CommandError, match=r"^2 targets scrape .* \(a, b\): name one$"):
        call_command("remove_scrape_target", url)
    assert ScrapeTarget.objects.count() == 2


def test_add_scrape_target_rejects_a_bad_name(db: None) -> None:
    assert (
        _run("add_scrape_target", "http://127.0.0.1:8001/metrics", "--instance", "standin")["every"]
        == 15
    )
    with pytest.raises(CommandError, match="name"):
        call_command("add_scrape_target", "http://127.0.0.1:8001/metrics", "--instance", "a b/c")


def test_chunks_never_exceed_the_points_per_series_limit() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    end = start + timedelta(days=1)
    spans = list(chunks(start, end, 1.0, max_chunk=timedelta(days=2)))
    assert spans[0] == (start, start + timedelta(seconds=MAX_POINTS_PER_SERIES - 1))
    assert spans[1][0] == start + timedelta(seconds=MAX_POINTS_PER_SERIES)
    assert spans[-1][1] == end
    assert len(spans) == 8  # 86,401 points / 11,000 per chunk


# A Prometheus that scraped one V1 server every 60 s for 10 minutes; it restarted
# (counters back near 0, new _created) between 00:04 and 00:05.
T0 = datetime(2026, 1, 1, tzinfo=UTC)
PREEMPTIONS: list[float] = [
    0,
    1,
    1,
    3,
    4,
    1,
    1,
    2,
    2,
    5,
]  # increases 1+0+2+1 + 1 (reset) +0+1+0+3 = 9
CREATED = [1000.0] * 5 + [2000.0] * 5
KV = [0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.2, 0.3, 0.4, 0.5]  # mean 0.3


def _series(name: str, labels: dict[str, str], values: list[float]) -> dict[str, Any]:
    return {
        "metric": {"__name__": name, "instance": "vllm-1:8000", "job": "vllm", **labels},
        "values": [
            [(T0 + timedelta(minutes=i)).timestamp(), repr(float(v))] for i, v in enumerate(values)
        ],
    }


def _prometheus_answer(query: dict[str, list[str]]) -> tuple[int, str, bytes]:
    start, end = float(query["start"][0]), float(query["end"][0])
    base = {"engine": "0", "model_name": "m"}
    everything = [
        _series("vllm:num_preemptions_total", base, PREEMPTIONS),
        _series("vllm:num_preemptions_created", base, CREATED),
        _series("vllm:kv_cache_usage_perc", base, KV),
    ]
    result = []
    for s in everything:
        values = [v for v in s["values"] if start <= v[0] <= end]
        if values:
            result.append({**s, "values": values})
    body = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    return 200, "application/json", orjson.dumps(body)


def _metadata(_: dict[str, list[str]]) -> tuple[int, str, bytes]:
    data = {
        "vllm:num_preemptions_total": [{"type": "counter", "help": "", "unit": ""}],
        "vllm:num_preemptions_created": [{"type": "gauge", "help": "", "unit": ""}],
        "vllm:kv_cache_usage_perc": [{"type": "gauge", "help": "", "unit": ""}],
    }
    return 200, "application/json", orjson.dumps({"status": "success", "data": data})


def test_import_prometheus_chunks_and_keeps_reset_semantics(lake: Path, db: None) -> None:
    with loopback() as server:
        server.routes["/api/v1/query_range"] = _prometheus_answer
        server.routes["/api/v1/metadata"] = _metadata
        args = ("--start", "2026-01-01T00:00:00Z", "--end", "2026-01-01T00:09:00Z", "--step", "1m")
        summary = _run("import_prometheus", server.base_url, *args)
        ranges = [r for r in server.requests if r.startswith("/api/v1/query_range")]
        again = _run("import_prometheus", server.base_url, *args)
    assert summary["scrapes"] == 10 and summary["quarantined"] == 0
    assert len(ranges) == 1
    w = serving.make_window("vllm-1:8000", None, None, 3600)
    assert serving.preemptions("vllm-1:8000", w).total == 9.0
    assert serving.kv_usage("vllm-1:8000", w)[0].usage == pytest.approx(0.3)
    assert (again["accepted"], again["duplicates"]) == (0, 10)


def test_import_prometheus_reports_an_unreachable_server(lake: Path, db: None) -> None:
    with pytest.raises(CommandError, match="connection refused"):
        call_command(
            "import_prometheus",
            f"http://127.0.0.1:{_closed_port()}",
            "--start",
            "2026-01-01T00:00:00Z",
            "--end",
            "2026-01-01T01:00:00Z",
        )


def _ttft_answer(query: dict[str, list[str]]) -> tuple[int, str, bytes]:
    """TTFT buckets (le 0.1, 0.5, +Inf) of one server, cumulative, one sample a minute."""
    start, end = float(query["start"][0]), float(query["end"][0])
    base = {"engine": "0", "model_name": "m"}
    buckets: dict[str, list[float]] = {"0.1": [0, 2, 4], "0.5": [0, 6, 12], "+Inf": [0, 8, 16]}
    result = []
    for le, counts in buckets.items():
        s = _series("vllm:time_to_first_token_seconds_bucket", {**base, "le": le}, counts)
        values = [v for v in s["values"] if start <= v[0] <= end]
        result.append({**s, "values": values})
    body = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    return 200, "application/json", orjson.dumps(body)


def test_import_without_metadata_types_series_by_vllms_own_names(lake: Path, db: None) -> None:
    with loopback() as server:
        server.routes["/api/v1/query_range"] = _ttft_answer  # no /api/v1/metadata: 404
        args = ("--start", "2026-01-01T00:00:00Z", "--end", "2026-01-01T00:02:00Z", "--step", "1m")
        summary = _run("import_prometheus", server.base_url, *args)
    assert summary["scrapes"] == 3
    # increases over the window: 4 <= 0.1 s, 12 <= 0.5 s, 16 in all; p50: rank 8 lies in
    # (0.1, 0.5]: 0.1 + 0.4 * (8 - 4) / (12 - 4) = 0.3
    w = serving.make_window("vllm-1:8000", None, None, 3600)
    assert latency("ttft", 0.5, "vllm-1:8000", w).overall == pytest.approx(0.3)


def test_add_scrape_target_gives_the_target_a_team_and_keeps_it_on_update(db: None) -> None:
    from analytics.costs.models import Team

    infra = Team.objects.create(name="infra")
    url = "http://127.0.0.1:8001/metrics"
    assert _run("add_scrape_target", url, "--instance", "a", "--team", "infra")["team"] == "infra"
    assert ScrapeTarget.objects.get(name="a").team == infra
    # An update that names no team keeps the one it had.
    assert _run("add_scrape_target", url, "--instance", "a", "--every", "30")["team"] == "infra"
    assert _run("add_scrape_target", url, "--instance", "b")["team"] is None


def test_add_scrape_target_refuses_an_unknown_team_in_one_line(db: None) -> None:
    with pytest.raises(CommandError, match=r"^no team named 'nobody'$"):
        call_command(
            "add_scrape_target",
            "http://127.0.0.1:8001/metrics",
            "--instance",
            "a",
            "--team",
            "nobody",
        )
    assert not ScrapeTarget.objects.exists()
