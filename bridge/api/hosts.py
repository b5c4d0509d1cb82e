"""The Host check: the API and console answer only to their own names (DNS rebinding).

A web page on ``evil.example`` can make its own name resolve to this bridge's address
(DNS rebinding); the browser then treats the bridge as the page's own origin, and the
page's requests reach the API and console with ``Host: evil.example``. Refusing every
``Host`` that is not one of this bridge's names closes that road, and the console's
same-origin test (which compares ``Origin`` with ``Host``) can then trust ``Host``.

Accepted: a request without ``Host`` (HTTP/1.0 tools; browsers always send one); an IP
address literal (a rebound page always carries the attacker's *name*, never an address);
``localhost`` and names under ``.localhost``; this machine's host name and its mDNS
``.local`` name; and every name in ``api.allowed_hosts``. Anything else gets 421 with
``INVALID_REQUEST`` / ``reason: host_not_allowed``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

from aiohttp import web

from bridge.api.http import error_response
from bridge.errors import InvalidRequestError

MISDIRECTED = 421
# Host header values whose answer a policy remembers (a client sends the same one on
# every request); past this many distinct values it starts over.
KNOWN_HOSTS_MAX = 256
KNOWN_HOST_CHARS = 300  # a name (253) with a port; longer values are decided, not kept


def normalise(name: str) -> str:
    """Return ``name`` lower-cased without a trailing dot."""
    return name.strip().lower().rstrip(".")


def host_name(header: str) -> str:
    """Return the name or address of a ``Host`` header value, without port or brackets."""
    value = header.strip()
    if value.startswith("["):
        return normalise(value[1:].split("]", 1)[0])
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return normalise(value)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def own_names() -> frozenset[str]:
    """Return this machine's host name and its mDNS ``.local`` name."""
    name = normalise(socket.gethostname())
    if not name:
        return frozenset()
    short = name.split(".", 1)[0]
    return frozenset({name, short, f"{short}.local"})


class HostPolicy:
    """Which ``Host`` values the API and console answer."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self._names = frozenset(normalise(n) for n in allowed if n.strip()) | own_names()
        self._known: dict[str, bool] = {}

    def allows(self, header: str | None) -> bool:
        """Return whether a request with this ``Host`` header may be served."""
        if header is None:
            return True
        known = self._known.get(header)
        if known is None:
            known = self._decide(header)
            if len(header) > KNOWN_HOST_CHARS:
                return known
            if len(self._known) >= KNOWN_HOSTS_MAX:
                self._known.clear()
            self._known[header] = known
        return known

    def _decide(self, header: str) -> bool:
        if not header.strip():
            return True  # no authority (HTTP/1.0 tools); a browser always names the host
        name = host_name(header)
        if _is_address(name):
            return True
        if name == "localhost" or name.endswith(".localhost"):
            return True
        return name in self._names


HOST_POLICY_KEY: web.AppKey[HostPolicy] = web.AppKey("host_policy", HostPolicy)


@web.middleware
async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Refuse a request whose ``Host`` is not one of this bridge's names."""
    policy = request.app[HOST_POLICY_KEY]
    header = request.headers.get("Host")
    if not policy.allows(header):
        shown = host_name(header or "")[:253]
        return error_response(
            InvalidRequestError(
                f"this bridge does not answer to the host name '{shown}'; add it to "
                "api.allowed_hosts if it is this bridge's name",
                {"reason": "host_not_allowed", "host": shown},
            ),
            status=MISDIRECTED,
        )
    response: web.StreamResponse = await handler(request)
    return response
