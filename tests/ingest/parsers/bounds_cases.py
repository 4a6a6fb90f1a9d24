"""Values at and beyond the bounds every parser applies (lib/bounds.py), for the parsers'
property tests: good ones each parser must read, bad ones it must reject with a reason.

Each good time comes with the UTC instant it names, computed here from its parts, not by
the parser's own reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from lib.bounds import COUNT_LIMIT, NAME_LENGTH

SAMPLES = 100  # examples per property: enough to meet every case, modest for the suite


@dataclass(frozen=True)
class GoodTime:
    text: str
    utc: datetime


@st.composite
def good_times(draw: st.DrawFn) -> GoodTime:
    """An RFC 3339 time in 1970-2199 (UTC), written in any case, with `T`, `t` or a space,
    `Z`, `z` or an offset within +-23:59, with or without a fraction."""
    utc = draw(st.datetimes(datetime(1970, 1, 2), datetime(2199, 12, 30), timezones=st.just(UTC)))
    minutes = draw(st.integers(-(24 * 60 - 1), 24 * 60 - 1))
    local = utc.astimezone(UTC) + timedelta(minutes=minutes)
    separator = draw(st.sampled_from("Tt "))
    if minutes == 0 and draw(st.booleans()):
        zone = draw(st.sampled_from("Zz"))
    else:
        sign = "-" if minutes < 0 else "+"
        zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    fraction = f".{local.microsecond:06d}" if local.microsecond else ""
    text = f"{local:%Y-%m-%d}{separator}{local:%H:%M:%S}{fraction}{zone}"
    return GoodTime(text, utc)


# Each bad time with the words its reason holds.
BAD_TIMES: list[tuple[str, str]] = [
    ("9999-12-31T23:59:59-05:00", "outside 1970-2199"),
    ("9999-06-01T00:00:00Z", "outside 1970-2199"),
    ("1969-12-31T23:59:59Z", "outside 1970-2199"),
    ("2200-01-01T00:00:00Z", "outside 1970-2199"),
    ("0001-01-01T00:00:00+01:00", "outside 1970-2199"),
    ("2026-01-14T10:00:00+25:00", "offset"),
    ("2026-01-14T10:00:00-24:00", "offset"),
    ("2026-01-14T10:00:00+99:59", "offset"),
    ("2026-01-14T10:00:00", "zone"),
    ("2026-01-14t10:00:00", "zone"),
    ("2026-01-14T24:00:00Z", "RFC 3339"),
    ("2026-02-30T10:00:00Z", "RFC 3339"),
    ("2026-01-14T10:00Z", "RFC 3339"),
    ("yesterday", "RFC 3339"),
]

_NAME_CHARACTERS = st.characters(blacklist_categories=("Cc", "Cs"))
# Short names mostly (they are cheap to draw), and names of exactly the longest length.
good_names = st.text(_NAME_CHARACTERS, min_size=1, max_size=24) | st.text(
    _NAME_CHARACTERS, min_size=NAME_LENGTH, max_size=NAME_LENGTH
)
# Each bad name with the words its reason holds.
bad_names = st.one_of(
    st.just(("", "empty")),
    st.text(
        st.characters(blacklist_categories=("Cc", "Cs")),
        min_size=NAME_LENGTH + 1,
        max_size=NAME_LENGTH + 40,
    ).map(lambda name: (name, "longer than 200")),
    st.tuples(
        st.text(max_size=20),
        st.sampled_from(["\x00", "\x1e", "\x1f", "\n", "\r", "\t", "\x7f", "\x85", "\x9f"]),
        st.text(max_size=20),
    ).map(lambda parts: ("".join(parts), "control character")),
)

good_counts = st.integers(0, COUNT_LIMIT - 1) | st.sampled_from([0, COUNT_LIMIT - 1])
bad_counts = st.one_of(
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, COUNT_LIMIT, 10**30, -1, -(2**63)]),
    st.integers(COUNT_LIMIT, 2**80),
    st.integers(max_value=-1),
)
