"""Resident memory of the bridge: idle, and holding 0 / 100 / 1,000 devices' tools.

1. ``atmosphere-bridge run --no-matter`` as its own process: RSS once it listens and
   has answered one call, then after one ``/mcp`` request (the MCP SDK loads then).
2. For each size, a fresh interpreter starts a ``BridgeService`` (HTTP API on) and
   registers the tools ``MatterToolSync`` would: recorded dumps replicated with distinct
   node ids, the real device model and generator. The second set of rows also imports
   the Matter component and its controller adapter, as every bridge with Matter on does
   (no Matter SDK: the adapter speaks the controller's protocol itself and the cluster
   catalogue is data). RSS after ``gc.collect()``.

Usage: .venv/bin/python bench/memory.py
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import aiohttp
import yaml
from benchlib import rss_mb, stop_process

REPO = Path(__file__).resolve().parents[1]


async def standalone() -> dict[str, float]:
    """Return the RSS (MB) of ``atmosphere-bridge run --no-matter`` idle and after /mcp."""
    from bridge.auth.keys import KEY_FILE_NAME, NodeKey
    from bridge.auth.tokens import issue_token

    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        config = Path(tmp) / "config.yaml"
        config.write_text(
            yaml.safe_dump({"state_dir": str(state), "api": {"host": "127.0.0.1", "port": 0}})
        )
        proc = await asyncio.create_subprocess_exec(
            str(REPO / ".venv" / "bin" / "atmosphere-bridge"),
            "--config",
            str(config),
            "run",
            "--no-matter",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            assert proc.stdout is not None
            async with asyncio.timeout(120):
                while True:
                    line = (await proc.stdout.readline()).decode()
                    if not line:
                        raise RuntimeError("the bridge exited before it was ready")
                    if line.startswith("atmosphere-bridge listening on"):
                        url = line.strip().rsplit(" ", 1)[1]
                        break
            token = issue_token(
                NodeKey.load_or_create(state / KEY_FILE_NAME),
                agent_id="bench",
                permissions=["*"],
                ttl_s=600,
            )
            headers = {"Authorization": f"Bearer {token}"}
            async with aiohttp.ClientSession(headers=headers) as http:
                async with http.post(
                    f"{url}/v1/invoke", json={"tool": "core:get_data", "params": {"key": "x"}}
                ):
                    pass
                await asyncio.sleep(1)
                idle = rss_mb(proc.pid)
                async with http.post(
                    f"{url}/mcp",
                    json={
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-06-18",
                            "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "1"},
                        },
                    },
                    headers={"Accept": "application/json, text/event-stream"},
                ):
                    pass
                await asyncio.sleep(1)
                after_mcp = rss_mb(proc.pid)
        finally:
            await stop_process(proc)
    return {"idle": idle, "after_mcp": after_mcp}


async def child(devices: int, with_matter: bool) -> None:
    """Start a service holding ``devices`` devices' tools; print its RSS as JSON."""
    sys.path.insert(0, str(REPO / "bench"))
    if with_matter:
        import bridge.matter.component  # noqa: F401
    from generate import nodes_for

    from bridge.config import ApiConfig, BridgeConfig, MatterConfig
    from bridge.matter import MatterToolGenerator, build_devices, load_cluster_maps
    from bridge.service import BridgeService

    with tempfile.TemporaryDirectory() as tmp:
        config = BridgeConfig(
            state_dir=Path(tmp) / "state",
            api=ApiConfig(host="127.0.0.1", port=0),
            matter=replace(MatterConfig(), enabled=False),
        )
        service = BridgeService(config, enable_matter=False)
        await service.start()
        await service.start_api("127.0.0.1", 0)
        kept = []
        if devices:
            nodes = nodes_for(devices)
            built = build_devices(nodes)
            tools = MatterToolGenerator(load_cluster_maps(), node_id="bench").generate(built)

            async def handler(params: object, ctx: object) -> None:
                return None

            for tool in tools:
                service.registry.register(tool.definition, handler)
            kept = [nodes, built, tools]
            del nodes, built, tools
        gc.collect()
        await asyncio.sleep(0.5)
        print(
            json.dumps(
                {
                    "devices": devices,
                    "tools": len(service.registry),
                    "rss_mb": round(_self_rss(), 1),
                }
            )
        )
        del kept
        await service.stop()


def _self_rss() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        asyncio.run(child(int(sys.argv[2]), sys.argv[3] == "1"))
        return
    started = time.perf_counter()
    alone = asyncio.run(standalone())
    print(
        f"atmosphere-bridge run --no-matter: idle {alone['idle']:.1f} MB, "
        f"after one /mcp request {alone['after_mcp']:.1f} MB"
    )
    for matter_client in (False, True):
        for devices in (0, 100, 1000):
            out = (
                subprocess.run(
                    [sys.executable, __file__, "--child", str(devices), str(int(matter_client))],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=300,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            doc = json.loads(out)
            label = "+ Matter component and adapter" if matter_client else "service + API"
            print(
                f"{label:<34} {doc['devices']:5d} devices {doc['tools']:5d} tools: "
                f"RSS {doc['rss_mb']:.1f} MB"
            )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
