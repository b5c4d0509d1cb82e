"""``/v1/events`` names only what the token may see (a real server, real WebSockets).

Before: ``?types=registry.`` sent every registered tool's name to any token, and
``commissioning.`` events (codes, node ids, new tools) to any token too.
"""

from __future__ import annotations

import asyncio
import json

from bridge.tools.definition import Requires, ToolDefinition
from tests.support.auth import service_token
from tests.support.server import BridgeServer


async def _ok(params: dict[str, object], ctx: object) -> dict[str, object]:
    return {}


def _tool(name: str, permission: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        namespace="test",
        description=f"The {name} tool",
        requires=Requires(permissions=(permission,)),
    )


async def _received(ws: object, wait_s: float) -> list[dict[str, object]]:
    got: list[dict[str, object]] = []
    try:
        async with asyncio.timeout(wait_s):
            while True:
                msg = await ws.receive()  # type: ignore[attr-defined]
                got.append(json.loads(msg.data))
    except TimeoutError:
        pass
    return got


async def test_registry_and_commissioning_events_name_only_what_the_token_may_see(
    bridge_server: BridgeServer,
) -> None:
    service = bridge_server.service
    garage = service_token(service, "garage-agent", ["test:garage:*"])
    admin = service_token(service, "admin", ["*"])
    url = bridge_server.url.replace("http", "ws", 1) + "/v1/events?types=registry.,commissioning."
    narrow_ws = await bridge_server.client.ws_connect(
        url, headers={"Authorization": f"Bearer {garage}"}
    )
    admin_ws = await bridge_server.client.ws_connect(
        url, headers={"Authorization": f"Bearer {admin}"}
    )
    try:
        await asyncio.sleep(0.1)  # both subscribed
        service.registry.register(_tool("vault_open", "test:vault:open"), _ok)
        service.registry.register(_tool("garage_open", "test:garage:open"), _ok)
        service.events.publish(
            "commissioning.progress",
            {"commission_id": "c1", "stage": "tools_ready", "tools": ["test:vault_open"]},
        )
        narrow = await _received(narrow_ws, 1.0)
        everything = await _received(admin_ws, 0.5)
    finally:
        await narrow_ws.close()
        await admin_ws.close()
    assert [e["data"]["identity"] for e in narrow] == ["test:garage_open@1.0.0"]
    assert "vault" not in json.dumps(narrow)
    assert [e["type"] for e in everything] == [
        "registry.changed",
        "registry.changed",
        "commissioning.progress",
    ]
