"""Calls between nodes: the server side of a forwarded call and the invoker's executor.

``RemoteCalls.handle_invoke`` checks a peer's forwarded call (envelope and request
signatures, loops, hop budget) and runs it through the local pipeline, which checks the
caller's token once like for any call; ``execute`` routes a call for a peer's tool with
the verified token's constraints; ``offers`` says which nodes can take it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bridge.errors import HopLimitExceededError, InvalidRequestError, UnauthenticatedError
from bridge.invocation.invoker import RemoteOutcome
from bridge.invocation.messages import ExecutionInfo, ToolRequest, ToolResponse
from bridge.mesh.router import Offer, RoutedResult, Router, error_of

if TYPE_CHECKING:
    from bridge.mesh.discovery import Discovery
    from bridge.mesh.envelope import EnvelopeVerifier
    from bridge.mesh.gossip import GossipState
    from bridge.mesh.node_id import NodeIdentity
    from bridge.tools.context import CallContext
    from bridge.tools.definition import ToolDefinition
    from bridge.tools.registry import RegisteredTool

MAX_RELAYS = 2

RunLocal = Callable[[ToolRequest], Awaitable[ToolResponse]]


class RemoteCalls:
    """Forwarded calls in, routed calls out, for one node."""

    def __init__(
        self,
        *,
        identity: NodeIdentity,
        gossip: GossipState,
        verifier: EnvelopeVerifier,
        discovery: Callable[[], Discovery | None],
    ) -> None:
        self.identity = identity
        self.gossip = gossip
        self.verifier = verifier
        self._discovery = discovery
        self.router: Router | None = None

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
        forwarder) and ``HopLimitExceededError`` (loop, no budget); the caller's token
        and its constraints are the invoker's to check, as for any call.
        """
        sender, body = self.verifier.open(envelope, "tool_invoke")
        request = ToolRequest.from_json(body.get("request"))
        if request.signer != sender.public_key or not request.signature_valid():
            raise UnauthenticatedError("forwarded request is not signed by the forwarding node")
        me = self.identity.node_id
        path = request.routing.path
        if me in path:
            raise HopLimitExceededError(
                "routing loop: request already passed this node", {"path": list(path)}
            )
        if not path or path[-1] != sender.node_id:
            raise InvalidRequestError("forwarded request's path must end with the forwarder")
        if request.routing.hop_budget < 0:
            raise HopLimitExceededError("request has no hop budget left", {"path": list(path)})
        # The token and its constraints (allowed_nodes, max_hops) are checked once, by
        # the invoker that runs the call (``Invoker._check_constraints``).
        started = time.monotonic()
        response = await run(request)
        # The response says where the handler ran (here, or further on for a relay);
        # a call refused before execution ran nowhere, so report this node.
        execution = response.execution or ExecutionInfo(
            node_id=me,
            hops=len(path),
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            path=(*path, me),
        )
        return {"response": response.to_json(), "execution": execution.to_json()}

    def offers(self, identity: str) -> list[Offer]:
        """Return the nodes offering ``identity`` (1 hop) and up to two relays (2 hops).

        A relay is a trusted peer that does not offer the tool itself but holds the
        same announcements and can reach the offering node when this one cannot.
        """
        direct: dict[str, tuple[str, ...]] = {}
        if self.discovery is not None:
            direct = {p.node_id: tuple(p.urls()) for p in self.discovery.peers()}
        offers: list[Offer] = []
        others: list[Offer] = []
        for entry in self.gossip.entries():
            ann = entry.announcement
            if ann.node_id == self.identity.node_id:
                continue
            known = direct.get(ann.node_id, ())
            urls = known + tuple(e for e in ann.endpoints if e not in known)
            if any(t.identity == identity and t.available for t in ann.tools()):
                offers.append(Offer(node_id=ann.node_id, hops=1, urls=urls, name=ann.node_name))
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
        # The HTTP API verifies the bearer token outside the message: carry it on.
        token = context.token or request.token
        result = await self.execute_remote(
            tool, replace(request, params=params, token=token),
            allowed_nodes=context.allowed_nodes, max_hops=context.max_hops,
        )  # fmt: skip
        return RemoteOutcome(
            result=result.response.result,
            error=error_of(result.response),
            execution=result.execution,
        )

    async def execute_remote(
        self,
        tool: RegisteredTool,
        request: ToolRequest,
        *,
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
            prefer_local=defn.routing.prefer_local,
            node_affinity=tuple(defn.routing.node_affinity),
            idempotent=defn.execution.idempotent,
            timeout_s=_timeout_s(request, defn),
            allowed_nodes=allowed_nodes,
            max_hops=max_hops,
        )
        return result


def _timeout_s(request: ToolRequest, defn: ToolDefinition) -> float:
    ms = request.routing.timeout_ms or defn.execution.timeout_ms or 30_000
    return max(ms / 1000.0, 0.1)
