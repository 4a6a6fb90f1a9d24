"""analytics/tokens/vocabularies.py: the official vocabularies, verified and offline."""

import hashlib
from pathlib import Path

import pytest
import requests
import tiktoken
import tiktoken.load
import tiktoken.registry

from analytics.tokens import vocabularies
from analytics.tokens.vocabularies import (
    CL100K_BASE,
    ENCODING_FILES,
    O200K_BASE,
    R50K_BASE,
    VocabularyError,
    VocabularyFile,
    configured_encodings,
    get_encoding,
    install,
)


def _no_network(*args: object, **kwargs: object) -> bytes:
    raise AssertionError("tried to download a vocabulary")


def test_every_encoding_loads_with_the_network_blocked(
    tmp_path: Path, settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(tiktoken.load, "read_file", _no_network)
    monkeypatch.setattr(requests, "get", _no_network)
    monkeypatch.setattr(vocabularies, "_installed", set())
    # Forget what this process loaded before, so each encoding is built from files now.
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        monkeypatch.delitem(tiktoken.registry.ENCODINGS, name, raising=False)

    counts = {
        name: len(get_encoding(name).encode_ordinary("The weather is nice today."))
        for name in ("gpt2", "cl100k_base", "o200k_base")
    }

    assert counts == {"gpt2": 6, "cl100k_base": 6, "o200k_base": 6}
    assert get_encoding("o200k_base").encode_ordinary("I love strawberry") == [40, 3047, 101830]
    assert get_encoding("gpt2").encode_ordinary(" SolidGoldMagikarp") == [43453]
    cached = sorted(p.name for p in (tmp_path / "tiktoken").iterdir())
    wanted = {f for name in ("gpt2", "cl100k_base", "o200k_base") for f in ENCODING_FILES[name]}
    assert cached == sorted(hashlib.sha1(f.url.encode()).hexdigest() for f in wanted)  # noqa: S324


def test_each_installed_file_has_the_hash_tiktoken_publishes(tmp_path: Path) -> None:
    written = install((CL100K_BASE, O200K_BASE, R50K_BASE), tmp_path)

    digests = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in written}
    assert digests == {
        CL100K_BASE.cache_name: "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        O200K_BASE.cache_name: "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        R50K_BASE.cache_name: "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    }


def test_a_packaged_file_that_does_not_match_its_hash_is_refused(tmp_path: Path) -> None:
    tampered = VocabularyFile(CL100K_BASE.url, CL100K_BASE.sha256, lambda: b"IQ== 0\n")

    with pytest.raises(VocabularyError, match="tiktoken publishes 223921b7"):
        install((tampered,), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_tampered_cached_file_is_replaced_by_the_verified_one(tmp_path: Path) -> None:
    (tmp_path / R50K_BASE.cache_name).write_bytes(b"IQ== 0\n")

    written = install((R50K_BASE,), tmp_path)

    assert written == [tmp_path / R50K_BASE.cache_name]
    assert hashlib.sha256(written[0].read_bytes()).hexdigest() == R50K_BASE.sha256


def test_an_encoding_no_package_ships_is_an_error() -> None:
    with pytest.raises(VocabularyError, match="unknown encoding 'p50k_base'"):
        get_encoding("p50k_base")


def test_configured_encodings_must_all_be_available(settings: object) -> None:
    settings.FLEETSCOPE_TOKEN_ENCODINGS = ["o200k_base", "cl100k_base", "o200k_base"]  # type: ignore[attr-defined]
    assert configured_encodings() == ("o200k_base", "cl100k_base")

    settings.FLEETSCOPE_TOKEN_ENCODINGS = ["o200k_base", "llama3"]  # type: ignore[attr-defined]
    with pytest.raises(VocabularyError, match="names llama3"):
        configured_encodings()


def test_tiktoken_itself_finds_the_files_after_one_load() -> None:
    get_encoding("cl100k_base")

    assert tiktoken.get_encoding("cl100k_base").encode_ordinary("1234567") == [4513, 10961, 22]
