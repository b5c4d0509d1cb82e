"""The API's boundary rules over a real server on loopback: JSON limits, parse errors as
JSON, listing follows permission, jobs checked before 202, per-agent request ids, HEAD,
and event sockets closed when their token expires."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.config import ApiConfig, AuthConfig, BridgeConfig, MatterConfig
from bridge.tools.context import CallContext
from bridge.tools.definition import Execution, Requires, ToolDefinition
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer


@pytest.fixture
def bridge_config(tmp_path: Path) -> BridgeConfig:
    """A bridge whose tokens expire with 3 s of grace instead of the default five minutes.

    Wide enough that three requests of one test fit in it on a loaded 2-core machine
    (0.2 s made the per-agent request-id test see 'clock_skew' instead of 'replayed').
    """
    return BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(host="127.0.0.1", port=0),
        auth=replace(AuthConfig(), clock_skew_s=3.0),
        matter=replace(MatterConfig(), enabled=False),
    )


async def _lamp(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"on": True, "room": params["room"]}


@pytest.fixture
async def server(bridge_server: BridgeServer) -> BridgeServer:
    schema = {
        "type": "object",
        "properties": {"room": {"type": "string"}},
        "required": ["room"],
        "additionalProperties": False,
    }
    bridge_server.service.registry.register(
        ToolDefinition(
            name="lamp_on",
            namespace="home",
            description="Lamp on",
            parameters=schema,
            requires=Requires(permissions=("home:control:{room}",)),
            execution=Execution(async_allowed=True),
        ),
        _lamp,
    )
    return bridge_server


async def _post(server: BridgeServer, path: str, data: bytes | str, token: str) -> tuple[int, Any]:
    headers = {**bearer(token), "Content-Type": "application/json"}
    async with server.client.post(server.url + path, data=data, headers=headers) as resp:
        assert resp.content_type == "application/json"
        return resp.status, await resp.json()


@pytest.mark.parametrize(
    ("body", "status", "code", "reason"),
    [
        (
            '{"tool":"home:lamp_on","params":{"room":' + "[" * 100_000 + "]" * 100_000 + "}}",
            400,
            "INVALID_REQUEST",
            "too_deep",
        ),
        (
            '{"tool":"home:lamp_on","params":{"room":' + "[" * 65 + "]" * 65 + "}}",
            400,
            "INVALID_REQUEST",
            "too_deep",
        ),
        ('{"tool":"home:\\udead"}', 400, "INVALID_REQUEST", "lone_surrogate"),
        (
            '{"tool":"home:lamp_on","context":{"trace_id":"\\ud800x"}}',
            400,
            "INVALID_REQUEST",
            "lone_surrogate",
        ),
        (
            '{"tool":"home:lamp_on","params":{"\\udfff":1}}',
            400,
            "INVALID_REQUEST",
            "lone_surrogate",
        ),
        (
            '{"tool":"core:store_data","params":{"key":"k","value":NaN},"idempotency_key":"i"}',
            400,
            "INVALID_REQUEST",
            "not_finite",
        ),
        (
            '{"tool":"core:store_data","params":{"key":"k","value":-Infinity}}',
            400,
            "INVALID_REQUEST",
            "not_finite",
        ),
        (
            '{"tool":"core:store_data","params":{"key":"k","value":1e999}}',
            400,
            "INVALID_REQUEST",
            "not_finite",
        ),
        (
            '{"tool":"core:store_data","params":{"key":"k","value":1,"ttl_seconds":1e30}}',
            400,
            "INVALID_PARAMS",
            None,
        ),
        ('{"tool":"home:lamp_on","idempotency_key":7}', 400, "INVALID_REQUEST", "schema"),
        ('{"tool":"home:lamp_on","routing":{"hop_budget":99}}', 400, "INVALID_REQUEST", "schema"),
    ],
)
async def test_hostile_invoke_bodies(
    server: BridgeServer, body: str, status: int, code: str, reason: str | None
) -> None:
    token = service_token(server.service, "hostile", ("*",))
    got_status, got = await _post(server, "/v1/invoke", body, token)
    error = got.get("error") or {}
    assert (got_status, error.get("code")) == (status, code), got
    if reason is not None:
        assert error["details"]["reason"] == reason


async def test_parse_errors_answer_json(server: BridgeServer) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    limit = server.service.config.api.max_header_bytes
    cases = [
        (
            b"GET /" + b"a" * (limit + 10) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            431,
            "HEADERS_TOO_LARGE",
        ),
        (
            b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
            + b"b" * (limit + 10)
            + b"\r\n\r\n",
            431,
            "HEADERS_TOO_LARGE",
        ),
        (b"\x16\x03\x01\x00\xa5garbage\r\n\r\n", 400, "INVALID_REQUEST"),
        (
            b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
            400,
            "INVALID_REQUEST",
        ),
    ]
    for raw, status, code in cases:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] == str(status).encode(), raw[:40]
        assert b"application/json" in head
        assert json.loads(body)["error"]["code"] == code


async def test_a_token_with_200_permissions_is_usable(server: BridgeServer) -> None:
    perms = [f"home:control:room_number_{i:04d}_with_a_long_name" for i in range(200)]
    token = service_token(server.service, "big", perms)
    assert len(token) > 8190
    room = "room_number_0007_with_a_long_name"
    call = {"tool": "home:lamp_on", "params": {"room": room}}
    status, body = await _post(server, "/v1/invoke", json.dumps(call), token)
    assert (status, body["result"]) == (200, {"on": True, "room": room})


async def test_head_healthz(server: BridgeServer) -> None:
    async with server.client.head(server.url + "/healthz") as resp:
        assert resp.status == 200


async def test_listing_follows_permission(server: BridgeServer) -> None:
    narrow = service_token(server.service, "kitchen", ("home:control:kitchen",))
    nothing = service_token(server.service, "nobody", ("nothing:at:all",))
    for token, names in ((narrow, ["home:lamp_on"]), (nothing, [])):
        async with server.client.get(server.url + "/v1/tools", headers=bearer(token)) as resp:
            body = await resp.json()
        assert [t["identity"].split("@")[0] for t in body["tools"]] == names
        async with server.client.get(
            server.url + "/v1/tools", params={"q": "store data"}, headers=bearer(token)
        ) as resp:
            assert (await resp.json())["tools"] == []
    async with server.client.get(
        server.url + "/v1/tools/core:store_data", headers=bearer(narrow)
    ) as resp:
        assert (resp.status, (await resp.json())["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    async with server.client.get(
        server.url + "/v1/tools/home:lamp_on", headers=bearer(narrow)
    ) as resp:
        assert (resp.status, (await resp.json())["tool"]["name"]) == (200, "lamp_on")


async def test_jobs_check_permission_before_accepting(server: BridgeServer) -> None:
    narrow = service_token(server.service, "kitchen", ("home:control:kitchen",))
    body = {"tool": "home:lamp_on", "params": {"room": "garage"}}
    status, answer = await _post(server, "/v1/jobs", json.dumps(body), narrow)
    assert (status, answer["error"]["code"]) == (403, "PERMISSION_DENIED")
    status, answer = await _post(
        server, "/v1/jobs", json.dumps({**body, "params": {"room": "kitchen"}}), narrow
    )
    assert status == 202, answer
    assert (answer["tool"], answer["agent_id"]) == ("home:lamp_on", "kitchen")


async def test_request_ids_are_per_agent(server: BridgeServer) -> None:
    body = json.dumps(
        {
            "tool": "home:lamp_on",
            "params": {"room": "hall"},
            "id": "req-1",
            "timestamp": time.time(),
        }
    )
    alice = service_token(server.service, "alice", ("home:*",))
    bob = service_token(server.service, "bob", ("home:*",))
    assert (await _post(server, "/v1/invoke", body, alice))[0] == 200
    assert (await _post(server, "/v1/invoke", body, bob))[0] == 200
    status, again = await _post(server, "/v1/invoke", body, alice)
    assert (status, again["error"]["details"]["reason"]) == (401, "replayed")


async def test_event_socket_closes_when_its_token_expires(server: BridgeServer) -> None:
    token = service_token(server.service, "watcher", ("*",), ttl_s=1.5)
    started = time.monotonic()
    async with server.client.ws_connect(server.url + "/v1/events", headers=bearer(token)) as ws:
        msg = await asyncio.wait_for(ws.receive(), 15)
        lived = time.monotonic() - started
    assert msg.type == aiohttp.WSMsgType.CLOSE
    assert ws.close_code == 1008
    assert msg.extra == "token expired"
    # Closed by itself after the expiry plus its grace (4.5 s), never before the expiry.
    assert 1.0 < lived < 20.0


async def test_openapi_shows_only_reachable_routes(server: BridgeServer) -> None:
    async def paths(perms: tuple[str, ...]) -> dict[str, set[str]]:
        token = service_token(server.service, "reader", perms)
        async with server.client.get(
            server.url + "/v1/openapi.json", headers=bearer(token)
        ) as resp:
            doc = await resp.json()
        return {p: set(ops) for p, ops in doc["paths"].items()}

    everything = await paths(("*",))
    assert everything["/v1/approvals"] == {"get"}
    assert everything["/v1/devices/{device}"] == {"patch", "delete"}
    kitchen = await paths(("home:control:kitchen",))
    hidden = {
        "/v1/approvals",
        "/v1/approvals/{approval_id}",
        "/v1/automations/bindings/{switch}/{light}",  # DELETE only: automations:create
        "/v1/devices",
        "/v1/devices/commission",
        "/v1/devices/{device}",
        "/v1/floors/{floor}",
        "/v1/rooms",
        "/v1/rooms/{room}",
        "/v1/tokens",
        "/v1/tokens/{token_id}",
        "/v1/mesh/trust",
        "/v1/mesh/trust/{entry}",
        "/v1/mesh/peers",
        "/v1/mesh/tools",
    }
    assert set(everything) - set(kitchen) == hidden
    lamp_admin = await paths(("device:manage:lamp_1",))
    assert set(everything) - set(lamp_admin) == hidden - {
        "/v1/devices/{device}",
        "/v1/rooms/{room}",
    }


async def test_a_result_encoded_once_reads_back_exactly(server: BridgeServer) -> None:
    """The invoke answer splices the invoker's JSON of the result: same document."""
    token = service_token(server.service, "echoer", ("*",))
    tricky = {"text": 'a"result":null,"x', "nested": {"result": None, "é": [1.5, "\\\\"]}}
    async with server.client.post(
        server.url + "/v1/invoke",
        headers=bearer(token),
        json={"tool": "core:store_data", "params": {"key": "k1", "value": tricky}},
    ) as resp:
        assert resp.status == 200, await resp.text()
    async with server.client.post(
        server.url + "/v1/invoke",
        headers=bearer(token),
        json={"tool": "core:get_data", "params": {"key": "k1"}},
    ) as resp:
        body = await resp.json()
    assert resp.status == 200, body
    assert body["result"]["value"] == tricky
    assert body["status"] == "success"
    assert body["error"] is None


async def test_a_result_with_nan_is_still_valid_json(server: BridgeServer) -> None:
    """A handler's NaN or infinity reaches the client as null, never as bare NaN."""
    from bridge.tools.definition import ToolDefinition

    async def odd(params: dict[str, object], ctx: object) -> dict[str, object]:
        return {"reading": float("nan"), "peak": float("inf"), "label": "NaN"}

    server.service.registry.register(
        ToolDefinition(
            name="odd_reading",
            namespace="test",
            description="NaN reading",
            parameters={"type": "object", "properties": {}},
        ),
        odd,  # type: ignore[arg-type]
    )
    token = service_token(server.service, "reader", ("*",))
    async with server.client.post(
        server.url + "/v1/invoke", headers=bearer(token), json={"tool": "test:odd_reading"}
    ) as resp:
        raw = await resp.read()
    body = json.loads(raw, parse_constant=lambda name: pytest.fail(f"bare {name}"))
    assert body["result"] == {"reading": None, "peak": None, "label": "NaN"}
