"""The mesh node: the long-lived component that joins this bridge to the agent mesh.

``MeshNode`` owns the node identity, the trust policy, the gossip state, zeroconf
discovery and the router. ``start()`` signs this node's first announcement, starts
discovery and one background loop that, every ``gossip_interval_s``, drops expired
announcements, re-signs this node's announcement when ``announce_interval_s`` has
passed, and runs a push-pull round with ``gossip_fanout`` random peers. A change to a
local tool is announced within a fraction of a second and pushed to every known peer.
When the loop is held up (a blocking start-up step, a slow round), the gossip state
renews this node's announcement before sending it (``GossipState.prune``), so peers
never get it already expired.

Remote tools appear in the local ``ToolRegistry`` with ``server_name`` = their origin's
node id and ``handler=None``, and disappear when the origin's announcement expires or
stops listing them. A local tool always wins over a remote tool with the same identity;
when several peers offer one identity, the registry shows one of them and the router
still knows them all (``offers``). ``handle_*`` are the server side of the
``/v1/mesh/…`` endpoints; ``execute_remote`` is the invoker's remote executor.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import TokenVerifier
from bridge.config import BridgeConfig, MeshConfig, is_wildcard_host
from bridge.errors import (
    BridgeError,
    ConfigInvalidError,
    HopLimitExceededError,
    InvalidDefinitionError,
    InvalidRequestError,
    UnauthenticatedError,
)
from bridge.events import EventBus
from bridge.invocation.invoker import RemoteOutcome
from bridge.invocation.messages import ExecutionInfo, ToolRequest, ToolResponse
from bridge.mesh.announce import Announcement, Capability, DeviceInfo, ToolSummary, parameters_hash
from bridge.mesh.discovery import DiscoveredPeer, Discovery, interface_addresses
from bridge.mesh.envelope import EnvelopeVerifier, seal
from bridge.mesh.gossip import Change, GossipState, Outcome
from bridge.mesh.node_id import NODE_ID_RE, NodeIdentity, fingerprint_for
from bridge.mesh.router import Offer, RoutedResult, Router, error_of
from bridge.mesh.trust import TrustMode, TrustPolicy
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import RegisteredTool, ToolRegistry

_LOGGER = logging.getLogger(__name__)

ANNOUNCE_DEBOUNCE_S = 0.2
MAX_RELAYS = 2
MAX_REVOCATIONS_PUSHED = 256
GOSSIP_HTTP_TIMEOUT_S = 5.0

RunLocal = Callable[[ToolRequest], Awaitable[ToolResponse]]


class MeshNode:
    """This bridge as a mesh node: announce, discover, gossip, route."""

    def __init__(
        self,
        config: MeshConfig,
        *,
        key: NodeKey,
        registry: ToolRegistry,
        state_dir: Path,
        api_host: str,
        api_port: int,
        events: EventBus | None = None,
    ) -> None:
        self.config = config
        self.key = key
        self.registry = registry
        self.events = events
        self.identity = NodeIdentity.from_key(key, config.node_name)
        self.api_host = api_host
        self.api_port = api_port
        self.trust = TrustPolicy(
            config.trust,
            config.trusted_nodes,
            key.public_key_b64,
            state_dir / "mesh" / "pins.json",
        )
        self.gossip = GossipState(
            self.trust,
            own_node_id=self.identity.node_id,
            max_ttl_s=max(config.announcement_ttl_s, 1.0) * 10,
            max_skew_s=config.max_clock_skew_s,
            renew_local=self._renew,
        )
        self.verifier = EnvelopeVerifier(
            self.identity.node_id, self.trust, max_skew_s=config.max_clock_skew_s
        )
        self.discovery: Discovery | None = None
        self.router = Router(self.identity, key, self.offers, session=self._http)
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._announce_handle: asyncio.TimerHandle | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self._remote: dict[str, str] = {}  # identity -> origin registered by the mesh
        self._version = 0
        self._last_announce = 0.0
        self._endpoints: tuple[str, ...] = ()
        self._rng = random.Random()  # noqa: S311 - peer choice, not security
        self.rejections: dict[str, int] = {}
        self._warned_affinity: set[str] = set()
        self._verifier: TokenVerifier | None = None

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Announce this node, start discovery and the gossip loop.

        Raises ``ConfigInvalidError`` when the configured interfaces give no address.
        """
        self._session = aiohttp.ClientSession()
        try:
            if self.config.discovery:
                self.discovery = Discovery(
                    self.identity,
                    self.api_port,
                    interfaces=self.config.interfaces,
                    on_change=self._on_peer_change,
                )
                await self.discovery.start()
            self._endpoints = self._own_endpoints()
        except ValueError as err:
            await self.stop()
            raise ConfigInvalidError(str(err), {"key": "mesh.interfaces"}) from err
        except BaseException:
            await self.stop()
            raise
        self._unsubscribe.append(self.gossip.subscribe(self._on_gossip_change))
        self._unsubscribe.append(self.registry.subscribe(self._on_registry_change))
        self.announce()
        self._loop_task = asyncio.get_running_loop().create_task(self._run())
        _LOGGER.info(
            "mesh node %s (%s) up, fingerprint %s, trust %s",
            self.identity.node_id,
            self.identity.name,
            self.identity.fingerprint,
            self.trust.mode.value,
        )

    async def stop(self) -> None:
        """Stop gossiping, withdraw from mDNS, drop remote tools from the registry."""
        if self._announce_handle is not None:
            self._announce_handle.cancel()
        tasks = list(self._tasks)
        if self._loop_task is not None:
            tasks.append(self._loop_task)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        for identity, origin in list(self._remote.items()):
            entry = self.registry.get(identity)
            if entry is not None and entry.definition.server_name == origin:
                self.registry.unregister(identity)
        self._remote.clear()
        if self.discovery is not None:
            await self.discovery.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise BridgeError("mesh node is not running")
        return self._session

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.get_running_loop().create_task(_as_coro(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _own_endpoints(self) -> tuple[str, ...]:
        if not is_wildcard_host(self.api_host):
            host = f"[{self.api_host}]" if ":" in self.api_host else self.api_host
            return (f"http://{host}:{self.api_port}",)
        if self.discovery is not None and self.discovery.addresses:
            addresses = self.discovery.addresses
        else:
            addresses = interface_addresses(self.config.interfaces)
        return tuple(f"http://{a}:{self.api_port}" for a in addresses[:8])

    # -- announcing ---------------------------------------------------------------------

    def build_announcement(self) -> Announcement:
        """Return this node's current announcement, signed, with a new version."""
        now = time.time()
        self._version = max(self._version + 1, int(now * 1000))
        groups: dict[str, list[ToolSummary]] = {}
        devices: dict[str, DeviceInfo] = {}
        for tool in self.registry.list():
            defn = tool.definition
            if defn.server_name:
                continue
            self._check_affinity(defn)
            groups.setdefault(defn.namespace, []).append(
                ToolSummary(
                    identity=defn.identity,
                    description=defn.description,
                    parameters_hash=parameters_hash(dict(defn.parameters)),
                    available=tool.available,
                    definition=defn.to_json(),
                )
            )
            device = _device_of(tool)
            if device is not None:
                known = devices.get(device.id)
                if known is None or (device.reachable and not known.reachable):
                    devices[device.id] = device
        capabilities = tuple(
            Capability(name=ns, tools=tuple(sorted(tools, key=lambda t: t.identity)))
            for ns, tools in sorted(groups.items())
        )
        return Announcement(
            node_id=self.identity.node_id,
            node_name=self.identity.name,
            public_key=self.identity.public_key_b64,
            version=self._version,
            timestamp=now,
            ttl_s=self.config.announcement_ttl_s,
            endpoints=self._endpoints,
            capabilities=capabilities,
            devices=tuple(devices.values()),
        ).signed(self.identity)

    def _check_affinity(self, defn: ToolDefinition) -> None:
        """Warn once per tool whose ``routing.node_affinity`` lists something not a node id."""
        names = [n for n in defn.routing.node_affinity if not NODE_ID_RE.match(n)]
        if not names or defn.identity in self._warned_affinity:
            return
        self._warned_affinity.add(defn.identity)
        hint = f"; this node ('{self.identity.name}') is {self.identity.node_id}"
        _LOGGER.warning(
            "tool %s: routing.node_affinity lists %s, which %s not a mesh node id "
            "(node_affinity holds key-derived node ids, not names): peers will refuse "
            "to route calls to it%s",
            defn.identity,
            names,
            "is" if len(names) == 1 else "are",
            hint,
        )

    def announce(self) -> Announcement:
        """Sign a fresh announcement, store it and push it to every known peer."""
        if self._announce_handle is not None:
            self._announce_handle.cancel()
            self._announce_handle = None
        announcement = self.build_announcement()
        self.gossip.set_local(announcement)
        self._last_announce = time.monotonic()
        for node_id, urls in self._gossip_targets():
            self._spawn(self._push(node_id, urls, [announcement.to_json()]))
        return announcement

    def _renew(self) -> Announcement:
        """Return a fresh own announcement for the gossip state to send instead of a stale one."""
        self._last_announce = time.monotonic()
        return self.build_announcement()

    def _on_registry_change(self, action: str, tool: RegisteredTool) -> None:
        if tool.definition.server_name:
            return
        if self._announce_handle is None:
            loop = asyncio.get_running_loop()
            self._announce_handle = loop.call_later(ANNOUNCE_DEBOUNCE_S, self.announce)

    # -- gossip loop --------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.config.gossip_interval_s)
            try:
                self.gossip.expire()
                if time.monotonic() - self._last_announce >= self.config.announce_interval_s:
                    self.announce()
                targets = self._gossip_targets()
                chosen = self._rng.sample(targets, min(self.config.gossip_fanout, len(targets)))
                await asyncio.gather(*(self._round(n, u) for n, u in chosen))
            except asyncio.CancelledError:
                raise
            except Exception:
                _LOGGER.exception("mesh gossip round failed")

    def _gossip_targets(self) -> list[tuple[str, tuple[str, ...]]]:
        """Return ``(node_id or "", urls)`` of every peer worth gossiping with."""
        targets: dict[str, tuple[str, ...]] = {}
        if self.discovery is not None:
            for peer in self.discovery.peers():
                if self.trust.may_trust(peer.node_id, peer.fingerprint):
                    targets[peer.node_id] = tuple(peer.urls())
        for entry in self.gossip.entries():
            origin = entry.announcement.node_id
            if origin != self.identity.node_id and origin not in targets:
                targets[origin] = entry.announcement.endpoints
        result = [(n, u) for n, u in targets.items() if u]
        known_urls = {url for _, urls in result for url in urls}
        result.extend(
            ("", (url.rstrip("/"),)) for url in self.config.peers if url not in known_urls
        )
        return result

    async def _post(self, urls: tuple[str, ...], path: str, doc: dict[str, Any]) -> dict[str, Any]:
        last: Exception | None = None
        timeout = aiohttp.ClientTimeout(total=GOSSIP_HTTP_TIMEOUT_S, sock_connect=1.5)
        for url in urls:
            try:
                async with self._http().post(f"{url}{path}", json=doc, timeout=timeout) as resp:
                    body = await resp.json(content_type=None)
                    if resp.status != 200 or not isinstance(body, dict):
                        raise InvalidRequestError(
                            f"{url}{path} answered HTTP {resp.status}: {body}"
                        )
                    return body
            except (aiohttp.ClientError, TimeoutError, ValueError) as err:
                last = err
        raise ConnectionError(str(last) if last else "no address")

    async def _round(self, node_id: str, urls: tuple[str, ...]) -> None:
        """Run one hashed push-pull round with a peer (see ``gossip.py``)."""
        try:
            envelope = seal(
                self.identity, to=node_id, kind="gossip_digest", body=self.gossip.hash_message()
            )
            reply = await self._post(urls, "/v1/mesh/gossip", envelope)
            counts, push = self.gossip.handle_reply(reply)
            self._count(counts)
            notices = self._revocation_notices()
            if notices:
                await self._push_revocations(node_id, urls, notices)
            if push is None:
                return
            answer = await self._post(
                urls,
                "/v1/mesh/push",
                seal(self.identity, to=node_id, kind="gossip_push", body=push),
            )
            if "announcements" in answer:
                self._count(self.gossip.accept_many(answer["announcements"]))
        except (ConnectionError, BridgeError) as err:
            _LOGGER.debug("gossip with %s (%s) failed: %s", node_id or "?", urls, err)

    async def _push(self, node_id: str, urls: tuple[str, ...], documents: list[Any]) -> None:
        # Spawned: the loop may have been held up since; never send what expired meanwhile.
        documents = [d for d in documents if not self.gossip.is_expired(d)]
        if not documents:
            return
        body = {"type": "gossip_push", "announcements": documents}
        try:
            await self._post(
                urls,
                "/v1/mesh/push",
                seal(self.identity, to=node_id, kind="gossip_push", body=body),
            )
        except (ConnectionError, BridgeError) as err:
            _LOGGER.debug("push to %s failed: %s", node_id or "?", err)

    def _count(self, counts: dict[Outcome, int]) -> None:
        for outcome, n in counts.items():
            if outcome not in (Outcome.ACCEPTED, Outcome.DUPLICATE):
                self.rejections[outcome.value] = self.rejections.get(outcome.value, 0) + n
                _LOGGER.warning("mesh rejected %d announcement(s): %s", n, outcome.value)

    def _on_peer_change(self, action: str, peer: DiscoveredPeer) -> None:
        if self.events is not None:
            self.events.publish("mesh.peer", {"action": action, **peer.to_json()})
        if action != "removed" and self._session is not None:
            self._spawn(self._round(peer.node_id, tuple(peer.urls())))

    # -- server side of /v1/mesh/... ----------------------------------------------------

    def handle_gossip(self, envelope: Any) -> dict[str, Any]:
        """Answer a peer's digest (step 1 → step 2)."""
        _sender, body = self.verifier.open(envelope, "gossip_digest")
        return self.gossip.handle_digest(body)

    def handle_push(self, envelope: Any) -> dict[str, Any]:
        """Take announcements a peer pushed; return the count per outcome and what it wants."""
        _sender, body = self.verifier.open(envelope, "gossip_push")
        counts = self.gossip.handle_push(body)
        self._count(counts)
        answer: dict[str, Any] = {"outcomes": {k.value: v for k, v in counts.items()}}
        if "revocations" in body:
            answer["revocations_accepted"] = self.accept_revocations(body["revocations"])
        if "want" in body:
            answer["announcements"] = self.gossip.documents(body["want"])
        return answer

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

    # -- token revocations --------------------------------------------------------------

    def use_verifier(self, verifier: TokenVerifier) -> None:
        """Gossip ``verifier``'s revocations and feed it those peers send.

        A revocation this node makes is pushed to every known peer at once and again
        in each gossip round until the token expires, so a peer that was away gets it
        too. A peer's notice counts only when signed by the token's issuer and that
        issuer is one this node's verifier trusts.
        """
        if self._verifier is verifier:
            return
        self._verifier = verifier
        self._unsubscribe.append(verifier.revocations.subscribe(self._on_revocation))

    def _revocation_notices(self) -> list[dict[str, Any]]:
        if self._verifier is None:
            return []
        notices = self._verifier.revocations.notices()
        return sorted(notices, key=lambda n: -float(n["revoked_at"]))[:MAX_REVOCATIONS_PUSHED]

    def accept_revocations(self, documents: Any) -> int:
        """Take revocation notices from a peer; return how many were new and valid."""
        if self._verifier is None:
            return 0
        if not isinstance(documents, list) or len(documents) > MAX_REVOCATIONS_PUSHED:
            raise InvalidRequestError(
                f"revocations must be a list of at most {MAX_REVOCATIONS_PUSHED}"
            )
        issuers = self._verifier.trusted_issuers
        return sum(self._verifier.revocations.accept(doc, issuers) for doc in documents)

    def _on_revocation(self, notice: dict[str, Any]) -> None:
        if self._session is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # the next gossip round carries it
        for node_id, urls in self._gossip_targets():
            self._spawn(self._push_revocations(node_id, urls, [notice]))

    async def _push_revocations(
        self, node_id: str, urls: tuple[str, ...], notices: list[dict[str, Any]]
    ) -> None:
        body = {"type": "gossip_push", "announcements": [], "revocations": notices}
        try:
            await self._post(
                urls, "/v1/mesh/push",
                seal(self.identity, to=node_id, kind="gossip_push", body=body),
            )
        except (ConnectionError, BridgeError) as err:
            _LOGGER.debug("revocation push to %s failed: %s", node_id or "?", err)

    # -- routing ------------------------------------------------------------------------

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
            down = self.router.down()
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
        result = await self.router.forward(
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

    # -- registry sync ------------------------------------------------------------------

    def _on_gossip_change(self, change: Change, announcement: Announcement) -> None:
        if announcement.node_id != self.identity.node_id:
            self._sync_registry()

    def _sync_registry(self) -> None:
        """Make the registry's peer tools match the live announcements."""
        wanted: dict[str, tuple[str, ToolSummary]] = {}
        for entry in sorted(self.gossip.entries(), key=lambda e: e.announcement.node_id):
            ann = entry.announcement
            if ann.node_id == self.identity.node_id:
                continue
            for summary in ann.tools():
                current = wanted.get(summary.identity)
                keep_registered = self._remote.get(summary.identity) == ann.node_id
                if current is None or keep_registered:
                    wanted[summary.identity] = (ann.node_id, summary)
        for identity, origin in list(self._remote.items()):
            if wanted.get(identity, ("", None))[0] != origin:
                registered = self.registry.get(identity)
                if registered is not None and registered.definition.server_name == origin:
                    self.registry.unregister(identity)
                del self._remote[identity]
        for identity, (origin, summary) in wanted.items():
            existing = self.registry.get(identity)
            if existing is not None and not existing.definition.server_name:
                continue  # a local tool wins
            try:
                defn = ToolDefinition.from_json(summary.definition).replace(server_name=origin)
            except InvalidDefinitionError as err:
                _LOGGER.warning("peer %s announced an invalid tool %s: %s", origin, identity, err)
                continue
            if defn.identity != identity:
                _LOGGER.warning("peer %s announced %s under another identity", origin, identity)
                continue
            if (
                existing is not None
                and existing.definition == defn
                and existing.available == summary.available
            ):
                self._remote[identity] = origin
                continue
            self.registry.replace(defn, None, available=summary.available)
            self._remote[identity] = origin

    # -- views --------------------------------------------------------------------------

    def peers_json(self) -> list[dict[str, Any]]:
        """Return every known peer: discovered and/or announcing, trusted or not."""
        peers: dict[str, dict[str, Any]] = {}
        down = self.router.down()
        if self.discovery is not None:
            for peer in self.discovery.peers():
                peers[peer.node_id] = {
                    "node_id": peer.node_id,
                    "name": None,
                    "fingerprint": peer.fingerprint,
                    "urls": peer.urls(),
                    "discovered": True,
                    "trusted": None,
                    "announcement": None,
                }
        now = time.time()
        for entry in self.gossip.entries():
            ann = entry.announcement
            if ann.node_id == self.identity.node_id:
                continue
            view = peers.setdefault(
                ann.node_id,
                {
                    "node_id": ann.node_id,
                    "fingerprint": None,
                    "urls": list(ann.endpoints),
                    "discovered": False,
                },
            )
            view["name"] = ann.node_name
            view["fingerprint"] = _fingerprint(ann.public_key)
            view["trusted"] = True
            view["announcement"] = {
                "version": ann.version,
                "tools": len(ann.tools()),
                "devices": len(ann.devices),
                "expires_in_s": round(entry.expires_at - now, 1),
            }
        for view in peers.values():
            if view["trusted"] is None:
                view["trusted"] = self.trust.may_trust(view["node_id"], view["fingerprint"])
            view["reachable"] = view["node_id"] not in down
        return sorted(peers.values(), key=lambda v: (str(v.get("name")), v["node_id"]))

    def tools_json(self, capability: str | None = None) -> list[dict[str, Any]]:
        """Return the tools offered in the mesh with the nodes offering them.

        With ``capability``, only tools in that capability group (namespace) or whose
        definition requires that capability.
        """
        tools: dict[str, dict[str, Any]] = {}
        for entry in self.gossip.entries():
            ann = entry.announcement
            for cap in ann.capabilities:
                for summary in cap.tools:
                    if (
                        capability is None
                        or capability == cap.name
                        or capability in _required(summary.definition)
                    ):
                        self._add_tool_view(tools, ann, cap.name, summary)
        return sorted(tools.values(), key=lambda v: str(v["identity"]))

    def _add_tool_view(
        self,
        tools: dict[str, dict[str, Any]],
        ann: Announcement,
        capability: str,
        summary: ToolSummary,
    ) -> None:
        view = tools.setdefault(
            summary.identity,
            {
                "identity": summary.identity,
                "description": summary.description,
                "capability": capability,
                "nodes": [],
            },
        )
        view["nodes"].append(
            {
                "node_id": ann.node_id,
                "name": ann.node_name,
                "local": ann.node_id == self.identity.node_id,
                "available": summary.available,
                "parameters_hash": summary.parameters_hash,
            }
        )

    def self_json(self) -> dict[str, Any]:
        """Return this node's identity and settings for display."""
        return {
            "node_id": self.identity.node_id,
            "name": self.identity.name,
            "fingerprint": self.identity.fingerprint,
            "public_key": self.identity.public_key_b64,
            "trust": self.trust.mode.value,
            "endpoints": list(self._endpoints),
            "rejections": dict(self.rejections),
        }


def build_mesh_node(config: BridgeConfig, registry: ToolRegistry, events: EventBus) -> MeshNode:
    """Build the mesh node of a bridge from its configuration and node key file.

    Raises ``ConfigInvalidError`` when the API port is 0: peers need a port that is
    known before the API starts, to put it in the mDNS record and the announcements.
    """
    if config.api.port == 0:
        raise ConfigInvalidError("the mesh needs a fixed api.port (not 0)", {"key": "api.port"})
    try:
        TrustMode(config.mesh.trust)
    except ValueError as err:
        raise ConfigInvalidError(
            f"mesh.trust must be one of {[m.value for m in TrustMode]}", {"key": "mesh.trust"}
        ) from err
    if config.mesh.discovery and config.api.host.startswith("127."):
        _LOGGER.warning(
            "mesh discovery is on but the API listens on %s only: peers on other hosts "
            "cannot reach this node (set api.host to an address on the LAN or 0.0.0.0)",
            config.api.host,
        )
    key = NodeKey.load_or_create(config.state_dir / KEY_FILE_NAME)
    return MeshNode(
        config.mesh,
        key=key,
        registry=registry,
        state_dir=config.state_dir,
        api_host=config.api.host,
        api_port=config.api.port,
        events=events,
    )


def _timeout_s(request: ToolRequest, defn: ToolDefinition) -> float:
    ms = request.routing.timeout_ms or defn.execution.timeout_ms or 30_000
    return max(ms / 1000.0, 0.1)


def _device_of(tool: RegisteredTool) -> DeviceInfo | None:
    """Return the device behind a tool from its metadata (``device``, else ``matter``)."""
    metadata = tool.definition.metadata
    device = metadata.get("device")
    if isinstance(device, dict) and device.get("id"):
        return DeviceInfo(
            id=str(device["id"])[:200],
            name=str(device.get("name") or "")[:200],
            type=str(device.get("kind") or device.get("type") or "")[:100],
            reachable=tool.available,
        )
    matter = metadata.get("matter")
    if isinstance(matter, dict) and "node_id" in matter:
        return DeviceInfo(
            id=f"matter:{matter['node_id']}", name="", type="", reachable=tool.available
        )
    return None


def _required(definition: dict[str, Any]) -> tuple[str, ...]:
    """Return the capabilities an announced definition document requires."""
    tool = definition.get("tool", definition)
    requires = tool.get("requires") if isinstance(tool, dict) else None
    caps = requires.get("capabilities") if isinstance(requires, dict) else None
    return tuple(c for c in caps if isinstance(c, str)) if isinstance(caps, list) else ()


def _fingerprint(public_key: str) -> str:
    try:
        return fingerprint_for(public_key)
    except ValueError:
        return ""


async def _as_coro(awaitable: Awaitable[None]) -> None:
    await awaitable
