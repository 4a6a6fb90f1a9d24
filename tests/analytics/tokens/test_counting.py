"""analytics/tokens/counting.py: batched counts, token pieces, the model's own encoding."""

import pytest
import tiktoken

from analytics.tokens import counting
from analytics.tokens.counting import count_text, count_tokens, encoding_for_model, split_tokens

TEXTS = [
    "The weather is nice today.",
    "இன்று வானிலை நன்றாக இருக்கிறது.",
    "def add(a, b):\n    return a + b\n",
    "今天天气很好。",
    "<|endoftext|> is ordinary text here",
    "🙂 strawberry",
]


@pytest.mark.parametrize("encoding", ["gpt2", "cl100k_base", "o200k_base"])
def test_counts_equal_tiktoken_token_for_token(encoding: str) -> None:
    enc = tiktoken.get_encoding(encoding)

    counted = count_tokens(TEXTS, encoding)

    assert counted == [len(enc.encode(t, disallowed_special=())) for t in TEXTS]


def test_missing_text_stays_missing_and_empty_text_is_zero() -> None:
    assert count_tokens([None, "", "I love strawberry", None], "o200k_base") == [None, 0, 3, None]
    assert count_tokens([None, ""], "o200k_base") == [None, 0]


def test_counts_are_the_same_when_texts_span_several_slices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(counting, "SLICE_CHARS", 40)

    counted = count_tokens([*TEXTS, None, *TEXTS], "cl100k_base")

    enc = tiktoken.get_encoding("cl100k_base")
    single = [len(enc.encode_ordinary(t)) for t in TEXTS]
    assert counted == [*single, None, *single]


def test_the_article_s_numbers() -> None:
    assert count_text("How many r's are in strawberry?", ["o200k_base"]) == {"o200k_base": 8}
    assert count_text("🙂", ["gpt2", "o200k_base"]) == {"gpt2": 2, "o200k_base": 1}


def test_pieces_rebuild_the_text_and_keep_split_characters_whole() -> None:
    text = "இன்று weather"

    pieces = split_tokens(text, "gpt2")

    assert "".join(p.text for p in pieces) == text
    assert [t for p in pieces for t in p.ids] == tiktoken.get_encoding("gpt2").encode(text)
    assert pieces[0].text == "இ" and len(pieces[0].ids) == 3  # one character, three tokens
    assert split_tokens("🙂", "gpt2")[0].ids == tuple(tiktoken.get_encoding("gpt2").encode("🙂"))
    assert len(split_tokens("🙂", "gpt2")) == 1  # two tokens, one character: one piece


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("openai/gpt-4o-mini", "o200k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("Qwen/Qwen3-0.6B", None),
        (None, None),
    ],
)
def test_the_encoding_a_provider_counts_a_model_with(
    model: str | None, encoding: str | None
) -> None:
    assert encoding_for_model(model) == encoding
