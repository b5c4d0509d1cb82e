"""Generated Matter tools through MCP, over streamable HTTP and over the stdio process.

The recorded dimmable light (matter.js) and the door lock (Home Assistant's mock) are
imported into the real python-matter-server as test nodes; the bridge generates their
tools; the SDK's own client lists and calls them with real signed tokens, so the real
invoker checks permissions and the real controller builds each command.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from mcp import Client

from tests.mcp.test_server import mcp_client
from tests.mcp.test_server_stdio import stdio_client
from tests.support.auth import bearer
from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

LIGHT, LOCK = "node-2-dimmable", "mock_door_lock"
TRANSPORTS = ["http", "stdio"]

controller, home = home_fixtures("mcp_server", (LIGHT, LOCK))


def slug(home: Home, stem: str) -> str:
    """Return the tool-name prefix of a dump's device (a module's nodes may clash: _2)."""
    assert home.service.matter is not None
    (device,) = [d for d in home.service.matter.bridge.devices() if d.id == home.ids[stem]]
    return f"matter__{device.slug}"


@contextlib.asynccontextmanager
async def connect(home: Home, token: str, transport: str) -> AsyncIterator[Client]:
    """Yield the SDK's client on the chosen transport."""
    if transport == "http":
        async with mcp_client(home.url, token) as client:
            yield client
    else:
        async with stdio_client(home.url, token) as client:
            yield client


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_light_tool_listed_and_called_only_with_its_permission(
    home: Home, transport: str
) -> None:
    light = home.ids[LIGHT]
    allowed = home.token(f"device:control:{light}", f"device:read:{light}", agent_id="desk")
    prefix = slug(home, LIGHT)
    assert prefix.startswith("matter__light_test_dimmable")
    async with connect(home, allowed, transport) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(n for n in tools if n.startswith(prefix)) == [
            f"{prefix}_{s}" for s in ("brightness", "off", "on", "state", "toggle")
        ]
        assert not [n for n in tools if n.startswith("matter__mock_door_lock")]
        brightness = tools[f"{prefix}_brightness"]
        assert brightness.input_schema["properties"]["percent"]["type"] in ("integer", "number")
        assert brightness.annotations is not None
        assert brightness.annotations.read_only_hint is False
        state = tools[f"{prefix}_state"]
        assert state.annotations is not None
        assert state.annotations.read_only_hint is True
        # The generic tool is listed (this token may control and read the light); its
        # device_id is a pattern, never the list of ids (an unknown id would be answered
        # with every id): a device the token may not use answers as one that does not exist.
        generic = tools["matter__control_matter_device"]
        device_id = generic.input_schema["properties"]["device_id"]
        assert (device_id["pattern"], "enum" in device_id) == ("^[0-9]+-[0-9]+$", False)
        assert generic.input_schema["properties"]["access"]["enum"] == ["control", "read"]

        result = await client.call_tool(f"{prefix}_brightness", {"percent": 30})
        assert result.is_error is False, result
        sent = result.structured_content
        assert sent is None  # action tools declare no output schema; the text has the result
        text = result.content[0].text  # type: ignore[union-attr]
        assert '"command":"MoveToLevelWithOnOff"' in text
        assert '"level":77' in text

    # Without device:control:<light> the tool is neither listed nor callable.
    other = home.token(f"device:control:{home.ids[LOCK]}", agent_id="other")
    async with connect(home, other, transport) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert not [n for n in names if n.startswith(prefix)]
        refused = await client.call_tool(f"{prefix}_on", {})
    assert refused.is_error is True
    error = refused.structured_content["error"]
    # ... and answered as a tool that does not exist is (no oracle of names).
    assert error["code"] == "TOOL_NOT_FOUND"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unlock_waits_for_approval_then_runs(home: Home, transport: str) -> None:
    lock = home.ids[LOCK]
    agent = home.token(f"device:control:{lock}", agent_id="door-agent")
    approver = home.token("admin:approve", agent_id="owner")
    runtime = home.service.invocation
    assert runtime is not None
    name = f"{slug(home, LOCK)}_unlock"
    async with connect(home, agent, transport) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        unlock = tools[name]
        assert unlock.annotations is not None
        assert (unlock.annotations.destructive_hint, unlock.annotations.read_only_hint) == (
            True,
            False,
        )
        first = await client.call_tool(name, {})
        assert first.is_error is True
        error = first.structured_content["error"]
        assert error["code"] == "CONFIRMATION_REQUIRED"
        assert error["details"]["message"] == "Unlock Mock Door Lock?"
        approval_id = error["details"]["approval_id"]
        (pending,) = await runtime.approvals.list(status="pending")
        assert (pending.id, pending.agent_id) == (approval_id, "door-agent")
        # Not executed: no successful unlock is in the audit log yet.
        await asyncio.sleep(0.2)
        assert await runtime.audit.query(agent_id="door-agent", outcome="success") == []

        status, body = await post_decision(home, approval_id, approver)
        assert status == 200, body
        async with asyncio.timeout(15):
            while True:
                done = await client.call_tool(name, {})
                if not done.is_error:
                    break
                assert done.structured_content["error"]["code"] == "CONFIRMATION_REQUIRED"
                await asyncio.sleep(0.1)
        text = done.content[0].text  # type: ignore[union-attr]
        assert '"command":"UnlockDoor"' in text
        assert '"cluster":"DoorLock"' in text


async def post_decision(home: Home, approval_id: str, token: str) -> tuple[int, object]:
    """Approve ``approval_id`` over the HTTP API."""
    import aiohttp

    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{home.url}/v1/approvals/{approval_id}",
            json={"decision": "approve"},
            headers=bearer(token),
        ) as resp,
    ):
        return resp.status, await resp.json()
