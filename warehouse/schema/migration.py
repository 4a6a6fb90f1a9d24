"""What one versioned schema change is: the type every topic's migrations are made of.

It stands alone, importing nothing of the warehouse, so that the topics' migration lists
(warehouse/schema/<topic>.py) and what applies them (warehouse/migrations.py) import it,
and the connection (warehouse/lake.py) and the schema never import each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    """One versioned schema change; topics keep theirs in warehouse/schema/<topic>.py."""

    version: int
    name: str
    statements: tuple[str, ...]
