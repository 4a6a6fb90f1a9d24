"""Prometheus text exposition -> typed samples, going by `# TYPE`, never by name suffix.

Pure: no I/O, no Django. Parsing is prometheus_client's own parser; anything it cannot
read raises ExpositionError with a one-line reason (it is shown on the instance page).
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


class ExpositionError(ValueError):
    """The body is not the Prometheus text format, or breaks the model it must fit."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One exposed sample. `family` is the parser's family name (counters lose `_total`
    there, never in `name`); `kind` is the declared type (`unknown` when undeclared)."""

    family: str
    kind: str
    name: str
    labels: dict[str, str]
    value: float
    help: str


def one_line(text: str, limit: int = 200) -> str:
    """A reason fit for one table cell: the first line, at most `limit` characters."""
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def parse_exposition(text: str) -> list[Sample]:
    samples: list[Sample] = []
    declared: dict[str, tuple[str, str]] = {}
    try:
        for family in text_string_to_metric_families(text):
            kind, name, doc = family.type, family.name, family.documentation
            if kind not in ("untyped", "unknown"):
                declared[name] = (kind, doc)
            elif family.samples and family.samples[0].name.endswith("_total"):
                # `# TYPE x counter` then `x_total 1` (OpenMetrics naming): the parser
                # leaves the sample untyped, but its TYPE line said counter.
                base = family.samples[0].name[: -len("_total")]
                if declared.get(base, ("", ""))[0] == "counter":
                    name, (kind, doc) = base, declared[base]
            for s in family.samples:
                samples.append(Sample(name, kind, s.name, dict(s.labels), float(s.value), doc))
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        # The parser's messages quote the offending line; keep one line of it.
        detail = one_line(str(exc)) or type(exc).__name__
        raise ExpositionError(f"not the Prometheus text format: {detail}") from None
    return samples
