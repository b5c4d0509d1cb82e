"""Peer proofs: an address counts for a peer only once it proved the peer's trusted key.

An address learned from mDNS, from gossip (an announcement's ``endpoints``) or from the
configuration (``mesh.peers``) is a hint. Before this node sends a peer anything that
matters (a gossip round, a push, a forwarded call) it sends the address a
``mesh_challenge`` with a fresh random nonce (``POST /v1/mesh/hello``, no secret in
it); the node there answers a ``mesh_proof`` signed by its key over the nonce, the
challenger's id and the address challenged. ``PeerProofs`` checks the signature, that
the node id belongs to the key, that the key is trusted here and, when a node id was
expected, that it is that node; then the address is proven for ``PROOF_TTL_S`` (proved
again after that, and at once after any failure there). An address that failed is not
challenged again for ``FAILED_BACKOFF_S`` (one that could not be reached is tried
again at once). Announced endpoints of a peer are used only on a host where that peer
already proved its key (``bound_endpoints``).
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bridge.errors import (
    BridgeError,
    InvalidRequestError,
    RateLimitedError,
    UnauthenticatedError,
)
from bridge.mesh.announce import canonical_bytes
from bridge.mesh.envelope import read_answer
from bridge.mesh.node_id import NODE_ID_RE, NodeIdentity, node_id_for, verify_signature
from bridge.mesh.trust import TrustPolicy

HELLO_PATH = "/v1/mesh/hello"
CHALLENGE_TYPE = "mesh_challenge"
PROOF_TYPE = "mesh_proof"
PROOF_TTL_S = 60.0
FAILED_BACKOFF_S = 2.0
HELLO_TIMEOUT_S = 3.0
MAX_URL = 200
_NONCE_RE = re.compile(r"^[0-9a-f]{32,64}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvenPeer:
    """A peer whose key an address proved: who it is and where."""

    node_id: str
    node_name: str
    public_key: str
    url: str


def challenge(identity: NodeIdentity, *, url: str, to: str) -> dict[str, Any]:
    """Return a ``mesh_challenge`` for the node expected at ``url`` (``to``; "" if unknown)."""
    return {
        "type": CHALLENGE_TYPE,
        "from": identity.node_id,
        "to": to,
        "url": url,
        "nonce": secrets.token_hex(16),
    }


class ProofBudget:
    """How many proofs this node signs: ``rate`` a second, ``burst`` at once (a bucket).

    ``/v1/mesh/hello`` needs no credential (a stranger must be able to ask who is
    there), so the signatures it costs are bounded for everyone together — and, so that
    one address asking as fast as it can does not use up everyone's share (a real peer
    proves an address about once a minute), per source address too: ``source_rate`` a
    second, ``source_burst`` at once, for at most ``max_sources`` addresses remembered
    (the least recently seen is forgotten first).
    """

    def __init__(
        self,
        rate: float = 50.0,
        burst: float = 100.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        source_rate: float = 2.0,
        source_burst: float = 10.0,
        max_sources: int = 1024,
    ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._level, self._at = burst, clock()
        self.source_rate, self.source_burst = source_rate, source_burst
        self.max_sources = max_sources
        self._sources: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, source: str | None = None) -> None:
        """Spend one proof for ``source``; raise ``RateLimitedError`` when a bucket is empty."""
        now = self._clock()
        if source is not None:
            level, at = self._sources.pop(source, (self.source_burst, now))
            level = min(self.source_burst, level + (now - at) * self.source_rate)
            if level < 1.0:
                self._remember(source, level, now)
                raise RateLimitedError(
                    "too many mesh challenges from this address; try again in a second",
                    {"reason": "challenges", "scope": "source"},
                )
        self._level = min(self.burst, self._level + (now - self._at) * self.rate)
        self._at = now
        if self._level < 1.0:
            if source is not None:
                self._remember(source, level, now)
            raise RateLimitedError(
                "too many mesh challenges; try again in a second",
                {"reason": "challenges", "scope": "node"},
            )
        self._level -= 1.0
        if source is not None:
            self._remember(source, level - 1.0, now)

    def _remember(self, source: str, level: float, now: float) -> None:
        self._sources[source] = (level, now)
        while len(self._sources) > self.max_sources:
            self._sources.popitem(last=False)


def prove(identity: NodeIdentity, doc: Any) -> dict[str, Any]:
    """Answer a challenge with this node's signed proof.

    Raises ``InvalidRequestError`` for a malformed challenge and ``UnauthenticatedError``
    for one meant for another node.
    """
    if not isinstance(doc, dict) or doc.get("type") != CHALLENGE_TYPE:
        raise InvalidRequestError("expected a mesh_challenge")
    nonce, url, sender, to = doc.get("nonce"), doc.get("url"), doc.get("from"), doc.get("to")
    if not isinstance(nonce, str) or not _NONCE_RE.match(nonce):
        raise InvalidRequestError("mesh_challenge.nonce must be 32-64 hex digits")
    if not isinstance(url, str) or not url.startswith("http") or len(url) > MAX_URL:
        raise InvalidRequestError("mesh_challenge.url must be the http URL challenged")
    if not isinstance(sender, str) or not NODE_ID_RE.match(sender):
        raise InvalidRequestError("mesh_challenge.from must be the challenger's node id")
    if not isinstance(to, str) or len(to) > 32:
        raise InvalidRequestError("mesh_challenge.to must be a node id or empty")
    proof: dict[str, Any] = {
        "type": PROOF_TYPE,
        "node_id": identity.node_id,
        "node_name": identity.name,
        "public_key": identity.public_key_b64,
        "challenger": sender,
        "nonce": nonce,
        "url": url,
        "timestamp": time.time(),
    }
    proof["signature"] = identity.sign(canonical_bytes(proof))
    return proof


def check_proof(doc: Any, sent: dict[str, Any]) -> ProvenPeer:
    """Verify the proof answering the challenge ``sent``; return who proved it.

    Raises ``UnauthenticatedError`` when it is not a proof of that challenge, the key
    does not sign it or the node id is not the key's. Whether it is the node expected
    is the caller's to check.
    """
    fields = ("node_id", "node_name", "public_key", "challenger", "nonce", "url", "signature")
    if not isinstance(doc, dict) or doc.get("type") != PROOF_TYPE:
        raise UnauthenticatedError("the address answered no mesh_proof")
    if not all(isinstance(doc.get(f), str) for f in fields) or len(doc["node_name"]) > 63:
        raise UnauthenticatedError("the address answered a malformed mesh_proof")
    if (doc["nonce"], doc["challenger"], doc["url"]) != (sent["nonce"], sent["from"], sent["url"]):
        raise UnauthenticatedError("the proof answers another challenge")
    try:
        node_id = node_id_for(doc["public_key"])
    except ValueError as err:
        raise UnauthenticatedError(f"the proof's key is invalid: {err}") from err
    if node_id != doc["node_id"]:
        raise UnauthenticatedError("the proof's node id is not its key's", {"node_id": node_id})
    unsigned = {k: v for k, v in doc.items() if k != "signature"}
    if not verify_signature(doc["public_key"], canonical_bytes(unsigned), doc["signature"]):
        raise UnauthenticatedError("the proof's signature is invalid", {"node_id": node_id})
    return ProvenPeer(
        node_id=node_id, node_name=doc["node_name"], public_key=doc["public_key"], url=sent["url"]
    )


def host_of(url: str) -> str:
    """Return the host of an http URL ("" when it has none)."""
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


class PeerProofs:
    """Which addresses proved which trusted peer key, until when; challenge the others."""

    def __init__(
        self,
        identity: NodeIdentity,
        trust: TrustPolicy,
        *,
        session: Callable[[], aiohttp.ClientSession],
        on_untrusted: Callable[[ProvenPeer], None] | None = None,
        on_refused: Callable[[str, str, BridgeError], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.identity = identity
        self.trust = trust
        self._session = session
        self._on_untrusted = on_untrusted
        self._on_refused = on_refused
        self._clock = clock
        self._proven: dict[str, tuple[ProvenPeer, float]] = {}
        self._by_node: dict[str, list[str]] = {}  # node id -> addresses that proved it
        self._failed: dict[str, float] = {}
        self._pending: dict[str, asyncio.Future[ProvenPeer]] = {}

    def proven(self, url: str) -> ProvenPeer | None:
        """Return the peer ``url`` proved to be while the proof lasts, else ``None``."""
        held = self._proven.get(url)
        if held is None or held[1] <= self._clock():
            return None
        if not self.trust.is_trusted(held[0].public_key, held[0].node_name):
            return None  # untrusted since: the proof no longer counts
        return held[0]

    def urls_of(self, node_id: str) -> tuple[str, ...]:
        """Return the addresses that currently prove ``node_id``."""
        return tuple(
            u
            for u in self._by_node.get(node_id, ())
            if (p := self.proven(u)) is not None and p.node_id == node_id
        )

    def bound_endpoints(self, node_id: str, endpoints: tuple[str, ...]) -> tuple[str, ...]:
        """Return the announced ``endpoints`` on a host where ``node_id`` proved its key."""
        hosts = {host_of(u) for u in self.urls_of(node_id)}
        return tuple(e for e in endpoints if host_of(e) in hosts)

    def reset_failures(self) -> None:
        """Let every address be challenged again at once (the trust list changed)."""
        self._failed.clear()

    def forget(self, url: str) -> None:
        """Drop the proof of ``url`` (after a failure there): the next use proves again."""
        self._proven.pop(url, None)

    async def prove(self, url: str, node_id: str = "") -> ProvenPeer:
        """Return the trusted peer at ``url`` (``node_id`` when given), challenging it if needed.

        Raises ``UnauthenticatedError`` when the address does not prove a trusted key (or
        the expected node's), ``ConnectionError`` when it cannot be reached.
        """
        held = self.proven(url)
        if held is not None and (not node_id or held.node_id == node_id):
            return held
        if held is not None:
            raise UnauthenticatedError(
                "the address proved another node", {"expected": node_id, "proved": held.node_id}
            )
        if self._failed.get(url, 0.0) > self._clock():
            raise UnauthenticatedError("the address failed its proof recently", {"url": url})
        pending = self._pending.get(url)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._pending[url] = pending
            try:
                pending.set_result(await self._challenge(url, node_id))
            except BridgeError as err:
                self._failed[url] = self._clock() + FAILED_BACKOFF_S
                pending.set_exception(err)
            except ConnectionError as err:  # not up yet, or gone: cheap to try again
                pending.set_exception(err)
            finally:
                del self._pending[url]
        peer = await asyncio.shield(pending)
        if node_id and peer.node_id != node_id:
            raise UnauthenticatedError("the address proved another node", {"expected": node_id})
        return peer

    def _accept(self, doc: Any, sent: dict[str, Any]) -> ProvenPeer:
        """Return the trusted peer proved by ``doc``; raise ``UnauthenticatedError``."""
        peer = check_proof(doc, sent)
        if peer.node_id == self.identity.node_id:
            raise UnauthenticatedError("the address is this node itself")
        if not self.trust.is_trusted(peer.public_key, peer.node_name):
            if self._on_untrusted is not None:
                self._on_untrusted(peer)
            raise UnauthenticatedError(
                "the address proved a key this node does not trust", {"node_id": peer.node_id}
            )
        self.trust.check(peer.public_key, peer.node_name)
        return peer

    async def _challenge(self, url: str, node_id: str) -> ProvenPeer:
        # ``to`` only says whom the challenger expects; the proof says who answered.
        sent = challenge(self.identity, url=url, to=node_id)
        timeout = aiohttp.ClientTimeout(total=HELLO_TIMEOUT_S, sock_connect=1.5)
        try:
            async with self._session().post(f"{url}{HELLO_PATH}", json=sent, timeout=timeout) as r:
                doc = await read_answer(r)
        except (aiohttp.ClientError, TimeoutError, ValueError) as err:
            raise ConnectionError(f"{url}: {err}") from err
        try:
            peer = self._accept(doc, sent)
        except UnauthenticatedError as err:
            if self._on_refused is not None:
                self._on_refused(
                    str(doc.get("node_id", ""))[:32] if isinstance(doc, dict) else "", url, err
                )
            raise
        self._proven[url] = (peer, self._clock() + PROOF_TTL_S)
        self._failed.pop(url, None)
        for held in self._by_node.values():
            if url in held:
                held.remove(url)  # the address now proves another node
        self._by_node.setdefault(peer.node_id, []).append(url)
        return peer
