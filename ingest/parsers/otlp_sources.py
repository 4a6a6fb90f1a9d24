"""Which OTLP sources Fleetscope reads, in the order their mappers are asked: importing
this module registers each source's mapper with ingest/parsers/otlp.py. A record no
mapper takes is counted as ignored (docs/otlp.md)."""

import ingest.parsers.otlp_claude_code  # noqa: F401  (registers its mappers; asked first)
from ingest.parsers import otlp_metrics
from ingest.parsers.otlp import map_request

__all__ = ["map_request", "otlp_metrics"]
