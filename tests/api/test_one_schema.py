"""One schema per message: every entrance refuses the same bad message with the same error.

A real bridge (Matter off) on loopback, with a Wyoming service forwarding to it. The
same hostile documents — wrong types, extra keys, oversize and unicode strings, deep
nesting — go in through each entrance that takes that message:

- a ``tool_invoke``: ``POST /v1/invoke``, ``POST /v1/jobs``, the call socket
  ``/v1/calls/ws`` and ``ToolRequest.from_json`` (the mesh's parser): ``INVALID_REQUEST``
  with the same details (where, which rule);
- a tool's parameters: the HTTP route, the call socket and MCP's ``tools/call``:
  ``INVALID_PARAMS`` with the same problems;
- a spoken command: ``POST /v1/intents/handle`` and a Wyoming transcript:
  ``INVALID_PARAMS`` naming the same field (a well-formed one: 503
  ``COMPONENT_UNAVAILABLE`` from both, this bridge runs no voice).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import NotHandled

from bridge.cli.wyoming import http_speaker
from bridge.errors import BridgeError
from bridge.invocation.messages import ToolRequest
from bridge.tools.context import CallContext
from bridge.tools.definition import Execution, Requires, ToolDefinition
from bridge.voice.wyoming import WyomingIntentServer
from tests.mcp.test_server import mcp_client
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

PARAMS = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "maximum": 10},
        "s": {"type": "string", "maxLength": 8},
    },
    "required": ["n"],
    "additionalProperties": False,
}
DEEP: Any = "x"
for _ in range(20):  # deep, yet within every entrance's nesting bound (the socket's 32)
    DEEP = [DEEP]

# (a bad tool_invoke, the path and JSON Schema rule every entrance names)
BAD_INVOKES: list[tuple[dict[str, Any], str, str]] = [
    ({"tool": 5}, "/tool", "type"),
    ({"tool": ""}, "/tool", "minLength"),
    ({"tool": "t" * 513}, "/tool", "maxLength"),
    ({"tool": "test:echo", "bogus": 1}, "/", "additionalProperties"),
    ({"tool": "test:echo", "type": "tool_response"}, "/type", "const"),
    ({"tool": "test:echo", "params": []}, "/params", "type"),
    ({"tool": "test:echo", "params": "é中🙂"}, "/params", "type"),
    ({"tool": "test:echo", "routing": {"hop_budget": 17}}, "/routing/hop_budget", "maximum"),
    ({"tool": "test:echo", "routing": {"hop_budget": 2.5}}, "/routing/hop_budget", "type"),
    ({"tool": "test:echo", "routing": {"path": DEEP}}, "/routing/path/0", "type"),
    ({"tool": "test:echo", "routing": {"path": ["n"] * 65}}, "/routing/path", "maxItems"),
    ({"tool": "test:echo", "routing": {"timeout_ms": True}}, "/routing/timeout_ms", "type"),
    (
        {"tool": "test:echo", "context": {"agent_id": "\u202e" * 257}},
        "/context/agent_id",
        "maxLength",
    ),
    ({"tool": "test:echo", "context": {"who": 1}}, "/context", "additionalProperties"),
    ({"tool": "test:echo", "id": ""}, "/id", "minLength"),
    ({"tool": "test:echo", "id": "i" * 129}, "/id", "maxLength"),
    ({"tool": "test:echo", "timestamp": "now"}, "/timestamp", "type"),
    ({"tool": "test:echo", "idempotency_key": {"k": 1}}, "/idempotency_key", "type"),
]

# Bad parameters of test:echo: (params, the problems' paths)
BAD_PARAMS: list[tuple[dict[str, Any], list[str]]] = [
    ({}, ["$.n"]),
    ({"n": "1"}, ["$.n"]),
    ({"n": 11}, ["$.n"]),
    ({"n": True}, ["$.n"]),
    ({"n": 1, "s": "é中🙂" * 3}, ["$.s"]),
    ({"n": 1, "zzz": DEEP}, ["$"]),
    ({"n": DEEP, "s": 5}, ["$.n", "$.s"]),
]


async def _echo(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"echo": params}


@pytest.fixture
async def server(bridge_server: BridgeServer) -> BridgeServer:
    bridge_server.service.registry.register(
        ToolDefinition(
            name="echo",
            namespace="test",
            description="Echo",
            parameters=PARAMS,
            requires=Requires(permissions=("test:run",)),
            execution=Execution(async_allowed=True),
        ),
        _echo,
    )
    return bridge_server


@pytest.fixture
async def wyoming(server: BridgeServer) -> AsyncIterator[int]:
    token = service_token(server.service, "satellite", ("*",))
    speaker = WyomingIntentServer(http_speaker(server.url, token, timeout_s=10), port=0)
    port = await speaker.start()
    try:
        yield port
    finally:
        await speaker.stop()


async def _post(server: BridgeServer, path: str, token: str, body: Any) -> tuple[int, Any]:
    async with server.client.post(server.url + path, headers=bearer(token), json=body) as resp:
        return resp.status, await resp.json()


async def _socket_errors(
    server: BridgeServer, token: str, frames: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Send each frame on one call socket; return the error of each answer, in order."""
    url = server.url.replace("http", "ws") + "/v1/calls/ws"
    errors = []
    async with server.client.ws_connect(url, headers=bearer(token)) as ws:
        for frame in frames:
            await ws.send_str(json.dumps(frame))
            async with asyncio.timeout(10):
                doc = json.loads((await ws.receive()).data)
            assert (doc["type"], doc["status"]) == ("tool_response", "error"), doc
            errors.append(doc["error"])
    return errors


def _same(error: dict[str, Any]) -> tuple[str, str, str, Any]:
    details = error["details"]
    return error["code"], details["path"], details["keyword"], details.get("field")


async def test_a_bad_tool_invoke_gets_one_answer_at_every_entrance(server: BridgeServer) -> None:
    token = service_token(server.service, "eve", ("*",))
    by_socket = await _socket_errors(server, token, [body for body, _, _ in BAD_INVOKES])
    for (body, path, keyword), socket_error in zip(BAD_INVOKES, by_socket, strict=True):
        with pytest.raises(BridgeError) as parsed:
            ToolRequest.from_json(body)
        expected = _same(parsed.value.to_json())
        assert expected[:3] == ("INVALID_REQUEST", path, keyword), body
        assert _same(socket_error) == expected, body
        for route in ("/v1/invoke", "/v1/jobs"):
            status, answer = await _post(server, route, token, body)
            assert (status, _same(answer["error"])) == (400, expected), (route, body)
    # Over HTTP the token is the header's: one in the body is refused, not ignored.
    status, answer = await _post(
        server,
        "/v1/invoke",
        token,
        {"tool": "test:echo", "params": {"n": 1}, "auth": {"token": token}},
    )
    assert (status, answer["error"]["code"], answer["error"]["details"]["reason"]) == (
        400,
        "INVALID_REQUEST",
        "token_in_body",
    )
    # And the schema lets good messages through every entrance.
    status, answer = await _post(
        server, "/v1/invoke", token, {"tool": "test:echo", "params": {"n": 1}}
    )
    assert (status, answer["result"]) == (200, {"echo": {"n": 1}})


async def test_bad_parameters_get_one_answer_at_every_entrance(server: BridgeServer) -> None:
    token = service_token(server.service, "eve", ("*",))
    frames = [{"tool": "test:echo", "params": params} for params, _ in BAD_PARAMS]
    by_socket = await _socket_errors(server, token, frames)
    async with mcp_client(server.url, token) as client:
        by_mcp = [await client.call_tool("test__echo", params) for params, _ in BAD_PARAMS]
    for (params, paths), socket_error, mcp in zip(BAD_PARAMS, by_socket, by_mcp, strict=True):
        status, answer = await _post(
            server, "/v1/invoke", token, {"tool": "test:echo", "params": params}
        )
        problems = answer["error"]["details"]["errors"]
        assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMS"), params
        assert [p["path"] for p in problems] == paths, params
        assert mcp.is_error
        assert mcp.structured_content is not None
        for error in (socket_error, mcp.structured_content["error"]):
            assert (error["code"], error["details"]["errors"]) == ("INVALID_PARAMS", problems)


async def _transcript(port: int, transcript: Transcript) -> NotHandled:
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()
    try:
        await client.write_event(transcript.event())
        async with asyncio.timeout(15):
            event = await client.read_event()
    finally:
        await client.disconnect()
    assert event is not None
    assert NotHandled.is_type(event.type), event
    return NotHandled.from_event(event)


async def test_a_bad_spoken_command_gets_one_answer_from_the_route_and_wyoming(
    server: BridgeServer, wyoming: int
) -> None:
    token = service_token(server.service, "speaker", ("*",))
    cases: list[tuple[Transcript, dict[str, Any], str]] = [
        (Transcript(text="x" * 501), {"text": "x" * 501, "language": "en"}, "text"),
        (Transcript(text="   "), {"text": "   ", "language": "en"}, "text"),
        (
            Transcript(text="turn on the lights", language="e"),
            {"text": "turn on the lights", "language": "e"},
            "language",
        ),
        (
            Transcript(text="turn on the lights", language="é" * 17),
            {"text": "turn on the lights", "language": "é" * 17},
            "language",
        ),
        (
            Transcript(text="turn on the lights", context={"area": 7}),
            {"text": "turn on the lights", "language": "en", "area": 7},
            "area",
        ),
        (
            Transcript(text="turn on the lights", context={"area": DEEP}),
            {"text": "turn on the lights", "language": "en", "area": DEEP},
            "area",
        ),
        (
            Transcript(text="turn on the lights", context={"area": "\ufeff" * 65}),
            {"text": "turn on the lights", "language": "en", "area": "\ufeff" * 65},
            "area",
        ),
    ]
    for transcript, body, field in cases:
        status, answer = await _post(server, "/v1/intents/handle", token, body)
        assert (status, answer["error"]["code"], answer["error"]["details"]["field"]) == (
            400,
            "INVALID_PARAMS",
            field,
        ), body
        refused = await _transcript(wyoming, transcript)
        assert refused.context is not None
        assert refused.context["error"] == answer["error"], body
    # A well-formed command: this bridge runs no voice, and both entrances say so alike.
    status, answer = await _post(
        server, "/v1/intents/handle", token, {"text": "turn on the lights"}
    )
    assert (status, answer["error"]["code"], answer["error"]["details"]) == (
        503,
        "COMPONENT_UNAVAILABLE",
        {"component": "voice"},
    )
    refused = await _transcript(wyoming, Transcript(text="turn on the lights"))
    assert refused.context is not None
    assert refused.context["error"] == answer["error"]


async def test_an_extra_field_in_a_spoken_command_is_refused(server: BridgeServer) -> None:
    token = service_token(server.service, "speaker", ("*",))
    status, answer = await _post(
        server, "/v1/intents/handle", token, {"text": "hi", "speaker": "me"}
    )
    assert (status, answer["error"]["code"], answer["error"]["details"]["fields"]) == (
        400,
        "INVALID_PARAMS",
        ["speaker"],
    )


async def test_a_frame_that_is_no_object_is_refused_at_the_socket(server: BridgeServer) -> None:
    token = service_token(server.service, "eve", ("*",))
    url = server.url.replace("http", "ws") + "/v1/calls/ws"
    async with server.client.ws_connect(url, headers=bearer(token)) as ws:
        await ws.send_str('"just a string"')
        async with asyncio.timeout(10):
            doc = json.loads((await ws.receive()).data)
    assert (doc["error"]["code"], doc["error"]["details"]["keyword"]) == ("INVALID_REQUEST", "type")
    async with server.client.post(
        server.url + "/v1/invoke", headers=bearer(token), data=b'"just a string"'
    ) as resp:
        assert (resp.status, (await resp.json())["error"]["details"]["keyword"]) == (400, "type")
    assert aiohttp  # the client the fixtures use
