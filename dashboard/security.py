"""Security headers on every answer: the Content-Security-Policy, and Secure on the session
and CSRF cookies when the request came over HTTPS (request.is_secure(), which believes a
proxy's X-Forwarded-Proto only when FLEETSCOPE_TRUSTED_PROXIES is set) or always with
FLEETSCOPE_SECURE_COOKIES.

Owns the policy. It must not decide who may see or change what (dashboard/access.py).
Pages load script only from our own static files: no inline script or event handler
(fleetscope.js delegates `data-autosubmit`), no eval.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

# The two <style> elements plotly.js adds, let in by the hash of their content where
# 'unsafe-inline' would let in any injected <style>: its own, created empty and filled
# through the CSSOM (insertRule, which CSP does not govern), and the maplibre stylesheet
# its bundle adds on load (plotly.js 4.1.1's text; tests/dashboard/test_security.py
# hashes it from the installed plotly.min.js, so an upgrade that changes it fails there).
EMPTY_STYLE_HASH = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
MAPLIBRE_STYLE_HASH = "'sha256-ji27qzEtxXZW+7dun6UwjHXJ18e6WAin1VvNtkzIE/o='"
STYLE_SOURCES = f"'self' {EMPTY_STYLE_HASH} {MAPLIBRE_STYLE_HASH}"
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        f"style-src {STYLE_SOURCES}",
        f"style-src-elem {STYLE_SOURCES}",
        # Style attributes: plotly.js writes some with setAttribute, and the cost report's
        # body, shared with its e-mail (which needs them), has them. An attribute styles
        # its own element only, and any url() in it is held to img-src.
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "object-src 'none'",
    ]
)


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        if settings.FLEETSCOPE_SECURE_COOKIES or request.is_secure():
            for name in (settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME):
                if name in response.cookies:
                    response.cookies[name]["secure"] = True
        return response
