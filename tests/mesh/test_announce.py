"""Announcement encoding, signing and verification with real ed25519 keys."""

from __future__ import annotations

import copy
import json

import pytest

from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.mesh.announce import canonical_bytes, parameters_hash, verify_document
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
