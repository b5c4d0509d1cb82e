"""Calls between nodes: the server side of a forwarded call and the invoker's executor.

``RemoteCalls.handle_invoke`` checks a peer's forwarded call (envelope and request
signatures, loops, hop budget, the delegation it carries, revocations) and runs it
through the local pipeline authorized by the delegated grant, never by a bearer token;
``execute`` routes a call for a peer's tool with a delegation of the verified token;
``offers`` says which nodes can take it, at addresses that proved their key.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from bridge.auth.permissions import PermissionChecker
from bridge.auth.tokens import AgentToken, TokenVerifier, parse_token
from bridge.errors import (
    BridgeError,
    HopLimitExceededError,
    InvalidRequestError,
    UnauthenticatedError,
)
from bridge.invocation.invoker import RemoteOutcome
from bridge.invocation.messages import ExecutionInfo, ToolRequest, ToolResponse
from bridge.mesh.delegation import DELEGATION_TTL_S, Grant, check_delegation
from bridge.mesh.envelope import NonceCache
from bridge.mesh.router import Offer, RoutedResult, Router, error_of

if TYPE_CHECKING:
    from bridge.mesh.discovery import Discovery
    from bridge.mesh.envelope import EnvelopeVerifier
    from bridge.mesh.gossip import GossipState
    from bridge.mesh.node_id import NodeIdentity
    from bridge.mesh.proof import PeerProofs
    from bridge.mesh.trust import TrustPolicy
    from bridge.tools.context import CallContext
    from bridge.tools.definition import ToolDefinition
    from bridge.tools.registry import RegisteredTool, ToolRegistry

MAX_RELAYS = 2
# A dangerous tool runs for a delegated caller only while this node heard from the
# token issuer's node (and so has its revocations) within this many gossip intervals.
FRESH_INTERVALS = 3.0
_CHECKER = PermissionChecker()


class RunLocal(Protocol):
    """Run a call through this node's pipeline (``Invoker.invoke``)."""

    def __call__(
        self, request: ToolRequest, *, token: AgentToken | None = None
    ) -> Awaitable[ToolResponse]:
        """Return the call's response; ``token`` is the already verified authority."""
        ...


class RemoteCalls:
    """Forwarded calls in, routed calls out, for one node."""

    def __init__(
        self,
        *,
        identity: NodeIdentity,
        gossip: GossipState,
        verifier: EnvelopeVerifier,
        discovery: Callable[[], Discovery | None],
        trust: TrustPolicy,
        registry: ToolRegistry,
        proofs: PeerProofs,
        tokens: Callable[[], TokenVerifier | None],
        heard: Callable[[str], float | None],
        gossip_interval_s: float,
        configured: tuple[str, ...] = (),
        site_url: Callable[[str], str | None] = lambda _node_id: None,
    ) -> None:
        self.identity = identity
        self.gossip = gossip
        self.verifier = verifier
        self._discovery = discovery
        self.trust = trust
        self.registry = registry
        self.proofs = proofs
        self._tokens = tokens
        self._heard = heard
        self.fresh_s = max(gossip_interval_s * FRESH_INTERVALS, 1.0)
        self.configured = configured
        self._site_url = site_url
        self.router: Router | None = None
        self._seen = NonceCache(float(DELEGATION_TTL_S) + verifier.max_skew_s)
        # Grants of the forwarded calls running here, by request id (a relay delegates on).
        self._inbound: dict[str, Grant] = {}

    def use_router(self, router: Router) -> None:
        """Route calls with ``router`` (built with ``offers``)."""
        self.router = router

    @property
    def discovery(self) -> Discovery | None:
        """Return the running discovery, if any."""
        return self._discovery()

    def _router(self) -> Router:
        assert self.router is not None  # noqa: S101 - set right after construction
        return self.router

    async def handle_invoke(self, envelope: Any, run: RunLocal) -> dict[str, Any]:
        """Check and run a call forwarded by a peer; return its response and where it ran.

        Raises ``UnauthenticatedError`` (envelope or request signature, untrusted
        forwarder, a delegation that does not hold for this call, a revoked token, a
        replayed request id, a dangerous tool while the issuer's node was not heard
        from) and ``HopLimitExceededError`` (loop, no budget). The call is authorized
        against the delegated grant only: no bearer token travels between nodes.
        """
        sender, body = self.verifier.open(envelope, "tool_invoke")
        request, grant = self._admit(sender.node_id, sender.public_key, body)
        started = time.monotonic()
        self._inbound[request.id] = grant
        try:
            response = await run(request, token=grant.as_token())
        finally:
            self._inbound.pop(request.id, None)
        # The response says where the handler ran (here, or further on for a relay);
        # a call refused before execution ran nowhere, so report this node.
        path = request.routing.path
        execution = response.execution or ExecutionInfo(
            node_id=self.identity.node_id,
            hops=len(path),
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            path=(*path, self.identity.node_id),
        )
        return {"response": response.to_json(), "execution": execution.to_json()}

    def _admit(
        self, sender_id: str, sender_key: str, body: dict[str, Any]
    ) -> tuple[ToolRequest, Grant]:
        request = ToolRequest.from_json(body.get("request"))
        if request.signer != sender_key or not request.signature_valid():
            raise UnauthenticatedError("forwarded request is not signed by the forwarding node")
        if request.token is not None:
            raise UnauthenticatedError(
                "a forwarded call must not carry a bearer token", {"reason": "bearer_forwarded"}
            )
        me = self.identity.node_id
        path = request.routing.path
        if me in path:
            raise HopLimitExceededError(
                "routing loop: request already passed this node", {"path": list(path)}
            )
        if not path or path[-1] != sender_id:
            raise InvalidRequestError("forwarded request's path must end with the forwarder")
        if request.routing.hop_budget < 0:
            raise HopLimitExceededError("request has no hop budget left", {"path": list(path)})
        tokens = self._tokens()
        if tokens is None:
            raise UnauthenticatedError("this node verifies no tokens: it takes no delegated calls")
        grant = check_delegation(
            body.get("delegation"),
            request=request,
            sender_id=sender_id,
            own_id=me,
            trust=self.trust,
            skew_s=self.verifier.max_skew_s,
        )
        if grant.issuer not in tokens.trusted_issuers:
            raise UnauthenticatedError(
                "the delegated token's issuer is not trusted here", {"reason": "unknown_issuer"}
            )
        if grant.token_id in tokens.revocations:
            raise UnauthenticatedError(
                "the delegated token has been revoked",
                {"reason": "revoked", "token_id": grant.token_id},
            )
        self._check_fresh(request, grant)
        if not self._seen.add(request.id, time.time()):
            raise UnauthenticatedError(
                "this request id was already delegated here (replay)", {"reason": "replay"}
            )
        return request, grant

    def _check_fresh(self, request: ToolRequest, grant: Grant) -> None:
        """Refuse a dangerous tool unless the issuer's node was heard from lately."""
        try:
            defn = self.registry.resolve(request.tool).definition
        except BridgeError:
            return  # the pipeline answers TOOL_NOT_FOUND
        if not defn.dangerous or grant.issuer == self.identity.public_key_b64:
            return
        issuer_node = next(
            (
                e.announcement.node_id
                for e in self.gossip.entries()
                if e.announcement.public_key == grant.issuer
            ),
            None,
        )
        heard = self._heard(issuer_node) if issuer_node else None
        if heard is None or time.monotonic() - heard > self.fresh_s:
            raise UnauthenticatedError(
                f"'{defn.identity}' is dangerous and this node has not heard from the "
                f"token issuer's node within {self.fresh_s:g} s (revocations may be missing)",
                {"reason": "revocations_stale", "issuer_node": issuer_node},
            )

    def offers(self, identity: str) -> list[Offer]:
        """Return the nodes offering ``identity`` (1 hop) and up to two relays (2 hops).

        A relay is a trusted peer that does not offer the tool itself but holds the
        same announcements and can reach the offering node when this one cannot.
        """
        direct: dict[str, tuple[str, ...]] = {}
        if self.discovery is not None:
            for peer in self.discovery.peers():  # several adverts may claim one id
                direct[peer.node_id] = (*direct.get(peer.node_id, ()), *peer.urls())
        offers: list[Offer] = []
        others: list[Offer] = []
        for entry in self.gossip.entries():
            ann = entry.announcement
            if ann.node_id == self.identity.node_id:
                continue
            # Proven addresses first, then hints (mDNS), then announced endpoints on a
            # host where this peer proved its key: each is proved again before use.
            proven = self.proofs.urls_of(ann.node_id)
            hints = direct.get(ann.node_id, ())
            bound = self.proofs.bound_endpoints(ann.node_id, ann.endpoints)
            urls = tuple(dict.fromkeys((*proven, *hints, *bound)))
            # A node heard over the site road (sites.py) is reached there after its LAN
            # addresses; one known only there is not a relay (a call leaves the site
            # only for a tool that lives elsewhere).
            site = self._site_url(ann.node_id)
            if not urls and site is None:  # not proven anywhere yet: maybe a configured peer
                urls = tuple(u for u in self.configured if self.proofs.proven(u) is None)
            if any(t.identity == identity and t.available for t in ann.tools()):
                offers.append(
                    Offer(node_id=ann.node_id, hops=1, urls=_plus(urls, site), name=ann.node_name)
                )
            elif urls:
                others.append(Offer(node_id=ann.node_id, hops=2, urls=urls, relay=True))
        if offers:
            down = self._router().down()
            relays = sorted(others, key=lambda o: (o.node_id in down, o.node_id))
            offers.extend(relays[:MAX_RELAYS])
        return offers

    async def execute(
        self,
        tool: RegisteredTool,
        params: dict[str, Any],
        context: CallContext,
        request: ToolRequest,
    ) -> RemoteOutcome:
        """Run a peer's tool for the invoker (``RemoteExecutor``); return its answer.

        The executing node's error comes back in the outcome with where it ran; a
        routing failure raises its ``BridgeError``.
        """
        grant = self.grant_for(tool, params, context, request)
        result = await self.execute_remote(
            tool,
            _with_params(request, params),
            grant=grant,
            allowed_nodes=context.allowed_nodes,
            max_hops=context.max_hops,
        )
        return RemoteOutcome(
            result=result.response.result,
            error=error_of(result.response),
            execution=result.execution,
        )

    def grant_for(
        self,
        tool: RegisteredTool,
        params: dict[str, Any],
        context: CallContext,
        request: ToolRequest,
    ) -> Grant:
        """Return the authority this node delegates for the call: this call's permissions only.

        The caller's token was verified here (``context.token``), or the call came
        delegated (a relay): its grant is passed on, never widened. Raises
        ``UnauthenticatedError`` when neither is there.
        """
        needed = _CHECKER.check(context.permissions, tool.definition.requires.permissions, params)
        inbound = self._inbound.get(request.id)
        if inbound is not None:
            return replace(inbound, permissions=needed)
        raw = context.token or request.token
        if not raw:
            raise UnauthenticatedError("no verified caller to delegate for this call")
        token, _body = parse_token(raw)  # verified by the invoker moments ago
        return Grant.of_token(token, needed)

    async def execute_remote(
        self,
        tool: RegisteredTool,
        request: ToolRequest,
        *,
        grant: Grant,
        allowed_nodes: tuple[str, ...] = (),
        max_hops: int | None = None,
    ) -> RoutedResult:
        """Route ``request`` for the peer tool ``tool``; return the final answer and its route.

        ``allowed_nodes`` and ``max_hops`` are the verified token's constraints (the
        invoker verified it): routing never offers a node or a hop the token forbids.
        """
        defn = tool.definition
        hop_limit = defn.routing.hop_limit
        if hop_limit is not None and len(request.routing.path) + 1 > hop_limit:
            raise HopLimitExceededError(
                f"tool '{defn.identity}' may travel at most {hop_limit} hop(s)",
                {"hop_limit": hop_limit},
            )
        result = await self._router().forward(
            request,
            defn.identity,
            grant=grant,
            prefer_local=defn.routing.prefer_local,
            node_affinity=tuple(defn.routing.node_affinity),
            idempotent=defn.execution.idempotent,
            timeout_s=_timeout_s(request, defn),
            allowed_nodes=allowed_nodes,
            max_hops=max_hops,
        )
        return result


def _plus(urls: tuple[str, ...], site: str | None) -> tuple[str, ...]:
    return urls if site is None else (*urls, site)


def _with_params(request: ToolRequest, params: dict[str, Any]) -> ToolRequest:
    return replace(request, params=params, token=None)


def _timeout_s(request: ToolRequest, defn: ToolDefinition) -> float:
    ms = request.routing.timeout_ms or defn.execution.timeout_ms or 30_000
    return max(ms / 1000.0, 0.1)
