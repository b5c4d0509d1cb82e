"""Client tools over a real bridge: tool_use on the caller's WebSocket, results over HTTP.

The tools come from the manifest as ``definition:`` documents of type ``client``; calls
go through ``POST /v1/invoke`` (the full pipeline) with signed tokens, and the client
side is a real WebSocket on ``/v1/events``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.config import BridgeConfig
from bridge.service import BridgeService
from bridge.tools.definition import ExecutionType, ToolIntent
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

ASK = """
tool:
  name: ask_user
  namespace: ui
  description: Ask the person at the client a question and wait for the answer.
  type: client
  intent: render
  parameters:
    type: object
    properties: {question: {type: string}}
    required: [question]
  returns:
    type: object
    properties: {answer: {type: string}}
    required: [answer]
  requires: {permissions: ["ui:ask"]}
  execution: {timeout_ms: 1500, requires_response: true}
"""
CARD = """
tool:
  name: show_card
  namespace: ui
  description: Show a card on the client's screen.
  type: client
  intent: render
  parameters: {type: object, properties: {title: {type: string}}}
  execution: {requires_response: false, default_result: {shown: true}}
"""


@pytest.fixture
def bridge_config(bridge_config: BridgeConfig, tmp_path: Path) -> BridgeConfig:
    (tmp_path / "ask.yaml").write_text(ASK)
    (tmp_path / "card.yaml").write_text(CARD)
    manifest = tmp_path / "tools.yaml"
    manifest.write_text(
        "tools:\n  - source: definition:ask.yaml\n  - source: definition:card.yaml\n"
    )
    return replace(bridge_config, tools_manifest=manifest)


@pytest.fixture
def server(bridge_server: BridgeServer) -> BridgeServer:
    return bridge_server


def token(service: BridgeService, agent: str) -> str:
    return service_token(service, agent, ("ui:*",))


async def invoke(
    server: BridgeServer, tok: str, tool: str, params: dict[str, Any], session: str | None = None
) -> tuple[int, Any]:
    body: dict[str, Any] = {"tool": tool, "params": params}
    if session is not None:
        body["context"] = {"session_id": session}
    async with server.client.post(
        f"{server.url}/v1/invoke", json=body, headers=bearer(tok)
    ) as resp:
        return resp.status, await resp.json()


async def post_result(server: BridgeServer, tok: str, call_id: str, body: Any) -> tuple[int, Any]:
    async with server.client.post(
        f"{server.url}/v1/tool-results/{call_id}", json=body, headers=bearer(tok)
    ) as resp:
        return resp.status, await resp.json()


async def socket(server: BridgeServer, tok: str, session: str | None = None) -> Any:
    query = "types=tool_use" + (f"&session={session}" if session else "")
    return await server.client.ws_connect(
        f"{server.url.replace('http', 'ws')}/v1/events?{query}", headers=bearer(tok)
    )


async def next_tool_use(ws: Any, timeout_s: float = 5.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout_s):
        msg = await ws.receive()
    assert msg.type is aiohttp.WSMsgType.TEXT, msg
    frame: dict[str, Any] = json.loads(msg.data)
    assert frame["type"] == "tool_use"
    return frame["data"]


async def nothing_arrives(ws: Any, wait_s: float = 0.3) -> None:
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(wait_s):
            await ws.receive()


async def test_loaded_as_client_tools(server: BridgeServer) -> None:
    ask = server.service.registry.resolve("ui:ask_user").definition
    assert (ask.type, ask.intent) == (ExecutionType.CLIENT, ToolIntent.RENDER)
    assert ask.execution.extra == {"requires_response": True}


async def test_blocking_call_gets_the_clients_result(server: BridgeServer) -> None:
    a, b = token(server.service, "agent-a"), token(server.service, "agent-b")
    ws_a, ws_b = await socket(server, a), await socket(server, b)
    call = asyncio.create_task(invoke(server, a, "ui:ask_user", {"question": "Lights off?"}))
    use = await next_tool_use(ws_a)
    assert {k: use[k] for k in ("tool", "params", "agentId", "requiresResponse", "timeoutMs")} == {
        "tool": "ui:ask_user@1.0.0",
        "params": {"question": "Lights off?"},
        "agentId": "agent-a",
        "requiresResponse": True,
        "timeoutMs": 1500,
    }
    call_id = use["toolCallId"]
    # Another agent may not answer, and an off-schema answer is refused; the call waits on.
    status, body = await post_result(server, b, call_id, {"result": {"answer": "no"}})
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
    status, body = await post_result(server, a, call_id, {"result": {"answer": 42}})
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    assert body["error"]["details"]["errors"][0]["path"] == "$.answer"
    assert not call.done()
    status, body = await post_result(server, a, call_id, {"result": {"answer": "yes"}})
    assert (status, body) == (202, {"toolCallId": call_id, "accepted": True})
    status, response = await call
    assert (status, response["status"], response["result"]) == (200, "success", {"answer": "yes"})
    assert response["call_id"] == call_id
    # A second answer is a duplicate; the other agent's socket never saw the tool_use.
    status, body = await post_result(server, a, call_id, {"result": {"answer": "again"}})
    assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
        409,
        "CONFLICT",
        "duplicate",
    )
    await nothing_arrives(ws_b)
    await ws_a.close()
    await ws_b.close()


async def test_client_error_fails_the_call(server: BridgeServer) -> None:
    a = token(server.service, "agent-a")
    ws = await socket(server, a)
    call = asyncio.create_task(invoke(server, a, "ui:ask_user", {"question": "?"}))
    use = await next_tool_use(ws)
    status, _ = await post_result(
        server, a, use["toolCallId"], {"error": {"code": "DISMISSED", "message": "user closed it"}}
    )
    assert status == 202
    status, response = await call
    assert response["error"]["code"] == "TOOL_FAILED"
    assert response["error"]["details"] == {"client_code": "DISMISSED"}
    assert response["error"]["message"] == "the client reported: user closed it"
    await ws.close()


async def test_blocking_call_times_out_and_a_late_result_is_refused(server: BridgeServer) -> None:
    a = token(server.service, "agent-a")
    ws = await socket(server, a)
    started = time.monotonic()
    call = asyncio.create_task(invoke(server, a, "ui:ask_user", {"question": "Still there?"}))
    use = await next_tool_use(ws)
    status, response = await call
    assert response["error"]["code"] == "TIMEOUT"
    assert 1.4 < time.monotonic() - started < 5.0
    status, body = await post_result(server, a, use["toolCallId"], {"result": {"answer": "yes"}})
    assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
        409,
        "CONFLICT",
        "late",
    )
    await ws.close()


async def test_without_a_socket_a_blocking_call_fails_fast(server: BridgeServer) -> None:
    a = token(server.service, "agent-a")
    started = time.monotonic()
    status, response = await invoke(server, a, "ui:ask_user", {"question": "?"})
    assert (status, response["error"]["code"]) == (503, "CLIENT_UNAVAILABLE")
    assert response["error"]["retryable"] is True
    assert time.monotonic() - started < 1.0
    # A socket of another session does not count for a call in this session.
    ws = await socket(server, a, session="kitchen-speaker")
    status, response = await invoke(server, a, "ui:ask_user", {"question": "?"}, session="phone")
    assert (status, response["error"]["code"]) == (503, "CLIENT_UNAVAILABLE")
    await ws.close()


async def test_non_blocking_call_returns_its_default_at_once(server: BridgeServer) -> None:
    a = token(server.service, "agent-a")
    ws = await socket(server, a, session="s1")
    other_session = await socket(server, a, session="s2")
    status, response = await invoke(server, a, "ui:show_card", {"title": "Hi"}, session="s1")
    assert (status, response["result"]) == (200, {"shown": True})
    use = await next_tool_use(ws)
    assert (use["tool"], use["params"], use["sessionId"], use["requiresResponse"]) == (
        "ui:show_card@1.0.0",
        {"title": "Hi"},
        "s1",
        False,
    )
    await nothing_arrives(other_session)
    await ws.close()
    await other_session.close()


async def test_bad_results_and_permissions(server: BridgeServer) -> None:
    a = token(server.service, "agent-a")
    status, body = await post_result(server, a, "no-such-call", {"result": 1})
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
    for bad in (
        {},
        {"result": 1, "error": {"message": "x"}},
        {"answer": 1},
        [1],
        {"error": "broken"},
    ):
        status, body = await post_result(server, a, "no-such-call", bad)
        assert (status, body["error"]["code"]) == (400, "INVALID_REQUEST"), bad
    async with server.client.post(
        f"{server.url}/v1/tool-results/x", data=b"\xff{", headers=bearer(a)
    ) as resp:
        assert resp.status == 400
    status, body = await post_result(server, "not-a-token", "x", {"result": 1})
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    # The tool's own permission still applies to client tools (out of sight: as unknown).
    other = service_token(server.service, "agent-c", ("device:*",))
    status, body = await invoke(server, other, "ui:ask_user", {"question": "?"})
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
