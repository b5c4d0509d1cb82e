"""The mesh node: the long-lived component that joins this bridge to the agent mesh.

``MeshNode`` owns the identity, trust policy, gossip state, discovery and router, starts
and stops them, and announces this node's tools. Its parts: the gossip loop and token
revocations (``gossip_loop.py``, ``GossipLoop``), forwarded and routed calls
(``remote.py``, ``RemoteCalls``), peers' tools in the registry (``sync.py``,
``RegistrySync``) and the JSON views (``views.py``, ``MeshViews``).
``build_mesh_node`` builds one from the bridge's configuration. Details: docs/mesh.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from bridge.auth.audit import AuditLog
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import TokenVerifier
from bridge.config import BridgeConfig, MeshConfig, is_wildcard_host
from bridge.errors import (
    BridgeError,
    ConfigInvalidError,
    NotFoundError,
    UnauthenticatedError,
    running,
)
from bridge.events import EventBus
from bridge.invocation.invoker import RemoteOutcome
from bridge.invocation.messages import ToolRequest
from bridge.mesh.announce import Announcement, Capability, DeviceInfo, ToolSummary, parameters_hash
from bridge.mesh.discovery import DiscoveredPeer, Discovery, interface_addresses
from bridge.mesh.envelope import OPENED, EnvelopeVerifier, seal_answer
from bridge.mesh.gossip import GossipState
from bridge.mesh.gossip_loop import GossipLoop
from bridge.mesh.node_id import NODE_ID_RE, NodeIdentity
from bridge.mesh.proof import PeerProofs, ProofBudget, prove
from bridge.mesh.refusals import RefusalLog
from bridge.mesh.remote import RemoteCalls, RunLocal
from bridge.mesh.router import Offer, Router
from bridge.mesh.sites import SiteHandlers, SiteRoad
from bridge.mesh.sync import RegistrySync, device_of
from bridge.mesh.trust import TrustMode, TrustPolicy
from bridge.mesh.views import MeshViews
from bridge.ratelog import RateLimitedLog
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import RegisteredTool, ToolRegistry

_LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOGGER)

ANNOUNCE_DEBOUNCE_S = 0.2


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
        self.audit: AuditLog | None = None
        self.refusals = RefusalLog(self.identity.node_id, lambda: self.audit)
        self._proof_budget = ProofBudget()
        self.proofs = PeerProofs(
            self.identity,
            self.trust,
            session=self._http,
            on_untrusted=lambda p: self.gossip.note_untrusted(p.node_id, p.node_name, p.public_key),
            on_refused=self.refusals.record,
        )
        self.remote = RemoteCalls(
            identity=self.identity,
            gossip=self.gossip,
            verifier=self.verifier,
            discovery=lambda: self.discovery,
            trust=self.trust,
            registry=registry,
            proofs=self.proofs,
            tokens=lambda: self.gossip_loop.token_verifier,
            heard=lambda node_id: self.gossip_loop.heard.get(node_id),
            gossip_interval_s=config.gossip_interval_s,
            configured=tuple(url.rstrip("/") for url in config.peers),
            site_url=self._site_url,
        )
        # The road to other sites through a NATS hub (sites.py), when a hub is configured.
        self.road: SiteRoad | None = None
        self._run_local: RunLocal | None = None
        if config.sites.hub_urls:
            self.road = SiteRoad(
                config.sites, node_id=self.identity.node_id, handlers=self._site_handlers()
            )
        self.router = Router(
            self.identity,
            key,
            self.remote.offers,
            session=self._http,
            proofs=self.proofs,
            on_refused=self.refusals.record,
            road=lambda: self.road,
            key_of=self._key_of,
        )
        self.remote.use_router(self.router)
        self.sync = RegistrySync(
            registry=registry, gossip=self.gossip, own_node_id=self.identity.node_id
        )
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._announce_handle: asyncio.TimerHandle | None = None
        self._unsubscribe: list[Callable[[], None]] = []
        self._version = 0
        self._last_announce = 0.0
        self._endpoints: tuple[str, ...] = ()
        self._warned_affinity: set[str] = set()
        self.gossip_loop = GossipLoop(
            config,
            identity=self.identity,
            gossip=self.gossip,
            trust=self.trust,
            verifier=self.verifier,
            session=self._http,
            discovery=lambda: self.discovery,
            spawn=self._spawn,
            proofs=self.proofs,
            on_refused=self.refusals.record,
        )
        self.rejections = self.gossip_loop.rejections
        self.views = MeshViews(
            identity=self.identity,
            trust=self.trust,
            gossip=self.gossip,
            router=self.router,
            discovery=lambda: self.discovery,
            endpoints=lambda: self._endpoints,
            rejections=self.rejections,
        )

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
        self._unsubscribe.append(self.gossip.subscribe(self.sync.on_gossip_change))
        self._unsubscribe.append(self.registry.subscribe(self._on_registry_change))
        self.announce()
        self._loop_task = asyncio.get_running_loop().create_task(self._run())
        if self.road is not None:
            await self.road.start(self.config.announce_interval_s)
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
        self.sync.withdraw()
        if self.road is not None:
            await self.road.stop()
        if self.discovery is not None:
            await self.discovery.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        return running(self._session, "mesh")

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
            device = device_of(tool)
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
        for node_id, urls in self.gossip_loop.targets():
            self._spawn(self.gossip_loop.push(node_id, urls, [announcement.to_json()]))
        if self.road is not None and self._session is not None:
            self._spawn(self.road.publish())
        return announcement

    def _renew(self) -> Announcement:
        """Return a fresh own announcement for the gossip state to send instead of a stale one."""
        self._last_announce = time.monotonic()
        return self.build_announcement()

    def _on_registry_change(self, action: str, tool: RegisteredTool) -> None:
        if tool.handler is not None and action == "added" and self.sync.announced(tool.key):
            self.sync.sync()  # a new local tool takes its whole name back from peers
        if tool.definition.server_name:
            return
        if self._announce_handle is None:
            loop = asyncio.get_running_loop()
            self._announce_handle = loop.call_later(ANNOUNCE_DEBOUNCE_S, self.announce)

    # -- gossip (gossip_loop.py) ----------------------------------------------------------

    async def _run(self) -> None:
        await self.gossip_loop.run(lambda: self._last_announce, self.announce)

    def _on_peer_change(self, action: str, peer: DiscoveredPeer) -> None:
        if self.events is not None:
            self.events.publish("mesh.peer", {"action": action, **peer.to_json()})
        if action != "removed" and self._session is not None:
            self._spawn(self.gossip_loop.round(peer.node_id, tuple(peer.urls())))

    def handle_gossip(self, envelope: Any) -> dict[str, Any]:
        """Answer a peer's digest (``GossipLoop.handle_gossip``)."""
        return self.gossip_loop.handle_gossip(envelope)[1]

    def handle_push(self, envelope: Any) -> dict[str, Any]:
        """Take announcements a peer pushed (``GossipLoop.handle_push``)."""
        return self.gossip_loop.handle_push(envelope)[1]

    def handle_hello(self, challenge: Any, source: str | None = None) -> dict[str, Any]:
        """Prove this node's key to a challenger at address ``source`` (``proof.prove``)."""
        self._proof_budget.take(source)
        return prove(self.identity, challenge)

    def answer(self, request: Any, status: int, body: dict[str, Any]) -> dict[str, Any]:
        """Return ``body`` as this node's signed answer to the envelope ``request``.

        The answer is addressed to the envelope's claimed sender and bound to its nonce;
        a request too malformed to name them gets an answer bound to nothing.
        """
        sender = request.get("from") if isinstance(request, dict) else None
        nonce = request.get("nonce") if isinstance(request, dict) else None
        return seal_answer(
            self.identity,
            to=sender if isinstance(sender, str) and NODE_ID_RE.match(sender) else "",
            nonce=nonce[:64] if isinstance(nonce, str) else "",
            status=status,
            body=body,
        )

    def use_audit(self, audit: AuditLog | None) -> None:
        """Record mesh refusals (unproven addresses, forged answers, delegations) in ``audit``."""
        self.audit = audit

    # -- trust at run time ----------------------------------------------------------------

    def trust_peer(self, entry: str) -> bool:
        """Trust a peer from now on (persisted); fetch what it offers at once.

        Returns whether it was new; raises ``InvalidParamsError`` for a malformed entry.
        """
        added = self.trust.add(entry)
        self.proofs.reset_failures()
        if added and self._session is not None:
            self.gossip_loop.round_with_all()
        return added

    def untrust_peer(self, entry: str) -> None:
        """Stop trusting a peer trusted from here: its announcements and tools leave now.

        Raises ``ConflictError`` for a peer the configuration trusts, ``NotFoundError``
        for one not trusted.
        """
        self.trust.remove(entry)
        for held in self.gossip.entries():
            ann = held.announcement
            if ann.node_id != self.identity.node_id and not self.trust.is_trusted(
                ann.public_key, ann.node_name
            ):
                self.gossip.remove(ann.node_id)
        self.sync.sync()

    # -- token revocations (gossip_loop.py) ----------------------------------------------

    def use_verifier(self, verifier: TokenVerifier) -> None:
        """Gossip ``verifier``'s revocations and feed it those peers send.

        A revocation this node makes is pushed to every known peer at once and again
        in each gossip round until the token expires, so a peer that was away gets it
        too. A peer's notice counts only when signed by the token's issuer and that
        issuer is one this node's verifier trusts.
        """
        unsubscribe = self.gossip_loop.use_verifier(verifier)
        if unsubscribe is not None:
            self._unsubscribe.append(unsubscribe)
            if self.road is not None:
                self._unsubscribe.append(verifier.revocations.subscribe(self._revoked))

    def _revoked(self, notice: dict[str, Any]) -> None:
        if self.road is not None and self._session is not None:
            self._spawn(self.road.publish_revocation(notice))

    def accept_revocations(self, documents: Any) -> int:
        """Take revocation notices from a peer (``GossipLoop.accept_revocations``)."""
        return self.gossip_loop.accept_revocations(documents)

    # -- the site road (sites.py) ----------------------------------------------------------

    def use_runner(self, run: RunLocal) -> None:
        """Run the calls forwarded over the site road with ``run`` (the invoker)."""
        self._run_local = run

    def _site_handlers(self) -> SiteHandlers:
        return SiteHandlers(
            accept_announcement=self.gossip.accept,
            accept_revocations=self.accept_revocations,
            answer_call=self._answer_site_call,
            own_announcement=self._own_document,
            revocation_notices=lambda: self.gossip_loop.revocation_notices(),
        )

    def _own_document(self) -> dict[str, Any] | None:
        self.gossip.prune()  # renews this node's announcement when half its life is gone
        entry = self.gossip.get(self.identity.node_id)
        return None if entry is None else entry.document

    def _site_url(self, node_id: str) -> str | None:
        return None if self.road is None else self.road.offers_url(node_id)

    def _key_of(self, node_id: str) -> str | None:
        entry = self.gossip.get(node_id)
        return None if entry is None else entry.announcement.public_key

    async def _answer_site_call(self, envelope: Any) -> dict[str, Any]:
        """Answer a call that came over the site road as ``/v1/mesh/invoke`` answers it.

        Signed once the envelope verified; the plain error otherwise (its sender is
        not known, see ``api.mesh_routes._signed``).
        """
        OPENED.set(None)
        try:
            if self._run_local is None:
                raise NotFoundError("this node cannot run forwarded calls (no invocation layer)")
            status, body = 200, await self.handle_invoke(envelope, self._run_local)
        except BridgeError as err:
            if isinstance(err, UnauthenticatedError):
                claimed = envelope.get("from") if isinstance(envelope, dict) else None
                self.refusals.record(str(claimed or "")[:64], "site", err)
            status, body = err.http_status, {"error": err.to_json()}
        nonce = envelope.get("nonce") if isinstance(envelope, dict) else None
        if nonce is None or OPENED.get() != nonce:
            return body
        return self.answer(envelope, status, body)

    # -- the parts: remote calls, registry sync, views ------------------------------------

    async def handle_invoke(self, envelope: Any, run: RunLocal) -> dict[str, Any]:
        """Check and run a call forwarded by a peer (``RemoteCalls.handle_invoke``)."""
        return await self.remote.handle_invoke(envelope, run)

    def offers(self, identity: str) -> list[Offer]:
        """Return the nodes offering ``identity`` and relays (``RemoteCalls.offers``)."""
        return self.remote.offers(identity)

    async def execute(
        self,
        tool: RegisteredTool,
        params: dict[str, Any],
        context: CallContext,
        request: ToolRequest,
    ) -> RemoteOutcome:
        """Run a peer's tool for the invoker (``RemoteExecutor``)."""
        return await self.remote.execute(tool, params, context, request)

    def peers_json(self) -> list[dict[str, Any]]:
        """Return every known peer (``MeshViews.peers_json``)."""
        return self.views.peers_json()

    def tools_json(
        self, capability: str | None = None, granted: tuple[str, ...] | None = None
    ) -> list[dict[str, Any]]:
        """Return the tools offered in the mesh (``MeshViews.tools_json``)."""
        return self.views.tools_json(capability, granted)

    def self_json(self) -> dict[str, Any]:
        """Return this node's identity and settings (``MeshViews.self_json``)."""
        return self.views.self_json()


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


async def _as_coro(awaitable: Awaitable[None]) -> None:
    await awaitable
