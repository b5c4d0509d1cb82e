"""The gossip simulation (``gossip_sim.py``): 1,000 nodes converge, forgeries never spread.

What the 1,000-node test runs: 1,000 nodes, each with its own ed25519 key, signed
announcement, ``GossipState`` and trust policy, in the hashed push-pull exchange bridges
run. To stay well under a minute on CI's two cores, two things are simulated and named
in ``gossip_sim.py``: the gossip messages travel without their signed envelopes and
answers (``envelopes=False``; the smaller test below and ``bench/gossip.py`` run them),
and each distinct genuine announcement is verified once for the whole process
(``shared_verification``) instead of once per node. A forged, unsigned or untrusted
document is still checked in full by every node that receives it: a verification
cache only ever holds what verified.
"""

from __future__ import annotations

import copy
import time

from bridge.mesh.gossip import Outcome
from tests.mesh.gossip_sim import Simulation, light_announcement

from .conftest import make_identity


def test_a_thousand_nodes_converge_and_forged_announcements_never_spread() -> None:
    sim = Simulation.build(1000, seed=27, envelopes=False, shared_verification=True)
    victim, relay = sim.nodes[1], sim.nodes[2]
    victim_id = victim.identity.node_id
    genuine = victim.state.get(victim_id)
    assert genuine is not None
    # A relay (trusted, but compromised) hands out the victim's announcement raised to
    # version 99 with its first tool marked harmless, the same without a signature,
    # and a validly signed announcement of a node nobody trusts.
    forged = copy.deepcopy(genuine.document)
    forged["version"] = 99
    forged["capabilities"][0]["tools"][0]["definition"]["execution"]["timeout_ms"] = 1
    unsigned = {k: v for k, v in forged.items() if k != "signature"}
    stranger = light_announcement(make_identity("stranger"), 1, time.time()).to_json()
    for target in sim.nodes[3:13]:
        counts = sim.push(relay, target, [forged, unsigned, stranger])
        assert counts == {Outcome.FORGED: 1, Outcome.MALFORMED: 1, Outcome.UNTRUSTED: 1}

    rounds = sim.run_until(sim.converged, max_rounds=30)

    everyone = {node.identity.node_id: 1 for node in sim.nodes}
    assert len(everyone) == 1000
    for node in sim.nodes:
        assert node.state.digest() == everyone
    assert 1 <= rounds <= 30
    # Nobody stored and passed on what was refused: exactly the ten pushes were refused.
    assert sim.refused == {Outcome.FORGED: 10, Outcome.MALFORMED: 10, Outcome.UNTRUSTED: 10}
    # Each genuine announcement verified once; the stranger's (validly signed, untrusted)
    # at each of the ten nodes it was pushed to, and never kept.
    assert sim.verifications() == 1000 + 10

    # One node's change reaches everybody.
    victim.version = 2
    victim.announce(time.time())
    sim.run_until(lambda: sim.holds_everywhere(victim_id, 2), max_rounds=30)
    assert sim.refused == {Outcome.FORGED: 10, Outcome.MALFORMED: 10, Outcome.UNTRUSTED: 10}


def test_with_envelopes_and_signed_answers_every_node_verifies_every_announcement_once() -> None:
    sim = Simulation.build(40, seed=5, envelopes=True, signed_answers=True)
    forged = copy.deepcopy(sim.nodes[1].state.entries()[0].document)
    forged["endpoints"] = ["http://192.0.2.66:8765"]
    assert sim.push(sim.nodes[2], sim.nodes[3], [forged]) == {Outcome.FORGED: 1}

    sim.run_until(sim.converged, max_rounds=30)

    everyone = {node.identity.node_id: 1 for node in sim.nodes}
    for node in sim.nodes:
        assert node.state.digest() == everyone
        assert node.state.get(sim.nodes[1].identity.node_id).document["endpoints"] == [  # type: ignore[union-attr]
            "http://192.0.2.1:8765"
        ]
    # Each node verified each other node's announcement itself, once: 40 x 39.
    assert sim.verifications() == 40 * 39
    assert sim.refused == {Outcome.FORGED: 1}
