"""Gossip state and the push-pull anti-entropy exchange, independent of any transport.

``GossipState`` holds, per origin node, the newest verified announcement (exactly as its
origin signed it) and drops it when it expires on the origin's clock; ``prune()`` runs
before every digest or document list is built, so nothing expired is ever sent. The
acceptance checks, expiry rule and the full and hashed exchanges are in docs/mesh.md.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bridge.errors import BridgeError, InvalidRequestError, UnauthenticatedError
from bridge.mesh.announce import Announcement, VerifiedAnnouncements, canonical_bytes
from bridge.mesh.node_id import NODE_ID_RE
from bridge.mesh.trust import TrustPolicy

_LOGGER = logging.getLogger(__name__)

MAX_ORIGINS = 10_000
MAX_UNTRUSTED_SEEN = 64
MAX_BATCH = 1000
MAX_BATCH_BYTES = 4 * 1024 * 1024  # the rest follows in the next round


class Outcome(StrEnum):
    """What happened to one received announcement."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    STALE = "stale"
    EXPIRED = "expired"
    FUTURE = "future"
    OWN = "own"
    MALFORMED = "malformed"
    FORGED = "forged"
    UNTRUSTED = "untrusted"
    FULL = "full"


class Change(StrEnum):
    """How the set of known announcements changed."""

    ADDED = "added"
    UPDATED = "updated"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One origin's newest verified announcement and the document its origin signed."""

    announcement: Announcement
    document: dict[str, Any]
    received_at: float
    expires_at: float
    size: int = 0


Listener = Callable[[Change, Announcement], None]


class GossipState:
    """Origin → newest verified announcement, with digests, expiry and change listeners."""

    def __init__(
        self,
        trust: TrustPolicy,
        *,
        own_node_id: str,
        max_ttl_s: float = 3600.0,
        max_skew_s: float = 30.0,
        clock: Callable[[], float] = time.time,
        renew_local: Callable[[], Announcement] | None = None,
        verified: VerifiedAnnouncements | None = None,
    ) -> None:
        self.trust = trust
        self.own_node_id = own_node_id
        self.max_ttl_s = max_ttl_s
        self.max_skew_s = max_skew_s
        self._clock = clock
        self._entries: dict[str, Entry] = {}
        self._seen: dict[str, int] = {}
        # Signed announcements refused as untrusted, newest last: who a person could
        # trust (node id -> (name, public key)), even without mDNS.
        self.untrusted: dict[str, tuple[str, str]] = {}
        self._listeners: list[Listener] = []
        self._renew_local = renew_local
        # Each distinct announcement stored is verified once (a duplicate from another
        # peer is recognised by its signed bytes, see VerifiedAnnouncements).
        self.verified = verified if verified is not None else VerifiedAnnouncements()
        # Kept beside _entries so a round between changes walks nothing: every held
        # origin's version, a time no later than the earliest moment any entry expires
        # or ends its lifetime (until then all of them may be sent), and the digest hash.
        self._versions: dict[str, int] = {}
        self._horizon = float("inf")
        self._hash: str | None = None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change, announcement)`` on every change; return an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _notify(self, change: Change, announcement: Announcement) -> None:
        self._hash = None
        for listener in tuple(self._listeners):
            try:
                listener(change, announcement)
            except Exception:
                _LOGGER.exception("mesh gossip listener failed")

    def get(self, origin: str) -> Entry | None:
        """Return the entry of ``origin`` or ``None``."""
        return self._entries.get(origin)

    def entries(self) -> list[Entry]:
        """Return every live entry, the local node's included."""
        return list(self._entries.values())

    def _held_version(self, origin: str) -> int:
        entry = self._entries.get(origin)
        return -1 if entry is None else entry.announcement.version

    def lifetime_end(self, announcement: Announcement) -> float:
        """Return when ``announcement`` expires by this node's rule (origin clock, capped TTL)."""
        return announcement.timestamp + min(announcement.ttl_s, self.max_ttl_s)

    def is_expired(self, document: dict[str, Any]) -> bool:
        """Return whether this node would reject a well-formed ``document`` as expired now."""
        timestamp, ttl = document.get("timestamp"), document.get("ttl_s")
        if not isinstance(timestamp, int | float) or not isinstance(ttl, int | float):
            return False  # not an announcement this rule applies to; the receiver decides
        return float(timestamp) + min(float(ttl), self.max_ttl_s) <= self._clock()

    def prune(self) -> list[Announcement]:
        """Drop expired remote entries and renew a stale own announcement; return the dropped.

        The own announcement is renewed (``renew_local``) once less than half of its
        lifetime is left, so what this node sends next is not expired on arrival.
        """
        dropped = self.expire()
        own = self._entries.get(self.own_node_id)
        if own is not None and self._renew_local is not None:
            announcement = own.announcement
            lifetime = min(announcement.ttl_s, self.max_ttl_s)
            if self._clock() >= announcement.timestamp + lifetime / 2:
                self.set_local(self._renew_local())
        return dropped

    def _hold(self, origin: str, entry: Entry) -> None:
        """Store ``entry`` as ``origin``'s (the caller notifies)."""
        self._entries[origin] = entry
        self._versions[origin] = entry.announcement.version
        end = min(entry.expires_at, self.lifetime_end(entry.announcement))
        self._horizon = min(self._horizon, end)

    def _drop(self, origin: str) -> Entry | None:
        """Remove ``origin``'s entry and return it (the caller notifies)."""
        self._versions.pop(origin, None)
        return self._entries.pop(origin, None)

    def _sendable_view(self) -> tuple[dict[str, Entry], dict[str, int]]:
        """Return the entries that may be sent now and their digest (read-only, pruned first).

        Until the earliest expiry every held entry may be sent, so this is the held
        entries themselves; only past it are they walked (and the horizon renewed).
        """
        self.prune()
        now = self._clock()
        if now < self._horizon:
            return self._entries, self._versions
        self._horizon = min(
            (min(e.expires_at, self.lifetime_end(e.announcement)) for e in self._entries.values()),
            default=float("inf"),
        )
        if now < self._horizon:
            return self._entries, self._versions
        entries = {
            origin: e
            for origin, e in self._entries.items()
            if e.expires_at > now and self.lifetime_end(e.announcement) > now
        }
        return entries, {origin: e.announcement.version for origin, e in entries.items()}

    def _sendable(self) -> dict[str, Entry]:
        """Return the entries that may be sent now (read-only)."""
        return self._sendable_view()[0]

    def digest(self) -> dict[str, int]:
        """Return ``{origin: version}`` of every entry that may be sent (pruned first)."""
        return dict(self._sendable_view()[1])

    def set_local(self, announcement: Announcement) -> None:
        """Store this node's own signed announcement (it never expires here)."""
        if announcement.node_id != self.own_node_id:
            raise ValueError("set_local needs this node's own announcement")
        previous = self._entries.get(self.own_node_id)
        self._hold(
            self.own_node_id,
            Entry(
                announcement=announcement,
                document=announcement.to_json(),
                received_at=self._clock(),
                expires_at=float("inf"),
                size=len(canonical_bytes(announcement.to_json())),
            ),
        )
        self._seen[self.own_node_id] = announcement.version
        self._notify(Change.ADDED if previous is None else Change.UPDATED, announcement)

    def accept(self, document: Any) -> Outcome:
        """Verify one received document and store it if it is new; return what happened."""
        try:
            verified = self.verified.verify(document)
        except UnauthenticatedError:
            return Outcome.FORGED
        except InvalidRequestError:
            return Outcome.MALFORMED
        announcement = verified.announcement
        origin = announcement.node_id
        if origin == self.own_node_id:
            return Outcome.OWN
        if not self.trust.is_trusted(announcement.public_key, announcement.node_name):
            self.note_untrusted(origin, announcement.node_name, announcement.public_key)
            return Outcome.UNTRUSTED
        self.untrusted.pop(origin, None)
        seen = self._seen.get(origin)
        if seen is not None and announcement.version == seen:
            return Outcome.DUPLICATE
        if seen is not None and announcement.version < seen:
            return Outcome.STALE
        now = self._clock()
        if announcement.timestamp > now + self.max_skew_s:
            return Outcome.FUTURE
        expires_at = self.lifetime_end(announcement)
        if expires_at <= now:
            return Outcome.EXPIRED
        if origin not in self._entries and len(self._entries) >= MAX_ORIGINS:
            return Outcome.FULL
        try:
            self.trust.check(announcement.public_key, announcement.node_name)
        except BridgeError:
            return Outcome.UNTRUSTED
        previous = self._entries.get(origin)
        self._hold(
            origin,
            Entry(
                announcement=announcement,
                document=document,
                received_at=now,
                expires_at=expires_at,
                size=verified.size,
            ),
        )
        self._seen[origin] = announcement.version
        self.verified.remember(verified)
        self._notify(Change.ADDED if previous is None else Change.UPDATED, announcement)
        return Outcome.ACCEPTED

    def note_untrusted(self, origin: str, name: str, public_key: str) -> None:
        """Remember a signed but untrusted node (listed so a person can trust it)."""
        self.untrusted.pop(origin, None)
        self.untrusted[origin] = (name[:128], public_key)
        while len(self.untrusted) > MAX_UNTRUSTED_SEEN:
            del self.untrusted[next(iter(self.untrusted))]

    def accept_many(self, documents: Any) -> dict[Outcome, int]:
        """Accept a batch of documents; return how many ended in each outcome."""
        if not isinstance(documents, list) or len(documents) > MAX_BATCH:
            raise InvalidRequestError(f"announcements must be a list of at most {MAX_BATCH}")
        counts: dict[Outcome, int] = {}
        for document in documents:
            outcome = self.accept(document)
            counts[outcome] = counts.get(outcome, 0) + 1
        return counts

    def remove(self, origin: str) -> bool:
        """Drop an origin's entry now (its version stays remembered); return whether it existed."""
        entry = self._drop(origin)
        if entry is None:
            return False
        self._notify(Change.REMOVED, entry.announcement)
        return True

    def expire(self) -> list[Announcement]:
        """Drop every entry whose time has passed and return the dropped announcements."""
        now = self._clock()
        if now < self._horizon:
            return []
        gone = [o for o, e in self._entries.items() if e.expires_at <= now]
        dropped = []
        for origin in gone:
            entry = self._entries.pop(origin)
            self._versions.pop(origin, None)
            dropped.append(entry.announcement)
            self._notify(Change.REMOVED, entry.announcement)
        return dropped

    def next_expiry(self) -> float | None:
        """Return the earliest expiry time of any remote entry, or ``None``."""
        times = [e.expires_at for e in self._entries.values() if e.expires_at != float("inf")]
        return min(times) if times else None

    # -- the exchange -------------------------------------------------------------------

    def digest_hash(self) -> str:
        """Return the SHA-256 of the canonical digest (cached while the digest is the same)."""
        _, digest = self._sendable_view()
        if digest is not self._versions:  # something ended: hash what may be sent now
            return hashlib.sha256(canonical_bytes(digest)).hexdigest()
        if self._hash is None:
            self._hash = hashlib.sha256(canonical_bytes(digest)).hexdigest()
        return self._hash

    def hash_message(self) -> dict[str, Any]:
        """Return step 1 of a hashed round: only the hash of this node's digest."""
        return {"type": "gossip_digest", "hash": self.digest_hash()}

    def handle_digest(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer step 1 with step 2.

        To a full digest: the documents the peer lacks and ``want``. To a hash: ``in_sync``
        when it equals this node's, else this node's digest (the peer then pushes what
        this node lacks and asks for what it wants, see ``handle_push``).
        """
        if "digest" not in message:
            remote_hash = message.get("hash")
            if not isinstance(remote_hash, str):
                raise InvalidRequestError("gossip_digest needs 'digest' or 'hash'")
            if remote_hash == self.digest_hash():
                return {"type": "gossip_reply", "in_sync": True}
            return {"type": "gossip_reply", "digest": self.digest()}
        remote = parse_digest(message.get("digest"), known=self._seen)
        send = self.newer_than(remote)
        want = [
            origin
            for origin, version in remote.items()
            if version > self._seen.get(origin, -1) and version > self._held_version(origin)
        ]
        return {"type": "gossip_reply", "announcements": send, "want": want[:MAX_BATCH]}

    def handle_reply(
        self, message: dict[str, Any]
    ) -> tuple[dict[Outcome, int], dict[str, Any] | None]:
        """Take step 2: store what came; return the counts and the step-3 push (or None)."""
        if message.get("in_sync") is True:
            return {}, None
        if "digest" in message and "announcements" not in message:
            remote = parse_digest(message.get("digest"), known=self._seen)
            send = self.newer_than(remote)
            wanted = [o for o, v in remote.items() if v > self._seen.get(o, -1)]
            if not send and not wanted:
                return {}, None
            return {}, {"type": "gossip_push", "announcements": send, "want": wanted[:MAX_BATCH]}
        counts = self.accept_many(message.get("announcements"))
        push = self.documents(message.get("want"))
        return counts, ({"type": "gossip_push", "announcements": push} if push else None)

    def newer_than(self, remote: dict[str, int]) -> list[dict[str, Any]]:
        """Return the documents this node holds newer than ``remote`` says (at most a batch)."""
        return _batch(
            e
            for origin, e in self._sendable().items()
            if e.announcement.version > remote.get(origin, -1)
        )

    def documents(self, origins: Any) -> list[dict[str, Any]]:
        """Return the held documents of the listed origins (unknown ones skipped)."""
        if not isinstance(origins, list) or len(origins) > MAX_BATCH:
            raise InvalidRequestError("want must be a list of node ids")
        sendable = self._sendable()
        return _batch(sendable[o] for o in origins if isinstance(o, str) and o in sendable)

    def handle_push(self, message: dict[str, Any]) -> dict[Outcome, int]:
        """Take step 3 (or an unsolicited push of a changed announcement)."""
        return self.accept_many(message.get("announcements"))


def _batch(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """Return documents up to ``MAX_BATCH`` of them or ``MAX_BATCH_BYTES`` (at least one)."""
    batch: list[dict[str, Any]] = []
    total = 0
    for entry in entries:
        if batch and (len(batch) >= MAX_BATCH or total + entry.size > MAX_BATCH_BYTES):
            break
        batch.append(entry.document)
        total += entry.size
    return batch


def parse_digest(value: Any, known: Container[str] = ()) -> dict[str, int]:
    """Validate a digest ``{node_id: version}`` (raise ``InvalidRequestError``).

    Node ids in ``known`` (ids this node has already validated) skip the pattern check.
    """
    if not isinstance(value, dict) or len(value) > MAX_ORIGINS:
        raise InvalidRequestError("digest must be an object of node id to version")
    digest: dict[str, int] = {}
    for origin, version in value.items():
        if not isinstance(origin, str) or (origin not in known and not NODE_ID_RE.match(origin)):
            raise InvalidRequestError("digest has a malformed node id")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise InvalidRequestError("digest versions must be non-negative integers")
        digest[origin] = version
    return digest
