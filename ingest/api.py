"""Ingest endpoints of the JSON API."""

from ninja import Router

router = Router()
