"""analytics/tokens_api.py and ingest/requests_api.py through Django's test client."""

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
