"""How much of the bridge one caller may hold at once, and the errors past those bounds.

Every resource a token can make the bridge keep — pending approvals, running jobs, MCP
sessions, console sessions, event subscriptions — has a bound per token (keyed on
``AgentToken.id``, so re-spelling or re-naming does not multiply it) and a bound for the
whole node. Past the token's bound the caller gets ``RATE_LIMITED`` (429, retryable,
``details: {reason, limit, scope: "token"}``); past the node's, ``OVERLOADED`` (503,
retryable, ``scope: "node"``). Other callers keep their share: a narrow token cannot
fill the node on its own. The numbers, and why each is what it is, are in
docs/configuration.md, "Per-caller bounds".
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from bridge.errors import BridgeError, OverloadedError, RateLimitedError

# An agent waits on a handful of confirmations at most; a person reviews them one by one.
PENDING_APPROVALS_PER_TOKEN = 10
PENDING_APPROVALS = 200
# Running (queued or in flight) background jobs.
JOBS_PER_TOKEN = 16
JOBS = 256
# Open MCP streamable-HTTP sessions, and how long an idle one is kept (the SDK keeps
# 10,000 for 30 minutes: one token could hold them all).
MCP_SESSIONS_PER_TOKEN = 8
MCP_SESSIONS = 256
MCP_SESSION_IDLE_S = 300.0
# Signed-in console browsers.
CONSOLE_SESSIONS_PER_TOKEN = 4
CONSOLE_SESSIONS = 256
# Open /v1/events and /v1/calls/ws subscriptions.
SUBSCRIPTIONS_PER_TOKEN = 8
SUBSCRIPTIONS = 512
# Tool calls running at once (every face: HTTP, sockets, MCP, voice, mesh, jobs). A rate
# limit bounds calls per minute; this bounds slow ones held open together, which a token
# without a rate limit could otherwise pile up against the API's 4,096 connections.
CALLS_IN_FLIGHT_PER_TOKEN = 64
CALLS_IN_FLIGHT = 2048
# Automation rules a token made (each holds a token, a database row and a check on every
# event); holders of automations:manage keep only the node's bound.
RULES_PER_TOKEN = 50
RULES = 2000


@dataclass(frozen=True, slots=True)
class Bound:
    """One resource's per-token and per-node bounds."""

    resource: str
    per_token: int
    total: int

    def check(self, owners: Iterable[Hashable], owner: Hashable) -> None:
        """Raise unless one more of the resource fits for ``owner``.

        ``owners`` lists the owner of every unit held now (one entry per unit).
        """
        held = list(owners)
        mine = sum(1 for o in held if o == owner)
        if mine >= self.per_token:
            raise self.token_error()
        if len(held) >= self.total:
            raise self.node_error()

    def token_error(self) -> BridgeError:
        """Return the error for a token at its bound."""
        return RateLimitedError(
            f"this token already holds {self.per_token} {self.resource}, its limit; "
            "finish or close one first",
            {"reason": self.resource.replace(" ", "_"), "limit": self.per_token, "scope": "token"},
        )

    def node_error(self) -> BridgeError:
        """Return the error for the node at its bound."""
        return OverloadedError(
            f"this node already holds {self.total} {self.resource}, its limit; try again shortly",
            {"reason": self.resource.replace(" ", "_"), "limit": self.total, "scope": "node"},
        )


APPROVALS_BOUND = Bound("pending approvals", PENDING_APPROVALS_PER_TOKEN, PENDING_APPROVALS)
JOBS_BOUND = Bound("running jobs", JOBS_PER_TOKEN, JOBS)
MCP_BOUND = Bound("mcp sessions", MCP_SESSIONS_PER_TOKEN, MCP_SESSIONS)
CONSOLE_BOUND = Bound("console sessions", CONSOLE_SESSIONS_PER_TOKEN, CONSOLE_SESSIONS)
RULES_BOUND = Bound("automation rules", RULES_PER_TOKEN, RULES)
SUBSCRIPTIONS_BOUND = Bound("event subscriptions", SUBSCRIPTIONS_PER_TOKEN, SUBSCRIPTIONS)
IN_FLIGHT_BOUND = Bound("calls in flight", CALLS_IN_FLIGHT_PER_TOKEN, CALLS_IN_FLIGHT)


class InFlight:
    """Counts of a bounded resource held now per owner, in O(1) per take and release."""

    def __init__(self, bound: Bound) -> None:
        self.bound = bound
        self._held: dict[Hashable, int] = {}
        self.total = 0

    def take(self, owner: Hashable) -> None:
        """Hold one unit for ``owner``; raise past the bounds."""
        mine = self._held.get(owner, 0)
        if mine >= self.bound.per_token:
            raise self.bound.token_error()
        if self.total >= self.bound.total:
            raise self.bound.node_error()
        self._held[owner] = mine + 1
        self.total += 1

    def release(self, owner: Hashable) -> None:
        """Give one unit of ``owner``'s back."""
        mine = self._held.get(owner, 0)
        if mine <= 0:
            return
        self.total -= 1
        if mine == 1:
            del self._held[owner]
        else:
            self._held[owner] = mine - 1

    def held(self, owner: Hashable) -> int:
        """Return how many units ``owner`` holds."""
        return self._held.get(owner, 0)


class Seats:
    """Units of one bounded resource held now, each by its owner (a token id)."""

    def __init__(self, bound: Bound) -> None:
        self.bound = bound
        self._held: dict[int, Hashable] = {}
        self._next = 0

    def take(self, owner: Hashable) -> int:
        """Hold one unit for ``owner`` and return its seat; raise past the bounds."""
        self.bound.check(self._held.values(), owner)
        self._next += 1
        self._held[self._next] = owner
        return self._next

    def release(self, seat: int) -> None:
        """Give a unit back (idempotent)."""
        self._held.pop(seat, None)

    def held(self, owner: Hashable | None = None) -> int:
        """Return how many units are held (by ``owner`` when given)."""
        return sum(1 for o in self._held.values() if owner is None or o == owner)
