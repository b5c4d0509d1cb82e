"""The bridge's MCP server over streamable HTTP, with the SDK's own client.

A real bridge (SQLite, signed tokens, the invocation pipeline, aiohttp on 127.0.0.1)
serves ``/mcp``; the ``mcp`` SDK's ``Client`` connects both as a 2026-07-28 client
(``mode="auto"`` negotiates it) and as a handshake-era client (``mode="legacy"``).
Tools are registered on the service's registry with real handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.mcp.tool_names import key_in, mcp_name, tool_key
from bridge.tools.context import CallContext
from bridge.tools.definition import Category, Execution, Requires, ToolDefinition
from bridge.tools.naming import short_hash
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

MODES = ["auto", "legacy"]

DEVICE_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "device_id": {"type": "string", "enum": ["lamp-1", "lamp-2", "lamp-3"]},
        "level": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["device_id", "level"],
    "additionalProperties": False,
}


class Recorder:
    """A handler that records its calls and answers what it did."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], str | None]] = []

    async def __call__(self, params: dict[str, Any], ctx: CallContext) -> Any:
        self.calls.append((params, ctx.agent_id))
        return {"device": params.get("device_id"), "level": params.get("level"), "done": True}


@contextlib.asynccontextmanager
async def mcp_client(url: str, token: str, mode: str = "auto") -> AsyncIterator[Client]:
    """Yield the SDK's client connected to the bridge's /mcp with ``token`` as bearer."""
    async with (
        create_mcp_http_client(headers=bearer(token)) as http,
        Client(
            streamable_http_client(f"{url}/mcp", http_client=http), mode=mode, cache=None
        ) as client,
    ):
        yield client


def register_dim(server: BridgeServer, handler: Recorder) -> None:
    server.service.registry.register(
        ToolDefinition(
            name="dim",
            namespace="test",
            description="Dim a lamp.",
            category=Category.ACTING,
            parameters=DEVICE_PARAMS,
            requires=Requires(permissions=("device:control:{device_id}",)),
            execution=Execution(idempotent=True),
        ),
        handler,
    )


def test_mcp_names_map_keys_both_ways() -> None:
    assert mcp_name("matter", "light_kitchen_on") == "matter__light_kitchen_on"
    assert tool_key("matter__light_kitchen_on") == "matter:light_kitchen_on"
    # The name may hold '__' and '-'; the namespace ends at the first '__'.
    assert mcp_name("core", "a__b-c") == "core__a__b-c"
    assert tool_key("core__a__b-c") == "core:a__b-c"
    # What clients reject ('.', more than 64 characters) gets a shortened name with the
    # hash of the key: accepted by every client, distinct, found back through the keys.
    dotted = mcp_name("core", "a__b.c-d")
    assert dotted == "core__a__b_c-d_" + short_hash("core:a__b.c-d")
    assert key_in(dotted, ["core:a__b_c-d", "core:a__b.c-d"]) == "core:a__b.c-d"
    assert mcp_name("m", "x" * 61) == "m__" + "x" * 61  # 64 characters: kept
    long_name = mcp_name("m", "x" * 62)
    assert long_name == "m__" + "x" * 54 + "_" + short_hash("m:" + "x" * 62)
    assert long_name is not None
    assert len(long_name) == 64
    assert mcp_name("m", "x" * 63) != long_name
    # Namespaces that would make the split ambiguous have no MCP name.
    assert mcp_name("my__ns", "x") is None
    assert mcp_name("ns_", "x") is None
    for bad in ("matter", "matter__", "__x", "matter:x", "ma tter__x", "m___x", "1a__x"):
        assert tool_key(bad) is None, bad


async def test_mcp_needs_a_bearer_token(bridge_server: BridgeServer) -> None:
    url = bridge_server.url + "/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with bridge_server.client.post(url, json=body) as resp:
        assert resp.status == 401
        doc = await resp.json()
    assert doc["error"]["code"] == "UNAUTHENTICATED"
    assert doc["error"]["details"]["reason"] == "missing"
    headers = bearer("not-a-token")
    async with bridge_server.client.post(url, json=body, headers=headers) as resp:
        assert resp.status == 401
        doc = await resp.json()
    assert (doc["error"]["code"], doc["error"]["details"]["reason"]) == (
        "UNAUTHENTICATED",
        "malformed",
    )


@pytest.mark.parametrize("mode", MODES)
async def test_list_shows_only_callable_tools_with_schemas_and_hints(
    bridge_server: BridgeServer, mode: str
) -> None:
    registry = bridge_server.service.registry
    register_dim(bridge_server, Recorder())
    registry.register(
        ToolDefinition(
            name="level",
            namespace="test",
            description="Read a lamp's level.",
            category=Category.SENSING,
            parameters=DEVICE_PARAMS,
            returns={"type": "integer"},
            requires=Requires(permissions=("device:read:{device_id}",)),
        ),
        Recorder(),
    )
    registry.register(
        ToolDefinition(
            name="wipe",
            namespace="test",
            description="Erase every setting.",
            category=Category.MANAGING,
            dangerous=True,
            requires=Requires(permissions=("admin:wipe",)),
        ),
        Recorder(),
    )
    svc = bridge_server.service
    lamp2 = service_token(svc, "lamp2-agent", ["device:control:lamp-2", "device:read:*"])
    async with mcp_client(bridge_server.url, lamp2, mode) as client:
        listing = await client.list_tools()
    by_name = {t.name: t for t in listing.tools}
    assert sorted(by_name) == ["test__dim", "test__level"]
    dim = by_name["test__dim"]
    # The template permission narrows the device enum to the device the token may control.
    assert dim.input_schema["properties"]["device_id"]["enum"] == ["lamp-2"]
    assert dim.input_schema["required"] == ["device_id", "level"]
    assert dim.output_schema is None
    assert dim.annotations == types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True
    )
    level = by_name["test__level"]
    assert level.input_schema["properties"]["device_id"]["enum"] == ["lamp-1", "lamp-2", "lamp-3"]
    assert level.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert level.annotations == types.ToolAnnotations(
        read_only_hint=True, destructive_hint=None, idempotent_hint=False
    )

    admin = service_token(svc, "admin", ["*"])
    async with mcp_client(bridge_server.url, admin, mode) as client:
        listing = await client.list_tools()
    by_name = {t.name: t for t in listing.tools}
    assert {"test__dim", "test__level", "test__wipe", "core__get_data"} <= set(by_name)
    assert by_name["test__dim"].input_schema["properties"]["device_id"]["enum"] == [
        "lamp-1",
        "lamp-2",
        "lamp-3",
    ]
    assert by_name["test__wipe"].annotations == types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False
    )

    nothing = service_token(svc, "nobody", ["device:control:lamp-9"])
    async with mcp_client(bridge_server.url, nothing, mode) as client:
        listing = await client.list_tools()
    assert [t.name for t in listing.tools if t.name.startswith("test__")] == []


@pytest.mark.parametrize("mode", MODES)
async def test_calls_run_through_the_pipeline_and_errors_carry_our_codes(
    bridge_server: BridgeServer, mode: str
) -> None:
    handler = Recorder()
    register_dim(bridge_server, handler)
    svc = bridge_server.service
    lamp2 = service_token(svc, "lamp2-agent", ["device:control:lamp-2"])
    async with mcp_client(bridge_server.url, lamp2, mode) as client:
        ok = await client.call_tool("test__dim", {"device_id": "lamp-2", "level": 40})
        denied = await client.call_tool("test__dim", {"device_id": "lamp-1", "level": 40})
        invalid = await client.call_tool("test__dim", {"device_id": "lamp-2", "level": 400})
        missing = await client.call_tool("test__nope", {})
        unnamed = await client.call_tool("no-namespace", {})
    assert ok.is_error is False
    assert ok.content == [types.TextContent(text='{"device":"lamp-2","level":40,"done":true}')]
    assert handler.calls == [({"device_id": "lamp-2", "level": 40}, "lamp2-agent")]

    assert denied.is_error is True
    assert denied.structured_content["error"]["code"] == "PERMISSION_DENIED"
    assert denied.structured_content["error"]["details"]["required"] == "device:control:lamp-1"
    assert denied.content == [
        types.TextContent(text="PERMISSION_DENIED: token does not grant 'device:control:lamp-1'")
    ]
    assert invalid.is_error is True
    assert invalid.structured_content["error"]["code"] == "INVALID_PARAMS"
    assert missing.structured_content["error"]["code"] == "TOOL_NOT_FOUND"
    assert unnamed.structured_content["error"] == {
        "code": "TOOL_NOT_FOUND",
        "message": "no tool is called 'no-namespace'",
        "details": {"tool": "no-namespace"},
        "retryable": False,
    }
    assert len(handler.calls) == 1  # nothing refused ever reached the handler


async def test_a_call_does_not_rebuild_the_tool_list(
    bridge_server: BridgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 2026-07-28 tools/call has its Mcp-Param-* headers checked against the tool's
    # schema; that must be a lookup, not a whole tools/list for the token per call.
    from bridge.mcp.server import BridgeMcpServer

    handler = Recorder()
    register_dim(bridge_server, handler)
    listed: list[str] = []
    real = BridgeMcpServer.tools_for

    def counting(self: BridgeMcpServer, token: Any) -> list[types.Tool]:
        listed.append(token.agent_id)
        return real(self, token)

    monkeypatch.setattr(BridgeMcpServer, "tools_for", counting)
    token = service_token(bridge_server.service, "agent-a", ("device:control:*",))
    for mode in MODES:
        async with mcp_client(bridge_server.url, token, mode) as client:
            await client.list_tools()
            listed.clear()
            for level in range(5):
                result = await client.call_tool(
                    "test__dim", {"device_id": "lamp-1", "level": level}
                )
                assert not result.is_error, result
            assert listed == [], (mode, client.protocol_version)
    assert [p["level"] for p, _ in handler.calls] == [0, 1, 2, 3, 4] * 2
    service = bridge_server.service  # unknown names have no schema to check
    server = BridgeMcpServer(service.registry, lambda: service.invocation, service.events)
    assert server.input_schema("test__dim") == DEVICE_PARAMS
    assert server.input_schema("nope__nothing") is None
    assert server.input_schema("no-namespace") is None


async def test_list_changed_reaches_a_listening_client(bridge_server: BridgeServer) -> None:
    token = service_token(bridge_server.service, "watcher", ["*"])
    async with (
        mcp_client(bridge_server.url, token) as client,
        client.listen(tools_list_changed=True) as sub,
    ):
        assert client.protocol_version == "2026-07-28"
        events = sub.__aiter__()
        register_dim(bridge_server, Recorder())
        async with asyncio.timeout(10):
            event = await events.__anext__()
        assert type(event).__name__ == "ToolsListChanged"
        names = [t.name for t in (await client.list_tools()).tools]
        assert "test__dim" in names
        bridge_server.service.registry.unregister("test:dim@1.0.0")
        async with asyncio.timeout(10):
            await events.__anext__()
        assert "test__dim" not in [t.name for t in (await client.list_tools()).tools]


async def test_list_changed_reaches_a_handshake_era_client(bridge_server: BridgeServer) -> None:
    token = service_token(bridge_server.service, "watcher", ["*"])
    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with (
        create_mcp_http_client(headers=bearer(token)) as http,
        Client(
            streamable_http_client(f"{bridge_server.url}/mcp", http_client=http),
            mode="legacy",
            cache=None,
            message_handler=on_message,
        ) as client,
    ):
        assert client.protocol_version == "2025-11-25"
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed is True
        await client.list_tools()  # the server now knows this connection
        register_dim(bridge_server, Recorder())
        async with asyncio.timeout(10):
            await changed.wait()
        assert "test__dim" in [t.name for t in (await client.list_tools()).tools]


@pytest.mark.parametrize("mode", MODES)
async def test_dangerous_call_waits_for_approval_and_is_collected(
    bridge_server: BridgeServer, mode: str
) -> None:
    handler = Recorder()
    bridge_server.service.registry.register(
        ToolDefinition(
            name="unlock",
            namespace="test",
            description="Unlock the door.",
            category=Category.ACTING,
            dangerous=True,
            parameters=DEVICE_PARAMS,
            requires=Requires(permissions=("device:control:{device_id}",)),
        ),
        handler,
    )
    svc = bridge_server.service
    agent = service_token(svc, "door-agent", ["device:control:*"])
    approver = service_token(svc, "owner", ["admin:approve"])
    args = {"device_id": "lamp-3", "level": 1}
    async with mcp_client(bridge_server.url, agent, mode) as client:
        first = await client.call_tool("test__unlock", args)
        assert first.is_error is True
        error = first.structured_content["error"]
        assert error["code"] == "CONFIRMATION_REQUIRED"
        approval_id = error["details"]["approval_id"]
        assert error["details"]["approve"] == {
            "method": "POST",
            "path": f"/v1/approvals/{approval_id}",
            "body": {"decision": "approve"},
            "permission": "admin:approve",
        }
        assert error["details"]["command"] == f"atmosphere-bridge approvals approve {approval_id}"
        assert error["details"]["tool"] == "test:unlock@1.0.0"
        assert handler.calls == []
        # Asking again while pending answers the same approval and starts nothing new.
        again = await client.call_tool("test__unlock", args)
        assert again.structured_content["error"]["details"]["approval_id"] == approval_id
        runtime = svc.invocation
        assert runtime is not None
        assert [a.id for a in await runtime.approvals.list(status="pending")] == [approval_id]
        assert handler.calls == []

        async with bridge_server.client.post(
            f"{bridge_server.url}/v1/approvals/{approval_id}",
            json={"decision": "approve"},
            headers=bearer(approver),
        ) as resp:
            assert resp.status == 200, await resp.text()
        async with asyncio.timeout(10):
            while not handler.calls:
                await asyncio.sleep(0.02)
        assert handler.calls == [(args, "door-agent")]
        done = await client.call_tool("test__unlock", args)
        assert done.is_error is False
        assert done.content == [types.TextContent(text='{"device":"lamp-3","level":1,"done":true}')]
        # Collected: the next identical call needs a new approval.
        fresh = await client.call_tool("test__unlock", args)
        assert fresh.structured_content["error"]["code"] == "CONFIRMATION_REQUIRED"
        assert fresh.structured_content["error"]["details"]["approval_id"] != approval_id
        assert len(handler.calls) == 1


async def test_stopping_the_api_ends_open_listen_streams(bridge_server: BridgeServer) -> None:
    token = service_token(bridge_server.service, "watcher", ["*"])
    received: list[object] = []
    async with (
        mcp_client(bridge_server.url, token) as client,
        client.listen(tools_list_changed=True) as sub,
    ):
        stopper = asyncio.create_task(bridge_server.service.stop_api())
        async with asyncio.timeout(5):
            received.extend([event async for event in sub])  # ends: the server closed it
        await stopper
    assert received == []
