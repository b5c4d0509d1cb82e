"""The call channel ``GET /v1/calls/ws`` on a real bridge: calls, errors, bad frames, expiry."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from bridge.api.calls_ws_routes import CLOSE_TOKEN_REJECTED, MAX_DEPTH, parse_message
from bridge.errors import DeviceUnavailableError, InvalidRequestError
from bridge.tools.context import CallContext
from bridge.tools.definition import Requires, ToolDefinition
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

PARAMS = {
    "type": "object",
    "properties": {"device_id": {"type": "string"}, "wait_ms": {"type": "integer", "default": 0}},
    "required": ["device_id"],
    "additionalProperties": False,
}


async def slow_echo(params: dict[str, Any], ctx: CallContext) -> Any:
    await asyncio.sleep(params["wait_ms"] / 1000)
    return {"device": params["device_id"], "agent": ctx.agent_id}


async def asleep(params: dict[str, Any], ctx: CallContext) -> Any:
    raise DeviceUnavailableError("asleep", {"device_id": params["device_id"]})


@pytest.fixture
def server(bridge_server: BridgeServer) -> BridgeServer:
    for name, handler in (("echo", slow_echo), ("asleep", asleep)):
        bridge_server.service.registry.register(
            ToolDefinition(
                name=name,
                namespace="test",
                description=f"{name} tool",
                parameters=PARAMS,
                requires=Requires(permissions=("device:control:{device_id}",)),
            ),
            handler,
        )
    return bridge_server


async def channel(server: BridgeServer, token: str) -> aiohttp.ClientWebSocketResponse:
    url = server.url.replace("http", "ws") + "/v1/calls/ws"
    return await server.client.ws_connect(url, headers=bearer(token))


async def answers(ws: aiohttp.ClientWebSocketResponse, count: int) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    async with asyncio.timeout(10):
        while len(out) < count:
            doc = json.loads((await ws.receive()).data)
            assert doc["type"] == "tool_response"
            out[doc["request_id"]] = doc
    return out


async def test_many_calls_in_flight_answer_in_completion_order(server: BridgeServer) -> None:
    token = service_token(server.service, "alice", ["device:control:*"])
    ws = await channel(server, token)
    # Sent slowest first: the answers come back as each call finishes, fastest first.
    for i, wait in enumerate((300, 200, 100, 0)):
        await ws.send_json(
            {
                "type": "tool_invoke",
                "id": f"c{i}",
                "tool": "test:echo",
                "params": {"device_id": f"lamp-{i}", "wait_ms": wait},
            }
        )
    order: list[str] = []
    async with asyncio.timeout(10):
        while len(order) < 4:
            doc = json.loads((await ws.receive()).data)
            order.append(doc["request_id"])
            i = int(doc["request_id"][1:])
            assert doc["status"] == "success", doc
            assert doc["result"] == {"device": f"lamp-{i}", "agent": "alice"}
            assert doc["tool"] == "test:echo@1.0.0"
    assert order == ["c3", "c2", "c1", "c0"]
    # A burst far beyond one call at a time: every one answered exactly once.
    burst = 200
    for i in range(burst):
        await ws.send_str(
            json.dumps({"id": f"b{i}", "tool": "echo", "params": {"device_id": "lamp-1"}})
        )
    got = await answers(ws, burst)
    assert set(got) == {f"b{i}" for i in range(burst)}
    assert all(d["status"] == "success" for d in got.values())
    await ws.close()


async def test_errors_are_the_pipelines_own(server: BridgeServer) -> None:
    token = service_token(server.service, "bob", ["device:control:lamp-1"])
    ws = await channel(server, token)
    await ws.send_json({"id": "denied", "tool": "echo", "params": {"device_id": "lamp-2"}})
    await ws.send_json({"id": "unknown", "tool": "nope", "params": {}})
    await ws.send_json({"id": "params", "tool": "echo", "params": {"device_id": 5}})
    await ws.send_json({"id": "failed", "tool": "asleep", "params": {"device_id": "lamp-1"}})
    got = await answers(ws, 4)
    codes = {rid: (d["status"], d["error"]["code"]) for rid, d in got.items()}
    assert codes == {
        "denied": ("error", "PERMISSION_DENIED"),
        "unknown": ("error", "TOOL_NOT_FOUND"),
        "params": ("error", "INVALID_PARAMS"),
        "failed": ("error", "DEVICE_UNAVAILABLE"),
    }
    assert got["failed"]["error"]["retryable"] is True
    # The same calls over HTTP give the same error codes.
    async with server.client.post(
        server.url + "/v1/invoke",
        headers=bearer(token),
        json={"tool": "echo", "params": {"device_id": "lamp-2"}},
    ) as r:
        assert (await r.json())["error"]["code"] == "PERMISSION_DENIED"
    # Replaying an id inside the window is refused; the channel stays open.
    await ws.send_json({"id": "denied", "tool": "echo", "params": {"device_id": "lamp-1"}})
    again = await answers(ws, 1)
    assert again["denied"]["error"]["code"] == "UNAUTHENTICATED"
    assert again["denied"]["error"]["details"]["reason"] == "replayed"
    await ws.send_json({"id": "fine", "tool": "echo", "params": {"device_id": "lamp-1"}})
    assert (await answers(ws, 1))["fine"]["status"] == "success"
    await ws.close()


@pytest.mark.parametrize(
    ("frame", "request_id", "message"),
    [
        ("not json", "", "message is not valid JSON"),
        ("[1, 2]", "", "at /: [1, 2] is not of type 'object'"),
        ('{"id": "x1"}', "x1", "at /: 'tool' is a required property"),
        ('{"id": "x2", "tool": "echo", "extra": 1}', "x2", "('extra' was unexpected)"),
        (
            '{"id": "x3", "type": "tool_response", "tool": "echo"}',
            "x3",
            "at /type: 'tool_invoke' was expected",
        ),
        (
            '{"id": "x4", "tool": "echo", "params": []}',
            "x4",
            "at /params: [] is not of type 'object'",
        ),
        # Refused while parsing: no id can be read back from it.
        (
            '{"id": "x5", "tool": "echo", "params": ' + "[" * 40 + "]" * 40 + "}",
            "",
            f"message nests deeper than {MAX_DEPTH} levels",
        ),
        ("[" * 100_000 + "]" * 100_000, "", "message"),
        # The HTTP body rules hold for frames too: no NaN, surrogates or huge integers.
        ('{"id": "x6", "tool": "echo", "params": {"a": NaN}}', "", "NaN is not a JSON number"),
        ('{"id": "x7", "tool": "echo", "params": {"a": "\\ud800"}}', "", "lone UTF-16"),
        ('{"id": "x8", "tool": "echo", "params": {"a": 1' + "0" * 30 + "}}", "", "integer beyond"),
    ],
)
async def test_bad_frames_get_an_invalid_request_answer(
    server: BridgeServer, frame: str, request_id: str, message: str
) -> None:
    ws = await channel(server, service_token(server.service, "eve", ["device:control:*"]))
    await ws.send_str(frame)
    doc = json.loads((await ws.receive(timeout=10)).data)
    assert doc["type"] == "tool_response"
    assert doc["request_id"] == request_id
    assert doc["status"] == "error"
    assert doc["error"]["code"] == "INVALID_REQUEST"
    assert message in doc["error"]["message"]
    await ws.send_bytes(b"\x00\x01")
    doc = json.loads((await ws.receive(timeout=10)).data)
    assert doc["error"]["code"] == "INVALID_REQUEST"
    # Still open and working.
    await ws.send_json({"id": "ok", "tool": "echo", "params": {"device_id": "lamp-1"}})
    assert (await answers(ws, 1))["ok"]["status"] == "success"
    await ws.close()


async def test_a_frame_over_the_size_limit_closes_only_that_socket(server: BridgeServer) -> None:
    token = service_token(server.service, "eve", ["device:control:*"])
    ws = await channel(server, token)
    limit = server.service.config.api.max_body_bytes
    await ws.send_str(
        json.dumps({"id": "big", "tool": "echo", "params": {"device_id": "x" * (limit + 10)}})
    )
    msg = await ws.receive(timeout=10)
    assert msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
    assert ws.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
    other = await channel(server, token)
    await other.send_json({"id": "ok", "tool": "echo", "params": {"device_id": "lamp-1"}})
    assert (await answers(other, 1))["ok"]["status"] == "success"
    await other.close()


async def test_no_or_bad_token_is_refused_at_connect(server: BridgeServer) -> None:
    url = server.url.replace("http", "ws") + "/v1/calls/ws"
    for headers, reason in (({}, "missing"), (bearer("abc.def"), "malformed")):
        with pytest.raises(aiohttp.WSServerHandshakeError) as caught:
            await server.client.ws_connect(url, headers=headers)
        assert caught.value.status == 401, reason
    token = service_token(server.service, "alice", ["device:control:*"])
    async with server.client.get(server.url + "/v1/calls/ws", headers=bearer(token)) as resp:
        assert resp.status == 400
        assert (await resp.json())["error"]["code"] == "INVALID_REQUEST"


async def test_an_expired_token_closes_the_open_socket(server: BridgeServer) -> None:
    runtime = server.service.invocation
    assert runtime is not None
    runtime.verifier.clock_skew_s = 0.0  # expiry exactly at expires_at
    token = service_token(server.service, "alice", ["device:control:*"], ttl_s=1.5)
    ws = await channel(server, token)
    await ws.send_json({"id": "before", "tool": "echo", "params": {"device_id": "lamp-1"}})
    assert (await answers(ws, 1))["before"]["status"] == "success"
    msg = await ws.receive(timeout=10)
    assert msg.type is aiohttp.WSMsgType.CLOSE
    assert ws.close_code == CLOSE_TOKEN_REJECTED
    # A call whose message carries a valid token of its own is not affected by the socket's.
    fresh = service_token(server.service, "alice", ["device:control:*"])
    ws = await channel(server, fresh)
    await ws.send_json(
        {"id": "own", "tool": "echo", "params": {"device_id": "lamp-1"}, "auth": {"token": fresh}}
    )
    assert (await answers(ws, 1))["own"]["status"] == "success"
    await ws.close()


def test_parse_message_bounds_nesting_and_rejects_non_json() -> None:
    assert parse_message('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    assert parse_message("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(InvalidRequestError, match="nests deeper"):
        parse_message("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(InvalidRequestError, match="not valid JSON"):
        parse_message("{")
