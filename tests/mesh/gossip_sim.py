"""The gossip simulation: N mesh nodes in one process, for bench/gossip.py and the tests.

Every node has a real ed25519 key (``NodeKey``), a signed ``capability_announce`` with
realistic tool definitions (a dimmable Matter light: on, off, toggle, brightness) and a
real ``GossipState`` with its own trust policy. A round: every node, in random order,
runs one push-pull exchange with ``fanout`` random peers — the hashed exchange bridges
run (digest hash → ``in_sync`` or the peer's digest → push with ``want`` → wanted
documents). Membership is full (every node knows every other, as after mDNS on one LAN).

Requests are real signed ``mesh_envelope``s opened by the receiver's
``EnvelopeVerifier`` and answers real signed ``mesh_answer``s (``envelopes=False`` runs
the ``GossipState`` messages alone; ``signed_answers=False`` sends answers unsigned, the
protocol before answers were signed). What is simulated, and named so:

- ``Wire``, the transport: every message is JSON-encoded (its bytes are counted) and
  decoded, but an announcement document inside it is encoded and decoded once per
  distinct content and every receiver gets that one decoded object, instead of each of
  N nodes holding its own decoded copy of each of N documents (N² copies: 11.5 GB after
  ten minutes at N = 1000). Gossip never changes a document it holds or forwards.
- ``shared_verification=True`` (sim-only): one ``VerifiedAnnouncements`` for all nodes,
  so each distinct signed announcement is verified once in the process instead of once
  per node. A real node verifies every distinct announcement it receives once (the
  default here: one cache per node); forged or unsigned documents are verified in full
  either way, because a cache only ever holds what verified.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bridge.auth.keys import NodeKey
from bridge.mesh.announce import (
    Announcement,
    Capability,
    DeviceInfo,
    ToolSummary,
    VerifiedAnnouncements,
    parameters_hash,
)
from bridge.mesh.envelope import EnvelopeVerifier, open_answer, seal, seal_answer
from bridge.mesh.gossip import GossipState, Outcome
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.trust import TrustPolicy

TTL_S = 3600.0
_SEPARATORS = (",", ":")


def light_tools(slug: str) -> tuple[ToolSummary, ...]:
    """Return the announced tools of one dimmable light, with full definitions."""
    tools = []
    specs: list[tuple[str, str, dict[str, Any]]] = [
        ("on", "Turn the light on.", {}),
        ("off", "Turn the light off.", {}),
        ("toggle", "Toggle the light.", {}),
        (
            "brightness",
            "Set the brightness in percent.",
            {"percent": {"type": "number", "minimum": 0, "maximum": 100}},
        ),
    ]
    for suffix, description, props in specs:
        params = {
            "type": "object",
            "properties": props,
            "required": sorted(props),
            "additionalProperties": False,
        }
        name = f"light_{slug}_{suffix}"
        definition = {
            "name": name,
            "namespace": "matter",
            "version": "1.0.0",
            "description": f"{description} ({slug.replace('_', ' ')})",
            "category": "acting",
            "parameters": params,
            "requires": {"permissions": [f"device:control:{slug}"]},
            "execution": {"timeout_ms": 5000, "idempotent": suffix != "toggle"},
            "routing": {"prefer_local": True, "hop_limit": 3},
            "metadata": {"tags": ["light", "matter"], "matter": {"node_id": 1, "endpoint_id": 1}},
        }
        tools.append(
            ToolSummary(
                identity=f"matter:{name}@1.0.0",
                description=definition["description"],
                parameters_hash=parameters_hash(params),
                available=True,
                definition=definition,
            )
        )
    return tuple(tools)


def light_announcement(identity: NodeIdentity, version: int, now: float) -> Announcement:
    """Return ``identity``'s signed announcement of one dimmable light."""
    slug = f"room_{identity.node_id[:6]}"
    return Announcement(
        node_id=identity.node_id,
        node_name=identity.name,
        public_key=identity.public_key_b64,
        version=version,
        timestamp=now,
        ttl_s=TTL_S,
        endpoints=("http://192.0.2.1:8765",),
        capabilities=(Capability(name="matter", tools=light_tools(slug)),),
        devices=(DeviceInfo(id="matter:1", name=slug, type="light", reachable=True),),
    ).signed(identity)


class Wire:
    """The simulated transport: JSON bytes counted, each distinct document decoded once.

    A message is encoded and decoded as it would travel. The announcement documents it
    carries are encoded once per distinct object and decoded once per distinct byte
    string; every receiver gets the one decoded object of those bytes (what each would
    have decoded for itself), which gossip only reads. The byte count is exact.
    """

    def __init__(self) -> None:
        # id(document) -> (document, encoded size, decoded object); the document is held
        # so its id is never reused while cached.
        self._known: dict[int, tuple[dict[str, Any], int, dict[str, Any]]] = {}
        self._decoded: dict[bytes, dict[str, Any]] = {}

    def document(self, doc: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return one document's encoded size and the receiver's decoded object."""
        known = self._known.get(id(doc))
        if known is not None and known[0] is doc:
            return known[1], known[2]
        data = json.dumps(doc, separators=_SEPARATORS).encode("utf-8")
        decoded = self._decoded.get(data)
        if decoded is None:
            decoded = self._decoded[data] = json.loads(data)
            self._known[id(decoded)] = (decoded, len(data), decoded)
        self._known[id(doc)] = (doc, len(data), decoded)
        return len(data), decoded

    def send(self, message: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Return the bytes ``message`` takes on the wire and what its receiver decodes."""
        holder = message.get("body") if "body" in message else message
        docs = holder.get("announcements") if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or not isinstance(docs, list) or not docs:
            data = json.dumps(message, separators=_SEPARATORS).encode("utf-8")
            return len(data), json.loads(data)
        emptied = {**holder, "announcements": []}
        skeleton = {**message, "body": emptied} if holder is not message else emptied
        data = json.dumps(skeleton, separators=_SEPARATORS).encode("utf-8")
        decoded: dict[str, Any] = json.loads(data)
        sent = [self.document(doc) for doc in docs]
        target = decoded["body"] if holder is not message else decoded
        target["announcements"] = [doc for _, doc in sent]
        # "[]" became "[d1,d2,...]": each document's bytes plus the commas between.
        return len(data) + sum(size for size, _ in sent) + len(sent) - 1, decoded


@dataclass
class SimNode:
    """One simulated node: identity, gossip state, envelope verifier, bytes sent."""

    identity: NodeIdentity
    state: GossipState
    verifier: EnvelopeVerifier
    version: int = 1
    sent_bytes: int = 0

    def announce(self, now: float) -> None:
        """Sign and store this node's announcement at its current version."""
        self.state.set_local(light_announcement(self.identity, self.version, now))


@dataclass
class Simulation:
    """N simulated nodes that trust each other, gossiping over one ``Wire``."""

    nodes: list[SimNode]
    rng: random.Random
    envelopes: bool = True
    signed_answers: bool = True
    wire: Wire = field(default_factory=Wire)
    exchanges: int = 0
    refused: dict[Outcome, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        n: int,
        *,
        seed: int = 1,
        envelopes: bool = True,
        signed_answers: bool = True,
        shared_verification: bool = False,
    ) -> Simulation:
        """Create ``n`` nodes, each holding only its own announcement (version 1)."""
        identities = [NodeIdentity.from_key(NodeKey.generate(), f"node-{i}") for i in range(n)]
        allow = tuple(i.node_id for i in identities)
        shared = VerifiedAnnouncements(max_size=2 * n + 64) if shared_verification else None
        now = time.time()
        nodes = []
        for ident in identities:
            trust = TrustPolicy("allowlist", allow, ident.public_key_b64)
            verified = shared if shared is not None else VerifiedAnnouncements(max_size=2 * n + 64)
            state = GossipState(
                trust, own_node_id=ident.node_id, max_ttl_s=TTL_S, verified=verified
            )
            verifier = EnvelopeVerifier(ident.node_id, trust, max_skew_s=600)
            node = SimNode(identity=ident, state=state, verifier=verifier)
            node.announce(now)
            nodes.append(node)
        return cls(
            nodes=nodes,
            rng=random.Random(seed),
            envelopes=envelopes,
            signed_answers=signed_answers,
        )

    def verifications(self) -> int:
        """Return the full ed25519 verifications of announcements made so far."""
        caches = {id(n.state.verified): n.state.verified for n in self.nodes}
        return sum(c.verified for c in caches.values())

    def _count(self, counts: dict[Outcome, int]) -> None:
        for outcome, k in counts.items():
            if outcome not in (Outcome.ACCEPTED, Outcome.DUPLICATE):
                self.refused[outcome] = self.refused.get(outcome, 0) + k

    def _request(self, a: SimNode, b: SimNode, kind: str, body: dict[str, Any]) -> tuple[str, Any]:
        """Carry ``a``'s request to ``b``; return its nonce and the body ``b`` opened."""
        if not self.envelopes:
            size, opened = self.wire.send(body)
            a.sent_bytes += size
            return "", opened
        size, env = self.wire.send(seal(a.identity, to=b.identity.node_id, kind=kind, body=body))
        a.sent_bytes += size
        _, opened = b.verifier.open(env, kind)
        return str(env["nonce"]), opened

    def _answer(self, a: SimNode, b: SimNode, nonce: str, body: dict[str, Any]) -> dict[str, Any]:
        """Carry ``b``'s answer back to ``a``: signed and verified, or plain."""
        if not self.envelopes or not self.signed_answers:
            size, plain = self.wire.send(body)
            b.sent_bytes += size
            return plain
        signed = seal_answer(b.identity, to=a.identity.node_id, nonce=nonce, status=200, body=body)
        size, doc = self.wire.send(signed)
        b.sent_bytes += size
        _status, opened = open_answer(
            doc,
            peer_id=b.identity.node_id,
            public_key=b.identity.public_key_b64,
            own_id=a.identity.node_id,
            nonce=nonce,
        )
        return opened

    def exchange(self, a: SimNode, b: SimNode) -> None:
        """Run one hashed push-pull exchange from ``a`` to ``b`` (what bridges do)."""
        self.exchanges += 1
        nonce, body = self._request(a, b, "gossip_digest", a.state.hash_message())
        reply = self._answer(a, b, nonce, b.state.handle_digest(body))
        counts, push = a.state.handle_reply(reply)
        self._count(counts)
        if push is None:
            return
        nonce, body = self._request(a, b, "gossip_push", push)
        self._count(b.state.handle_push(body))
        got = self._answer(a, b, nonce, {"announcements": b.state.documents(body.get("want", []))})
        self._count(a.state.accept_many(got["announcements"]))

    def push(self, a: SimNode, b: SimNode, documents: list[dict[str, Any]]) -> dict[Outcome, int]:
        """Let ``a`` push ``documents`` to ``b`` unasked (a changed announcement, or a relay)."""
        _, body = self._request(a, b, "gossip_push", {"announcements": documents})
        counts = b.state.handle_push(body)
        self._count(counts)
        return counts

    def one_round(self, fanout: int = 1) -> None:
        """Let every node, in random order, gossip with ``fanout`` random other nodes."""
        n = len(self.nodes)
        order = list(range(n))
        self.rng.shuffle(order)
        for i in order:
            for j in self.rng.sample(range(n - 1), fanout):
                self.exchange(self.nodes[i], self.nodes[j + (j >= i)])

    def run_until(self, done: Callable[[], bool], *, fanout: int = 1, max_rounds: int = 60) -> int:
        """Run rounds until ``done()`` holds; return how many (raise after ``max_rounds``)."""
        rounds = 0
        while not done():
            if rounds >= max_rounds:
                raise RuntimeError(f"no convergence after {max_rounds} rounds")
            rounds += 1
            self.one_round(fanout)
        return rounds

    def holds_everywhere(self, origin: str, version: int) -> bool:
        """Return whether every node holds ``origin``'s announcement at ``version``."""
        for node in self.nodes:
            entry = node.state.get(origin)
            if entry is None or entry.announcement.version != version:
                return False
        return True

    def converged(self) -> bool:
        """Return whether every node holds every node's announcement at its version."""
        return all(self.holds_everywhere(n.identity.node_id, n.version) for n in self.nodes)
