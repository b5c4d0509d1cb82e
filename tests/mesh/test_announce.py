"""Announcement encoding, signing and verification with real ed25519 keys."""

from __future__ import annotations

import copy
import json

import pytest

from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.mesh.announce import (
    VerifiedAnnouncements,
    canonical_bytes,
    parameters_hash,
    verify_document,
)
from bridge.mesh.node_id import NodeIdentity, fingerprint_for, node_id_for

from .conftest import ECHO_PARAMS, make_announcement, make_identity


def test_node_id_is_derived_from_the_key(alice: NodeIdentity) -> None:
    assert alice.node_id == node_id_for(alice.public_key_b64)
    assert len(alice.node_id) == 26
    assert alice.fingerprint == fingerprint_for(alice.public_key_b64)
    assert len(alice.fingerprint) == 64
    assert make_identity("alice").node_id != alice.node_id


def test_signed_announcement_round_trips_through_json(alice: NodeIdentity) -> None:
    ann = make_announcement(alice, version=7)
    doc = json.loads(json.dumps(ann.to_json()))
    parsed = verify_document(doc)
    assert parsed == ann
    assert [t.identity for t in parsed.tools()] == ["core:echo@1.0.0"]
    assert parsed.tools()[0].parameters_hash == parameters_hash(ECHO_PARAMS)
    assert parsed.devices[0].name == "Lamp"


def test_canonical_bytes_ignore_key_order() -> None:
    assert canonical_bytes({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def test_tampered_announcement_is_rejected(alice: NodeIdentity) -> None:
    doc = make_announcement(alice).to_json()
    tampered = copy.deepcopy(doc)
    tampered["capabilities"][0]["tools"][0]["description"] = "unlock the front door"
    with pytest.raises(UnauthenticatedError, match="signature is invalid"):
        verify_document(tampered)


def test_announcement_claiming_another_node_id_is_rejected(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    # Mallory signs a correct document with her key but claims Alice's node id.
    forged = make_announcement(bob).to_json()
    forged["node_id"] = alice.node_id
    with pytest.raises(UnauthenticatedError, match="does not belong"):
        verify_document(forged)


def test_signature_by_another_key_is_rejected(alice: NodeIdentity, bob: NodeIdentity) -> None:
    doc = make_announcement(alice).to_json()
    doc["signature"] = make_announcement(bob).signature
    with pytest.raises(UnauthenticatedError):
        verify_document(doc)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("type", "hello", "not a capability_announce"),
        ("protocol", 2, "unsupported mesh protocol"),
        ("version", -1, "version"),
        ("version", True, "version"),
        ("ttl_s", 0, "ttl_s"),
        ("timestamp", "now", "timestamp"),
        ("endpoints", ["ftp://x"], "endpoints"),
        ("capabilities", {}, "capabilities"),
        ("node_id", "UPPER", "node_id"),
    ],
)
def test_malformed_announcement_is_refused(
    alice: NodeIdentity, field: str, value: object, message: str
) -> None:
    doc = make_announcement(alice).to_json()
    doc[field] = value
    with pytest.raises(InvalidRequestError, match=message):
        verify_document(doc)


def test_only_the_origin_can_sign(alice: NodeIdentity, bob: NodeIdentity) -> None:
    ann = make_announcement(alice)
    with pytest.raises(ValueError, match="origin"):
        ann.signed(bob)


def test_each_distinct_signed_announcement_is_verified_once(alice: NodeIdentity) -> None:
    cache = VerifiedAnnouncements()
    doc = make_announcement(alice, version=3, timestamp=1000.0).to_json()
    first = cache.verify(doc)
    assert first.announcement.version == 3
    assert first.size == len(canonical_bytes(doc))
    assert len(cache) == 0  # kept only once remembered (gossip: once stored)
    cache.remember(first)
    # The same object, and an equal copy that crossed the wire: no second verification.
    assert cache.verify(doc) is first
    assert cache.verify(json.loads(json.dumps(doc))) is first
    assert cache.verified == 1
    # Same key and signature over other bytes: verified in full, and refused.
    tampered = copy.deepcopy(doc)
    tampered["capabilities"][0]["tools"][0]["definition"]["dangerous"] = False
    with pytest.raises(UnauthenticatedError):
        cache.verify(tampered)
    # Equal for Python (1000 == 1000.0) but not the bytes that were signed: refused too.
    respelled = dict(doc, timestamp=1000)
    assert respelled == doc
    with pytest.raises(UnauthenticatedError):
        cache.verify(respelled)
    unsigned = dict(doc, signature="")
    with pytest.raises(InvalidRequestError):
        cache.verify(unsigned)
    assert cache.verified == 1
    assert len(cache) == 1


def test_the_verification_cache_is_bounded(alice: NodeIdentity) -> None:
    cache = VerifiedAnnouncements(max_size=2)
    docs = [make_announcement(alice, version=v).to_json() for v in (1, 2, 3)]
    for doc in docs:
        cache.remember(cache.verify(doc))
    assert len(cache) == 2
    assert cache.verified == 3
    cache.verify(docs[2])  # still held
    assert cache.verified == 3
    cache.verify(docs[0])  # dropped as the oldest: verified again
    assert cache.verified == 4
    # Room for the last two documents (their sizes differ by a byte or two with the
    # clock's digits), never for all three.
    sizes = [len(canonical_bytes(doc)) for doc in docs]
    by_bytes = VerifiedAnnouncements(max_bytes=sizes[1] + sizes[2] + 8)
    for doc in docs:
        by_bytes.remember(by_bytes.verify(doc))
    assert len(by_bytes) == 2


def test_only_each_signers_latest_announcements_are_kept(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    # A node re-signs its announcement every interval: in the soak (every 2 s, 45 tools)
    # keeping each one grew a peer by 56 MB in 8 minutes, inside the byte bound.
    cache = VerifiedAnnouncements()
    docs = [make_announcement(alice, version=v).to_json() for v in range(1, 101)]
    for doc in docs:
        cache.remember(cache.verify(doc))
    theirs = make_announcement(bob, version=7).to_json()
    cache.remember(cache.verify(theirs))
    assert len(cache) == 3  # alice's last two, bob's one
    assert cache.verified == 101
    for doc in (docs[-1], docs[-2], theirs):
        cache.verify(doc)
    assert cache.verified == 101  # still held
    cache.verify(docs[0])  # superseded long ago: checked again, and not kept
    assert (cache.verified, len(cache)) == (102, 3)
    cache.remember(cache.verify(docs[-1]))  # remembered again: not a second copy
    assert len(cache) == 3
