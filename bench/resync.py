"""A full re-sync of a home after a controller restart: how long calls wait meanwhile.

In-process: the adapter's node mirror holds ``--devices`` devices (recorded dumps
replicated, as ``bench/generate.py``), and the bridge brings its registry in line in
two ways, in the same run, alternating:

  sync      ``MatterToolSync.sync``: the whole model and every tool in one go on the
            event loop (what a reconnect did before)
  resync    ``MatterToolSync.resync``: the model built in a worker thread from a copy of
            the nodes, the device tools generated in slices of ``RESYNC_SLICE_S`` on the
            loop (as long a rest after each), then the shared/room tools and the
            registry change in one step

Meanwhile a probe on the same loop wakes every millisecond and notes how late it is: the
longest wait is how long a call arriving then would have stalled. Prints, per mode, the
re-sync's wall time and the probe's worst and p99 lateness (ms), and the ratio of the
worst stalls.

Usage: .venv/bin/python bench/resync.py [--devices 1000] [--rounds 5] [--loop auto]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from typing import Any

from generate import nodes_for

from bridge import eventloop
from bridge.events import EventBus
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.sync.registry import RESYNC_SLICE_S, MatterToolSync
from bridge.tools.registry import ToolRegistry


async def probe(late: list[float], stop: asyncio.Event) -> None:
    """Sleep 1 ms at a time; note by how much each wake-up came late (ms)."""
    while not stop.is_set():
        due = time.perf_counter() + 0.001
        await asyncio.sleep(0.001)
        late.append(max(0.0, (time.perf_counter() - due) * 1000))


async def one(bridge: MatterToolSync, mode: str) -> dict[str, float]:
    late: list[float] = []
    stop = asyncio.Event()
    prober = asyncio.create_task(probe(late, stop))
    await asyncio.sleep(0.05)
    late.clear()
    started = time.perf_counter()
    if mode == "sync":
        bridge.sync()
        await asyncio.sleep(0)  # let the probe see the stall
    else:
        await bridge.resync()
    took = (time.perf_counter() - started) * 1000
    await asyncio.sleep(0.01)
    stop.set()
    await prober
    ordered = sorted(late)
    return {
        "ms": took,
        "worst": ordered[-1],
        "p99": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
    }


async def main(devices: int, rounds: int) -> None:
    adapter = MatterAdapter("ws://127.0.0.1:9/ws")  # never connected: the mirror is set below
    events = EventBus()
    bridge = MatterToolSync(adapter=adapter, registry=ToolRegistry(events), events=events)
    for node in nodes_for(devices):
        adapter._nodes[node.node_id] = node
    bridge.sync()  # the tools a reconnect finds registered
    # As `atmosphere-bridge run` does once started: what lives from start-up on is taken
    # out of the cyclic collector (else every full collection rescans it).
    gc.collect()
    gc.freeze()
    print(
        f"{len(bridge.devices())} devices, {len(bridge._tools)} tools; "
        f"event loop {type(asyncio.get_running_loop()).__module__}; "
        f"slice {RESYNC_SLICE_S * 1000:.0f} ms",
        flush=True,
    )
    results: dict[str, list[dict[str, float]]] = {"sync": [], "resync": []}
    for i in range(rounds):
        for mode in ("sync", "resync") if i % 2 == 0 else ("resync", "sync"):
            results[mode].append(await one(bridge, mode))
    out: dict[str, Any] = {"devices": len(bridge.devices())}
    for mode, runs in results.items():
        out[f"{mode}_ms"] = round(statistics.median(r["ms"] for r in runs), 1)
        out[f"{mode}_worst_stall_ms"] = round(max(r["worst"] for r in runs), 2)
        out[f"{mode}_p99_stall_ms"] = round(statistics.median(r["p99"] for r in runs), 2)
    out["worst_stall_ratio"] = round(out["resync_worst_stall_ms"] / out["sync_worst_stall_ms"], 3)
    for mode in ("sync", "resync"):
        worst, p99 = out[f"{mode}_worst_stall_ms"], out[f"{mode}_p99_stall_ms"]
        print(
            f"{mode:7s} {out[f'{mode}_ms']:8.1f} ms   longest stall {worst:7.2f} ms   "
            f"p99 stall {p99:6.2f} ms"
        )
    print(f"resync/sync longest stall: {out['worst_stall_ratio']}")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto")
    args = parser.parse_args()
    eventloop.run(main(max(1, min(args.devices, 5000)), max(1, min(args.rounds, 50))), args.loop)
    sys.exit(0)
