"""Counter increases with Prometheus reset semantics.

Pure. A counter that drops, or whose `_created` (start) time is newer than the one seen
before, was reset (the server restarted): the increase since the previous sample is then
the new value itself, never a negative number, exactly as Prometheus `rate()`/`increase()`
treat resets. A start time that moves backwards is no restart (Prometheus treats only a
newer start time as one); the value alone decides then, and the newest start time seen is
the one kept.
"""

from __future__ import annotations

from collections.abc import Sequence

# (value, created) of a series' previous sample, keyed by (sample name, labels JSON).
CounterState = dict[tuple[str, str], tuple[float, float | None]]


def counter_increase(
    value: float, created: float | None, previous: tuple[float, float | None] | None
) -> tuple[float | None, bool]:
    """(increase since `previous`, whether a reset happened); None when there is no
    previous sample (a series' first sample says nothing about what came before)."""
    if previous is None:
        return None, False
    prev_value, prev_created = previous
    restarted = created is not None and prev_created is not None and created > prev_created
    if restarted or value < prev_value:
        return value, True
    return value - prev_value, False


def newest_start(
    created: float | None, previous: tuple[float, float | None] | None
) -> float | None:
    """The start time to remember: the newer of this sample's and the previous one's."""
    prev_created = previous[1] if previous is not None else None
    if created is None or prev_created is None:
        return created if created is not None else prev_created
    return max(created, prev_created)


def compute_deltas(
    keys: Sequence[tuple[str, str]],
    values: Sequence[float],
    createds: Sequence[float | None],
    cumulative: Sequence[bool],
    previous: CounterState,
) -> tuple[list[float | None], list[float | None], int]:
    """Per-row increases (None for gauges and first samples), per-row start times to
    store (a counter's newest seen, so that a reader of the stored rows remembers what this
    one does), and how many series reset. `previous` is updated in place."""
    deltas: list[float | None] = []
    starts: list[float | None] = []
    resets = 0
    for key, value, created, is_counter in zip(keys, values, createds, cumulative, strict=True):
        if not is_counter:
            deltas.append(None)
            starts.append(created)
            continue
        before = previous.get(key)
        delta, reset = counter_increase(value, created, before)
        resets += reset
        deltas.append(delta)
        start = newest_start(created, before)
        starts.append(start)
        previous[key] = (value, start)
    return deltas, starts, resets
