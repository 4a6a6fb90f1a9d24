"""What every alert rule is: the Rule base class (scope, params and threshold read and
checked once, raising RuleError with a one-line reason), the Finding a rule returns per
subject, and the shared ways of reading params and writing spans.

Kept apart from the registry in analytics.alerts.rules: the registry imports each rule
class, and each class imports this module, so neither waits on the other. The kinds and
their params are described in analytics.alerts.rules.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from analytics.alerts.facts import Facts
from analytics.alerts.models import RuleKind
from lib.durations import parse_duration
from lib.errors import ParameterError


class RuleError(ValueError):
    """A rule that cannot be evaluated as written; the message is one line."""


@dataclass(frozen=True)
class Finding:
    subject: str
    active: bool
    value: float | None
    summary: str
    since: datetime | None = None  # when the condition began to hold, if the data says


def format_span(seconds: float) -> str:
    """A span as a summary writes it: `90 s`, `12 min`, `2.5 h`."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Rule(ABC):
    kind: ClassVar[RuleKind]
    subject_noun: ClassVar[str]  # what a subject names: run, instance or team
    scopes: ClassVar[tuple[str, ...]]
    needs_threshold: ClassVar[bool] = True
    known_params: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        threshold: float | None,
        scope: dict[str, Any] | None,
        params: dict[str, Any] | None,
        for_seconds: int = 0,
    ) -> None:
        self.threshold = threshold
        self.scope = dict(scope or {})
        self.params = dict(params or {})
        self.for_seconds = for_seconds
        if len(self.scope) > 1 or any(k not in self.scopes for k in self.scope):
            allowed = ", ".join(f'{{"{k}": ...}}' for k in self.scopes)
            raise RuleError(f"{self.kind} scope must be {{}} or one of {allowed}")
        if any(not isinstance(v, str) or not v for v in self.scope.values()):
            raise RuleError("scope values must be non-empty names")
        unknown = sorted(set(self.params) - set(self.known_params))
        if unknown:
            known = ", ".join(self.known_params) or "none"
            raise RuleError(f"{self.kind} does not take params {unknown} (known: {known})")
        if threshold is not None and not math.isfinite(threshold):
            raise RuleError("threshold must be a finite number")
        if self.needs_threshold and threshold is None:
            raise RuleError(f"{self.kind} needs a threshold")
        self.configure()

    @abstractmethod
    def configure(self) -> None:
        """Read and check params (called once by __init__)."""

    def duration(self, name: str, default: str) -> timedelta:
        """A duration param: `90s`, `5m`, `1h`, or a number of seconds."""
        raw = self.params.get(name, default)
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            if not math.isfinite(raw) or raw <= 0:
                raise RuleError(f"params.{name} must be a positive duration, got {raw!r}")
            return timedelta(seconds=raw)
        try:
            return parse_duration(str(raw), name=f"params.{name}")
        except ParameterError as exc:
            raise RuleError(str(exc)) from None

    def number(self, name: str, default: float | None = None) -> float:
        raw = self.params.get(name, default)
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise RuleError(f"params.{name} must be a number, got {raw!r}")
        return float(raw)

    @abstractmethod
    def horizon(self) -> timedelta:
        """How much data before an evaluation time this rule looks at."""

    @abstractmethod
    def evaluate(self, facts: Facts, at: datetime) -> list[Finding]:
        """One finding per watched subject, as of `at`."""
