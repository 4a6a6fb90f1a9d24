"""The OTLP bench's bodies: 512 Claude Code records each, every batch a session of its
own, still a valid ExportLogsServiceRequest once its session is written in; and the
bare decode counts what it decodes."""

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from bench.bench_otlp import PLACEHOLDER, bare_decode, session_of, template


def _attrs(record: object) -> dict[str, object]:
    return {
        kv.key: getattr(kv.value, kv.value.WhichOneof("value"))
        for kv in record.attributes  # type: ignore[attr-defined]
    }


def test_a_batch_is_512_claude_code_records_of_one_session() -> None:
    body = template().replace(PLACEHOLDER, session_of(3, 41))
    request = ExportLogsServiceRequest.FromString(body)
    [group] = request.resource_logs
    [scope] = group.scope_logs
    records = scope.log_records
    assert len(records) == 512
    first, second = _attrs(records[0]), _attrs(records[1])
    assert (first["event.name"], second["event.name"]) == ("api_request", "tool_result")
    assert records[0].body.string_value == "claude_code.api_request"
    assert first["session.id"] == "00000003-bench-session-00000041"
    assert {_attrs(r)["session.id"] for r in records} == {"00000003-bench-session-00000041"}
    assert [_attrs(r)["event.sequence"] for r in records[:3]] == [0, 1, 2]
    assert (first["input_tokens"], first["output_tokens"], first["cost_usd"]) == (1200, 340, 0.0412)
    assert (second["tool_name"], second["success"], second["duration_ms"]) == ("Bash", "true", 813)


def test_the_bare_decode_counts_records() -> None:
    # Two bodies of 512 records, decoded in turn for a tenth of a second: a whole number
    # of passes, 1,024 records each, over at most about that time.
    rate = bare_decode([template(), template()], seconds=0.1)
    assert rate > 1024 / 0.5
