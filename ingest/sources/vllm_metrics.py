"""Reads a vLLM `/metrics` endpoint: the raw exposition text and nothing else."""

from __future__ import annotations

from lib import http

# The classic text format; vLLM (prometheus_client) answers it by default.
ACCEPT = "text/plain;version=0.0.4;q=1,*/*;q=0.1"


def read_metrics(url: str, *, timeout_s: float) -> str:
    """The body as text; FetchError for HTTP failures or a body that is not UTF-8."""
    response = http.get(url, timeout_s=timeout_s, accept=ACCEPT)
    try:
        return response.body.decode("utf-8")
    except UnicodeDecodeError:
        raise http.FetchError("body is not UTF-8 text") from None
