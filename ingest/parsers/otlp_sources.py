"""Which OTLP sources Fleetscope reads, in the order their mappers are asked: importing
this module registers each source's mapper with ingest/parsers/otlp.py. A record no
mapper takes is counted as ignored (docs/otlp.md)."""

from ingest.parsers import otlp_codex, otlp_metrics
from ingest.parsers.otlp import map_request

__all__ = ["map_request", "otlp_codex", "otlp_metrics"]
