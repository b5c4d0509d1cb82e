"""The headers every console response carries: a strict Content-Security-Policy and kin."""

from __future__ import annotations

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def headers() -> dict[str, str]:
    """Return fresh response headers: CSP, no sniffing, no framing, no caching."""
    return {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
    }
