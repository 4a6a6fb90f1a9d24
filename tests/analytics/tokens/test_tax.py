"""analytics/tokens/tax.py: the mean over ids of tokens(language) / tokens(en)."""

from analytics.tokens.tax import LanguageTax, ParallelCount, build_tax_table


def test_the_tax_is_the_mean_of_per_id_ratios_not_the_ratio_of_sums() -> None:
    counts = [
        ParallelCount("s1", "en", chars=26, bytes=26, tokens=6),
        ParallelCount("s2", "en", chars=10, bytes=10, tokens=2),
        ParallelCount("s1", "ta", chars=31, bytes=85, tokens=12),  # 12 / 6 = 2
        ParallelCount("s2", "ta", chars=10, bytes=30, tokens=8),  # 8 / 2 = 4
        ParallelCount("s3", "ta", chars=5, bytes=15, tokens=5),  # no English: not averaged
        ParallelCount("s1", "de", chars=27, bytes=28, tokens=9),  # 9 / 6 = 1.5
        ParallelCount("s9", "ko", chars=8, bytes=20, tokens=4),  # no pair at all
    ]

    table = build_tax_table(counts)

    assert table == [
        LanguageTax("ta", 3, 2, 25, 46, 130, 25 / 46, 25 / 130, 3.0),
        LanguageTax("de", 1, 1, 9, 27, 28, 9 / 27, 9 / 28, 1.5),
        LanguageTax("en", 2, 2, 8, 36, 36, 8 / 36, 8 / 36, 1.0),
        LanguageTax("ko", 1, 0, 4, 8, 20, 0.5, 0.2, None),
    ]


def test_no_baseline_means_no_tax() -> None:
    table = build_tax_table([ParallelCount("s1", "fr", 10, 10, 3)])

    assert [row.tax for row in table] == [None]
