"""Which OTLP sources Fleetscope reads, in the order their mappers are asked: importing
this module registers each source's mapper with ingest/parsers/otlp.py. A record no
mapper takes is counted as ignored (docs/otlp.md)."""

from ingest.parsers import otlp_codex, otlp_metrics
from ingest.parsers.otlp import map_request

# isort: split
# Last of the logs and traces mappers: it takes any span of a GenAI operation.
from ingest.parsers import otlp_genai

__all__ = ["map_request", "otlp_codex", "otlp_genai", "otlp_metrics"]
