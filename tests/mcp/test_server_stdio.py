"""``atmosphere-bridge mcp``: the real stdio process against a real bridge on loopback.

The SDK's own ``Client`` spawns ``python -m bridge mcp --url URL`` (the token in
``$ATMOSPHERE_BRIDGE_TOKEN`` or a 0600 file, never on the command line) and speaks MCP
over its stdin/stdout; the process relays to the bridge's ``/mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp.test_server import Recorder, register_dim
from tests.support.auth import service_token
from tests.support.ports import free_port
from tests.support.server import BridgeServer


def stdio_params(url: str, token: str | None, *extra: str) -> StdioServerParameters:
    """Return how to start the stdio server with ``token`` in the environment."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/root")}
    if token is not None:
        env["ATMOSPHERE_BRIDGE_TOKEN"] = token
    return StdioServerParameters(
        command=sys.executable, args=["-m", "bridge", "mcp", "--url", url, *extra], env=env
    )


@contextlib.asynccontextmanager
async def stdio_client(url: str, token: str, mode: str = "auto") -> AsyncIterator[Client]:
    """Yield the SDK's client talking to a spawned ``atmosphere-bridge mcp``."""
    async with Client(
        stdio_params(url, token), mode=mode, cache=None, read_timeout_seconds=30
    ) as client:
        yield client


async def run_cli(*args: str, token: str | None) -> tuple[int, str, str]:
    """Run ``atmosphere-bridge mcp`` with stdin closed; return code, stdout, stderr."""
    params = stdio_params(args[0], token, *args[1:])
    proc = await asyncio.create_subprocess_exec(
        params.command,
        *params.args,
        env=params.env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(60):
        out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_lists_and_calls_for_the_token(bridge_server: BridgeServer, mode: str) -> None:
    handler = Recorder()
    register_dim(bridge_server, handler)
    token = service_token(bridge_server.service, "desktop", ["device:control:lamp-1"])
    async with stdio_client(bridge_server.url, token, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "test__dim" in tools
        assert "core__get_data" not in tools  # needs a permission this token lacks
        assert tools["test__dim"].input_schema["properties"]["device_id"]["enum"] == ["lamp-1"]
        ok = await client.call_tool("test__dim", {"device_id": "lamp-1", "level": 7})
        denied = await client.call_tool("test__dim", {"device_id": "lamp-2", "level": 7})
    assert ok.is_error is False
    assert ok.content == [types.TextContent(text='{"device":"lamp-1","level":7,"done":true}')]
    assert handler.calls == [({"device_id": "lamp-1", "level": 7}, "desktop")]
    assert denied.is_error is True
    assert denied.structured_content["error"]["code"] == "PERMISSION_DENIED"


async def test_stdio_relays_list_changed(bridge_server: BridgeServer) -> None:
    token = service_token(bridge_server.service, "desktop", ["*"])
    async with (
        stdio_client(bridge_server.url, token) as client,
        client.listen(tools_list_changed=True) as sub,
    ):
        events = sub.__aiter__()
        before = [t.name for t in (await client.list_tools()).tools]
        assert "test__dim" not in before
        # The relay opens its own listen stream to the bridge; repeat until it is up.
        async with asyncio.timeout(20):
            while True:
                register_dim(bridge_server, Recorder())
                try:
                    async with asyncio.timeout(1):
                        await events.__anext__()
                    break
                except TimeoutError:
                    bridge_server.service.registry.unregister("test:dim@1.0.0")
        assert "test__dim" in [t.name for t in (await client.list_tools()).tools]


async def test_stdio_refuses_bad_tokens_and_unreachable_bridges(
    bridge_server: BridgeServer, tmp_path: Path
) -> None:
    code, out, err = await run_cli(bridge_server.url, token="not-a-token")
    assert (code, out) == (1, "")
    assert err.strip().splitlines()[-1].startswith("error [UNAUTHENTICATED]: ")
    assert "Traceback" not in err

    port = free_port()
    code, out, err = await run_cli(f"http://127.0.0.1:{port}", token="x")
    assert (code, out) == (1, "")
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error [INTERNAL]: cannot reach the bridge at http://127.0.0.1:{port}")
    assert "Traceback" not in err

    code, out, err = await run_cli(bridge_server.url, token=None)
    assert (code, out) == (1, "")
    assert err.strip().splitlines()[-1] == (
        "error [UNAUTHENTICATED]: give a token with --token-file, $ATMOSPHERE_BRIDGE_TOKEN "
        "or --token"
    )

    loose = tmp_path / "token"
    loose.write_text("abc\n")
    loose.chmod(0o644)
    code, _out, err = await run_cli(bridge_server.url, "--token-file", str(loose), token=None)
    assert code == 1
    assert err.strip().splitlines()[-1] == (
        f"error [INVALID_REQUEST]: {loose} must be readable by its owner only (chmod 600)"
    )


async def test_stdio_reads_the_token_from_a_file(
    bridge_server: BridgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "token"
    path.write_text(service_token(bridge_server.service, "filed", ["*"]) + "\n")
    path.chmod(0o600)
    params = stdio_params(bridge_server.url, None, "--token-file", str(path))
    async with Client(params, cache=None, read_timeout_seconds=30) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert "core__get_data" in names


async def test_stdio_relays_list_changed_to_a_handshake_era_client(
    bridge_server: BridgeServer,
) -> None:
    token = service_token(bridge_server.service, "desktop", ["*"])
    changed = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = stdio_params(bridge_server.url, token)
    async with Client(
        params, mode="legacy", cache=None, read_timeout_seconds=30, message_handler=on_message
    ) as client:
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        await client.list_tools()
        async with asyncio.timeout(20):
            while not changed.is_set():
                register_dim(bridge_server, Recorder())
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1):
                        await changed.wait()
                if not changed.is_set():
                    bridge_server.service.registry.unregister("test:dim@1.0.0")
        assert "test__dim" in [t.name for t in (await client.list_tools()).tools]
