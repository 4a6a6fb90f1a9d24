"""Which OTLP sources Fleetscope reads, in the order their mappers are asked: importing
this module registers each source's mapper with ingest/parsers/otlp.py. A record no
mapper takes is counted as ignored (docs/otlp.md)."""

from ingest.parsers import otlp_metrics

# isort: split
# vLLM's llm_request spans carry gen_ai.* attributes: asked before the GenAI mapper.
from ingest.parsers import otlp_vllm
from ingest.parsers.otlp import map_request

__all__ = ["map_request", "otlp_metrics", "otlp_vllm"]
