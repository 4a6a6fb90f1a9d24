"""One scrape attempt between collecting it and loading it: what every step of a serving
load passes along (the spool, the Prometheus import, the load's starting state, the load).

Owns only the record; it imports no pipeline, so scrape_baselines.py and vllm_scrape.py
both name it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ingest.parsers.vllm import ModelledScrape


@dataclass
class PendingScrape:
    """One scrape attempt, collected but not yet loaded: `scrape` is None when it failed."""

    instance: str
    ts: datetime
    source: str = "scrape"
    scrape: ModelledScrape | None = None
    error: str | None = None
    duration_ms: float | None = None

    @property
    def up(self) -> bool:
        return self.scrape is not None
