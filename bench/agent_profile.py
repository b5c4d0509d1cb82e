"""What an agent pays for the bridge's tools: per-device vs compact profile, at home scale.

For homes of 4, 25, 100 and 400 devices (recorded dumps under tests/fixtures/nodes,
renumbered, through the real generator inside a real ``MatterToolSync`` on a real
registry; rooms of about six devices each), prints per profile: tool count, the
``tools/list`` JSON size in bytes (what MCP sends, for a token that may do everything),
an approximate token count (chars / 4) and the longest tool name; then the latency of
a compact call against the per-device call it stands for, both through
``BridgeMcpServer.call`` and the real in-process invoker (signed token, permission
check, audit), with the Matter handler replaced by a trivial one (no controller here;
the controller's time is the same for both). Last line: one JSON object for the
100-device home.

    .venv/bin/python bench/agent_profile.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.auth.tokens import issue_token
from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.matter import CompactProfile, NodeData, UserNames, build_devices
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.sync.registry import MatterToolSync
from bridge.mcp.server import BridgeMcpServer
from bridge.service import BridgeService
from bridge.tools.context import CallContext

NODES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "nodes"
SIZES = (4, 25, 100, 400)
ROOM_SIZE = 6


def nodes_for(wanted: int) -> list[NodeData]:
    """Return renumbered copies of the dumps holding ``wanted`` devices (or just over)."""
    dumps = [json.loads(p.read_text()) for p in sorted(NODES.glob("*/*.json"))]
    out: list[NodeData] = []
    count, next_id = 0, 1000
    while count < wanted:
        for dump in dumps:
            doc = copy.deepcopy(dump)
            doc["node_id"] = next_id
            next_id += 1
            node = NodeData.from_json(doc)
            found = len(build_devices([node]))
            if not found:
                continue
            out.append(node)
            count += found
            if count >= wanted:
                break
    return out


def listing_bytes(tools: list[Any]) -> int:
    doc = {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]}
    return len(json.dumps(doc, separators=(",", ":")))


async def trivial(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"ok": True}


async def measure(service: BridgeService, size: int, calls: int) -> dict[str, Any]:
    nodes = nodes_for(size)
    adapter = MatterAdapter("ws://127.0.0.1:9/ws")  # never connected: no controller here
    adapter._nodes = {n.node_id: n for n in nodes}
    bridge = MatterToolSync(adapter=adapter, registry=service.registry)
    devices = build_devices(nodes)
    bridge._user_names = {
        d.id: UserNames(room=f"Room {i // ROOM_SIZE + 1}") for i, d in enumerate(devices)
    }
    bridge.sync()
    devices = bridge.devices()
    runtime = service.invocation
    assert runtime is not None
    raw = issue_token(
        runtime.key, agent_id="bench", ttl_s=3600, permissions=["device:control:*", "device:read:*"]
    )
    token = runtime.verifier.verify(raw)
    per_device = BridgeMcpServer(service.registry, lambda: runtime, service.events)
    compact = BridgeMcpServer(
        service.registry,
        lambda: runtime,
        service.events,
        compact=CompactProfile(service.registry, lambda: bridge),
    )
    compact.start()
    rows: dict[str, Any] = {"devices": len(devices)}
    for label, server in (("per_device", per_device), ("compact", compact)):
        tools = server.tools_for(token)
        size_b = listing_bytes(tools)
        rows[f"{label}_tools"] = len(tools)
        rows[f"{label}_bytes"] = size_b
        rows[f"{label}_tokens"] = size_b // 4
        rows[f"{label}_max_name"] = max(len(t.name) for t in tools)
    # A light's brightness: per-device name vs the compact call standing for it.
    light = next(d for d in devices if d.kind == "light")
    tool = next(
        t
        for t in service.registry.list(namespace="matter")
        if t.definition.name == f"{light.slug}_brightness"
    )
    service.registry.replace(tool.definition, trivial)
    direct_name = f"matter__{light.slug}_brightness"
    timings: dict[str, list[float]] = {"per_device": [], "compact": []}
    for _ in range(calls):
        for label, server, name, args in (
            ("per_device", per_device, direct_name, {"percent": 30}),
            (
                "compact",
                compact,
                "home__lights",
                {"target": light.id, "action": "brightness", "percent": 30},
            ),
        ):
            started = time.perf_counter()
            result = await server.call(token, name, args)
            timings[label].append((time.perf_counter() - started) * 1000)
            assert result.is_error is False, result
    for label, values in timings.items():
        values.sort()
        rows[f"{label}_call_p50_ms"] = round(statistics.median(values), 4)
        rows[f"{label}_call_p95_ms"] = round(values[int(len(values) * 0.95) - 1], 4)
    rows["compact_adds_ms"] = round(rows["compact_call_p50_ms"] - rows["per_device_call_p50_ms"], 4)
    compact.compact.stop()  # type: ignore[union-attr]
    for entry in list(service.registry.list(namespace="matter")):
        service.registry.unregister(entry.identity)
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        config = BridgeConfig(
            state_dir=Path(tmp) / "state",
            api=ApiConfig(host="127.0.0.1", port=0),
            matter=replace(MatterConfig(), enabled=False),
        )
        service = BridgeService(config, enable_matter=False)
        await service.start()
        try:
            for size in SIZES:
                results.append(await measure(service, size, args.calls))
        finally:
            await service.stop()
    print(
        f"{'devices':>7} {'profile':>10} {'tools':>6} {'bytes':>8} {'~tokens':>8} "
        f"{'max name':>8} {'call p50 ms':>11} {'p95 ms':>8}"
    )
    for row in results:
        for label in ("per_device", "compact"):
            print(
                f"{row['devices']:>7} {label:>10} {row[label + '_tools']:>6} "
                f"{row[label + '_bytes']:>8} {row[label + '_tokens']:>8} "
                f"{row[label + '_max_name']:>8} {row[label + '_call_p50_ms']:>11} "
                f"{row[label + '_call_p95_ms']:>8}"
            )
        print(
            f"{'':>7} compact/per-device bytes: "
            f"{row['compact_bytes'] / row['per_device_bytes']:.1%}; compact call adds "
            f"{row['compact_adds_ms']} ms (p50)"
        )
    home = next(r for r in results if r["devices"] >= 100)
    print(
        json.dumps(
            {
                "devices": home["devices"],
                "per_device_tools": home["per_device_tools"],
                "per_device_bytes": home["per_device_bytes"],
                "compact_tools": home["compact_tools"],
                "compact_bytes": home["compact_bytes"],
                "compact_ratio": round(home["compact_bytes"] / home["per_device_bytes"], 4),
                "max_name_length": max(home["per_device_max_name"], home["compact_max_name"]),
                "per_device_call_p50_ms": home["per_device_call_p50_ms"],
                "compact_call_p50_ms": home["compact_call_p50_ms"],
                "compact_adds_ms": home["compact_adds_ms"],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
