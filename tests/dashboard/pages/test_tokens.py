"""dashboard/pages/tokens.py: the Tokens page, its chart figures, its tables as CSV and its
paste box."""

import csv
import io
import json
from pathlib import Path
from typing import Any

import orjson
import tiktoken
from django.test import Client

from analytics.tokens.shipped import PARALLEL_DIR
from ingest.pipelines.requests import run_requests


def _shipped_tax(language: str, encoding: str) -> float:
    """The mean per-id ratio, computed straight from the shipped files with tiktoken."""
    enc = tiktoken.get_encoding(encoding)
    texts: dict[str, dict[str, str]] = {}
    for path in PARALLEL_DIR.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            texts.setdefault(record["language"], {})[record["id"]] = record["text"]
    ratios = [
        len(enc.encode(text)) / len(enc.encode(texts["en"][id_]))
        for id_, text in texts[language].items()
    ]
    return sum(ratios) / len(ratios)


def test_the_page_needs_a_login(client: Client, db: None) -> None:
    response = client.get("/tokens/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_shows_the_shipped_tax_table_before_anything_is_ingested(
    lake: Path, client: Client, user: Any
) -> None:
    client.force_login(user)

    response = client.get("/tokens/")

    assert response.status_code == 200
    context = response.context
    assert (context["nav"], context["corpus"], context["selected"]) == (
        "tokens",
        "shipped",
        "o200k_base",
    )
    rows = context["tax_rows"]
    assert len(rows) == 24 and all(row["samples"] == 12 for row in rows)
    taxes = [row["cells"][2]["tax"] for row in rows]
    assert taxes == sorted(taxes, reverse=True)
    tamil = next(row for row in rows if row["language"] == "ta")
    assert [cell["tax"] for cell in tamil["cells"]] == [
        _shipped_tax("ta", name) for name in ("gpt2", "cl100k_base", "o200k_base")
    ]
    assert b"Tamil" in response.content
    assert b'id="token-form"' in response.content


def test_the_tax_chart_has_one_trace_per_encoding_in_tax_order(
    lake: Path, client: Client, user: Any
) -> None:
    client.force_login(user)

    figure = client.get("/tokens/charts/tax.json?encoding=gpt2&corpus=shipped").json()

    assert [trace["name"] for trace in figure["data"]] == ["gpt2", "cl100k_base", "o200k_base"]
    gpt2 = figure["data"][0]["y"]
    assert gpt2 == sorted(gpt2, reverse=True)
    assert gpt2[figure["data"][0]["x"].index("Tamil")] == _shipped_tax("ta", "gpt2")


def test_traffic_and_mismatches_appear_with_user_text_escaped(
    lake: Path, tmp_path: Path, client: Client, user: Any
) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(
        orjson.dumps(
            {
                "ts": "2026-03-01T10:00:00Z",
                "request_id": "<script>alert(1)</script>",
                "model": "gpt-4o",
                "prompt": "Where is the nearest pharmacy? I need some medicine for a cold.",
                "usage": {"prompt_tokens": 500},
            }
        )
        + b"\n"
    )
    run_requests([str(path)], progress=io.StringIO())
    client.force_login(user)

    response = client.get("/tokens/")

    rows = response.context["traffic_rows"]
    assert [(r["language"], r["reported_tokens"], r["reported_pct"]) for r in rows] == [
        ("en", 500, 100.0)
    ]
    assert response.context["mismatched"] == 1
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in response.content
    assert b"<script>alert(1)" not in response.content
    figure = client.get("/tokens/charts/traffic.json").json()
    assert [trace["x"] for trace in figure["data"]] == [["English"]] * 3


def test_the_paste_box_posts_with_the_csrf_cookie(lake: Path, user: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get("/tokens/")
    token = client.cookies["csrftoken"].value
    body = json.dumps({"text": "I love strawberry", "encodings": ["o200k_base"], "pieces": True})

    refused = client.post("/api/tokens/count", body, content_type="application/json")
    accepted = client.post(
        "/api/tokens/count", body, content_type="application/json", headers={"X-CSRFToken": token}
    )

    assert refused.status_code == 403
    assert accepted.status_code == 200
    pieces = accepted.json()["pieces"]["o200k_base"]
    assert pieces == [
        {"text": "I", "ids": [40]},
        {"text": " love", "ids": [3047]},
        {"text": " strawberry", "ids": [101830]},
    ]


def _csv(client: Client, url: str) -> list[list[str]]:
    response: Any = client.get(url)
    assert response.status_code == 200, url
    assert response["Content-Type"].startswith("text/csv")
    body = b"".join(response.streaming_content).decode()
    return list(csv.reader(io.StringIO(body)))


def test_the_tax_table_downloads_as_csv_with_every_encodings_figures(
    lake: Path, client: Client, user: Any
) -> None:
    client.force_login(user)
    page = client.get("/tokens/").content.decode()
    assert 'href="/tokens/?format=csv&amp;table=tax"' in page

    header, *rows = _csv(client, "/tokens/?format=csv&table=tax")

    assert header == [
        "language", "name", "samples", "chars", "gpt2_tokens", "gpt2_tax",
        "cl100k_base_tokens", "cl100k_base_tax", "o200k_base_tokens", "o200k_base_tax",
    ]  # fmt: skip
    assert len(rows) == 24
    tamil = next(row for row in rows if row[0] == "ta")
    assert (tamil[1], tamil[2]) == ("Tamil", "12")
    for name, column in (("gpt2", 5), ("cl100k_base", 7), ("o200k_base", 9)):
        assert float(tamil[column]) == _shipped_tax("ta", name), name
    # The shipped Tamil sentences' tokens, counted by tiktoken here.
    enc = tiktoken.get_encoding("o200k_base")
    texts = [
        json.loads(line)["text"]
        for path in PARALLEL_DIR.glob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["language"] == "ta"
    ]
    assert int(tamil[8]) == sum(len(enc.encode(text)) for text in texts)
    assert int(tamil[3]) == sum(len(text) for text in texts)
    assert client.get("/tokens/?format=csv&table=nope").status_code == 404


def test_traffic_and_mismatches_download_as_csv(
    lake: Path, tmp_path: Path, client: Client, user: Any
) -> None:
    prompt = "Where is the nearest pharmacy? I need some medicine for a cold."
    path = tmp_path / "requests.jsonl"
    path.write_bytes(
        orjson.dumps(
            {
                "ts": "2026-03-01T10:00:00Z",
                "request_id": "=HYPERLINK(1)",
                "model": "gpt-4o",
                "prompt": prompt,
                "usage": {"prompt_tokens": 500},
            }
        )
        + b"\n"
    )
    run_requests([str(path)], progress=io.StringIO())
    client.force_login(user)

    header, *rows = _csv(client, "/tokens/?format=csv&table=traffic")
    assert len(rows) == 1
    line = dict(zip(header, rows[0], strict=True))
    assert (line["language"], line["name"], line["requests"]) == ("en", "English", "1")
    assert (line["share_of_requests"], line["chars"]) == ("1.0", str(len(prompt)))
    assert (line["reported_requests"], line["reported_tokens"]) == ("1", "500")
    assert line["reported_share_of_tokens"] == "1.0"

    header, *rows = _csv(client, "/tokens/?format=csv&table=mismatches")
    assert header[:4] == ["request_id", "ts", "model", "encoding"]
    assert len(rows) == 1
    mismatch = dict(zip(header, rows[0], strict=True))
    assert mismatch["request_id"] == "'=HYPERLINK(1)"  # a formula, defused
    assert (mismatch["model"], mismatch["reported_prompt_tokens"]) == ("gpt-4o", "500")
    assert mismatch["ts"].startswith("2026-03-01T10:00:00")
