"""Routing a call to the nodes that offer its tool: score, try in order, fail over.

``rank`` scores and filters the candidate nodes (hops, local preference, ``prefer_nodes``,
``exclude_nodes``, affinity and the token's ``allowed_nodes``; relays only while an
offering node survives the filters); ``Router.forward`` sends the signed call to them in
turn and fails over only when the call surely did not run. The scoring rule and the
fail-over cases are in docs/mesh.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import aiohttp

from bridge.auth.keys import NodeKey
from bridge.errors import (
    BridgeError,
    ErrorCode,
    HopLimitExceededError,
    NoCapableNodeError,
    ToolTimeoutError,
    UnauthenticatedError,
    error_from_json,
)
from bridge.invocation.messages import ExecutionInfo, RequestRouting, ToolRequest, ToolResponse
from bridge.mesh.delegation import Grant, delegate
from bridge.mesh.envelope import open_answer, read_answer, seal
from bridge.mesh.node_id import NODE_ID_RE, NodeIdentity
from bridge.mesh.proof import PeerProofs
from bridge.mesh.sites import (
    SITE_SCHEME,
    SiteLostError,
    SiteRoad,
    SiteUnreachableError,
    parse_site_url,
)

_LOGGER = logging.getLogger(__name__)

HOP_DECAY = 0.95
LOCAL_BONUS = 1.2
PREFERRED_BONUS = 1.1
# A node reached only over the site road (another site, through the hub) scores this
# much less than the same node on the LAN: a call leaves the site only when it must.
SITE_DECAY = 0.5
UNREACHABLE_BACKOFF_S = 10.0
CONNECT_TIMEOUT_S = 1.5
STALE_CODES = frozenset({ErrorCode.TOOL_NOT_FOUND.value, ErrorCode.NO_CAPABLE_NODE.value})
HOP_CODE = ErrorCode.HOP_LIMIT_EXCEEDED.value


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """A node offering a tool and how to reach it."""

    node_id: str
    hops: int
    urls: tuple[str, ...]
    relay: bool = False
    name: str = ""


class Exclusion(StrEnum):
    """Why a node offering a tool may not run a call."""

    EXCLUDE_NODES = "exclude_nodes"
    PATH = "path"
    ALLOWED_NODES = "allowed_nodes"
    NODE_AFFINITY = "node_affinity"


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A ranked offer."""

    node_id: str
    hops: int
    urls: tuple[str, ...]
    score: float
    down: bool = False
    relay: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutedResult:
    """The final answer of a routed call and where it ran.

    ``duration_ms`` is the round trip measured here; ``execution`` is what the
    executing node reported (its handler's run time) plus the nodes tried from here.
    """

    response: ToolResponse
    node_id: str
    hops: int
    duration_ms: float
    path: tuple[str, ...]
    attempts: tuple[str, ...]
    execution: ExecutionInfo


def exclusion(
    offer: Offer,
    *,
    node_affinity: tuple[str, ...] = (),
    exclude_nodes: tuple[str, ...] = (),
    allowed_nodes: tuple[str, ...] = (),
    path: tuple[str, ...] = (),
) -> Exclusion | None:
    """Return why ``offer`` is ruled out, or ``None`` when it may be tried."""
    if offer.node_id in exclude_nodes:
        return Exclusion.EXCLUDE_NODES
    if offer.node_id in path:
        return Exclusion.PATH
    if allowed_nodes and offer.node_id not in allowed_nodes:
        return Exclusion.ALLOWED_NODES
    # Affinity is about where the tool runs, not who relays it.
    if node_affinity and not offer.relay and offer.node_id not in node_affinity:
        return Exclusion.NODE_AFFINITY
    return None


def rank(
    offers: Iterable[Offer],
    *,
    local_node_id: str,
    prefer_local: bool = False,
    prefer_nodes: tuple[str, ...] = (),
    node_affinity: tuple[str, ...] = (),
    exclude_nodes: tuple[str, ...] = (),
    allowed_nodes: tuple[str, ...] = (),
    path: tuple[str, ...] = (),
    down: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Return the usable offers, best first (see the module docstring for the rule)."""
    ranked: list[Candidate] = []
    for offer in offers:
        reason = exclusion(
            offer,
            node_affinity=node_affinity,
            exclude_nodes=exclude_nodes,
            allowed_nodes=allowed_nodes,
            path=path,
        )
        if reason is not None:
            continue
        score = HOP_DECAY**offer.hops
        if prefer_local and offer.node_id == local_node_id and not offer.relay:
            score *= LOCAL_BONUS
        if offer.node_id in prefer_nodes and not offer.relay:
            score *= PREFERRED_BONUS
        if offer.urls and all(u.startswith(SITE_SCHEME) for u in offer.urls):
            score *= SITE_DECAY
        ranked.append(
            Candidate(
                node_id=offer.node_id,
                hops=offer.hops,
                urls=offer.urls,
                score=score,
                down=offer.node_id in down,
                relay=offer.relay,
            )
        )
    if all(c.relay for c in ranked):
        return []  # no offering node is allowed: a relay would forward to none
    ranked.sort(key=lambda c: (c.down, -c.score, c.node_id))
    return ranked


def no_capable_node(
    identity: str,
    offers: Iterable[Offer],
    *,
    node_affinity: tuple[str, ...] = (),
    exclude_nodes: tuple[str, ...] = (),
    allowed_nodes: tuple[str, ...] = (),
    path: tuple[str, ...] = (),
) -> NoCapableNodeError:
    """Return the error for a call no node may run, naming who offers the tool and why not.

    ``details``: ``tool``, ``offered_by`` (the offering node ids, sorted), ``excluded``
    (node id → ``Exclusion``), ``node_affinity``, ``exclude_nodes``, ``tried`` (empty) and,
    when an affinity entry is not a node id but the name some offering node announces,
    ``affinity_names`` (name → the node ids announcing it).
    """
    direct = sorted({o.node_id: o for o in offers if not o.relay}.values(), key=lambda o: o.node_id)
    details: dict[str, Any] = {
        "tool": identity,
        "offered_by": [o.node_id for o in direct],
        "excluded": {},
        "node_affinity": list(node_affinity),
        "exclude_nodes": list(exclude_nodes),
        "tried": [],
    }
    if not direct:
        return NoCapableNodeError(f"no reachable mesh node offers '{identity}'", details)
    by_reason: dict[Exclusion, list[str]] = {}
    for offer in direct:
        reason = exclusion(
            offer,
            node_affinity=node_affinity,
            exclude_nodes=exclude_nodes,
            allowed_nodes=allowed_nodes,
            path=path,
        )
        if reason is not None:
            details["excluded"][offer.node_id] = reason.value
            by_reason.setdefault(reason, []).append(offer.node_id)
    listed = {
        Exclusion.EXCLUDE_NODES: f"exclude_nodes {list(exclude_nodes)}",
        Exclusion.PATH: "the request's path",
        Exclusion.ALLOWED_NODES: f"the token's allowed_nodes {list(allowed_nodes)}",
        Exclusion.NODE_AFFINITY: f"the tool's routing.node_affinity {list(node_affinity)}",
    }
    reasons = "; ".join(
        f"{listed[reason]} rules out {', '.join(nodes)}" for reason, nodes in by_reason.items()
    )
    message = f"no mesh node may run '{identity}': {reasons}"
    names: dict[str, list[str]] = {}
    for entry in node_affinity:
        if not NODE_ID_RE.match(entry):
            names[entry] = [o.node_id for o in direct if o.name == entry]
    if names:
        details["affinity_names"] = names
        hints = ", ".join(
            f"'{name}' is {' or '.join(ids)}" if ids else f"'{name}' names no offering node"
            for name, ids in names.items()
        )
        message += f" (node_affinity holds mesh node ids, not node names: {hints})"
    return NoCapableNodeError(message, details)


class _Unreachable(Exception):
    """The node could not be reached; the call did not run there."""


class _Refused(Exception):
    """The node refused the forwarded call before running it."""

    def __init__(self, error: BridgeError) -> None:
        super().__init__(error.message)
        self.error = error


class Router:
    """Forward calls to peers, remembering which peers were recently unreachable."""

    def __init__(
        self,
        identity: NodeIdentity,
        key: NodeKey,
        offers: Callable[[str], list[Offer]],
        *,
        session: Callable[[], aiohttp.ClientSession],
        proofs: PeerProofs,
        on_refused: Callable[[str, str, BridgeError], None] | None = None,
        road: Callable[[], SiteRoad | None] = lambda: None,
        key_of: Callable[[str], str | None] = lambda _node_id: None,
    ) -> None:
        self.identity = identity
        self._road = road
        self._key_of = key_of
        self._key = key
        self._offers = offers
        self._session = session
        self.proofs = proofs
        self._on_refused = on_refused
        self._down_until: dict[str, float] = {}

    def down(self) -> frozenset[str]:
        """Return the nodes currently considered unreachable."""
        now = time.monotonic()
        return frozenset(n for n, t in self._down_until.items() if t > now)

    def mark_down(self, node_id: str) -> None:
        """Remember that ``node_id`` could not be reached."""
        self._down_until[node_id] = time.monotonic() + UNREACHABLE_BACKOFF_S

    def mark_up(self, node_id: str) -> None:
        """Forget that ``node_id`` was unreachable."""
        self._down_until.pop(node_id, None)

    def candidates(
        self,
        identity: str,
        *,
        prefer_local: bool,
        node_affinity: tuple[str, ...],
        routing: RequestRouting,
        allowed_nodes: tuple[str, ...],
    ) -> list[Candidate]:
        """Return the ranked nodes that offer the tool ``identity`` (never this node)."""
        offers = [o for o in self._offers(identity) if o.node_id != self.identity.node_id]
        return rank(
            offers,
            local_node_id=self.identity.node_id,
            prefer_local=prefer_local,
            prefer_nodes=routing.prefer_nodes,
            node_affinity=node_affinity,
            exclude_nodes=routing.exclude_nodes,
            allowed_nodes=allowed_nodes,
            path=routing.path,
            down=self.down(),
        )

    def forwarded(self, request: ToolRequest, identity: str) -> ToolRequest:
        """Return the request as this node forwards it: one hop spent, path extended, signed.

        The caller's bearer token is dropped: the receiver gets a delegation instead.

        Raises ``HopLimitExceededError`` when no hop is left or this node is already on
        the path (a loop).
        """
        routing = request.routing
        me = self.identity.node_id
        if me in routing.path:
            raise HopLimitExceededError(
                "routing loop: this node is already on the request's path",
                {"node_id": me, "path": list(routing.path)},
            )
        if routing.hop_budget <= 0:
            raise HopLimitExceededError(
                "no hop left to forward the request", {"path": list(routing.path)}
            )
        new_routing = replace(routing, hop_budget=routing.hop_budget - 1, path=(*routing.path, me))
        exact = replace(request, tool=identity, version=None, routing=new_routing, token=None)
        return exact.signed(self._key)

    async def forward(
        self,
        request: ToolRequest,
        identity: str,
        *,
        grant: Grant,
        prefer_local: bool = False,
        node_affinity: tuple[str, ...] = (),
        idempotent: bool = False,
        timeout_s: float = 30.0,
        allowed_nodes: tuple[str, ...] = (),
        max_hops: int | None = None,
    ) -> RoutedResult:
        """Run ``request`` for tool ``identity`` on the best reachable node offering it.

        Each node tried gets its own delegation of ``grant``, never the caller's token.
        Raises ``HopLimitExceededError`` (loop, no hop left, the token's ``max_hops``),
        ``NoCapableNodeError`` when no allowed node offers the tool or none could be
        reached, and ``ToolTimeoutError`` when the chosen node did not answer in time.
        """
        if max_hops is not None and len(request.routing.path) + 1 > max_hops:
            raise HopLimitExceededError(
                f"the caller's token allows at most {max_hops} hop(s)",
                {"max_hops": max_hops, "path": list(request.routing.path)},
            )
        outgoing = self.forwarded(request, identity)
        candidates = self.candidates(
            identity,
            prefer_local=prefer_local,
            node_affinity=node_affinity,
            routing=request.routing,
            allowed_nodes=allowed_nodes,
        )
        if not candidates:
            raise no_capable_node(
                identity,
                (o for o in self._offers(identity) if o.node_id != self.identity.node_id),
                node_affinity=node_affinity,
                exclude_nodes=request.routing.exclude_nodes,
                allowed_nodes=allowed_nodes,
                path=request.routing.path,
            )
        started = time.monotonic()
        tried: list[str] = []
        unreachable: dict[str, str] = {}
        refusals: dict[str, str] = {}
        hop_error: BridgeError | None = None
        for candidate in candidates:
            tried.append(candidate.node_id)
            try:
                reply = await self._send(candidate, outgoing, grant, timeout_s, idempotent)
            except _Unreachable as err:
                _LOGGER.info("mesh node %s unreachable: %s", candidate.node_id, err)
                unreachable[candidate.node_id] = str(err)[:200]
                self.mark_down(candidate.node_id)
                continue
            except _Refused as refused:
                # The node would not take the call at all (trust, loop, budget): it did not run.
                _LOGGER.info("mesh node %s refused: %s", candidate.node_id, refused.error.message)
                refusals[candidate.node_id] = refused.error.code.value
                if isinstance(refused.error, HopLimitExceededError):
                    hop_error = refused.error
                continue
            self.mark_up(candidate.node_id)
            response = ToolResponse.from_json(reply.get("response"))
            code = (response.error or {}).get("code") if not response.ok else None
            if code in STALE_CODES or (candidate.relay and code == HOP_CODE):
                _LOGGER.info("mesh node %s could not run %s: %s", candidate.node_id, identity, code)
                refusals[candidate.node_id] = str(code)
                if code == HOP_CODE and response.problem is not None:
                    hop_error = response.problem
                continue
            round_trip_ms = round((time.monotonic() - started) * 1000, 3)
            reported = response.execution or _reply_execution(reply)
            execution = ExecutionInfo(
                node_id=reported.node_id if reported else response.node_id or candidate.node_id,
                hops=reported.hops if reported else len(outgoing.routing.path),
                duration_ms=reported.duration_ms if reported else round_trip_ms,
                path=reported.path if reported else (*outgoing.routing.path, candidate.node_id),
                attempts=tuple(tried),
            )
            return RoutedResult(
                response=response,
                node_id=execution.node_id,
                hops=execution.hops,
                duration_ms=round_trip_ms,
                path=execution.path,
                attempts=execution.attempts,
                execution=execution,
            )
        if hop_error is not None and len(refusals) == len(tried):
            raise hop_error
        raise NoCapableNodeError(
            f"no mesh node offering '{identity}' could be reached",
            {"tool": identity, "tried": tried, "refused": refusals, "unreachable": unreachable},
        )

    async def _send(
        self,
        candidate: Candidate,
        request: ToolRequest,
        grant: Grant,
        timeout_s: float,
        idempotent: bool,
    ) -> dict[str, Any]:
        body = {
            "request": request.to_json(),
            "delegation": delegate(self.identity, grant, request, to=candidate.node_id),
        }
        last: Exception | None = None
        for url in candidate.urls:
            site = parse_site_url(url)
            if site is not None:
                try:
                    return await self._send_site(
                        candidate, url, site[0], body, timeout_s, idempotent
                    )
                except _Unreachable as err:
                    last = err
                    continue
            try:
                peer = await self.proofs.prove(url, candidate.node_id)
            except (ConnectionError, BridgeError) as err:
                last = err  # an address that is not (or no longer) the node: only a hint
                continue
            envelope = seal(self.identity, to=candidate.node_id, kind="tool_invoke", body=body)
            timeout = aiohttp.ClientTimeout(total=timeout_s, sock_connect=CONNECT_TIMEOUT_S)
            try:
                async with self._session().post(
                    f"{url}/v1/mesh/invoke", json=envelope, timeout=timeout
                ) as resp:
                    doc = await read_answer(resp)  # outside input: bounded, limited
            except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as err:
                self.proofs.forget(url)
                last = err
                continue
            except (TimeoutError, aiohttp.ClientError, ValueError, BridgeError) as err:
                self.proofs.forget(url)
                if idempotent:
                    raise _Unreachable(str(err)) from err
                if isinstance(err, TimeoutError):
                    raise ToolTimeoutError(
                        f"mesh node {candidate.node_id} did not answer in time",
                        {"node_id": candidate.node_id},
                    ) from err
                raise NoCapableNodeError(
                    f"mesh node {candidate.node_id} failed mid-call: {err}",
                    {"node_id": candidate.node_id},
                ) from err
            return self._opened(candidate, url, doc, peer.public_key, envelope["nonce"], idempotent)
        raise _Unreachable(str(last) if last else "no address")

    async def _send_site(
        self,
        candidate: Candidate,
        url: str,
        site: str,
        body: dict[str, Any],
        timeout_s: float,
        idempotent: bool,
    ) -> dict[str, Any]:
        """Send the call over the site road; the answer must be signed by the node's key.

        The key is the one the node's verified announcement carries (its id is derived
        from it), so the hub in between can drop the call but not answer for the node.
        """
        road, key = self._road(), self._key_of(candidate.node_id)
        if road is None or key is None:
            raise _Unreachable("no site road to this node")
        envelope = seal(self.identity, to=candidate.node_id, kind="tool_invoke", body=body)
        try:
            doc = await road.request(site, candidate.node_id, envelope, timeout_s)
        except SiteUnreachableError as err:
            raise _Unreachable(f"site {site} unreachable: {err}") from err
        except SiteLostError as err:
            if idempotent:
                raise _Unreachable(str(err)) from err
            raise NoCapableNodeError(
                f"mesh node {candidate.node_id} at site {site}: the hub connection dropped "
                "mid-call (it may have run)",
                {"node_id": candidate.node_id, "site": site, "reason": "hub_lost_mid_call"},
            ) from err
        except TimeoutError as err:
            if idempotent:
                raise _Unreachable(str(err)) from err
            raise ToolTimeoutError(
                f"mesh node {candidate.node_id} at site {site} did not answer in time",
                {"node_id": candidate.node_id, "site": site},
            ) from err
        return self._opened(candidate, url, doc, key, envelope["nonce"], idempotent)

    def _opened(
        self,
        candidate: Candidate,
        url: str,
        doc: Any,
        public_key: str,
        nonce: str,
        idempotent: bool,
    ) -> dict[str, Any]:
        """Return the verified body of a node's answer; raise as the routing rules say."""
        try:
            _status, answer = open_answer(
                doc,
                peer_id=candidate.node_id,
                public_key=public_key,
                own_id=self.identity.node_id,
                nonce=nonce,
            )
        except UnauthenticatedError as err:
            # Unsigned or mis-signed: a routing failure, never a result.
            self.proofs.forget(url)
            if self._on_refused is not None:
                self._on_refused(candidate.node_id, url, err)
            if idempotent:
                raise _Unreachable(err.message) from err
            raise NoCapableNodeError(
                f"mesh node {candidate.node_id} answered without a valid signature",
                {"node_id": candidate.node_id, "reason": "unsigned_answer"},
            ) from err
        if "response" not in answer:
            # The node refused the envelope itself (auth, loop, malformed).
            error = answer.get("error")
            if isinstance(error, dict):
                raise _Refused(error_from_json(error))
            raise NoCapableNodeError(f"mesh node {candidate.node_id} answered garbage")
        return answer


def _reply_execution(reply: dict[str, Any]) -> ExecutionInfo | None:
    """Return the reply's ``execution`` (from a node whose response lacks it), if valid."""
    doc = reply.get("execution")
    if not isinstance(doc, dict):
        return None
    try:
        return ExecutionInfo.from_json({k: v for k, v in doc.items() if k != "attempts"})
    except BridgeError:
        return None


def error_of(response: ToolResponse) -> BridgeError | None:
    """Return the error carried by ``response`` as an exception, or ``None``."""
    return None if response.ok else response.problem
