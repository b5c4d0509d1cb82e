"""Gossip convergence benchmark: N simulated mesh nodes in one process.

Every node has a real ed25519 key (``NodeKey``), a signed ``capability_announce`` with
realistic tool definitions (a dimmable Matter light: on, off, toggle, brightness), and
a real ``GossipState``. Transport is simulated: messages are the real signed envelopes,
JSON-encoded to bytes and decoded on the other side, and every received announcement
is verified with ed25519 before it is stored. Membership is full (every node knows
every other one, as after mDNS discovery on one LAN).

A round: every node, in random order, runs one push-pull exchange with ``--fanout``
random peers — the hashed exchange the bridges use (digest hash → ``in_sync`` or the
peer's digest → push with ``want`` → wanted documents), or with ``--full-digest`` the
full one (digest → newer documents and ``want`` → push). Printed per N:
rounds and bytes sent per node until every node holds every announcement, then the
same for one node's changed announcement spreading to everybody, and the CPU time of
the exchanges. Every answer is a ``mesh_answer`` signed by the answering node and
verified by the asking one, as bridges do; ``--answers both`` (the default) also runs
the same seed with unsigned answers (the protocol before answers were signed) and
prints the CPU per exchange of both, before -> after, in one run.

Usage: python bench/gossip.py [--nodes 10 100 1000] [--fanout 1] [--seed 1] [--full-digest]
       [--answers signed|unsigned|both]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from bridge.auth.keys import NodeKey
from bridge.mesh.announce import Announcement, Capability, DeviceInfo, ToolSummary, parameters_hash
from bridge.mesh.envelope import EnvelopeVerifier, open_answer, seal, seal_answer
from bridge.mesh.gossip import GossipState
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.trust import TrustPolicy

TTL_S = 3600.0


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


@dataclass
class SimNode:
    """One simulated node: identity, gossip state, envelope verifier, byte counters."""

    identity: NodeIdentity
    state: GossipState
    verifier: EnvelopeVerifier
    version: int = 1
    sent_bytes: int = 0
    received: dict[str, int] = field(default_factory=dict)

    def announce(self, now: float) -> None:
        """Sign and store a new version of this node's announcement."""
        slug = f"room_{self.identity.node_id[:6]}"
        ann = Announcement(
            node_id=self.identity.node_id,
            node_name=self.identity.name,
            public_key=self.identity.public_key_b64,
            version=self.version,
            timestamp=now,
            ttl_s=TTL_S,
            endpoints=("http://192.0.2.1:8765",),
            capabilities=(Capability(name="matter", tools=light_tools(slug)),),
            devices=(DeviceInfo(id="matter:1", name=slug, type="light", reachable=True),),
        ).signed(self.identity)
        self.state.set_local(ann)


def wire(message: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """Encode a message as it would travel and decode it on the other side."""
    data = json.dumps(message, separators=(",", ":")).encode("utf-8")
    decoded: dict[str, Any] = json.loads(data)
    return data, decoded


SIGNED_ANSWERS = True


def answer(a: SimNode, b: SimNode, env: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """Return what ``a`` reads of ``b``'s answer to ``env``: signed and verified, or plain."""
    if not SIGNED_ANSWERS:
        data, plain = wire(body)
        b.sent_bytes += len(data)
        return plain
    signed = seal_answer(
        b.identity, to=a.identity.node_id, nonce=env["nonce"], status=200, body=body
    )
    data, doc = wire(signed)
    b.sent_bytes += len(data)
    _status, opened = open_answer(
        doc,
        peer_id=b.identity.node_id,
        public_key=b.identity.public_key_b64,
        own_id=a.identity.node_id,
        nonce=env["nonce"],
    )
    return opened


def exchange(a: SimNode, b: SimNode) -> None:
    """Run one hashed push-pull round from ``a`` to ``b`` (what bridges do)."""
    data, env = wire(
        seal(a.identity, to=b.identity.node_id, kind="gossip_digest", body=a.state.hash_message())
    )
    a.sent_bytes += len(data)
    _, body = b.verifier.open(env, "gossip_digest")
    reply = answer(a, b, env, b.state.handle_digest(body))
    _, push = a.state.handle_reply(reply)
    if push is None:
        return
    data, env = wire(seal(a.identity, to=b.identity.node_id, kind="gossip_push", body=push))
    a.sent_bytes += len(data)
    _, body = b.verifier.open(env, "gossip_push")
    b.state.handle_push(body)
    got = answer(a, b, env, {"announcements": b.state.documents(body.get("want", []))})
    a.state.accept_many(got["announcements"])


def exchange_full(a: SimNode, b: SimNode) -> None:
    """Run one full-digest push-pull round from ``a`` to ``b`` (for comparison)."""
    data, env = wire(
        seal(a.identity, to=b.identity.node_id, kind="gossip_digest", body=a.state.digest_message())
    )
    a.sent_bytes += len(data)
    _, body = b.verifier.open(env, "gossip_digest")
    reply = answer(a, b, env, b.state.handle_digest(body))
    _, push = a.state.handle_reply(reply)
    if push is not None:
        data, env = wire(seal(a.identity, to=b.identity.node_id, kind="gossip_push", body=push))
        a.sent_bytes += len(data)
        _, body = b.verifier.open(env, "gossip_push")
        b.state.handle_push(body)


def build(n: int) -> list[SimNode]:
    """Create ``n`` nodes that trust each other, each holding only its own announcement."""
    identities = [NodeIdentity.from_key(NodeKey.generate(), f"node-{i}") for i in range(n)]
    allow = tuple(i.node_id for i in identities)
    now = time.time()
    nodes = []
    for ident in identities:
        trust = TrustPolicy("allowlist", allow, ident.public_key_b64)
        state = GossipState(trust, own_node_id=ident.node_id, max_ttl_s=TTL_S)
        verifier = EnvelopeVerifier(ident.node_id, trust, max_skew_s=600)
        node = SimNode(identity=ident, state=state, verifier=verifier)
        node.announce(now)
        nodes.append(node)
    return nodes


EXCHANGES = [0, 0.0]  # count, CPU seconds


def one_round(nodes: list[SimNode], rng: random.Random, fanout: int, full: bool) -> None:
    """Let every node, in random order, gossip with ``fanout`` random peers."""
    order = list(nodes)
    rng.shuffle(order)
    run = exchange_full if full else exchange
    for a in order:
        for b in rng.sample([x for x in nodes if x is not a], fanout):
            cpu = time.process_time()
            run(a, b)
            EXCHANGES[0] += 1
            EXCHANGES[1] += time.process_time() - cpu


def run_until(nodes: list[SimNode], rng: random.Random, fanout: int, full: bool, done: Any) -> int:
    """Run rounds until ``done()`` holds; return the number of rounds."""
    rounds = 0
    while not done():
        rounds += 1
        one_round(nodes, rng, fanout, full)
        if rounds > 200:
            raise RuntimeError("no convergence after 200 rounds")
    return rounds


def bench(n: int, fanout: int, seed: int, full: bool) -> None:
    """Measure full convergence and one change spreading for ``n`` nodes."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    nodes = build(n)
    ann_bytes = len(json.dumps(nodes[0].state.entries()[0].document, separators=(",", ":")))
    target = {x.identity.node_id: 1 for x in nodes}
    t1 = time.perf_counter()
    rounds = run_until(
        nodes, rng, fanout, full, lambda: all(x.state.digest() == target for x in nodes)
    )
    t2 = time.perf_counter()
    per_node = [x.sent_bytes for x in nodes]
    print(
        f"N={n:5d} fanout={fanout} announcement={ann_bytes} B | full convergence: "
        f"{rounds} rounds, sent per node mean {statistics.mean(per_node) / 1024:.1f} KiB "
        f"(max {max(per_node) / 1024:.1f} KiB), total {sum(per_node) / 2**20:.2f} MiB, "
        f"{t2 - t1:.1f} s wall"
    )
    for x in nodes:
        x.sent_bytes = 0
    changer = nodes[0]
    changer.version = 2
    changer.announce(time.time())
    cid = changer.identity.node_id
    rounds = run_until(
        nodes, rng, fanout, full, lambda: all(x.state.digest().get(cid) == 2 for x in nodes)
    )
    per_node = [x.sent_bytes for x in nodes]
    t3 = time.perf_counter()
    for x in nodes:
        x.sent_bytes = 0
    one_round(nodes, rng, fanout, full)
    idle = statistics.mean(x.sent_bytes for x in nodes)
    print(
        f"N={n:5d} fanout={fanout} | one node's change: {rounds} rounds, sent per node mean "
        f"{statistics.mean(per_node) / 1024:.1f} KiB, total {sum(per_node) / 2**20:.2f} MiB "
        f"(setup {t1 - t0:.1f} s, {t3 - t2:.1f} s wall)"
    )
    print(f"N={n:5d} fanout={fanout} | idle round (all in sync): {idle:.0f} B sent per node")
    count, cpu = EXCHANGES
    print(
        f"N={n:5d} fanout={fanout} | CPU {cpu * 1e6 / max(count, 1):.0f} us per exchange "
        f"({count} exchanges, answers {'signed' if SIGNED_ANSWERS else 'unsigned'})"
    )
    EXCHANGES[:] = [0, 0.0]


def main() -> None:
    """Parse arguments and run the benchmark for each node count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--fanout", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--full-digest", action="store_true", help="send full digests (no hash shortcut)"
    )
    parser.add_argument(
        "--answers",
        choices=["signed", "unsigned", "both"],
        default="both",
        help="sign the answers (as bridges do), not, or both for before -> after",
    )
    args = parser.parse_args()
    global SIGNED_ANSWERS
    print("protocol:", "full digest" if args.full_digest else "hashed digest (as bridges run)")
    modes = {"signed": [True], "unsigned": [False], "both": [False, True]}[args.answers]
    for n in args.nodes:
        for signed in modes:
            SIGNED_ANSWERS = signed
            bench(n, args.fanout, args.seed, args.full_digest)


if __name__ == "__main__":
    main()
