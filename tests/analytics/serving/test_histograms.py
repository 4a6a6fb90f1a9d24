import math

from hypothesis import given, settings
from hypothesis import strategies as st

from analytics.serving.histograms import bucket_quantile, finite_quantile

INF = math.inf


def test_it_interpolates_linearly_inside_the_bucket_holding_the_rank() -> None:
    # counts 1, 4, 7, 8: rank 0.75 * 8 = 6 lies in (0.5, 1]: 0.5 + 0.5 * (6 - 4) / (7 - 4)
    assert bucket_quantile(0.75, [(0.1, 1), (0.5, 4), (1.0, 7), (INF, 8)]) == 0.5 + 0.5 * 2 / 3


def test_the_lowest_bucket_interpolates_from_zero() -> None:
    # rank 0.05 * 8 = 0.4 of 1 observation in (0, 0.1]: 0.1 * 0.4
    assert math.isclose(bucket_quantile(0.05, [(0.1, 1), (0.5, 4), (INF, 8)]), 0.04)


def test_a_lowest_bucket_bound_at_or_below_zero_is_returned_as_is() -> None:
    assert bucket_quantile(0.1, [(-1.0, 5), (1.0, 6), (INF, 10)]) == -1.0


def test_a_rank_in_the_inf_bucket_answers_the_second_highest_bound() -> None:
    assert bucket_quantile(0.95, [(0.1, 1), (0.5, 4), (1.0, 7), (INF, 8)]) == 1.0


def test_it_is_nan_without_an_inf_bucket_or_observations_or_two_buckets() -> None:
    assert math.isnan(bucket_quantile(0.5, [(0.1, 1), (0.5, 4)]))
    assert math.isnan(bucket_quantile(0.5, [(0.1, 0), (INF, 0)]))
    assert math.isnan(bucket_quantile(0.5, [(INF, 3)]))
    assert math.isnan(bucket_quantile(math.nan, [(0.1, 1), (INF, 2)]))


def test_quantiles_outside_zero_to_one_are_infinite() -> None:
    assert bucket_quantile(-0.1, [(0.1, 1), (INF, 2)]) == -INF
    assert bucket_quantile(1.1, [(0.1, 1), (INF, 2)]) == INF


def test_an_answer_carries_none_where_the_quantile_is_not_finite() -> None:
    assert finite_quantile(0.95, [(0.1, 1), (0.5, 4), (1.0, 7), (INF, 8)]) == 1.0
    assert finite_quantile(0.5, [(0.1, 1), (0.5, 4)]) is None  # NaN: no +Inf bucket
    assert finite_quantile(1.1, [(0.1, 1), (INF, 2)]) is None  # +Inf


def test_unsorted_duplicate_and_non_monotonic_buckets_are_repaired() -> None:
    # (0.5, 2) and (0.5, 2) merge into 4; (1.0, 3) is forced up to 4: counts 1, 4, 4, 10
    # rank 0.5 * 10 = 5 lies in (1.0, +Inf] -> second-highest bound 1.0
    buckets = [(INF, 10), (0.5, 2), (1.0, 3), (0.1, 1), (0.5, 2)]
    assert bucket_quantile(0.5, buckets) == 1.0
    # rank 0.2 * 10 = 2 lies in (0.1, 0.5]: 0.1 + 0.4 * (2 - 1) / (4 - 1)
    assert math.isclose(bucket_quantile(0.2, buckets), 0.1 + 0.4 / 3)


def test_a_rank_on_a_bucket_boundary_takes_that_buckets_upper_bound() -> None:
    # rank 0.5 * 8 = 4 equals the count at 0.5: 0.1 + 0.4 * (4 - 1) / (4 - 1) = 0.5
    assert bucket_quantile(0.5, [(0.1, 1), (0.5, 4), (1.0, 7), (INF, 8)]) == 0.5


def test_a_zero_bucket_increase_after_a_non_zero_lower_bucket_is_forced_monotonic() -> None:
    # After a restart scraped without `_created`, the increases can read 5, 0, 7, 8: the 0
    # is raised to 5 (Prometheus divides by it, gets +Inf, and forces it monotonic).
    # counts 5, 5, 7, 8: rank 0.5 * 8 = 4 lies in (0, 0.1]: 0.1 * 4 / 5
    buckets = [(0.1, 5.0), (0.5, 0.0), (1.0, 7.0), (INF, 8.0)]
    assert math.isclose(bucket_quantile(0.5, buckets), 0.08)
    # rank 0.7 * 8 = 5.6 skips the forced (0.1, 0.5] and lies in (0.5, 1]: 0.5 + 0.5 * 0.6 / 2
    assert math.isclose(bucket_quantile(0.7, buckets), 0.65)


def test_a_zero_count_after_zero_counts_and_an_empty_lowest_bucket_do_not_raise() -> None:
    assert math.isnan(bucket_quantile(0.0, [(0.1, 0.0), (0.5, 0.0), (INF, 3.0)]))
    # rank 0 in an empty lowest bucket: 0 + 0.1 * (0 / 0) is NaN in Go
    assert math.isnan(bucket_quantile(0.0, [(0.1, 0.0), (INF, 3.0)]))


def test_differences_of_float_error_are_smoothed_in_either_direction() -> None:
    # 4 * (1 + 1e-13) is almost 4 (relative 1e-12): it takes 4, so the counts read 4, 4,
    # 6, 8 and rank (0.5 + 1e-14) * 8 = 4 + 8e-14 lies in (0.5, 1]:
    # 0.5 + 0.5 * 8e-14 / 2. Unsmoothed it would fall in (0.1, 0.5] near 0.18.
    q = 0.5 + 1e-14
    got = bucket_quantile(q, [(0.1, 4.0), (0.5, 4.0 * (1 + 1e-13)), (1.0, 6.0), (INF, 8.0)])
    assert math.isclose(got, 0.5 + 0.5 * (q * 8 - 4) / 2)
    # smoothing compares with the last accepted count: 4 -> 4 - 4e-13 -> 4 all read 4
    buckets = [(0.1, 4.0), (0.5, 4.0 - 4e-13), (1.0, 4.0), (INF, 8.0)]
    assert bucket_quantile(0.5, buckets) == 0.1


def _go_bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """An independent transcription of Prometheus' BucketQuantile, with Go's float
    division written out, to hold the product's version against."""

    def div(a: float, b: float) -> float:
        if b != 0:
            return a / b
        return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1, b)

    if q != q:
        return math.nan
    if q < 0 or q > 1:
        return -INF if q < 0 else INF
    bs = sorted(buckets, key=lambda x: x[0])
    if not bs or bs[-1][0] != INF:
        return math.nan
    merged: list[list[float]] = []
    for ub, c in bs:
        if merged and merged[-1][0] == ub:
            merged[-1][1] += c
        else:
            merged.append([ub, c])
    prev = merged[0][1]
    for m in merged[1:]:
        cur = m[1]
        if cur == prev:
            continue
        s, d = abs(prev) + abs(cur), abs(prev - cur)
        tiny = 2.2250738585072014e-308
        if prev == 0 or cur == 0 or s < tiny:
            close = d < 1e-12 * tiny
        else:
            close = d / s < 1e-12
        if close or cur < prev:
            m[1] = prev
        else:
            prev = cur
    if len(merged) < 2 or merged[-1][1] == 0:
        return math.nan
    rank = q * merged[-1][1]
    b = next((i for i, m in enumerate(merged[:-1]) if m[1] >= rank), len(merged) - 1)
    if b == len(merged) - 1:
        return merged[-2][0]
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start, count = 0.0, merged[b][1]
    if b > 0:
        start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    return start + (merged[b][0] - start) * div(rank, count)


_bounds = st.lists(
    st.floats(min_value=-5, max_value=50, allow_nan=False, allow_infinity=False),
    min_size=0,
    max_size=8,
)
_counts = st.one_of(
    st.integers(min_value=0, max_value=20).map(float),
    st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.just(0.0),
)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(
    q=st.floats(min_value=0, max_value=1),
    bounds=_bounds,
    counts=st.lists(_counts, min_size=9, max_size=9),
    ordered=st.booleans(),
)
def test_no_bucket_set_raises_and_every_answer_lies_within_the_bounds(
    q: float, bounds: list[float], counts: list[float], ordered: bool
) -> None:
    # whole and fractional counts, runs of zeros, cumulative or not (non-monotonic input)
    les = [*bounds, INF]
    cs = counts[: len(les)]
    if ordered:
        cs = [sum(cs[: i + 1]) for i in range(len(cs))]
    buckets = list(zip(les, cs, strict=True))
    got = bucket_quantile(q, buckets)
    want = _go_bucket_quantile(q, buckets)
    assert (math.isnan(got) and math.isnan(want)) or got == want
    if not math.isnan(got):
        finite = sorted(set(bounds))
        assert min(0.0, finite[0]) <= got <= finite[-1]
