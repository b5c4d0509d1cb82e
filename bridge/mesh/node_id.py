"""A mesh node's identity: node id and fingerprint derived from its ed25519 public key.

The node id is not chosen, it is computed: the first 16 bytes of SHA-256 over the raw
public key, base32 without padding, lower case (26 characters). A peer that claims a
node id therefore has to hold the matching private key, so nobody can impersonate a
node id without its key; trust decisions (``trust.py``) are about keys, and the human
``name`` is only a label. Signing uses the node key of ``bridge/auth/keys.py``;
verification needs only the public key and lives here so every mesh module checks
signatures the same way.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
import socket
from dataclasses import dataclass
from typing import Protocol

from bridge.auth.canonical import b64d
from bridge.auth.keys import verify

PROTOCOL_VERSION = 1
NODE_ID_RE = re.compile(r"^[a-z2-7]{26}$")


class Signer(Protocol):
    """What the mesh needs from a node key: its public key and a signing method."""

    @property
    def public_key_b64(self) -> str:
        """Return the raw ed25519 public key, base64url."""
        ...

    def sign(self, data: bytes) -> str:
        """Return the base64url ed25519 signature of ``data``."""
        ...


def _raw_public_key(public_key_b64: str) -> bytes:
    raw = b64d(public_key_b64)
    if len(raw) != 32:
        raise ValueError("public key is not 32 bytes")
    return raw


# The derivations below are pure functions of the key text and run for every envelope,
# announcement and trust check; a bounded cache keeps them off the hot path (a bad key
# raises and is not cached).
@functools.lru_cache(maxsize=4096)
def node_id_for(public_key_b64: str) -> str:
    """Return the node id derived from a base64url ed25519 public key (raise ValueError if bad)."""
    digest = hashlib.sha256(_raw_public_key(public_key_b64)).digest()[:16]
    return base64.b32encode(digest).decode("ascii").rstrip("=").lower()


def node_id_for_fingerprint(fingerprint: str) -> str:
    """Return the node id that belongs to a hex key fingerprint ("" when malformed)."""
    try:
        digest = bytes.fromhex(fingerprint)[:16]
    except ValueError:
        return ""
    return base64.b32encode(digest).decode("ascii").rstrip("=").lower()


@functools.lru_cache(maxsize=4096)
def fingerprint_for(public_key_b64: str) -> str:
    """Return the key fingerprint: hex SHA-256 of the raw public key."""
    return hashlib.sha256(_raw_public_key(public_key_b64)).hexdigest()


def verify_signature(public_key_b64: str, data: bytes, signature_b64: str) -> bool:
    """Return whether ``signature_b64`` is a valid ed25519 signature of ``data``."""
    return verify(public_key_b64, data, signature_b64)


@dataclass(frozen=True, slots=True)
class NodeIdentity:
    """This node: its key, the derived id and fingerprint, and a human name."""

    key: Signer
    name: str
    node_id: str
    fingerprint: str

    @classmethod
    def from_key(cls, key: Signer, name: str | None = None) -> NodeIdentity:
        """Build the identity of the node holding ``key`` (name defaults to the host name)."""
        node_id = node_id_for(key.public_key_b64)
        label = (name or socket.gethostname() or node_id).strip()[:63] or node_id
        return cls(
            key=key, name=label, node_id=node_id, fingerprint=fingerprint_for(key.public_key_b64)
        )

    @property
    def public_key_b64(self) -> str:
        """Return the node's public key, base64url."""
        return self.key.public_key_b64

    def sign(self, data: bytes) -> str:
        """Return the base64 signature of ``data`` by this node's key."""
        return self.key.sign(data)
