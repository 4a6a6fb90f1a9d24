from ingest.parsers.counters import CounterState, compute_deltas, counter_increase


def test_a_first_sample_has_no_increase() -> None:
    assert counter_increase(5.0, None, None) == (None, False)


def test_an_increase_is_the_difference() -> None:
    assert counter_increase(8.0, 100.0, (5.0, 100.0)) == (3.0, False)


def test_a_drop_is_a_reset_and_the_increase_is_the_new_value() -> None:
    assert counter_increase(2.0, None, (5.0, None)) == (2.0, True)


def test_a_changed_created_time_is_a_reset_even_when_the_value_grew() -> None:
    assert counter_increase(9.0, 200.0, (5.0, 100.0)) == (9.0, True)


def test_deltas_skip_gauges_and_count_resets() -> None:
    keys = [("a", "{}"), ("g", "{}"), ("b", "{}")]
    previous: CounterState = {("a", "{}"): (10.0, None), ("b", "{}"): (1.0, None)}
    deltas, resets = compute_deltas(
        keys, [4.0, 0.5, 3.0], [None, None, None], [True, False, True], previous
    )
    assert deltas == [4.0, None, 2.0]
    assert resets == 1
