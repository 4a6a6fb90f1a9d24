"""analytics/tokens/api.py and ingest/api.py's /requests through Django's test client."""

from pathlib import Path
from typing import Any

import orjson
import pytest
import tiktoken
from django.test import Client

from analytics.tokens.vocabularies import get_encoding

# Held out from the shipped parallel set: none of these sentences is in it.
HELD_OUT = {
    "en": "The invoice is attached; please pay it by Friday.",
    "ta": "விலைப்பட்டியல் இணைக்கப்பட்டுள்ளது; வெள்ளிக்கிழமைக்குள் செலுத்துங்கள்.",
    "hi": "चालान संलग्न है; कृपया शुक्रवार तक भुगतान करें।",
    "ru": "Счёт прилагается; пожалуйста, оплатите его до пятницы.",  # noqa: RUF001
    "zh": "发票已附上，请在星期五之前付款。",  # noqa: RUF001
    "ja": "請求書を添付しましたので、金曜日までにお支払いください。",
    "ar": "الفاتورة مرفقة؛ يرجى دفعها قبل يوم الجمعة.",
    "es": "La factura está adjunta; por favor, págala antes del viernes.",
    "de": "Die Rechnung liegt bei; bitte bezahle sie bis Freitag.",
}
ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


def _post(client: Client, path: str, body: object, headers: dict[str, str]) -> Any:
    return client.post(path, orjson.dumps(body), content_type="application/json", headers=headers)


@pytest.mark.parametrize("language", sorted(HELD_OUT))
def test_count_matches_tiktoken_and_detects_the_language(
    client: Client, auth_headers: dict[str, str], language: str
) -> None:
    text = HELD_OUT[language]

    response = _post(
        client, "/api/tokens/count", {"text": text, "encodings": ENCODINGS}, auth_headers
    )

    assert response.status_code == 200
    expected = {name: len(tiktoken.get_encoding(name).encode(text)) for name in ENCODINGS}
    assert response.json() == {
        "counts": expected,
        "language": language,
        "chars": len(text),
        "bytes": len(text.encode()),
        "pieces": None,
    }


def test_count_can_return_the_pieces_of_each_encoding(
    client: Client, auth_headers: dict[str, str]
) -> None:
    body = {"text": "How many r's are in strawberry?", "encodings": ["o200k_base"], "pieces": True}

    response = _post(client, "/api/tokens/count", body, auth_headers)

    pieces = response.json()["pieces"]["o200k_base"]
    assert [p["text"] for p in pieces] == [
        "How",
        " many",
        " r",
        "'s",
        " are",
        " in",
        " strawberry",
        "?",
    ]
    assert pieces[6]["ids"] == [101830]


def test_count_refuses_an_unknown_encoding(client: Client, auth_headers: dict[str, str]) -> None:
    response = _post(
        client, "/api/tokens/count", {"text": "x", "encodings": ["p50k_base"]}, auth_headers
    )

    assert response.status_code == 422
    assert "p50k_base" in response.json()["detail"]


def test_every_tokens_endpoint_needs_authentication(client: Client, db: None) -> None:
    assert (
        client.post("/api/tokens/count", b"{}", content_type="application/json").status_code == 401
    )
    assert client.get("/api/tokens/tax").status_code == 401
    assert client.get("/api/tokens/traffic").status_code == 401
    assert (
        client.post("/api/ingest/requests", b"", content_type="application/x-ndjson").status_code
        == 401
    )


def test_tax_of_an_ingested_parallel_set_is_the_mean_of_per_id_ratios(
    lake: Path, tmp_path: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    from io import StringIO

    from ingest.pipelines.parallel import run_parallel

    texts = {
        ("a", "en"): "The weather is nice today.",
        ("a", "ta"): "இன்று வானிலை நன்றாக இருக்கிறது.",
        ("b", "en"): "Where is the station?",
        ("b", "ta"): "நிலையம் எங்கே?",
        ("c", "ta"): "வணக்கம்",  # no English text: not part of the mean
    }
    path = tmp_path / "parallel.jsonl"
    path.write_bytes(
        b"".join(
            orjson.dumps({"id": i, "language": lang, "text": t}) + b"\n"
            for (i, lang), t in texts.items()
        )
    )
    run_parallel([str(path)], progress=StringIO())

    response = client.get(
        "/api/tokens/tax?encoding=cl100k_base&source=parallel", headers=auth_headers
    )

    enc = get_encoding("cl100k_base")
    n = {key: len(enc.encode_ordinary(text)) for key, text in texts.items()}
    expected_tax = (n["a", "ta"] / n["a", "en"] + n["b", "ta"] / n["b", "en"]) / 2
    answer = response.json()
    assert (answer["encoding"], answer["baseline"], answer["corpus"]) == (
        "cl100k_base",
        "en",
        "ingested",
    )
    by_language = {row["language"]: row for row in answer["languages"]}
    assert by_language["ta"]["tax"] == pytest.approx(expected_tax, rel=1e-12)
    assert by_language["ta"]["samples"] == 2
    assert by_language["ta"]["tokens"] == n["a", "ta"] + n["b", "ta"] + n["c", "ta"]
    assert by_language["en"]["tax"] == 1.0
    assert [row["language"] for row in answer["languages"]] == ["ta", "en"]


def test_the_ingest_endpoint_takes_jsonl(
    lake: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    body = (
        orjson.dumps({"ts": "2026-03-01T10:00:00Z", "request_id": "r1", "prompt": "hi"})
        + b"\nnope\n"
    )

    response = client.post(
        "/api/ingest/requests", body, content_type="application/x-ndjson", headers=auth_headers
    )

    assert response.json() == {"accepted": 1, "quarantined": 1, "duplicates": 0}


def _ingest_traffic(tmp_path: Path) -> dict[str, list[str]]:
    from io import StringIO

    from ingest.pipelines.requests import run_requests

    texts = {
        "en": ["The weather is nice today.", "Where is the nearest pharmacy?"],
        "ta": ["இன்று வானிலை நன்றாக இருக்கிறது."],
    }
    path = tmp_path / "requests.jsonl"
    lines = [
        orjson.dumps(
            {"ts": 1772359200 + i, "request_id": f"{lang}-{i}", "prompt": t, "language": lang}
        )
        for lang, items in texts.items()
        for i, t in enumerate(items)
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    run_requests([str(path)], progress=StringIO())
    return texts


def _n(text: str, encoding: str) -> int:
    return len(tiktoken.get_encoding(encoding).encode(text))


def test_traffic_shows_tokens_per_language_and_what_a_new_encoding_saves(
    lake: Path, tmp_path: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    texts = _ingest_traffic(tmp_path)

    answer = client.get(
        "/api/tokens/traffic?from_encoding=gpt2&to_encoding=o200k_base", headers=auth_headers
    ).json()

    tokens = {
        (lang, enc): sum(_n(t, enc) for t in items)
        for lang, items in texts.items()
        for enc in ENCODINGS
    }
    assert (answer["encodings"], answer["from_encoding"], answer["to_encoding"]) == (
        ENCODINGS,
        "gpt2",
        "o200k_base",
    )
    assert answer["requests"] == 3
    tamil = next(row for row in answer["languages"] if row["language"] == "ta")
    assert tamil["requests"] == 1
    assert tamil["share_of_requests"] == pytest.approx(1 / 3)
    assert tamil["encodings"]["o200k_base"]["tokens"] == tokens["ta", "o200k_base"]
    assert tamil["encodings"]["o200k_base"]["share_of_tokens"] == pytest.approx(
        tokens["ta", "o200k_base"] / (tokens["ta", "o200k_base"] + tokens["en", "o200k_base"])
    )
    assert tamil["encodings"]["gpt2"]["tokens_per_char"] == pytest.approx(
        tokens["ta", "gpt2"] / len(texts["ta"][0])
    )
    assert tamil["saving"] == {
        "tokens_before": tokens["ta", "gpt2"],
        "tokens_after": tokens["ta", "o200k_base"],
        "saved_tokens": tokens["ta", "gpt2"] - tokens["ta", "o200k_base"],
        "saved_fraction": pytest.approx(1 - tokens["ta", "o200k_base"] / tokens["ta", "gpt2"]),
    }
    assert tamil["reported"] == {
        "requests": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cached_tokens": 0,
        "share_of_tokens": None,
    }
    before = tokens["ta", "gpt2"] + tokens["en", "gpt2"]
    after = tokens["ta", "o200k_base"] + tokens["en", "o200k_base"]
    assert answer["saving"]["saved_tokens"] == before - after


def test_the_traffic_tax_compares_tokens_per_character_with_english(
    lake: Path, tmp_path: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    texts = _ingest_traffic(tmp_path)

    answer = client.get(
        "/api/tokens/tax?encoding=cl100k_base&source=traffic", headers=auth_headers
    ).json()

    def per_char(lang: str) -> float:
        items = texts[lang]
        return sum(_n(t, "cl100k_base") for t in items) / sum(len(t) for t in items)

    assert (answer["encoding"], answer["source"], answer["baseline"]) == (
        "cl100k_base",
        "traffic",
        "en",
    )
    rows = {row["language"]: row for row in answer["languages"]}
    assert [row["language"] for row in answer["languages"]] == ["ta", "en"]
    assert rows["ta"]["samples"] == 1 and rows["en"]["samples"] == 2
    assert rows["ta"]["tokens_per_char"] == pytest.approx(per_char("ta"))
    assert rows["ta"]["tokens_per_byte"] == pytest.approx(
        _n(texts["ta"][0], "cl100k_base") / len(texts["ta"][0].encode())
    )
    assert rows["ta"]["tokens_per_char_vs_baseline"] == pytest.approx(
        per_char("ta") / per_char("en")
    )
    assert rows["ta"]["tax"] is None


def test_before_any_parallel_texts_the_tax_uses_the_shipped_set(
    lake: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    answer = client.get("/api/tokens/tax", headers=auth_headers).json()

    assert (answer["encoding"], answer["corpus"]) == ("o200k_base", "shipped")
    assert len(answer["languages"]) == 24
    assert {row["samples"] for row in answer["languages"]} == {12}


@pytest.mark.parametrize(
    "query",
    ["encoding=p50k_base", "source=somewhere", "corpus=mine", "source=traffic&start=yesterday"],
)
def test_bad_tax_parameters_are_422(
    client: Client, auth_headers: dict[str, str], query: str
) -> None:
    assert client.get(f"/api/tokens/tax?{query}", headers=auth_headers).status_code == 422


@pytest.mark.parametrize(
    "path", ["/api/tokens/tax?source=traffic&end=soon", "/api/tokens/traffic?end=soon"]
)
def test_a_bad_window_end_is_one_line_naming_it(
    client: Client, auth_headers: dict[str, str], path: str
) -> None:
    answer = client.get(path, headers=auth_headers)

    assert answer.status_code == 422
    assert answer.json() == {"detail": "end must be an RFC 3339 time, got 'soon'"}


def test_mismatches_list_requests_far_from_our_count(
    lake: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    from ingest.pipelines.requests import ingest_body

    text = "Please summarise this document in one paragraph."
    counted = _n(text, "o200k_base")
    body = orjson.dumps(
        [
            {
                "ts": 1772359200,
                "request_id": "ok",
                "model": "gpt-4o",
                "prompt": text,
                "usage": {"prompt_tokens": counted + 3},
            },
            {
                "ts": 1772359260,
                "request_id": "far",
                "model": "gpt-4o",
                "prompt": text,
                "usage": {"prompt_tokens": counted + 400},
            },
        ]
    )
    ingest_body(body, "api:test")

    answer = client.get("/api/tokens/mismatches", headers=auth_headers).json()

    assert (answer["compared"], answer["mismatched"]) == (2, 1)
    assert answer["requests"] == [
        {
            "request_id": "far",
            "ts": "2026-03-01T10:01:00Z",
            "model": "gpt-4o",
            "encoding": "o200k_base",
            "reported_prompt_tokens": counted + 400,
            "counted_prompt_tokens": counted,
            "reported_completion_tokens": None,
            "counted_completion_tokens": None,
        }
    ]


def test_encodings_lists_what_loads_offline_and_what_is_counted(
    client: Client, auth_headers: dict[str, str]
) -> None:
    assert client.get("/api/tokens/encodings", headers=auth_headers).json() == {
        "available": ["gpt2", "r50k_base", "cl100k_base", "o200k_base", "o200k_harmony"],
        "configured": ENCODINGS,
    }


def test_traffic_can_be_limited_to_a_time_range(
    lake: Path, tmp_path: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    _ingest_traffic(tmp_path)  # ts 1772359200 (en-0, ta-0) and 1772359201 (en-1)

    answer = client.get(
        "/api/tokens/traffic?start=2026-03-01T10:00:01Z&end=2026-03-01T11:00:00Z",
        headers=auth_headers,
    ).json()

    assert answer["requests"] == 1
    assert [(row["language"], row["requests"]) for row in answer["languages"]] == [("en", 1)]
    assert answer["languages"][0]["encodings"]["o200k_base"]["tokens"] == _n(
        "Where is the nearest pharmacy?", "o200k_base"
    )


def test_traffic_keeps_what_providers_reported_beside_our_counts(
    lake: Path, client: Client, auth_headers: dict[str, str]
) -> None:
    from ingest.pipelines.requests import ingest_body

    body = orjson.dumps(
        [
            {
                "ts": 1772359200,
                "request_id": "a",
                "language": "de",
                "prompt": "Guten Tag",
                "usage": {"prompt_tokens": 30, "completion_tokens": 10, "cached_tokens": 20},
            },
            {
                "ts": 1772359200,
                "request_id": "b",
                "language": "en",
                "prompt": "Good day",
                "usage": {"prompt_tokens": 50, "completion_tokens": 10},
            },
            {"ts": 1772359200, "request_id": "c", "language": "en", "prompt": "Hi"},
        ]
    )
    ingest_body(body, "api:test")

    answer = client.get("/api/tokens/traffic", headers=auth_headers).json()

    reported = {row["language"]: row["reported"] for row in answer["languages"]}
    assert reported == {
        "de": {
            "requests": 1,
            "prompt_tokens": 30,
            "completion_tokens": 10,
            "cached_tokens": 20,
            "share_of_tokens": pytest.approx(40 / 100),
        },
        "en": {
            "requests": 1,
            "prompt_tokens": 50,
            "completion_tokens": 10,
            "cached_tokens": 0,
            "share_of_tokens": pytest.approx(60 / 100),
        },
    }
