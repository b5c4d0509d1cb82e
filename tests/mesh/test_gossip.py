"""Gossip state: verification before storing, replay and expiry rules, push-pull rounds."""

from __future__ import annotations

import copy
import json

import pytest

from bridge.mesh.announce import Announcement
from bridge.mesh.gossip import Change, GossipState, Outcome
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.trust import TrustPolicy
from tests.support.gossip import digest_message

from .conftest import make_announcement, make_identity


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def state_for(me: NodeIdentity, trusted: tuple[NodeIdentity, ...], clock: Clock) -> GossipState:
    policy = TrustPolicy("allowlist", tuple(t.node_id for t in trusted), me.public_key_b64)
    return GossipState(policy, own_node_id=me.node_id, max_ttl_s=600, max_skew_s=5, clock=clock)


def test_accept_verifies_and_notifies(alice: NodeIdentity, bob: NodeIdentity) -> None:
    clock = Clock(1000.0)
    state = state_for(alice, (bob,), clock)
    changes: list[tuple[Change, str, int]] = []
    state.subscribe(lambda c, a: changes.append((c, a.node_id, a.version)))
    v1 = make_announcement(bob, version=1, timestamp=1000.0, ttl_s=30)
    v2 = make_announcement(bob, version=2, timestamp=1001.0, ttl_s=30)
    assert state.accept(v1.to_json()) is Outcome.ACCEPTED
    assert state.accept(v1.to_json()) is Outcome.DUPLICATE
    assert state.accept(v2.to_json()) is Outcome.ACCEPTED
    # Replaying the older, validly signed announcement is refused.
    assert state.accept(v1.to_json()) is Outcome.STALE
    assert state.digest() == {bob.node_id: 2}
    assert changes == [(Change.ADDED, bob.node_id, 1), (Change.UPDATED, bob.node_id, 2)]


def test_forged_untrusted_and_own_are_not_stored(alice: NodeIdentity, bob: NodeIdentity) -> None:
    clock = Clock(1000.0)
    state = state_for(alice, (bob,), clock)
    tampered = make_announcement(bob, timestamp=1000.0).to_json()
    tampered["version"] = 99
    assert state.accept(tampered) is Outcome.FORGED
    stranger = make_identity("stranger")
    assert (
        state.accept(make_announcement(stranger, timestamp=1000.0).to_json()) is Outcome.UNTRUSTED
    )
    assert state.accept(make_announcement(alice, timestamp=1000.0).to_json()) is Outcome.OWN
    assert state.accept({"type": "capability_announce"}) is Outcome.MALFORMED
    assert state.digest() == {}


def test_expiry_uses_origin_time_and_replay_after_expiry_is_refused(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    clock = Clock(1000.0)
    state = state_for(alice, (bob,), clock)
    ann = make_announcement(bob, version=5, timestamp=1000.0, ttl_s=10)
    assert state.accept(ann.to_json()) is Outcome.ACCEPTED
    assert state.next_expiry() == 1010.0
    clock.now = 1009.9
    assert state.expire() == []
    clock.now = 1010.0
    assert [a.version for a in state.expire()] == [5]
    assert state.digest() == {}
    # The same document replayed after expiry: the version is remembered.
    assert state.accept(ann.to_json()) is Outcome.DUPLICATE
    # An old document from a forgotten origin is expired by its own timestamp.
    carol = make_identity("carol")
    state2 = state_for(alice, (carol,), clock)
    assert (
        state2.accept(make_announcement(carol, timestamp=990.0, ttl_s=10).to_json())
        is Outcome.EXPIRED
    )
    assert state2.accept(make_announcement(carol, timestamp=1020.0).to_json()) is Outcome.FUTURE


def test_ttl_is_capped_by_the_local_maximum(alice: NodeIdentity, bob: NodeIdentity) -> None:
    clock = Clock(1000.0)
    state = state_for(alice, (bob,), clock)
    state.accept(make_announcement(bob, timestamp=1000.0, ttl_s=1e9).to_json())
    assert state.next_expiry() == 1600.0


def test_push_pull_round_converges_both_sides(alice: NodeIdentity, bob: NodeIdentity) -> None:
    clock = Clock(1000.0)
    carol, dave = make_identity("carol"), make_identity("dave")
    everyone = (alice, bob, carol, dave)
    a = state_for(alice, everyone, clock)
    b = state_for(bob, everyone, clock)
    a.set_local(make_announcement(alice, timestamp=1000.0))
    b.set_local(make_announcement(bob, timestamp=1000.0))
    a.accept(make_announcement(carol, version=3, timestamp=1000.0).to_json())
    b.accept(make_announcement(carol, version=2, timestamp=999.0).to_json())
    b.accept(make_announcement(dave, version=1, timestamp=1000.0).to_json())
    # Every message crosses a JSON encoding, as on the wire.
    wire = lambda m: json.loads(json.dumps(m))  # noqa: E731
    reply = wire(b.handle_digest(wire(digest_message(a))))
    assert sorted(d["node_name"] for d in reply["announcements"]) == ["bob", "dave"]
    assert sorted(reply["want"]) == sorted([alice.node_id, carol.node_id])
    counts, push = a.handle_reply(reply)
    assert counts == {Outcome.ACCEPTED: 2}
    assert b.handle_push(wire(push)) == {Outcome.ACCEPTED: 2}
    assert (
        a.digest()
        == b.digest()
        == {
            alice.node_id: 1,
            bob.node_id: 1,
            carol.node_id: 3,
            dave.node_id: 1,
        }
    )
    # The relayed documents are byte-for-byte what their origins signed.
    assert b.get(carol.node_id) is not None
    assert b.get(carol.node_id).document == copy.deepcopy(a.get(carol.node_id).document)  # type: ignore[union-attr]


def test_hashed_round_is_tiny_in_sync_and_converges_otherwise(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    clock = Clock(1000.0)
    carol = make_identity("carol")
    everyone = (alice, bob, carol)
    a = state_for(alice, everyone, clock)
    b = state_for(bob, everyone, clock)
    a.set_local(make_announcement(alice, timestamp=1000.0))
    b.set_local(make_announcement(bob, timestamp=1000.0))
    b.accept(make_announcement(carol, version=4, timestamp=1000.0).to_json())
    wire = lambda m: json.loads(json.dumps(m))  # noqa: E731
    # Out of sync: b answers with its digest, a pushes what b lacks and wants the rest.
    reply = wire(b.handle_digest(wire(a.hash_message())))
    assert reply == {"type": "gossip_reply", "digest": b.digest()}
    counts, push = a.handle_reply(reply)
    assert counts == {}
    assert push is not None
    assert [d["node_name"] for d in push["announcements"]] == ["alice"]
    assert sorted(push["want"]) == sorted([bob.node_id, carol.node_id])
    assert b.handle_push(wire(push)) == {Outcome.ACCEPTED: 1}
    wanted = wire(b.documents(push["want"]))
    assert a.accept_many(wanted) == {Outcome.ACCEPTED: 2}
    assert a.digest() == b.digest()
    assert a.digest_hash() == b.digest_hash()
    # In sync: the answer is one flag, and there is nothing to push.
    reply = wire(b.handle_digest(wire(a.hash_message())))
    assert reply == {"type": "gossip_reply", "in_sync": True}
    assert a.handle_reply(reply) == ({}, None)


def test_batches_are_capped_by_bytes(alice: NodeIdentity, monkeypatch: pytest.MonkeyPatch) -> None:
    from bridge.mesh import gossip

    clock = Clock(1000.0)
    others = [make_identity(f"n{i}") for i in range(5)]
    state = state_for(alice, tuple(others), clock)
    for ident in others:
        assert (
            state.accept(make_announcement(ident, timestamp=1000.0).to_json()) is Outcome.ACCEPTED
        )
    size = max(e.size for e in state.entries())
    assert size == len(
        json.dumps(state.entries()[0].document, separators=(",", ":"), ensure_ascii=False)
    )
    monkeypatch.setattr(gossip, "MAX_BATCH_BYTES", 2 * size + 1)
    assert len(state.newer_than({})) == 2
    assert len(state.documents([i.node_id for i in others])) == 2
    monkeypatch.setattr(gossip, "MAX_BATCH_BYTES", 1)
    assert len(state.newer_than({})) == 1  # never starves: at least one document


def test_nothing_expired_is_sent_and_a_stale_own_announcement_is_renewed(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    clock = Clock(1000.0)
    carol = make_identity("carol")
    everyone = (alice, bob, carol)
    renewed: list[int] = []

    def renew() -> Announcement:
        renewed.append(len(renewed) + 2)
        return make_announcement(alice, version=renewed[-1], timestamp=clock.now, ttl_s=3)

    policy = TrustPolicy("allowlist", tuple(t.node_id for t in everyone), alice.public_key_b64)
    a = GossipState(
        policy, own_node_id=alice.node_id, max_ttl_s=600, clock=clock, renew_local=renew
    )
    a.set_local(make_announcement(alice, version=1, timestamp=1000.0, ttl_s=3))
    assert a.accept(make_announcement(bob, timestamp=1000.0, ttl_s=3).to_json()) is Outcome.ACCEPTED
    # Half the own lifetime left: nothing renewed yet, both are sent.
    clock.now = 1001.4
    assert a.digest() == {alice.node_id: 1, bob.node_id: 1}
    # The loop was held up past bob's expiry (not pruned yet) and half of a's lifetime.
    clock.now = 1003.5
    fresh = state_for(carol, everyone, clock)
    reply = a.handle_digest({"type": "gossip_digest", "digest": {}})
    assert [d["node_name"] for d in reply["announcements"]] == ["alice"]
    assert fresh.accept_many(reply["announcements"]) == {Outcome.ACCEPTED: 1}
    assert fresh.digest() == {alice.node_id: 2}
    assert renewed == [2]
    assert a.digest() == {alice.node_id: 2}
    assert a.documents([alice.node_id, bob.node_id])[0]["version"] == 2
    assert len(a.documents([bob.node_id])) == 0


def test_stale_entries_are_never_in_a_digest_or_a_reply(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    clock = Clock(1000.0)
    carol = make_identity("carol")
    everyone = (alice, bob, carol)
    a = state_for(alice, everyone, clock)  # no renew_local: a stale own entry is held back
    a.set_local(make_announcement(alice, timestamp=1000.0, ttl_s=3))
    assert a.accept(make_announcement(bob, timestamp=1000.0, ttl_s=3).to_json()) is Outcome.ACCEPTED
    in_sync_hash = a.digest_hash()
    clock.now = 1003.0  # both expired; the gossip loop has not run expire() yet
    fresh = state_for(carol, everyone, clock)
    assert digest_message(a) == {"type": "gossip_digest", "digest": {}}
    assert a.hash_message()["hash"] != in_sync_hash
    reply = a.handle_digest({"type": "gossip_digest", "digest": {}})
    assert reply == {"type": "gossip_reply", "announcements": [], "want": []}
    assert a.handle_digest({"type": "gossip_digest", "hash": in_sync_hash}) == {
        "type": "gossip_reply",
        "digest": {},
    }
    counts, push = a.handle_reply({"type": "gossip_reply", "digest": {}})
    assert (counts, push) == ({}, None)
    assert a.documents([alice.node_id, bob.node_id]) == []
    assert fresh.digest() == {}
    assert a.get(bob.node_id) is None  # pruned
    assert a.is_expired(make_announcement(bob, timestamp=1000.0, ttl_s=3).to_json())
    assert not a.is_expired(make_announcement(bob, timestamp=1000.5, ttl_s=3).to_json())


def test_a_stored_announcement_is_verified_once_and_an_untrusted_one_is_not_kept(
    alice: NodeIdentity, bob: NodeIdentity
) -> None:
    clock = Clock(1000.0)
    state = state_for(alice, (bob,), clock)
    doc = make_announcement(bob, version=1, timestamp=1000.0).to_json()
    assert state.accept(doc) is Outcome.ACCEPTED
    assert state.accept(json.loads(json.dumps(doc))) is Outcome.DUPLICATE
    assert state.verified.verified == 1
    stranger = make_announcement(make_identity("stranger"), timestamp=1000.0).to_json()
    assert state.accept(stranger) is Outcome.UNTRUSTED
    assert state.accept(stranger) is Outcome.UNTRUSTED
    assert state.verified.verified == 3  # checked each time, never kept
    assert len(state.verified) == 1
