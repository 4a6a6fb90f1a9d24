"""Token counts and token pieces under tiktoken encodings.

Counting is batched through `Encoding.encode_ordinary_batch` (tiktoken's Rust core on a
thread pool) so that ingest costs no more than tiktoken itself. Text is never treated as
containing special tokens: "<|endoftext|>" in a prompt is counted as the ordinary text
it is, as the providers' own counters do for user content.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass

import tiktoken

from analytics.tokens.vocabularies import get_encoding

# tiktoken's default is 8; more threads than cores only adds switching.
COUNT_THREADS = max(1, min(8, os.cpu_count() or 1))


# Texts are counted in slices of about this many characters: only lengths are kept, so a
# slice's token lists are freed before the next is encoded (a 32 MB batch would otherwise
# hold ~8M Python ints at once).
SLICE_CHARS = 1 << 20


def count_tokens(
    texts: Sequence[str | None], encoding: str, *, num_threads: int = COUNT_THREADS
) -> list[int | None]:
    """Token count of each text under `encoding`; None stays None, "" counts 0."""
    enc = get_encoding(encoding)
    present = [text for text in texts if text]
    lengths: list[int] = []
    start, size = 0, 0
    for end, text in enumerate(present, start=1):
        size += len(text)
        if size >= SLICE_CHARS or end == len(present):
            encoded = enc.encode_ordinary_batch(present[start:end], num_threads=num_threads)
            lengths.extend(len(tokens) for tokens in encoded)
            start, size = end, 0
    found = iter(lengths)
    return [None if text is None else (next(found) if text else 0) for text in texts]


def count_text(text: str, encodings: Sequence[str]) -> dict[str, int]:
    """One text under several encodings."""
    return {name: len(get_encoding(name).encode_ordinary(text)) for name in encodings}


@dataclass(frozen=True)
class TokenPiece:
    """The smallest run of tokens that decodes to whole characters: one token usually,
    several when a character's UTF-8 bytes are split across tokens (common in Tamil)."""

    text: str
    ids: tuple[int, ...]


def split_tokens(text: str, encoding: str) -> list[TokenPiece]:
    """The text cut where the encoding cuts it, for display."""
    enc = get_encoding(encoding)
    pieces: list[TokenPiece] = []
    pending_ids: list[int] = []
    pending_bytes = b""
    for token in enc.encode_ordinary(text):
        pending_ids.append(token)
        pending_bytes += enc.decode_single_token_bytes(token)
        try:
            decoded = pending_bytes.decode("utf-8")
        except UnicodeDecodeError:
            continue  # the token ends inside a character: join it with the next ones
        pieces.append(TokenPiece(decoded, tuple(pending_ids)))
        pending_ids, pending_bytes = [], b""
    return pieces


@functools.lru_cache(maxsize=1024)
def encoding_for_model(model: str | None) -> str | None:
    """The encoding the provider counts this model's tokens with, when tiktoken knows the
    model (OpenAI's); None for others (a Llama on vLLM has its own tokenizer)."""
    if not model:
        return None
    name = model.rsplit("/", 1)[-1]  # "openai/gpt-4o" as gateways write it
    try:
        return tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None
