"""analytics/tokens/languages.py: ISO 639-1 codes from py3langid."""

import pytest

from analytics.tokens import languages
from analytics.tokens.languages import detect_language, detect_languages


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Könnten Sie mir bitte die Rechnung bis Freitag schicken?", "de"),
        ("¿Dónde puedo comprar un billete de tren para mañana?", "es"),
        ("Пожалуйста, перезагрузите сервер после обновления.", "ru"),
        ("请把这份文件翻译成英文。", "zh"),
        ("この文書を英語に翻訳してください。", "ja"),
        ("يرجى ترجمة هذا المستند إلى الإنجليزية.", "ar"),
        ("कृपया इस दस्तावेज़ का अंग्रेज़ी में अनुवाद करें।", "hi"),
        ("தயவுசெய்து இந்த ஆவணத்தை ஆங்கிலத்தில் மொழிபெயர்க்கவும்.", "ta"),
    ],
)
def test_it_detects_short_texts(text: str, code: str) -> None:
    assert detect_language(text) == code


def test_text_without_letters_has_no_language() -> None:
    assert detect_languages([None, "", "12 + 30 = 42", "Good morning, everyone."]) == [
        None,
        None,
        None,
        "en",
    ]


def test_dialect_labels_are_reported_as_their_iso_639_1_language() -> None:
    assert languages.to_iso_639_1("arz") == "ar"
    assert languages.to_iso_639_1("yue") == "zh"
    assert languages.to_iso_639_1("fr") == "fr"


def test_the_candidates_can_be_restricted(settings: object) -> None:
    text = "Dzisiaj jest ładna pogoda"
    settings.FLEETSCOPE_DETECT_LANGUAGES = ["en", "de"]  # type: ignore[attr-defined]
    assert detect_language(text) in {"en", "de"}

    settings.FLEETSCOPE_DETECT_LANGUAGES = []  # type: ignore[attr-defined]
    assert detect_language(text) == "pl"


def test_a_language_the_detector_does_not_know_is_a_configuration_error(
    settings: object,
) -> None:
    settings.FLEETSCOPE_DETECT_LANGUAGES = ["en", "xx"]  # type: ignore[attr-defined]

    with pytest.raises(ValueError, match="does not know"):
        detect_language("Good morning")
    settings.FLEETSCOPE_DETECT_LANGUAGES = []  # type: ignore[attr-defined]
    assert detect_language("Good morning, everyone.") == "en"
