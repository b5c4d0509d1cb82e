"""MCP front end and McpHub cost per call, against the plain HTTP API in the same run.

A real bridge (SQLite state, HTTP API on 127.0.0.1) serves ``core:get_data``; the bench
calls it ``--calls`` times over ``POST /v1/invoke`` (the baseline), then through the
bridge's own MCP endpoint with the SDK's client (2026-07-28 and the handshake-era
protocol), then calls a tool of a real stdio MCP server (tests/mcp/servers) through the
McpHub, against calling that server directly with the SDK. Prints p50/p95 and ratios.
``--tools N`` registers N more tools first (a home with many devices has hundreds): the
cost of a call must not grow with them.

    .venv/bin/python bench/mcp_calls.py [--calls 200] [--tools 0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import self_cpu_seconds
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.config import ApiConfig, BridgeConfig, MatterConfig, McpServerConfig
from bridge.service import BridgeService
from tests.support.auth import bearer, service_token

SERVER = Path(__file__).resolve().parent.parent / "tests" / "mcp" / "servers" / "calc_server.py"


class Samples(list[float]):
    """Latencies in ms, and this process's CPU per call (bridge and client together)."""

    cpu_ms: float = 0.0


async def timed(calls: int, once: Callable[[], Awaitable[Any]]) -> Samples:
    out = Samples()
    cpu0 = self_cpu_seconds()
    for _ in range(calls):
        started = time.perf_counter()
        await once()
        out.append((time.perf_counter() - started) * 1000)
    out.cpu_ms = (self_cpu_seconds() - cpu0) * 1000 / max(1, calls)
    return out


def show(label: str, ms: list[float], base: list[float] | None = None) -> None:
    ordered = sorted(ms)
    p50, p95 = statistics.median(ordered), ordered[int(len(ordered) * 0.95)]
    ratio = f"  {p50 / statistics.median(base):.2f}x baseline" if base else ""
    cpu = f"  CPU {ms.cpu_ms:6.3f} ms/call" if isinstance(ms, Samples) else ""
    print(f"{label:<44} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms{cpu}{ratio}")


async def noop(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {}


def add_filler(service: BridgeService, count: int) -> None:
    from bridge.tools.definition import Requires, ToolDefinition

    params = {"type": "object", "properties": {"percent": {"type": "integer"}}}
    for i in range(count):
        service.registry.register(
            ToolDefinition(
                name=f"device_{i}_brightness",
                namespace="filler",
                description=f"Dim device {i}.",
                parameters=params,
                requires=Requires(permissions=(f"device:control:filler-{i}",)),
            ),
            noop,
        )


async def run(calls: int, state: Path, filler: int) -> None:
    stdio = McpServerConfig(
        name="calc", command=sys.executable, args=(str(SERVER), "stdio"), refresh_s=60
    )
    config = BridgeConfig(
        state_dir=state,
        api=ApiConfig(host="127.0.0.1", port=0),
        matter=replace(MatterConfig(), enabled=False),
        mcp_servers=(stdio,),
    )
    service = BridgeService(config, enable_matter=False)
    await service.start()
    try:
        port = await service.start_api("127.0.0.1", 0)
        url = f"http://127.0.0.1:{port}"
        token = service_token(service, "bench", ("*",))
        deadline = time.monotonic() + 30
        while service.registry.get("mcp:calc_add@1.0.0") is None:
            if time.monotonic() > deadline:
                raise SystemExit("the calc MCP server did not come up")
            await asyncio.sleep(0.1)
        add_filler(service, filler)
        print(f"{len(service.registry.list())} tools in the registry")
        async with aiohttp.ClientSession(headers=bearer(token)) as http:

            async def invoke(tool: str, params: dict[str, Any]) -> None:
                async with http.post(
                    f"{url}/v1/invoke", json={"tool": tool, "params": params}
                ) as resp:
                    assert resp.status == 200, await resp.text()

            base = await timed(calls, lambda: invoke("core:get_data", {"key": "k"}))
            show("POST /v1/invoke core:get_data (baseline)", base)
            for mode in ("auto", "legacy"):
                async with (
                    create_mcp_http_client(headers=bearer(token)) as client_http,
                    Client(
                        streamable_http_client(f"{url}/mcp", http_client=client_http),
                        mode=mode,
                        cache=None,
                    ) as client,
                ):
                    ms = await timed(
                        calls, lambda c=client: c.call_tool("core__get_data", {"key": "k"})
                    )
                    show(f"MCP tools/call over /mcp ({client.protocol_version})", ms, base)
            hub = await timed(calls, lambda: invoke("mcp:calc_add", {"a": 1, "b": 2}))
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio"])
        async with Client(params, cache=None) as direct:
            alone = await timed(calls, lambda: direct.call_tool("add", {"a": 1, "b": 2}))
        show("calc add, SDK client straight to the server", alone)
        show("calc add through the bridge (HTTP + McpHub)", hub, alone)
    finally:
        await service.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per path (10-2000)")
    parser.add_argument("--tools", type=int, default=0, help="extra tools to register (0-5000)")
    args = parser.parse_args()
    calls, filler = max(10, min(2000, args.calls)), max(0, min(5000, args.tools))
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        asyncio.run(run(calls, Path(tmp) / "state", filler))


if __name__ == "__main__":
    main()
