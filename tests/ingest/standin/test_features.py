"""The stand-in's switchable features: what a draft and a connector transfer count."""

import pytest

from ingest.standin.features import Features
from ingest.standin.simulation import EngineConfig


def test_each_draft_yields_its_accepted_tokens_and_one_bonus_token() -> None:
    features = Features(EngineConfig(spec_tokens=2, spec_acceptance=0.5), seed=1)
    features.decoded(300.0)
    spec = features.spec
    assert spec is not None
    rate = spec.accepted_per_pos[0] / spec.drafts
    assert spec.accepted_per_pos[1] / spec.drafts == pytest.approx(rate * rate)
    assert spec.drafts * (1 + rate + rate * rate) == pytest.approx(300.0)
    assert spec.draft_tokens == pytest.approx(2 * spec.drafts)


def test_a_connector_transfer_moves_the_kv_of_the_tokens_it_found() -> None:
    features = Features(EngineConfig(kv_connector=True, external_hit_fraction=0.5), seed=2)
    loads = [features.external_hits(1000) for _ in range(200)]
    found = [tokens for tokens, _ in loads if tokens]
    assert all(0 < tokens <= 500 for tokens in found)
    connector = features.connector
    assert connector is not None
    assert connector.external_queries == 200 * 1000
    assert connector.external_hits == sum(found)
    assert features.bytes_transferred.total == sum(found) * 2 * 32 * 8 * 128 * 2
    assert sum(features.xfer_time.counts) == len(found)
    # a transfer takes its fixed 4 ms plus the bytes over the link's 20 GB/s, +-
    for tokens, seconds in loads:
        if tokens:
            wire_s = tokens * 131072 / 20e9
            assert 0.004 + 0.9 * wire_s <= seconds <= 0.004 + 1.4 * wire_s
    assert Features(EngineConfig(), seed=2).external_hits(1000) == (0, 0.0)
