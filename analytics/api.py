"""Runs endpoints of the JSON API (see ../shared/contract/api.md)."""

from ninja import Router

router = Router()
