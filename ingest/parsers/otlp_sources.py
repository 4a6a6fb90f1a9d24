"""Which OTLP sources Fleetscope reads, and in which order their mappers are asked: the
first that takes a record maps it (ingest/parsers/otlp.py); a record none takes is counted
as ignored (docs/otlp.md). The order is the decision: Claude Code's own records first (by
service.name or their `claude_code.` names); vLLM's `llm_request` spans carry
gen_ai.* attributes, so vLLM is asked before the GenAI conventions, which take any span of
a GenAI operation and come last."""

from google.protobuf.message import Message

from ingest.parsers import (
    otlp,
    otlp_claude_code,
    otlp_codex,
    otlp_genai,
    otlp_metrics,
    otlp_vllm,
)
from ingest.parsers.otlp import Mapper, OtlpBatch, Sender
from ingest.sources.otlp import Signal

MAPPERS: dict[Signal, tuple[Mapper, ...]] = {
    Signal.LOGS: (otlp_claude_code.map_log, otlp_codex.map_codex),
    Signal.TRACES: (otlp_claude_code.map_span, otlp_vllm.map_span, otlp_genai.map_genai),
    Signal.METRICS: (otlp_metrics.map_metric,),
}


def map_request(signal: Signal, request: Message, sender: Sender) -> OtlpBatch:
    """Every record of the request through the signal's mappers, in order."""
    return otlp.map_request(signal, request, sender, MAPPERS[signal])
