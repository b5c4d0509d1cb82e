"""MCP clients survive a bridge restart: a session the bridge no longer knows is a 404.

A real ``atmosphere-bridge run`` process serves ``/mcp`` on loopback; the official
``mcp`` SDK's client opens a session, the bridge is SIGKILLed and started again on the
same port and state, and the same client calls again. The streamable-HTTP transport says
what the answer must be: an unknown session id is HTTP 404 (the client then starts a new
session) — never a 5xx, a reset or a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token

BIN = Path(sys.executable).parent / "atmosphere-bridge"


class Bridge:
    """One bridge process on a fixed loopback port, restartable on the same state."""

    def __init__(self, base: Path) -> None:
        self.state = base / "state"
        self.log = base / "bridge.log"
        key = NodeKey.load_or_create(self.state / KEY_FILE_NAME)
        self.token = issue_token(key, agent_id="mcp-restart", permissions=["*"], ttl_s=600)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    str(BIN),
                    "run",
                    "--state-dir",
                    str(self.state),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--no-matter",
                ],
                stdout=subprocess.DEVNULL,
                stderr=out,
            )
        for _ in range(300):
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            await asyncio.sleep(0.1)
        raise AssertionError(self.log.read_text()[-2000:])

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(30)


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[Bridge]:
    running = Bridge(tmp_path)
    await running.start()
    try:
        yield running
    finally:
        running.stop()


async def test_a_session_from_before_a_restart_is_told_to_start_again(bridge: Bridge) -> None:
    headers = {"Authorization": f"Bearer {bridge.token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with (
            Client(
                streamable_http_client(f"{bridge.url}/mcp", http_client=http),
                mode="legacy",
                cache=None,
            ) as session,
            Client(
                streamable_http_client(f"{bridge.url}/mcp", http_client=http),
                mode="auto",
                cache=None,
            ) as modern,
        ):
            before = sorted(t.name for t in (await session.list_tools()).tools)
            assert "core__store_data" in before
            assert sorted(t.name for t in (await modern.list_tools()).tools) == before
            bridge.kill()
            await bridge.start()
            # The handshake-era session is gone with the old process: the SDK surfaces
            # the transport's "Session not found" (404), the signal to initialise again.
            with pytest.raises(MCPError, match="Session not found"):
                await session.list_tools()
            # A client of the current protocol carries no session: it just goes on.
            assert sorted(t.name for t in (await modern.list_tools()).tools) == before
        # On the wire: 404 with a JSON-RPC error body for an unknown session id.
        answer = await http.post(
            f"{bridge.url}/mcp",
            headers={
                "mcp-session-id": "0123456789abcdef0123456789abcdef",
                "accept": "application/json, text/event-stream",
                "content-type": "application/json",
                "mcp-protocol-version": "2025-06-18",
            },
            content=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
        )
        assert answer.status_code == 404
        assert answer.json()["error"] == {"code": -32600, "message": "Session not found"}
        # Starting again works at once, on the restarted bridge.
        async with Client(
            streamable_http_client(f"{bridge.url}/mcp", http_client=http), mode="legacy", cache=None
        ) as again:
            assert sorted(t.name for t in (await again.list_tools()).tools) == before
    assert "Traceback" not in bridge.log.read_text(errors="replace")
