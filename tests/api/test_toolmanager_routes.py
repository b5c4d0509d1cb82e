"""The seed's ToolManager surface over a real bridge server with signed tokens."""

from __future__ import annotations

from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.definition import Requires, ToolDefinition
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer


async def echo(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"echo": params.get("text"), "agent": ctx.agent_id}


def register(server: BridgeServer) -> None:
    registry = server.service.registry
    registry.register(
        ToolDefinition(
            name="echo",
            namespace="demo",
            description="Echo text back.",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": False,
            },
            requires=Requires(permissions=("demo:echo",)),
            metadata={"app_id": "echo-app"},
        ),
        echo,
    )
    registry.register(
        ToolDefinition(
            name="peer_lamp",
            namespace="matter",
            description="A lamp on a peer.",
            server_name="node-b",
        ),
        None,
    )


async def get(server: BridgeServer, path: str, token: str) -> tuple[int, Any]:
    async with server.client.get(f"{server.url}{path}", headers=bearer(token)) as resp:
        return resp.status, await resp.json()


async def test_list_filters_by_app_and_server(bridge_server: BridgeServer) -> None:
    register(bridge_server)
    token = service_token(bridge_server.service, "tm", ("demo:*",))
    status, body = await get(bridge_server, "/v1/toolmanager/tools?appId=echo-app", token)
    assert status == 200
    assert [(t["name"], t["appId"], t["serverName"]) for t in body["tools"]] == [
        ("demo:echo", "echo-app", "")
    ]
    (echo_tool,) = body["tools"]
    assert echo_tool["inputSchemaJson"] == (
        '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],'
        '"additionalProperties":false}'
    )
    assert echo_tool["permissions"] == ["demo:echo"]
    status, body = await get(bridge_server, "/v1/toolmanager/tools?serverName=node-b", token)
    assert [t["name"] for t in body["tools"]] == ["matter:peer_lamp"]
    # Listing follows permission: demo:* may call no core tool, so it sees none.
    status, body = await get(bridge_server, "/v1/toolmanager/tools?appId=core", token)
    assert (status, body["tools"]) == (200, [])
    status, body = await get(bridge_server, "/v1/toolmanager/tools/core:store_data", token)
    assert body == {"found": False, "name": "core:store_data"}
    star = service_token(bridge_server.service, "tm-all", ("*",))
    status, body = await get(bridge_server, "/v1/toolmanager/tools?appId=core", star)
    assert {t["name"] for t in body["tools"]} == {"core:store_data", "core:get_data"}
    status, body = await get(bridge_server, "/v1/toolmanager/tools", star)
    assert body["count"] == len(bridge_server.service.registry)
    for bad in ("?appId=", "?app=x"):
        status, body = await get(bridge_server, f"/v1/toolmanager/tools{bad}", token)
        assert (status, body["error"]["code"]) == (400, "INVALID_REQUEST"), bad
    status, body = await get(bridge_server, "/v1/toolmanager/tools", "bogus")
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")


async def test_get_tool_answers_found(bridge_server: BridgeServer) -> None:
    register(bridge_server)
    token = service_token(bridge_server.service, "tm", ("demo:*",))
    status, body = await get(bridge_server, "/v1/toolmanager/tools/demo:echo", token)
    assert (status, body["found"], body["tool"]["name"], body["tool"]["appId"]) == (
        200,
        True,
        "demo:echo",
        "echo-app",
    )
    status, body = await get(bridge_server, "/v1/toolmanager/tools/echo@1.0.0", token)
    assert body["found"] is True
    status, body = await get(bridge_server, "/v1/toolmanager/tools/demo:nothing", token)
    assert (status, body) == (200, {"found": False, "name": "demo:nothing"})


async def test_execute_runs_the_pipeline(bridge_server: BridgeServer) -> None:
    register(bridge_server)
    url = f"{bridge_server.url}/v1/toolmanager/execute"
    allowed = service_token(bridge_server.service, "tm", ("demo:echo",))
    body = {"tool": "demo:echo", "params": {"text": "hi"}}
    async with bridge_server.client.post(url, json=body, headers=bearer(allowed)) as resp:
        answer = await resp.json()
    assert (resp.status, answer["status"], answer["result"]) == (
        200,
        "success",
        {"echo": "hi", "agent": "tm"},
    )
    denied = service_token(bridge_server.service, "tm", ("core:*",))
    async with bridge_server.client.post(url, json=body, headers=bearer(denied)) as resp:
        answer = await resp.json()
    assert (resp.status, answer["error"]["code"]) == (404, "TOOL_NOT_FOUND")  # out of sight
    for bad, code in (
        ({"params": {}}, "INVALID_REQUEST"),
        ([1], "INVALID_REQUEST"),
        ({"tool": "demo:echo", "params": {"text": 5}}, "INVALID_PARAMS"),
    ):
        async with bridge_server.client.post(url, json=bad, headers=bearer(allowed)) as resp:
            answer = await resp.json()
        assert (resp.status, answer["error"]["code"]) == (400, code), bad
