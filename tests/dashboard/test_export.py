"""Streamed exports (dashboard.export): CSV cells a spreadsheet reads as data, JSONL that
parses back, both in chunks."""

import csv
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, cast

from dashboard.export import csv_chunks, csv_response, jsonl_chunks, jsonl_response
from dashboard.templatetags.fleetscope_export import wants_csv


def test_csv_escapes_formulas_and_writes_plain_values() -> None:
    ts = datetime(2026, 1, 14, 10, tzinfo=UTC)
    rows = [["=HYPERLINK(1)", -3, None, True, ts, 'a,b\n"c"']]
    text = b"".join(csv_chunks(["a", "b", "c", "d", "e", "f"], rows)).decode()
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed == [
        ["a", "b", "c", "d", "e", "f"],
        ["'=HYPERLINK(1)", "-3", "", "true", "2026-01-14T10:00:00+00:00", 'a,b\n"c"'],
    ]


def test_csv_and_jsonl_stream_in_chunks() -> None:
    chunks = list(csv_chunks(["n"], ([i] for i in range(2500))))
    assert len(chunks) == 3
    assert b"".join(chunks).decode().split("\r\n")[1:4] == ["0", "1", "2"]
    records = list(jsonl_chunks({"n": i} for i in range(1001)))
    assert len(records) == 2
    lines = b"".join(records).decode().splitlines()
    assert [json.loads(line)["n"] for line in lines] == list(range(1001))


def test_responses_are_named_attachments() -> None:
    response = csv_response('runs "x".csv', ["n"], [[1]])
    assert response["Content-Disposition"] == 'attachment; filename="runs--x-.csv"'
    assert response["Content-Type"].startswith("text/csv")
    assert b"".join(cast(Iterator[bytes], response.streaming_content)) == b"n\r\n1\r\n"
    assert jsonl_response("e.jsonl", [{"a": 1}])["Content-Type"] == "application/x-ndjson"


def test_the_csv_link_keeps_the_filters_and_drops_the_paging(rf: Any) -> None:
    from django.template import Context, Template

    request = rf.get("/costs/", {"team": "a&b", "cursor": "x", "format": "html"})
    html = Template("{% load fleetscope_export %}{% csv_link 'days' %}").render(
        Context({"request": request})
    )
    assert 'href="/costs/?team=a%26b&amp;format=csv&amp;table=days"' in html
    assert wants_csv(rf.get("/costs/", {"format": "csv", "table": "days"})) == "days"
    assert wants_csv(rf.get("/costs/")) is None
