"""Signed envelopes: how one node authenticates its requests to another.

Every node-to-node request (gossip rounds, pushes, forwarded tool calls) is a
``mesh_envelope``: the sender's node id, public key and name, the receiver's node id
(``to``, learned from the receiver's proof, ``proof.py``), the message ``kind``, a
timestamp, a random nonce, the ``body`` and an ed25519 signature over the canonical
encoding of all of it. The receiver checks that the id belongs to the key, the key is
trusted, the envelope is addressed to it and fresh (within ``max_skew_s``), and that
the nonce was not used before, so a captured request can be neither replayed nor
redirected to another node. The answer to an envelope that verified is a
``mesh_answer`` signed by the answering node over the request's nonce and the answer
(``seal_answer`` / ``open_answer``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import aiohttp

from bridge import jsonlimits
from bridge.errors import InvalidRequestError, PayloadTooLargeError, UnauthenticatedError
from bridge.mesh.announce import canonical_bytes
from bridge.mesh.node_id import NodeIdentity, node_id_for, verify_signature
from bridge.mesh.trust import TrustPolicy

ENVELOPE_TYPE = "mesh_envelope"
ANSWER_TYPE = "mesh_answer"
# What a peer may answer at most (the same bound as a request to /v1/mesh/...).
MAX_ANSWER_BYTES = 8 * 1024 * 1024
_ANSWER_LIMITS = jsonlimits.JsonLimits(max_bytes=MAX_ANSWER_BYTES)
GOSSIP_KINDS = frozenset({"gossip_digest", "gossip_push"})
# The nonce of the envelope this task (one HTTP request) opened: only an envelope that
# verified gets a signed answer, so a forged one cannot obtain a signed answer for a
# nonce it copied from someone else's request.
OPENED: ContextVar[str | None] = ContextVar("mesh_envelope_opened", default=None)
KINDS = GOSSIP_KINDS | {"tool_invoke"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Sender:
    """The authenticated sender of an envelope."""

    node_id: str
    node_name: str
    public_key: str
    nonce: str = ""


def seal(identity: NodeIdentity, *, to: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """Return a signed envelope carrying ``body`` from this node to node ``to``."""
    doc: dict[str, Any] = {
        "type": ENVELOPE_TYPE,
        "kind": kind,
        "from": identity.node_id,
        "node_name": identity.name,
        "public_key": identity.public_key_b64,
        "to": to,
        "timestamp": time.time(),
        "nonce": secrets.token_hex(16),
        "body": body,
    }
    doc["signature"] = identity.sign(canonical_bytes(doc))
    return doc


def seal_answer(
    identity: NodeIdentity, *, to: str, nonce: str, status: int, body: dict[str, Any]
) -> dict[str, Any]:
    """Return this node's signed answer to the request (envelope ``nonce``) of node ``to``.

    The signature covers the request id (the envelope's nonce), who answers, to whom,
    the HTTP status and the whole body, so an answer can be neither forged, nor moved to
    another request, nor turned from an error into a result.
    """
    doc: dict[str, Any] = {
        "type": ANSWER_TYPE,
        "from": identity.node_id,
        "to": to,
        "nonce": nonce,
        "status": status,
        "body": body,
    }
    doc["signature"] = identity.sign(canonical_bytes(doc))
    return doc


def open_answer(
    doc: Any, *, peer_id: str, public_key: str, own_id: str, nonce: str
) -> tuple[int, dict[str, Any]]:
    """Verify a peer's answer to the request with envelope ``nonce``; return status and body.

    Raises ``UnauthenticatedError`` when the answer is unsigned, signed by another key,
    from another node, meant for another node or for another request.
    """
    if not isinstance(doc, dict) or doc.get("type") != ANSWER_TYPE:
        raise UnauthenticatedError("the peer's answer is not a signed mesh_answer")
    signature, body, status = doc.get("signature"), doc.get("body"), doc.get("status")
    if not isinstance(signature, str) or not isinstance(body, dict):
        raise UnauthenticatedError("the peer's answer is not a signed mesh_answer")
    if isinstance(status, bool) or not isinstance(status, int):
        raise UnauthenticatedError("the peer's answer has no status")
    if doc.get("from") != peer_id or doc.get("to") != own_id or doc.get("nonce") != nonce:
        raise UnauthenticatedError(
            "the peer's answer belongs to another node or request", {"from": peer_id}
        )
    unsigned = {k: v for k, v in doc.items() if k != "signature"}
    if not verify_signature(public_key, canonical_bytes(unsigned), signature):
        raise UnauthenticatedError("the peer's answer signature is invalid", {"from": peer_id})
    return status, body


class NonceCache:
    """Nonces seen within the freshness window; bounded, oldest dropped first."""

    def __init__(self, window_s: float, max_size: int = 100_000) -> None:
        self._window_s = window_s
        self._max_size = max_size
        self._seen: dict[str, float] = {}

    def add(self, nonce: str, now: float) -> bool:
        """Record ``nonce``; return False if it was already seen within the window."""
        if len(self._seen) >= self._max_size or len(self._seen) % 1024 == 0:
            cutoff = now - 2 * self._window_s
            self._seen = {n: t for n, t in self._seen.items() if t > cutoff}
            while len(self._seen) >= self._max_size:
                self._seen.pop(next(iter(self._seen)))
        if nonce in self._seen:
            return False
        self._seen[nonce] = now
        return True


class EnvelopeVerifier:
    """Open envelopes addressed to this node: signature, trust, freshness, replay."""

    def __init__(
        self,
        own_node_id: str,
        trust: TrustPolicy,
        *,
        max_skew_s: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.own_node_id = own_node_id
        self.trust = trust
        self.max_skew_s = max_skew_s
        self._clock = clock
        self._nonces = NonceCache(max_skew_s)

    def open(self, doc: Any, kind: str) -> tuple[Sender, dict[str, Any]]:
        """Verify an envelope of ``kind`` and return its sender and body.

        Raises ``InvalidRequestError`` when malformed and ``UnauthenticatedError`` when
        forged, untrusted, misaddressed, stale or replayed.
        """
        if not isinstance(doc, dict) or doc.get("type") != ENVELOPE_TYPE:
            raise InvalidRequestError("expected a signed mesh_envelope")
        if doc.get("kind") != kind:
            raise InvalidRequestError(f"expected a {kind} envelope")
        fields = ("from", "node_name", "public_key", "to", "nonce", "signature")
        if not all(isinstance(doc.get(f), str) for f in fields):
            raise InvalidRequestError("envelope fields must be strings")
        body = doc.get("body")
        timestamp = doc.get("timestamp")
        if not isinstance(body, dict) or not isinstance(timestamp, int | float):
            raise InvalidRequestError("envelope needs an object body and a numeric timestamp")
        public_key: str = doc["public_key"]
        try:
            derived = node_id_for(public_key)
        except ValueError as err:
            raise UnauthenticatedError(f"envelope key is invalid: {err}") from err
        if derived != doc["from"]:
            raise UnauthenticatedError("envelope sender id does not belong to its key")
        unsigned = {k: v for k, v in doc.items() if k != "signature"}
        if not verify_signature(public_key, canonical_bytes(unsigned), doc["signature"]):
            raise UnauthenticatedError("envelope signature is invalid", {"from": derived})
        to = doc["to"]
        if to != self.own_node_id:
            raise UnauthenticatedError("envelope is addressed to another node", {"to": to})
        now = self._clock()
        if abs(now - float(timestamp)) > self.max_skew_s:
            raise UnauthenticatedError("envelope is outside the freshness window")
        self.trust.check(public_key, doc["node_name"])
        if not self._nonces.add(doc["nonce"], now):
            raise UnauthenticatedError("envelope was already received (replay)")
        sender = Sender(
            node_id=derived, node_name=doc["node_name"], public_key=public_key, nonce=doc["nonce"]
        )
        OPENED.set(doc["nonce"])
        return sender, body


async def read_answer(resp: aiohttp.ClientResponse) -> Any:
    """Return a peer's JSON answer, read with the bridge's JSON limits.

    Raises ``PayloadTooLargeError`` past ``MAX_ANSWER_BYTES`` (without reading on) and
    ``InvalidRequestError`` when the body is not acceptable JSON.
    """
    if resp.content_length is not None and resp.content_length > MAX_ANSWER_BYTES:
        raise PayloadTooLargeError("peer answer too large", {"max_bytes": MAX_ANSWER_BYTES})
    chunks: list[bytes] = []
    total = 0
    async for chunk in resp.content.iter_chunked(65_536):
        total += len(chunk)
        if total > MAX_ANSWER_BYTES:
            raise PayloadTooLargeError("peer answer too large", {"max_bytes": MAX_ANSWER_BYTES})
        chunks.append(chunk)
    return jsonlimits.loads(b"".join(chunks), _ANSWER_LIMITS)
