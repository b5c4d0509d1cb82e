"""Capability announcements: the signed message a node uses to tell the mesh what it offers.

Details: docs/modules.md, ``bridge.mesh.announce``.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

from bridge.auth.canonical import canonical_json
from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.mesh.node_id import (
    NODE_ID_RE,
    PROTOCOL_VERSION,
    NodeIdentity,
    node_id_for,
    verify_signature,
)

ANNOUNCE_TYPE = "capability_announce"
MAX_TOOLS = 5000
MAX_DEVICES = 2000
MAX_ENDPOINTS = 8


def canonical_bytes(doc: dict[str, Any]) -> bytes:
    """Return the canonical encoding of a JSON document (sorted keys, compact, UTF-8)."""
    return canonical_json(doc)


def parameters_hash(parameters: dict[str, Any]) -> str:
    """Return the hex SHA-256 of a parameter schema's canonical encoding (first 32 chars)."""
    return hashlib.sha256(canonical_bytes(parameters)).hexdigest()[:32]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSummary:
    """One tool as announced: identity, description, parameter hash, availability, definition."""

    identity: str
    description: str
    parameters_hash: str
    available: bool
    definition: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "identity": self.identity,
            "description": self.description,
            "parameters_hash": self.parameters_hash,
            "available": self.available,
            "definition": self.definition,
        }

    @classmethod
    def from_json(cls, doc: Any) -> ToolSummary:
        """Parse the wire form (raise ``InvalidRequestError``)."""
        d = _mapping(doc, "tool")
        return cls(
            identity=_str(d, "identity", 300),
            description=_str(d, "description", 4000, empty=True),
            parameters_hash=_str(d, "parameters_hash", 64),
            available=_bool(d, "available"),
            definition=_mapping(d.get("definition"), "tool.definition"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Capability:
    """A group of tools a node offers (one per tool namespace)."""

    name: str
    tools: tuple[ToolSummary, ...]

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {"name": self.name, "tools": [t.to_json() for t in self.tools]}

    @classmethod
    def from_json(cls, doc: Any) -> Capability:
        """Parse the wire form (raise ``InvalidRequestError``)."""
        d = _mapping(doc, "capability")
        tools = _list(d, "tools", MAX_TOOLS)
        return cls(name=_str(d, "name", 100), tools=tuple(ToolSummary.from_json(t) for t in tools))


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceInfo:
    """A device behind a node's tools."""

    id: str
    name: str
    type: str
    reachable: bool

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {"id": self.id, "name": self.name, "type": self.type, "reachable": self.reachable}

    @classmethod
    def from_json(cls, doc: Any) -> DeviceInfo:
        """Parse the wire form (raise ``InvalidRequestError``)."""
        d = _mapping(doc, "device")
        return cls(
            id=_str(d, "id", 200),
            name=_str(d, "name", 200, empty=True),
            type=_str(d, "type", 100, empty=True),
            reachable=_bool(d, "reachable"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Announcement:
    """A ``capability_announce`` message (``signature`` is empty until signed)."""

    node_id: str
    node_name: str
    public_key: str
    version: int
    timestamp: float
    ttl_s: float
    endpoints: tuple[str, ...]
    capabilities: tuple[Capability, ...]
    devices: tuple[DeviceInfo, ...]
    protocol: int = PROTOCOL_VERSION
    signature: str = ""

    @property
    def expires_at(self) -> float:
        """Return the origin-clock time after which the announcement is stale."""
        return self.timestamp + self.ttl_s

    def tools(self) -> list[ToolSummary]:
        """Return every announced tool."""
        return [tool for cap in self.capabilities for tool in cap.tools]

    def unsigned_json(self) -> dict[str, Any]:
        """Return the wire form without the signature (what is signed)."""
        return {
            "type": ANNOUNCE_TYPE,
            "protocol": self.protocol,
            "node_id": self.node_id,
            "node_name": self.node_name,
            "public_key": self.public_key,
            "version": self.version,
            "timestamp": self.timestamp,
            "ttl_s": self.ttl_s,
            "endpoints": list(self.endpoints),
            "capabilities": [c.to_json() for c in self.capabilities],
            "devices": [d.to_json() for d in self.devices],
        }

    def to_json(self) -> dict[str, Any]:
        """Return the full wire form, signature included."""
        doc = self.unsigned_json()
        doc["signature"] = self.signature
        return doc

    def signed(self, identity: NodeIdentity) -> Announcement:
        """Return this announcement signed by ``identity`` (which must be its origin)."""
        if identity.node_id != self.node_id or identity.public_key_b64 != self.public_key:
            raise ValueError("an announcement can only be signed by its origin")
        return replace(self, signature=identity.sign(canonical_bytes(self.unsigned_json())))

    @classmethod
    def from_json(cls, doc: Any) -> Announcement:
        """Parse a wire document without checking its signature (raise ``InvalidRequestError``)."""
        d = _mapping(doc, "announcement")
        if d.get("type") != ANNOUNCE_TYPE:
            raise InvalidRequestError("not a capability_announce message")
        protocol = d.get("protocol")
        if protocol != PROTOCOL_VERSION:
            raise InvalidRequestError(
                f"unsupported mesh protocol {protocol!r}", {"supported": PROTOCOL_VERSION}
            )
        node_id = _str(d, "node_id", 26)
        if not NODE_ID_RE.match(node_id):
            raise InvalidRequestError("malformed node_id")
        version = d.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise InvalidRequestError("version must be a non-negative integer")
        endpoints = _list(d, "endpoints", MAX_ENDPOINTS)
        if not all(isinstance(e, str) and e.startswith("http") and len(e) < 200 for e in endpoints):
            raise InvalidRequestError("endpoints must be http URLs")
        ttl = _number(d, "ttl_s")
        if ttl <= 0:
            raise InvalidRequestError("ttl_s must be positive")
        return cls(
            node_id=node_id,
            node_name=_str(d, "node_name", 63),
            public_key=_str(d, "public_key", 64),
            version=version,
            timestamp=_number(d, "timestamp"),
            ttl_s=ttl,
            endpoints=tuple(endpoints),
            capabilities=tuple(Capability.from_json(c) for c in _list(d, "capabilities", 200)),
            devices=tuple(DeviceInfo.from_json(x) for x in _list(d, "devices", MAX_DEVICES)),
            protocol=PROTOCOL_VERSION,
            signature=_str(d, "signature", 128),
        )


def verify_document(doc: Any) -> Announcement:
    """Parse a received announcement and verify it against its origin's key.

    Raises ``InvalidRequestError`` for a malformed document and ``UnauthenticatedError``
    when the node id does not belong to the key or the signature does not match the
    document as received.
    """
    announcement = Announcement.from_json(doc)
    _check_signed(announcement, _signed_bytes(doc))
    return announcement


def _signed_bytes(doc: dict[str, Any]) -> bytes:
    """Return the bytes an announcement's signature covers (all of it but the signature)."""
    return canonical_bytes({k: v for k, v in doc.items() if k != "signature"})


def _check_signed(announcement: Announcement, signed_bytes: bytes) -> None:
    """Raise ``UnauthenticatedError`` unless the key owns the id and signed ``signed_bytes``."""
    try:
        derived = node_id_for(announcement.public_key)
    except ValueError as err:
        raise UnauthenticatedError(f"announcement key is invalid: {err}") from err
    if derived != announcement.node_id:
        raise UnauthenticatedError(
            "announcement node_id does not belong to its public key",
            {"node_id": announcement.node_id},
        )
    if not verify_signature(announcement.public_key, signed_bytes, announcement.signature):
        raise UnauthenticatedError(
            "announcement signature is invalid", {"node_id": announcement.node_id}
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Verified:
    """A verified announcement: the document checked, its digest, parsed form and size."""

    document: dict[str, Any]
    digest: bytes  # SHA-256 of the bytes the signature covers
    announcement: Announcement
    size: int  # bytes of the document's canonical encoding, signature included


class VerifiedAnnouncements:
    """A bounded cache of announcements this node has verified: each is checked once.

    Keyed by (signer key, signature); an entry also holds the SHA-256 of the exact bytes
    that signature covers and the document object that was verified. A document is
    taken as verified only when it is that very object (documents are never changed
    after they are verified: gossip stores and forwards them as received) or when its
    signed bytes hash to the same digest — so the same key and signature over other
    bytes is verified in full (and fails). Only what the caller ``remember``s is kept
    (gossip: what it stored, so nothing from an untrusted key); the least recently used
    entry goes first past ``max_size`` entries or ``max_bytes`` of documents.

    Only a signer's ``per_signer`` latest announcements are kept: a node re-signs its
    announcement every interval, gossip holds only its latest, and an older one is
    superseded for good. (Keeping every one, a node announcing 45 tools every 2 s grew a
    peer by 56 MB in 8 minutes in the soak: a decoded document takes ~5.6 times its
    bytes, so the byte bound alone let the cache reach ~180 MB.)
    """

    def __init__(
        self, max_size: int = 4096, max_bytes: int = 32 * 1024 * 1024, per_signer: int = 2
    ) -> None:
        self._max_size = max_size
        self._max_bytes = max_bytes
        self._per_signer = max(1, per_signer)
        self._bytes = 0
        self._entries: OrderedDict[tuple[str, str], Verified] = OrderedDict()
        # Each signer's kept signatures, oldest first.
        self._by_signer: dict[str, list[str]] = {}
        self.verified = 0  # announcements that passed a full check (benchmarks, tests)

    def __len__(self) -> int:
        return len(self._entries)

    def verify(self, doc: Any) -> Verified:
        """Return ``doc`` verified, as ``verify_document`` would verify it.

        Raises ``InvalidRequestError`` for a malformed document and
        ``UnauthenticatedError`` for a forged one (see ``verify_document``).
        """
        if isinstance(doc, dict):
            public_key, signature = doc.get("public_key"), doc.get("signature")
            if isinstance(public_key, str) and isinstance(signature, str):
                held = self._entries.get((public_key, signature))
                if held is not None and held.document is doc:
                    self._entries.move_to_end((public_key, signature))
                    return held
        announcement = Announcement.from_json(doc)
        signed_bytes = _signed_bytes(doc)
        digest = hashlib.sha256(signed_bytes).digest()
        key = (announcement.public_key, announcement.signature)
        entry = self._entries.get(key)
        if entry is not None and entry.digest == digest:
            self._entries.move_to_end(key)
            return entry
        _check_signed(announcement, signed_bytes)
        self.verified += 1
        # The signature is base64url (it verified), so adding it to the canonical
        # encoding adds exactly ',"signature":"<sig>"'.
        size = len(signed_bytes) + len(',"signature":""') + len(announcement.signature)
        return Verified(document=doc, digest=digest, announcement=announcement, size=size)

    def remember(self, verified: Verified) -> None:
        """Keep ``verified`` so the same signed announcement is not verified again."""
        signer, signature = verified.announcement.public_key, verified.announcement.signature
        self._drop((signer, signature))
        self._entries[(signer, signature)] = verified
        self._bytes += verified.size
        kept = self._by_signer.setdefault(signer, [])
        kept.append(signature)
        while len(kept) > self._per_signer:
            self._drop((signer, kept[0]))
        while len(self._entries) > self._max_size or self._bytes > self._max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple[str, str]) -> None:
        """Forget the entry ``key`` (if held) and its place among its signer's."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self._bytes -= entry.size
        kept = self._by_signer[key[0]]
        kept.remove(key[1])
        if not kept:
            del self._by_signer[key[0]]


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidRequestError(f"{what} must be an object")
    return value


def _str(d: dict[str, Any], key: str, max_len: int, *, empty: bool = False) -> str:
    value = d.get(key)
    if not isinstance(value, str) or len(value) > max_len or (not empty and not value):
        raise InvalidRequestError(f"'{key}' must be a string of at most {max_len} characters")
    return value


def _bool(d: dict[str, Any], key: str) -> bool:
    value = d.get(key)
    if not isinstance(value, bool):
        raise InvalidRequestError(f"'{key}' must be a boolean")
    return value


def _number(d: dict[str, Any], key: str) -> float:
    value = d.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidRequestError(f"'{key}' must be a finite number")
    return float(value)


def _list(d: dict[str, Any], key: str, max_len: int) -> list[Any]:
    value = d.get(key)
    if not isinstance(value, list) or len(value) > max_len:
        raise InvalidRequestError(f"'{key}' must be a list of at most {max_len} items")
    return value
