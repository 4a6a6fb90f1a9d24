"""People and teams, per UTC day and over a window: what GET /api/people and the People
pages show.

Owns putting analytics.people.queries' figures together with the cost of each person's
calls, which analytics.costs prices (`priced_usage`: the logged cost_usd where the call
logged one, else the price table's, as the runs and costs pages price; never priced
here). Commits are the `commit` events plus Claude Code's commit.count metric of sessions
that logged no commit event (queries says how). Edit acceptance is accepted over accepted
plus rejected edits, None before any decision. Writes no SQL.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time, timedelta

from analytics.costs.queries import Segment
from analytics.costs.report import priced_usage
from analytics.people import queries
from analytics.people.queries import Filter, Key
from lib.access import Seen
from lib.errors import NotFoundError
from lib.window import TimeRange


@dataclass
class Figures:
    """One group's figures (a day of a person, a person, a team)."""

    sessions: int = 0
    active_seconds: float = 0.0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    commits: int = 0
    lines_added: int = 0
    lines_removed: int = 0
    edits_accepted: int = 0
    edits_rejected: int = 0

    @property
    def active_minutes(self) -> float:
        return self.active_seconds / 60

    @property
    def edit_acceptance(self) -> float | None:
        decided = self.edits_accepted + self.edits_rejected
        return round(self.edits_accepted / decided, 6) if decided else None

    def add(self, other: Figures, *, sessions: bool = True) -> None:
        if sessions:
            self.sessions += other.sessions
        self.active_seconds += other.active_seconds
        self.cost_usd += other.cost_usd
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.commits += other.commits
        self.lines_added += other.lines_added
        self.lines_removed += other.lines_removed
        self.edits_accepted += other.edits_accepted
        self.edits_rejected += other.edits_rejected


@dataclass
class Day(Figures):
    date: str = ""  # YYYY-MM-DD, UTC


@dataclass
class Person(Figures):
    person: str = ""
    team: str | None = None
    days: list[Day] = field(default_factory=list)  # oldest first, days with any figure


@dataclass
class TeamFigures(Figures):
    team: str | None = None
    people: int = 0
    days: list[Day] = field(default_factory=list)


@dataclass(frozen=True)
class People:
    start: datetime | None  # the window read (None: no telemetry of people)
    end: datetime | None
    people: list[Person]  # most expensive first, then by name
    teams: list[TeamFigures]  # by name, no team last


@dataclass(frozen=True)
class PersonDetail:
    person: Person
    sessions: list[queries.PersonSession]


def _window(window: TimeRange, seen: Seen) -> tuple[datetime, datetime] | None:
    """The window asked for; an open end is where the seen telemetry starts or ends."""
    if window.start and window.end:
        return window.start, window.end
    found = queries.telemetry_range(seen)
    if found is None:
        return None
    start = window.start or found[0]
    end = window.end or found[1] + timedelta(microseconds=1)
    return (start, end) if start < end else None


def utc_day_segments(start: datetime, end: datetime) -> list[Segment]:
    """[start, end) cut at each UTC midnight, for pricing (costs' Segment)."""
    segments = []
    lo = start.astimezone(UTC)
    while lo < end:
        midnight = datetime.combine(lo.date() + timedelta(days=1), time(), tzinfo=UTC)
        hi = min(midnight, end)
        segments.append(Segment(lo, hi, lo.date(), lo.date()))
        lo = hi
    return segments


def _costs(where: Filter, seen: Seen) -> tuple[dict[Key, float], dict[str, float]]:
    """USD per (day, person, team) and per session, of the calls `where` selects."""
    by_key: dict[Key, float] = defaultdict(float)
    by_session: dict[str, float] = defaultdict(float)
    segments = utc_day_segments(where.start, where.end)
    for row, usd in priced_usage(segments, by_source=False, seen=seen, by_person=True):
        if row.person is None or (where.team is not None and row.team != where.team):
            continue
        if where.person is not None and row.person != where.person:
            continue
        by_key[Key(row.utc_day, row.person, row.team)] += usd
        by_session[row.run or ""] += usd
    return by_key, by_session


def _by_key(
    where: Filter, seen: Seen
) -> tuple[dict[Key, Figures], queries.Sessions, dict[str, float]]:
    events = queries.event_figures(where, seen)
    metrics = queries.metric_figures(where, seen)
    sessions = queries.sessions(where, seen)
    costs, by_session = _costs(where, seen)
    answer: dict[Key, Figures] = defaultdict(Figures)
    for key, e in events.items():
        f = answer[key]
        f.input_tokens, f.output_tokens, f.commits = e.input_tokens, e.output_tokens, e.commits
    for key, m in metrics.items():
        f = answer[key]
        f.active_seconds = m.active_seconds
        f.lines_added, f.lines_removed = m.lines_added, m.lines_removed
        f.edits_accepted, f.edits_rejected = m.edits_accepted, m.edits_rejected
        f.commits += m.metric_commits
    for key, count in sessions.per_day.items():
        answer[key].sessions = count
    for key, usd in costs.items():
        answer[key].cost_usd = usd
    return answer, sessions, by_session


def _rounded(figures: Figures) -> None:
    figures.cost_usd = round(figures.cost_usd, 8)
    figures.active_seconds = round(figures.active_seconds, 3)


def _day(key: Key, figures: Figures) -> Day:
    day = Day(date=key.day.isoformat())
    day.add(figures)
    _rounded(day)
    return day


def read_people(window: TimeRange, seen: Seen, team: str | None = None) -> People:
    """Every person and team `seen` covers with telemetry in the window (one team's when
    `team` is given)."""
    bounds = _window(window, seen)
    if bounds is None:
        return People(window.start, window.end, [], [])
    where = Filter(bounds[0], bounds[1], team=team)
    by_key, sessions, _ = _by_key(where, seen)
    people: dict[tuple[str, str | None], Person] = {}
    teams: dict[str | None, TeamFigures] = {}
    team_days: dict[tuple[str | None, str], Day] = {}
    for key in sorted(by_key, key=lambda k: (k.day, k.person, k.team or "")):
        figures = by_key[key]
        person = people.setdefault((key.person, key.team), Person(person=key.person, team=key.team))
        person.add(figures, sessions=False)
        person.days.append(_day(key, figures))
        group = teams.setdefault(key.team, TeamFigures(team=key.team))
        group.add(figures, sessions=False)
        day = team_days.get((key.team, key.day.isoformat()))
        if day is None:
            day = team_days[(key.team, key.day.isoformat())] = Day(date=key.day.isoformat())
            group.days.append(day)
        day.add(figures)
    for (name, team_name), person in people.items():
        person.sessions = sessions.whole.get((name, team_name), 0)
        teams[team_name].sessions += person.sessions
        teams[team_name].people += 1
        _rounded(person)
    for group in teams.values():
        _rounded(group)
        for day in group.days:
            _rounded(day)
    return People(
        start=bounds[0],
        end=bounds[1],
        people=sorted(people.values(), key=lambda p: (-p.cost_usd, p.person, p.team or "")),
        teams=sorted(teams.values(), key=lambda t: (t.team is None, t.team or "")),
    )


def read_person(person: str, window: TimeRange, seen: Seen) -> PersonDetail:
    """One person's figures over the window (all their teams together) and their sessions;
    NotFoundError when `seen` covers no telemetry of theirs."""
    bounds = _window(window, seen)
    where = Filter(bounds[0], bounds[1], person=person) if bounds else None
    listed = queries.person_sessions(where, seen) if where else []
    if where is None or not listed:
        raise NotFoundError(f"no telemetry of person {person!r}")
    by_key, _, by_session = _by_key(where, seen)
    listed = [replace(s, cost_usd=round(by_session.get(s.session, 0.0), 8)) for s in listed]
    total = Person(person=person, team=min((s.team for s in listed if s.team), default=None))
    per_day: dict[str, Day] = {}
    for key in sorted(by_key, key=lambda k: k.day):
        day = per_day.setdefault(key.day.isoformat(), Day(date=key.day.isoformat()))
        day.add(by_key[key])
        total.add(by_key[key], sessions=False)
    total.days = list(per_day.values())
    for day in total.days:
        _rounded(day)
    total.sessions = len(listed)
    _rounded(total)
    return PersonDetail(total, listed)
