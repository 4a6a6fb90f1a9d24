import math

from analytics.histograms import bucket_quantile

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
