"""What the HTTP call path remembers between calls never outlives what it stands for.

Verified tokens (by their text), the visibility of a tool to a token's grants (by the
definition object) and the Host policy's answers are kept between calls; a revoked
token's very next call, and the first call after a tool's definition changes, are
decided afresh.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bridge.auth.tokens import parse_token
from bridge.tools.context import CallContext
from bridge.tools.definition import Requires, ToolDefinition
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

SCHEMA = {
    "type": "object",
    "properties": {"level": {"type": "integer"}},
    "additionalProperties": False,
}


async def post(
    server: BridgeServer, token: str, path: str = "/v1/invoke", body: Any = None
) -> tuple[int, Any]:
    async with server.client.post(
        server.url + path,
        headers=bearer(token),
        json=body or {"tool": "cache:dim", "params": {"level": 3}},
    ) as resp:
        return resp.status, await resp.json()


def dim_tool(server: BridgeServer, permission: str, ran: list[int]) -> ToolDefinition:
    async def dim(params: dict[str, Any], ctx: CallContext) -> Any:
        ran.append(params["level"])
        return {"level": params["level"]}

    defn = ToolDefinition(
        name="dim",
        namespace="cache",
        description="Dim a lamp",
        parameters=SCHEMA,
        requires=Requires(permissions=(permission,)),
    )
    server.service.registry.replace(defn, dim)
    return defn


async def test_a_revoked_tokens_very_next_call_is_refused(bridge_server: BridgeServer) -> None:
    ran: list[int] = []
    dim_tool(bridge_server, "device:control:lamp", ran)
    admin = service_token(bridge_server.service, "admin", ["token:manage", "device:control:*"])
    status, issued = await post(
        bridge_server,
        admin,
        "/v1/tokens",
        {"agent_id": "agent", "permissions": ["device:control:*"], "ttl_s": 600},
    )
    assert status == 201, issued
    agent = issued["token"]
    for _ in range(5):  # every cache on the path holds this token and tool now
        status, body = await post(bridge_server, agent)
        assert (status, body["status"], body["result"]) == (200, "success", {"level": 3})
    token_id = parse_token(agent)[0].id
    async with bridge_server.client.delete(
        f"{bridge_server.url}/v1/tokens/{token_id}", headers=bearer(admin)
    ) as resp:
        assert resp.status == 200
    status, body = await post(bridge_server, agent)
    assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
        401,
        "UNAUTHENTICATED",
        "revoked",
    )
    assert ran == [3] * 5  # the refused call never reached the tool
    assert bridge_server.service.invocation is not None
    await bridge_server.service.invocation.audit.flush()
    rows = bridge_server.service.invocation.audit.query_sync(tool="cache:dim@1.0.0")
    assert len(rows) == 5  # each answered call audited once; the refusal is counted apart


async def test_a_changed_definition_is_seen_afresh(bridge_server: BridgeServer) -> None:
    ran: list[int] = []
    first = dim_tool(bridge_server, "device:control:lamp", ran)
    agent = service_token(bridge_server.service, "agent", ["device:control:*"])
    for _ in range(3):
        status, body = await post(bridge_server, agent)
        assert (status, body["status"]) == (200, "success")
    # The same tool now needs a permission the token lacks: it is no longer visible.
    bridge_server.service.registry.replace(
        replace(first, requires=Requires(permissions=("lock:control:door",))), None
    )
    status, body = await post(bridge_server, agent)
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    dim_tool(bridge_server, "device:control:lamp", ran)
    status, body = await post(bridge_server, agent)
    assert (status, body["status"]) == (200, "success")
    assert ran == [3] * 4
