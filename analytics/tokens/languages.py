"""Language detection for request prompts: ISO 639-1 codes from py3langid.

py3langid was chosen over lingua-language-detector by measurement (numbers in
pyproject.toml next to its pin): more accurate on short texts in 24 languages, several
times faster and a tenth of the memory. Detection reads only the start of a text: the
language of a prompt is settled within its first sentences, and agent prompts can be
megabytes of code.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from django.conf import settings
from py3langid.langid import MODEL_FILE, LanguageIdentifier

SAMPLE_CHARS = 2000

_lock = threading.Lock()
_identifier: LanguageIdentifier | None = None
_restricted_to: tuple[str, ...] | None = None


def _get_identifier() -> LanguageIdentifier:
    global _identifier, _restricted_to
    wanted = tuple(settings.FLEETSCOPE_DETECT_LANGUAGES)
    with _lock:
        if _identifier is None:
            _identifier = LanguageIdentifier.from_model_file(MODEL_FILE)
        if _restricted_to != wanted:
            # An empty list means all 97 languages the model knows.
            _identifier.set_languages(list(wanted) or None)
            _restricted_to = wanted
        return _identifier


def detect_language(text: str | None) -> str | None:
    """The ISO 639-1 code of the text's language; None when it has no letters to go by."""
    if not text:
        return None
    sample = text[:SAMPLE_CHARS]
    if not any(ch.isalpha() for ch in sample):
        return None
    code, _score = _get_identifier().classify(sample)
    return str(code)


def detect_languages(texts: Sequence[str | None]) -> list[str | None]:
    return [detect_language(text) for text in texts]
