"""McpHub against real MCP server processes written with the SDK (tests/mcp/servers).

The bridge runs with its real HTTP API on loopback; calls go through ``POST /v1/invoke``
with signed tokens. One server is a stdio command the hub starts; the other a
streamable-HTTP server process on a loopback port that the test stops and restarts.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bridge.config import BridgeConfig, McpServerConfig, validate_config_data
from bridge.errors import ConfigInvalidError
from bridge.service import BridgeService
from bridge.tools.definition import Category, ExecutionType, ToolIntent
from tests.support.auth import bearer, service_token
from tests.support.processes import stop
from tests.support.server import BridgeServer

SERVER = Path(__file__).parent / "servers" / "calc_server.py"
CALC_TOOLS = ["calc_add", "calc_fail", "calc_odd_tool", "calc_shout", "calc_wipe"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        await asyncio.sleep(0.05)


def mcp_names(service: BridgeService, server: str) -> list[str]:
    return sorted(
        e.definition.name
        for e in service.registry.list(server_name=server)
        if e.definition.namespace == "mcp"
    )


@pytest.fixture
def bridge_config(bridge_config: BridgeConfig) -> BridgeConfig:
    stdio = McpServerConfig(
        name="calc", command=sys.executable, args=(str(SERVER), "stdio"), refresh_s=0.5
    )
    return replace(bridge_config, mcp_servers=(stdio,))


async def invoke(server: BridgeServer, token: str, tool: str, params: Any) -> tuple[int, Any]:
    async with server.client.post(
        f"{server.url}/v1/invoke", json={"tool": tool, "params": params}, headers=bearer(token)
    ) as resp:
        return resp.status, await resp.json()


async def test_stdio_server_tools_are_listed_and_callable(bridge_server: BridgeServer) -> None:
    service = bridge_server.service
    await wait_for(lambda: len(mcp_names(service, "calc")) == 5, 30, "the calc tools")
    assert mcp_names(service, "calc") == CALC_TOOLS
    add = service.registry.resolve("mcp:calc_add").definition
    assert (add.type, add.intent, add.category, add.server_name) == (
        ExecutionType.MCP,
        ToolIntent.COMPUTE,
        Category.QUERYING,
        "calc",
    )
    assert add.requires.permissions == ("mcp:call:calc",)
    assert add.returns is not None
    assert add.returns["properties"]["total"]["type"] == "integer"
    wipe = service.registry.resolve("mcp:calc_wipe").definition
    assert (wipe.dangerous, wipe.intent) == (True, ToolIntent.ACTION)
    assert service.registry.resolve("mcp:calc_odd_tool").definition.metadata["mcp"] == {
        "server": "calc",
        "tool": "odd tool!",
    }

    admin = service_token(service, "hub", ("*",))
    async with bridge_server.client.get(
        f"{bridge_server.url}/v1/tools?namespace=mcp", headers=bearer(admin)
    ) as resp:
        listing = await resp.json()
    assert {t["tool"]["name"]: t["tool"]["server_name"] for t in listing["tools"]} == {
        name: "calc" for name in CALC_TOOLS
    }

    caller = service_token(service, "agent", ("mcp:call:calc",))
    status, body = await invoke(bridge_server, caller, "mcp:calc_add", {"a": 2, "b": 40})
    assert (status, body["result"]) == (200, {"total": 42})
    status, body = await invoke(bridge_server, caller, "mcp:calc_odd_tool", {})
    assert (status, body["result"]) == (200, {"result": "odd"})
    status, body = await invoke(bridge_server, caller, "mcp:calc_fail", {"reason": "test"})
    assert body["error"]["code"] == "TOOL_FAILED", (status, body)
    assert body["error"]["message"] == (
        "MCP server 'calc' answered an error: Error executing tool fail"
    )
    # Our validation runs before anything reaches the server.
    status, body = await invoke(bridge_server, caller, "mcp:calc_add", {"a": "two", "b": 1})
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    # No mcp:call:calc, no call: answered as for a tool that does not exist.
    other = service_token(service, "agent", ("mcp:call:weather",))
    status, body = await invoke(bridge_server, other, "mcp:calc_add", {"a": 1, "b": 1})
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    # A destructive tool needs confirmation like any dangerous tool: denied, it never runs.
    sub = service.events.subscribe("approval.pending")
    call = asyncio.create_task(invoke(bridge_server, caller, "mcp:calc_wipe", {}))
    async with asyncio.timeout(10):
        pending = await sub.get()
    service.events.unsubscribe(sub)
    assert (pending.data["tool"], pending.data["agent_id"]) == ("mcp:calc_wipe@1.0.0", "agent")
    async with bridge_server.client.post(
        f"{bridge_server.url}/v1/approvals/{pending.data['id']}",
        json={"decision": "deny"},
        headers=bearer(admin),
    ) as resp:
        assert resp.status == 200, await resp.json()
    status, body = await call
    assert (status, body["error"]["code"]) == (403, "CONFIRMATION_DENIED")
    async with bridge_server.client.get(f"{bridge_server.url}/healthz") as resp:
        health = await resp.json()
    assert health["mcp_servers"]["calc"] == {
        "connected": True,
        "tools": 5,
        "skipped": {},
        "error": None,
    }


class HttpServer:
    """The calc server as a streamable-HTTP process on a loopback port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        stop(self, signal.SIGTERM, grace_s=5)


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    server = HttpServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def test_http_server_tools_leave_and_come_back(
    bridge_config: BridgeConfig, http_server: HttpServer
) -> None:
    remote = McpServerConfig(
        name="remote", url=f"http://127.0.0.1:{http_server.port}/mcp", refresh_s=0.3, timeout_s=3
    )
    service = BridgeService(replace(bridge_config, mcp_servers=(remote,)), enable_matter=False)
    await service.start()
    try:
        await wait_for(lambda: len(mcp_names(service, "remote")) == 5, 30, "remote's tools")
        assert service.registry.resolve("mcp:remote_shout").handler is not None
        http_server.stop()
        started = time.monotonic()
        await wait_for(lambda: mcp_names(service, "remote") == [], 10, "remote's tools to leave")
        assert time.monotonic() - started < 5
        assert service.mcp_hub is not None
        assert service.mcp_hub.status()["remote"]["connected"] is False
        http_server.start()
        await wait_for(lambda: len(mcp_names(service, "remote")) == 5, 30, "remote to return")
    finally:
        await service.stop()
    assert mcp_names(service, "remote") == []


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "Calc", "command": "x"}, "mcp_servers[0].name"),
        ({"name": "calc"}, "give either 'command'"),
        (
            {"name": "calc", "command": "x", "url": "http://127.0.0.1:1/mcp"},
            "give either 'command'",
        ),
        ({"name": "calc", "url": "ftp://x"}, "mcp_servers[0].url"),
        ({"name": "calc", "command": "x", "colour": 1}, "mcp_servers[0].colour"),
    ],
)
def test_bad_entries_are_named(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigInvalidError) as err:
        validate_config_data({"mcp_servers": [entry]})
    assert message in err.value.message


def test_entries_load_from_yaml(tmp_path: Path) -> None:
    from bridge.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text(
        "mcp_servers:\n"
        "  - {name: calc, command: python3, args: [calc.py, stdio], env: {MODE: test}}\n"
        "  - {name: web, url: 'http://127.0.0.1:9000/mcp', token_file: /etc/web.token,\n"
        "     permissions: ['web:use'], timeout_s: 5}\n"
    )
    calc, web = load_config(path).mcp_servers
    assert (calc.name, calc.command, calc.args, dict(calc.env), calc.url) == (
        "calc",
        "python3",
        ("calc.py", "stdio"),
        {"MODE": "test"},
        None,
    )
    assert (web.url, web.token_file, web.permissions, web.timeout_s) == (
        "http://127.0.0.1:9000/mcp",
        Path("/etc/web.token"),
        ("web:use",),
        5.0,
    )
