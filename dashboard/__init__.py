"""Fleetscope's Django project; importing it makes the Celery app available to tasks."""

from dashboard.celery import app as celery_app

__all__ = ["celery_app"]
