"""Which team owns each alerting record, and so who may list and change it: the querysets
and checks the alerts API and pages go through (lib.access.Seen decides; this module
only asks it).

- Rules and channels carry their `team`; a record of no team is seen only by all-teams
  users (Seen.sees_team(None) is False for everyone else).
- Alert states, transitions and notifications are their rule's.
- A silence is its rule's: a silence of one rule belongs to that rule's team; a silence
  of every rule (no rule) holds back every team's notifications, so it belongs to no team
  and only all-teams users see, add or end one.
- A rule may use the channels of its own team, and team-less channels only when an
  all-teams user sets them (they are invisible to everyone else); a rule of no team uses
  only team-less channels, so no team's channel hears of another team's subjects.
- Creating: the team must be one the user sees (none only for all-teams users); a user who
  is not all-teams and is in exactly one team gets that team when none is named.

Something another team owns is answered as if it did not exist (NotFoundError), so its
existence does not leak. Must not decide membership itself (analytics.access does).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q, QuerySet

from analytics.alerts.models import AlertRule, Channel, Silence
from analytics.costs.models import Team
from lib.access import Seen
from lib.errors import ForbiddenError, NotFoundError, ParameterError


def owned(seen: Seen, team_field: str = "team") -> Q:
    """A filter on `team_field` (a path to a Team foreign key) passing what `seen` sees."""
    if seen.everything:
        return Q()
    return Q(**{f"{team_field}__in": sorted(seen.team_ids)})


def visible_rules(seen: Seen) -> QuerySet[AlertRule]:
    return AlertRule.objects.filter(owned(seen))


def visible_channels(seen: Seen) -> QuerySet[Channel]:
    return Channel.objects.filter(owned(seen))


def visible_silences(seen: Seen) -> QuerySet[Silence]:
    if seen.everything:
        return Silence.objects.all()
    return Silence.objects.filter(owned(seen, "rule__team"))


def rule_of(seen: Seen, rule_id: int) -> AlertRule:
    rule = visible_rules(seen).filter(pk=rule_id).first()
    if rule is None:
        raise NotFoundError(f"unknown rule {rule_id}")
    return rule


def channel_of(seen: Seen, channel_id: int) -> Channel:
    channel = visible_channels(seen).filter(pk=channel_id).first()
    if channel is None:
        raise NotFoundError(f"unknown channel {channel_id}")
    return channel


def choosable_teams(seen: Seen) -> QuerySet[Team]:
    """The teams a user may give a new rule or channel."""
    teams = Team.objects.order_by("name")
    return teams if seen.everything else teams.filter(pk__in=sorted(seen.team_ids))


def default_team(seen: Seen) -> Team | None:
    """The team a new rule or channel gets when none is named: the user's only team (None
    for all-teams users, who may make team-less ones, and for users of several teams)."""
    if seen.everything:
        return None
    teams = list(choosable_teams(seen)[:2])
    return teams[0] if len(teams) == 1 else None


def team_for_new(seen: Seen, name: str | None) -> Team | None:
    """The team named `name` (or the default) once the user may give it; ParameterError
    (422) for a team they may not, or when they must name one."""
    if name:
        team = choosable_teams(seen).filter(name=name).first()
        if team is None:
            raise ParameterError(f"unknown team {name!r} (you may use: {_names(seen)})")
        return team
    if seen.everything:
        return None
    team = default_team(seen)
    if team is None:
        if not seen.team_ids:
            raise ForbiddenError("you are in no team: an admin must add you to one first")
        raise ParameterError(f"name the team this belongs to (one of: {_names(seen)})")
    return team


def _names(seen: Seen) -> str:
    return ", ".join(choosable_teams(seen).values_list("name", flat=True)) or "none"


def may_use_channel(seen: Seen, team: Team | None, channel: Channel) -> bool:
    """Whether a rule of `team`, set by a user who sees `seen`, may notify `channel`."""
    if channel.team_id is None:
        return seen.everything
    return team is not None and channel.team_id == team.pk


def channel_problem(seen: Seen, team: Team | None, channels: Iterable[Channel]) -> str | None:
    """Why a rule of `team` may not use one of `channels` (one line), or None."""
    for channel in channels:
        if not may_use_channel(seen, team, channel):
            owner = channel.team.name if channel.team is not None else "no team"
            whose = f"team {team.name}'s" if team is not None else "team-less"
            return (
                f"channel {channel.name!r} belongs to {owner}: "
                f"a {whose} rule may use only its own team's channels"
            )
    return None


def silence_rule_check(seen: Seen, rule: AlertRule | None) -> None:
    """A silence of every rule needs the all-teams flag (ForbiddenError, 403)."""
    if rule is None and not seen.everything:
        raise ForbiddenError("a silence of every rule needs the all-teams flag; name one rule")
