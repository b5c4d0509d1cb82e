"""The gossip loop of one node: rounds with peers, pushes, and token revocations.

``GossipLoop`` runs a hashed push-pull round with a few peers every interval (the
exchange itself is ``GossipState`` in ``gossip.py``), pushes fresh announcements and
revocation notices, answers the server side of ``/v1/mesh/gossip`` and
``/v1/mesh/push``, and counts what it rejected. The node (``node.py``) owns its
lifecycle and hands it the HTTP session, discovery and a way to spawn tasks.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import aiohttp

from bridge.errors import BridgeError, InvalidRequestError, UnauthenticatedError
from bridge.mesh.envelope import EnvelopeVerifier, Sender, open_answer, read_answer, seal
from bridge.mesh.gossip import GossipState, Outcome
from bridge.ratelog import RateLimitedLog

if TYPE_CHECKING:
    from bridge.auth.tokens import TokenVerifier
    from bridge.config import MeshConfig
    from bridge.mesh.discovery import Discovery
    from bridge.mesh.node_id import NodeIdentity
    from bridge.mesh.proof import PeerProofs
    from bridge.mesh.trust import TrustPolicy

_LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOGGER)

MAX_REVOCATIONS_PUSHED = 256
GOSSIP_HTTP_TIMEOUT_S = 5.0

Target = tuple[str, tuple[str, ...]]


class GossipLoop:
    """Gossip rounds, pushes and revocation notices of one node."""

    def __init__(
        self,
        config: MeshConfig,
        *,
        identity: NodeIdentity,
        gossip: GossipState,
        trust: TrustPolicy,
        verifier: EnvelopeVerifier,
        session: Callable[[], aiohttp.ClientSession],
        discovery: Callable[[], Discovery | None],
        spawn: Callable[[Awaitable[None]], None],
        proofs: PeerProofs,
        on_refused: Callable[[str, str, BridgeError], None] | None = None,
    ) -> None:
        self.config = config
        self.identity = identity
        self.gossip = gossip
        self.trust = trust
        self.verifier = verifier
        self._session = session
        self._discovery = discovery
        self._spawn = spawn
        self._rng = random.Random()  # noqa: S311 - peer choice, not security
        self.proofs = proofs
        self._on_refused = on_refused
        self.rejections: dict[str, int] = {}
        # Peer node id -> when a signed word from it last arrived (monotonic).
        self.heard: dict[str, float] = {}
        self._verifier: TokenVerifier | None = None

    # -- the loop -------------------------------------------------------------------------

    async def run(self, last_announce: Callable[[], float], announce: Callable[[], Any]) -> None:
        """Run a round every gossip interval; re-announce once the announce interval passed."""
        while True:
            await asyncio.sleep(self.config.gossip_interval_s)
            try:
                self.gossip.expire()
                if time.monotonic() - last_announce() >= self.config.announce_interval_s:
                    announce()
                targets = self.targets()
                chosen = self._rng.sample(targets, min(self.config.gossip_fanout, len(targets)))
                await asyncio.gather(*(self.round(n, u) for n, u in chosen))
            except asyncio.CancelledError:
                raise
            except Exception:
                _LOGGER.exception("mesh gossip round failed")

    def targets(self) -> list[Target]:
        """Return ``(node_id or "", urls)`` of every peer worth gossiping with.

        Every address is a hint until it proves the peer's key (``PeerProofs``): mDNS
        addresses, configured peers (node id "" until proven) and announced endpoints
        on a host where the peer already proved its key.
        """
        targets: dict[str, tuple[str, ...]] = {}
        discovery = self._discovery()
        if discovery is not None:
            for peer in discovery.peers():
                if self.trust.may_trust(peer.node_id, peer.fingerprint):
                    # Several adverts may claim one id: each address is only a hint.
                    targets[peer.node_id] = (*targets.get(peer.node_id, ()), *peer.urls())
        for entry in self.gossip.entries():
            ann = entry.announcement
            if ann.node_id == self.identity.node_id:
                continue
            urls = (
                *self.proofs.urls_of(ann.node_id),
                *targets.get(ann.node_id, ()),
                *self.proofs.bound_endpoints(ann.node_id, ann.endpoints),
            )
            targets[ann.node_id] = tuple(dict.fromkeys(urls))
        unproven: list[Target] = []
        for configured in self.config.peers:
            url = configured.rstrip("/")
            proven = self.proofs.proven(url)
            if proven is None:
                unproven.append(("", (url,)))
            else:
                held = targets.get(proven.node_id, ())
                targets[proven.node_id] = tuple(dict.fromkeys((url, *held)))
        result = [(n, u) for n, u in targets.items() if u]
        known_urls = {url for _, urls in result for url in urls}
        result.extend(t for t in unproven if t[1][0] not in known_urls)
        return result

    def round_with_all(self) -> None:
        """Start a round with every target now (a peer was trusted or appeared)."""
        for node_id, urls in self.targets():
            self._spawn(self.round(node_id, urls))

    async def _post(
        self, node_id: str, urls: tuple[str, ...], path: str, kind: str, body: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """Send ``body`` to the first address that proves the peer; return its id and answer.

        Only an address that proved a trusted key (``node_id``'s, when known) gets the
        envelope, and only a signed answer to it counts. Raises ``ConnectionError`` when
        no address did.
        """
        last: Exception | None = None
        timeout = aiohttp.ClientTimeout(total=GOSSIP_HTTP_TIMEOUT_S, sock_connect=1.5)
        for url in urls:
            try:
                peer = await self.proofs.prove(url, node_id)  # records its own refusals
            except (ConnectionError, BridgeError) as err:
                last = err
                continue
            envelope = seal(self.identity, to=peer.node_id, kind=kind, body=body)
            try:
                async with self._session().post(
                    f"{url}{path}", json=envelope, timeout=timeout
                ) as resp:
                    doc = await read_answer(resp)  # outside input: bounded, limited
                status, answer = open_answer(
                    doc,
                    peer_id=peer.node_id,
                    public_key=peer.public_key,
                    own_id=self.identity.node_id,
                    nonce=envelope["nonce"],
                )
            except (aiohttp.ClientError, TimeoutError, ValueError, BridgeError) as err:
                if isinstance(err, UnauthenticatedError) and self._on_refused is not None:
                    self._on_refused(peer.node_id, url, err)
                self.proofs.forget(url)
                last = err
                continue
            self.heard[peer.node_id] = time.monotonic()
            if status != 200:
                raise InvalidRequestError(
                    f"{url}{path} answered HTTP {status}: {str(answer)[:200]}"
                )
            return peer.node_id, answer
        raise ConnectionError(str(last) if last else "no address")

    async def round(self, node_id: str, urls: tuple[str, ...]) -> None:
        """Run one hashed push-pull round with a peer (see ``gossip.py``)."""
        try:
            node_id, reply = await self._post(
                node_id, urls, "/v1/mesh/gossip", "gossip_digest", self.gossip.hash_message()
            )
            counts, push = self.gossip.handle_reply(reply)
            self.count(counts)
            if "revocations" in reply:
                self.accept_revocations(reply["revocations"])
            notices = self._revocation_notices()
            if notices:
                await self._push_revocations(node_id, urls, notices)
            if push is None:
                return
            _peer, answer = await self._post(node_id, urls, "/v1/mesh/push", "gossip_push", push)
            if "announcements" in answer:
                self.count(self.gossip.accept_many(answer["announcements"]))
        except (ConnectionError, BridgeError) as err:
            _LOGGER.debug("gossip with %s (%s) failed: %s", node_id or "?", urls, err)

    async def push(self, node_id: str, urls: tuple[str, ...], documents: list[Any]) -> None:
        """Push announcement ``documents`` to one peer (those expired meanwhile are dropped)."""
        # Spawned: the loop may have been held up since; never send what expired meanwhile.
        documents = [d for d in documents if not self.gossip.is_expired(d)]
        if not documents:
            return
        body = {"type": "gossip_push", "announcements": documents}
        try:
            await self._post(node_id, urls, "/v1/mesh/push", "gossip_push", body)
        except (ConnectionError, BridgeError) as err:
            _LOGGER.debug("push to %s failed: %s", node_id or "?", err)

    def count(self, counts: dict[Outcome, int]) -> None:
        """Count the rejected announcements of ``counts`` (and warn, rate-limited)."""
        for outcome, n in counts.items():
            if outcome not in (Outcome.ACCEPTED, Outcome.DUPLICATE):
                self.rejections[outcome.value] = self.rejections.get(outcome.value, 0) + n
                # An untrusted peer pushes every round: once a minute per reason is enough.
                _RATE_LOG.warning(
                    f"rejected:{outcome.value}",
                    "mesh rejected %d announcement(s): %s",
                    n,
                    outcome.value,
                )

    # -- server side of /v1/mesh/gossip and /v1/mesh/push ---------------------------------

    def handle_gossip(self, envelope: Any) -> tuple[Sender, dict[str, Any]]:
        """Answer a peer's digest (step 1 → step 2) with this node's revocation notices."""
        sender, body = self.verifier.open(envelope, "gossip_digest")
        self.heard[sender.node_id] = time.monotonic()
        reply = self.gossip.handle_digest(body)
        notices = self._revocation_notices()
        if notices:
            reply["revocations"] = notices
        return sender, reply

    def handle_push(self, envelope: Any) -> tuple[Sender, dict[str, Any]]:
        """Take announcements a peer pushed; return the count per outcome and what it wants."""
        sender, body = self.verifier.open(envelope, "gossip_push")
        self.heard[sender.node_id] = time.monotonic()
        counts = self.gossip.handle_push(body)
        self.count(counts)
        answer: dict[str, Any] = {"outcomes": {k.value: v for k, v in counts.items()}}
        if "revocations" in body:
            answer["revocations_accepted"] = self.accept_revocations(body["revocations"])
        if "want" in body:
            answer["announcements"] = self.gossip.documents(body["want"])
        return sender, answer

    # -- token revocations ------------------------------------------------------------------

    @property
    def token_verifier(self) -> TokenVerifier | None:
        """Return the token verifier whose revocations this node gossips, if any."""
        return self._verifier

    def use_verifier(self, verifier: TokenVerifier) -> Callable[[], None] | None:
        """Gossip ``verifier``'s revocations; return the unsubscribe (``None`` if already used)."""
        if self._verifier is verifier:
            return None
        self._verifier = verifier
        return verifier.revocations.subscribe(self._on_revocation)

    def revocation_notices(self) -> list[dict[str, Any]]:
        """Return the newest revocation notices this node passes on (the site road's too)."""
        return self._revocation_notices()

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
        try:
            self._session()
            asyncio.get_running_loop()
        except (BridgeError, RuntimeError):
            return  # not running: the next gossip round carries it
        for node_id, urls in self.targets():
            self._spawn(self._push_revocations(node_id, urls, [notice]))

    async def _push_revocations(
        self, node_id: str, urls: tuple[str, ...], notices: list[dict[str, Any]]
    ) -> None:
        body = {"type": "gossip_push", "announcements": [], "revocations": notices}
        try:
            await self._post(node_id, urls, "/v1/mesh/push", "gossip_push", body)
        except (ConnectionError, BridgeError) as err:
            _LOGGER.debug("revocation push to %s failed: %s", node_id or "?", err)
