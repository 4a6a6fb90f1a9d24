"""Celery tasks for the warehouse: thin wrappers (each also a management command)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from analytics import warehouse


@shared_task(name="analytics.maintain_warehouse", ignore_result=True)
def maintain_warehouse(keep_snapshots_days: int = 7) -> dict[str, Any]:
    """Merge small files, expire old snapshots, delete unreferenced files."""
    return warehouse.run_maintenance(keep_snapshots_days=keep_snapshots_days)
