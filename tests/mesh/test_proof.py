"""Peer proofs: a challenge answered by the key, nothing else; the proof budget."""

from __future__ import annotations

import pytest

from bridge.errors import RateLimitedError, UnauthenticatedError
from bridge.mesh.announce import canonical_bytes
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.proof import ProofBudget, challenge, check_proof, host_of, prove


def test_a_proof_answers_one_challenge(alice: NodeIdentity, bob: NodeIdentity) -> None:
    sent = challenge(alice, url="http://10.0.0.2:8765", to=bob.node_id)
    proof = prove(bob, sent)
    peer = check_proof(proof, sent)
    assert (peer.node_id, peer.public_key, peer.url) == (
        bob.node_id,
        bob.public_key_b64,
        "http://10.0.0.2:8765",
    )
    other = challenge(alice, url="http://10.0.0.2:8765", to=bob.node_id)
    with pytest.raises(UnauthenticatedError, match="another challenge"):
        check_proof(proof, other)  # replayed for a new nonce
    moved = dict(sent, url="http://10.0.0.9:8765")
    with pytest.raises(UnauthenticatedError, match="another challenge"):
        check_proof(proof, moved)  # relayed for another address


def test_a_key_cannot_prove_another_nodes_id(alice: NodeIdentity, bob: NodeIdentity) -> None:
    sent = challenge(alice, url="http://10.0.0.3:8765", to=bob.node_id)
    forged = dict(prove(alice, sent), node_id=bob.node_id)
    forged["signature"] = alice.sign(
        canonical_bytes({k: v for k, v in forged.items() if k != "signature"})
    )
    with pytest.raises(UnauthenticatedError, match="not its key's"):
        check_proof(forged, sent)
    tampered = dict(prove(bob, sent), node_name="renamed")
    with pytest.raises(UnauthenticatedError, match="signature is invalid"):
        check_proof(tampered, sent)
    with pytest.raises(UnauthenticatedError, match="no mesh_proof"):
        check_proof({"response": "hi"}, sent)


def test_the_proof_budget_refills() -> None:
    now = [0.0]
    budget = ProofBudget(rate=2.0, burst=3.0, clock=lambda: now[0])
    for _ in range(3):
        budget.take()
    with pytest.raises(RateLimitedError):
        budget.take()
    now[0] = 1.0  # two more a second
    budget.take()
    budget.take()
    with pytest.raises(RateLimitedError):
        budget.take()


def test_host_of() -> None:
    assert host_of("http://10.0.0.2:8765") == "10.0.0.2"
    assert host_of("http://[fe80::1]:80") == "fe80::1"
    assert host_of("not a url") == ""


def test_one_address_asking_fast_does_not_use_up_everyones_proofs() -> None:
    now = [0.0]
    budget = ProofBudget(
        rate=50.0, burst=100.0, clock=lambda: now[0], source_rate=2.0, source_burst=10.0
    )
    for _ in range(10):
        budget.take("10.0.0.66")
    refused = 0
    for _ in range(500):  # the attacker keeps asking in the same instant
        with pytest.raises(RateLimitedError) as err:
            budget.take("10.0.0.66")
        assert err.value.details == {"reason": "challenges", "scope": "source"}
        refused += 1
    assert refused == 500
    # A real peer at another address is still answered: the refused asks cost nothing.
    for _ in range(10):
        budget.take("10.0.0.2")
    now[0] = 1.0  # the attacker gets two more a second, no more
    budget.take("10.0.0.66")
    budget.take("10.0.0.66")
    with pytest.raises(RateLimitedError):
        budget.take("10.0.0.66")


def test_many_addresses_still_meet_the_node_bound_and_are_remembered_boundedly() -> None:
    now = [0.0]
    budget = ProofBudget(rate=1.0, burst=5.0, clock=lambda: now[0], max_sources=3)
    for i in range(5):
        budget.take(f"10.0.1.{i}")
    with pytest.raises(RateLimitedError) as err:
        budget.take("10.0.1.99")
    assert err.value.details == {"reason": "challenges", "scope": "node"}
    assert len(budget._sources) == 3  # the least recently seen were forgotten
