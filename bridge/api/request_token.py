"""The verified token a request carries: where auth's middleware puts it, and how routes read it."""

from __future__ import annotations

from aiohttp import web

from bridge.auth.tokens import AgentToken
from bridge.errors import UnauthenticatedError

AGENT_SLOT: web.RequestKey[AgentToken] = web.RequestKey("atmosphere.agent", AgentToken)


def token_of(request: web.Request) -> AgentToken:
    """Return the verified token of ``request``; raise ``UnauthenticatedError`` if none."""
    token = request.get(AGENT_SLOT)
    if not isinstance(token, AgentToken):
        raise UnauthenticatedError("a bearer token is required", {"reason": "missing"})
    return token
