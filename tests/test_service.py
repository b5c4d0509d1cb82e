"""One BridgeService object started, stopped and started again, with a real two-node mesh.

Two services on loopback (static peers, no mDNS) share a token issuer. Node B offers a
tool; node A reaches it through its mesh node, which must be A's invoker's remote
executor after every start — the invocation runtime is rebuilt on each start, the mesh
node is not.
"""

import asyncio
from pathlib import Path
from typing import Any

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token
from bridge.invocation.messages import ToolRequest, ToolResponse
from bridge.mesh.node_id import node_id_for
from bridge.service import BridgeService
from tests.support.mesh_pair import ECHO, register_echo_where, two_node_configs


async def start(service: BridgeService) -> None:
    await service.start()
    await service.start_api()


async def call(service: BridgeService, token: str, tool: str, **params: Any) -> ToolResponse:
    assert service.invocation is not None
    return await service.invocation.invoker.invoke(
        ToolRequest(tool=tool, params=params, token=token)
    )


async def wait_for_tool(service: BridgeService, identity: str) -> None:
    for _ in range(250):
        if any(entry.identity == identity for entry in service.registry.list()):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{identity} never reached {service.node_id}")


async def test_restarted_service_still_routes_to_the_mesh(tmp_path: Path) -> None:
    issuer = NodeKey.generate()
    token = issue_token(issuer, agent_id="agent", permissions=["*"], ttl_s=300)
    config_a, config_b = two_node_configs(tmp_path, issuer=issuer)
    a, b = BridgeService(config_a), BridgeService(config_b)
    register_echo_where(b)
    await start(b)
    try:
        await start(a)
        first_invocation = a.invocation
        await wait_for_tool(a, ECHO)
        before = await call(a, token, ECHO, text="one")
        assert (before.error, before.result) == (None, {"text": "one", "ran_on": b.node_id})
        stored = await call(a, token, "core:store_data", key="greeting", value="hello")
        assert stored.error is None

        await a.stop()
        assert a.invocation is first_invocation  # kept for inspection, no longer running
        await start(a)
        assert a.invocation is not first_invocation
        assert a.invocation is not None
        assert a.invocation.invoker.remote is a.mesh
        assert (
            a.invocation.invoker.node_id
            == a.node_id
            == node_id_for(NodeKey.load(tmp_path / "a" / "node.key").public_key_b64)
        )

        await wait_for_tool(a, ECHO)
        after = await call(a, token, ECHO, text="two")
        assert (after.error, after.result) == (None, {"text": "two", "ran_on": b.node_id})
        # The core tools were loaded again on the new database and see what the first run stored.
        got = await call(a, token, "core:get_data", key="greeting")
        assert (got.error, got.result["value"]) == (None, "hello")
    finally:
        await a.stop()
        await b.stop()
