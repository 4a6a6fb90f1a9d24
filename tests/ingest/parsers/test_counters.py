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
    deltas, starts, resets = compute_deltas(
        keys, [4.0, 0.5, 3.0], [None, None, None], [True, False, True], previous
    )
    assert deltas == [4.0, None, 2.0]
    assert starts == [None, None, None]
    assert resets == 1
    assert previous == {("a", "{}"): (4.0, None), ("b", "{}"): (3.0, None)}


def test_a_start_time_that_moves_backwards_is_no_reset() -> None:
    # 5 -> 9 with the start time 100 -> 90: the value grew, so the increase is 4
    assert counter_increase(9.0, 90.0, (5.0, 100.0)) == (4.0, False)
    # ... but a value that drops is a reset whatever the start time says
    assert counter_increase(3.0, 90.0, (5.0, 100.0)) == (3.0, True)


def test_a_start_time_that_flips_back_and_forth_resets_once() -> None:
    # multiprocess vLLM: start times 100, 90, 100, 110 with values 5, 7, 8, 9. Only 110 is
    # newer than any seen before: increases 2 (7 - 5), 1 (8 - 7), 9 (reset: the new value).
    key = ("c_total", "{}")
    state: CounterState = {key: (5.0, 100.0)}
    got = [
        compute_deltas([key], [v], [c], [True], state)
        for v, c in ((7.0, 90.0), (8.0, 100.0), (9.0, 110.0))
    ]
    assert [g[0][0] for g in got] == [2.0, 1.0, 9.0]
    assert [g[2] for g in got] == [0, 0, 1]
    # the stored start time is the newest seen: 100, 100, 110
    assert [g[1][0] for g in got] == [100.0, 100.0, 110.0]
