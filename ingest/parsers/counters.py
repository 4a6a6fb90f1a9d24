"""Counter increases with Prometheus reset semantics.

Pure. A counter that drops, or whose `_created` time changed, was reset (the server
restarted): the increase since the previous sample is then the new value itself, never a
negative number, exactly as Prometheus `rate()`/`increase()` treat resets.
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
    restarted = created is not None and prev_created is not None and created != prev_created
    if restarted or value < prev_value:
        return value, True
    return value - prev_value, False


def compute_deltas(
    keys: Sequence[tuple[str, str]],
    values: Sequence[float],
    createds: Sequence[float | None],
    cumulative: Sequence[bool],
    previous: CounterState,
) -> tuple[list[float | None], int]:
    """Per-row increases (None for gauges and first samples) and how many series reset."""
    deltas: list[float | None] = []
    resets = 0
    for key, value, created, is_counter in zip(keys, values, createds, cumulative, strict=True):
        if not is_counter:
            deltas.append(None)
            continue
        delta, reset = counter_increase(value, created, previous.get(key))
        resets += reset
        deltas.append(delta)
    return deltas, resets
