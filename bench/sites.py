"""Sites benchmark: a real nats-server hub with many simulated sites speaking our announcements.

The hub runs on 127.0.0.1 with the configuration ``atmosphere-bridge sites hub-config``
generates for ``--sites`` sites plus two measuring sites (one nkey user each, generated
permissions). Each simulated site is one NATS connection (its bridge dialling out) with
the subscriptions a real bridge makes (``atmo.ann.*``, ``atmo.rev.*``, its own call
subject) and ``--nodes`` node keys whose signed announcements it publishes on its own
subject. Measured, in one run:

1. convergence: a fresh signed announcement published by one site until every other
   site has received it and verified its signature (``--rounds`` times; all the
   receivers verify in this one process, so this is an upper bound: real sites verify
   in parallel on their own machines);
2. fan-out load: every site announcing all its nodes once, spread over ``--load-s``
   seconds (the hub delivers sites x nodes x sites messages) - deliveries per second
   reached and the hub's CPU for them;
3. added latency of a routed call: two in-process bridges calling each other over
   HTTP on loopback (LAN peers) vs two at different sites calling through this hub
   while all the simulated sites are connected (``--calls`` calls each, same tool);
4. the hub's CPU seconds and resident memory after each phase (``/proc``).

Usage: python bench/sites.py [--sites 1000] [--nodes 5] [--rounds 20] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.benchlib import cpu_seconds, paired, percentile, rss_mb  # noqa: E402


def announcement(ident: Any, version: int) -> bytes:
    """Return a signed announcement of ``ident`` (one tool), as a site publishes it."""
    from bridge.mesh.announce import Announcement, Capability, ToolSummary, parameters_hash
    from tests.mesh.harness import whoami_definition

    defn = whoami_definition(f"lamp_{ident.name}")
    summary = ToolSummary(
        identity=defn.identity,
        description=defn.description,
        parameters_hash=parameters_hash(dict(defn.parameters)),
        available=True,
        definition=defn.to_json(),
    )
    doc = Announcement(
        node_id=ident.node_id,
        node_name=ident.name,
        public_key=ident.public_key_b64,
        version=version,
        timestamp=time.time(),
        ttl_s=120,
        endpoints=(),
        capabilities=(Capability(name="core", tools=(summary,)),),
        devices=(),
    ).signed(ident)
    return orjson.dumps(doc.to_json())


class SimSite:
    """One simulated site: a NATS connection and the node keys behind it."""

    def __init__(self, name: str, seed: Path, nodes: int, tally: Tally) -> None:
        from bridge.auth.keys import NodeKey
        from bridge.mesh.node_id import NodeIdentity

        self.name, self.seed, self.tally = name, seed, tally
        self.nodes = [
            NodeIdentity.from_key(NodeKey.generate(), f"{name}n{i}") for i in range(nodes)
        ]
        self.nc: Any = None

    async def connect(self, url: str) -> None:
        import nats

        from bridge.mesh.sites import call_subject, inbox_prefix

        self.nc = await nats.connect(
            url,
            nkeys_seed=str(self.seed),
            name=self.name,
            inbox_prefix=inbox_prefix(self.name),
            max_reconnect_attempts=0,
        )
        await self.nc.subscribe("atmo.ann.*", cb=self.on_announcement)
        await self.nc.subscribe("atmo.rev.*", cb=self.on_announcement)
        await self.nc.subscribe(call_subject(self.name, self.nodes[0].node_id))

    async def on_announcement(self, msg: Any) -> None:
        self.tally.delivered += 1
        if self.tally.watch is None or not msg.subject.endswith(self.tally.watch_site):
            return
        from bridge.mesh.announce import verify_document

        doc = orjson.loads(msg.data)
        if (doc.get("node_id"), doc.get("version")) != self.tally.watch:
            return
        verify_document(doc)  # the real signature check a receiving bridge makes
        self.tally.arrived(self.name)


class Tally:
    """Counts deliveries; waits for one announcement to reach every other site."""

    def __init__(self) -> None:
        self.delivered = 0
        self.watch: tuple[str, int] | None = None
        self.watch_site = ""
        self.got: set[str] = set()
        self.needed = 0
        self.done = asyncio.Event()
        self.last = 0.0

    def expect(self, site: str, node_id: str, version: int, needed: int) -> None:
        self.watch, self.watch_site, self.needed = (node_id, version), f".{site}", needed
        self.got, self.done = set(), asyncio.Event()

    def arrived(self, site: str) -> None:
        self.got.add(site)
        if len(self.got) >= self.needed:
            self.last = time.perf_counter()
            self.done.set()


def hub_stats(pid: int) -> dict[str, float]:
    return {"cpu_s": round(cpu_seconds(pid), 3), "rss_mb": round(rss_mb(pid), 1)}


async def routed_latency(hub: Any, tmp: Path, calls: int) -> dict[str, Any]:
    """Return per-call wall ms of a routed call: LAN peers vs two sites through the hub.

    Both pairs run at once and the calls alternate (LAN, hub, LAN, hub …), so each pair
    of samples saw the same machine; the added latency is the median of the differences.
    """
    from bridge.auth.keys import NodeKey
    from tests.mesh.harness import build_nodes, token, wait_for, whoami, whoami_definition
    from tests.mesh.site_harness import site_nodes

    issuer = NodeKey.generate()
    lan = build_nodes(
        ["a", "c"],
        tmp / "lan",
        issuer,
        gossip_interval_s=0.5,
        announce_interval_s=60.0,
        announcement_ttl_s=120.0,
    )
    far = site_nodes(
        tmp / "far", hub, issuer, names=["x", "z"], announce_interval_s=1.0, ttl_s=120.0
    )
    pairs = {"lan_http": lan, "site_hub": far}
    for serving, _calling in pairs.values():
        serving.registry.register(whoami_definition(f"whoami_{serving.name}"), whoami)
    nodes = [*lan, *far]
    for node in nodes:
        await node.start()
    samples: dict[str, list[float]] = {label: [] for label in pairs}
    try:
        bearer = token(issuer)
        for serving, calling in pairs.values():
            tool = f"core:whoami_{serving.name}@1.0.0"
            await wait_for(lambda c=calling, t=tool: c.registry.get(t) is not None, 30.0)
            for _ in range(20):  # warm-up: connections, proofs, caches
                response = await calling.call(tool, bearer)
                assert response.ok, response.error
        for _ in range(calls):
            for label, (serving, calling) in pairs.items():
                started = time.perf_counter()
                response = await calling.call(f"core:whoami_{serving.name}@1.0.0", bearer)
                samples[label].append((time.perf_counter() - started) * 1000)
                assert response.ok, response.error
    finally:
        for node in nodes:
            await node.stop()
    results: dict[str, Any] = {
        label: {"p50_ms": round(percentile(v, 0.5), 2), "p95_ms": round(percentile(v, 0.95), 2)}
        for label, v in samples.items()
    }
    added = paired(samples["site_hub"], samples["lan_http"])
    results["added_ms_paired"] = {
        "p50": round(percentile(added, 0.5), 2),
        "p95": round(percentile(added, 0.95), 2),
    }
    return results


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.hub import Hub
    from tests.support.ports import free_port

    report: dict[str, Any] = {"sites": args.sites, "nodes_per_site": args.nodes}
    with tempfile.TemporaryDirectory(prefix="bench-sites-") as tmp_name:
        tmp = Path(tmp_name)
        names = [f"s{i:04d}" for i in range(args.sites)]
        hub = Hub(base=tmp / "hub", sites=[*names, "x", "z"], port=free_port())
        hub.base.mkdir()
        started = time.perf_counter()
        hub.configure()
        report["hub_config_s"] = round(time.perf_counter() - started, 2)
        hub.start()
        assert hub.popen is not None
        pid = hub.popen.pid
        report["hub_idle"] = hub_stats(pid)
        tally = Tally()
        sims = [SimSite(n, hub.seed_file(n), args.nodes, tally) for n in names]
        try:
            started = time.perf_counter()
            for i in range(0, len(sims), 50):  # 50 dials at a time
                await asyncio.gather(*(s.connect(hub.url) for s in sims[i : i + 50]))
            report["connect_all_s"] = round(time.perf_counter() - started, 2)
            report["hub_connected"] = hub_stats(pid)
            # 1. convergence of one fresh announcement to every other site.
            times = []
            for r in range(args.rounds):
                origin = sims[(r * 7919) % len(sims)]
                ident = origin.nodes[r % args.nodes]
                payload = announcement(ident, version=1000 + r)
                tally.expect(origin.name, ident.node_id, 1000 + r, needed=len(sims))
                t0 = time.perf_counter()
                await origin.nc.publish(f"atmo.ann.{origin.name}", payload)
                await asyncio.wait_for(tally.done.wait(), 60)
                times.append((tally.last - t0) * 1000)
            tally.watch = None
            report["convergence_ms"] = {
                "p50": round(percentile(times, 0.5), 1),
                "max": round(max(times), 1),
                "rounds": args.rounds,
            }
            report["hub_after_convergence"] = hub_stats(pid)
            # 2. fan-out load: every node of every site announced once, over --load-s.
            payloads = {s.name: [announcement(n, 1) for n in s.nodes] for s in sims}
            total = args.sites * args.nodes
            cpu0, delivered0, t0 = cpu_seconds(pid), tally.delivered, time.perf_counter()
            gap = args.load_s / max(total, 1)
            sent = 0
            for s in sims:
                for payload in payloads[s.name]:
                    await s.nc.publish(f"atmo.ann.{s.name}", payload)
                    sent += 1
                    if sent % 50 == 0:
                        await asyncio.sleep(gap * 50)
            expected = total * len(sims)
            deadline = time.perf_counter() + args.load_s * 4 + 60
            while tally.delivered - delivered0 < expected and time.perf_counter() < deadline:
                await asyncio.sleep(0.1)
            wall = time.perf_counter() - t0
            got = tally.delivered - delivered0
            report["fanout"] = {
                "published": total,
                "deliveries": got,
                "expected": expected,
                "wall_s": round(wall, 2),
                "deliveries_per_s": round(got / wall),
                "hub_cpu_s": round(cpu_seconds(pid) - cpu0, 2),
                "hub_cpu_us_per_delivery": round((cpu_seconds(pid) - cpu0) / max(got, 1) * 1e6, 2),
            }
            report["hub_after_fanout"] = hub_stats(pid)
            # 3. routed call latency, LAN peer vs through the hub (all sites connected).
            report["routed_call"] = await routed_latency(hub, tmp, args.calls)
            report["hub_end"] = hub_stats(pid)
        finally:
            for s in sims:
                if s.nc is not None:
                    await s.nc.close()
            hub.stop()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--load-s", type=float, default=10.0)
    args = parser.parse_args()
    if not 2 <= args.sites <= 5000 or not 1 <= args.nodes <= 20 or args.calls > 5000:
        parser.error("bounded: 2..5000 sites, 1..20 nodes, at most 5000 calls")
    print(orjson.dumps(asyncio.run(run(args)), option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
