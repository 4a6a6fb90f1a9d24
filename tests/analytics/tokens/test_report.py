"""analytics/tokens/report.py: the answers' rows as the API and the page read them."""

from pathlib import Path

from analytics.tokens.report import (
    Corpus,
    Reported,
    Saving,
    TrafficReport,
    TrafficTaxTable,
    parallel_tax_table,
    tax_table,
    traffic_report,
)
from lib.access import Seen


def test_a_saving_is_what_the_move_takes_off_and_its_fraction() -> None:
    assert Saving.between(10, 4) == Saving(
        tokens_before=10, tokens_after=4, saved_tokens=6, saved_fraction=0.6
    )
    assert Saving.between(0, 0).saved_fraction is None


def test_without_requests_the_traffic_report_is_empty_between_the_configured_ends(
    lake: Path,
) -> None:
    assert traffic_report(None, None, seen=Seen.all()) == TrafficReport(
        encodings=[],
        from_encoding="gpt2",
        to_encoding="o200k_base",
        requests=0,
        languages=[],
        saving=Saving(0, 0, 0, None),
    )
    assert tax_table("cl100k_base", "traffic", seen=Seen.all()) == TrafficTaxTable(
        encoding="cl100k_base", source="traffic", baseline="en", languages=[]
    )


def test_the_shipped_tax_table_rows_are_the_tax_arithmetics() -> None:
    table = parallel_tax_table("o200k_base", Corpus.SHIPPED)

    assert (table.encoding, table.source, table.corpus, table.baseline) == (
        "o200k_base",
        "parallel",
        "shipped",
        "en",
    )
    english = next(row for row in table.languages if row.language == "en")
    assert (english.tax, english.samples, english.texts) == (1.0, 12, 12)


def test_reported_tokens_are_prompt_and_completion() -> None:
    assert Reported(1, 30, 10, 20, 0.4).tokens == 40
