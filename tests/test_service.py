"""One BridgeService object started, stopped and started again, with a real two-node mesh.

Two services on loopback (static peers, no mDNS) share a token issuer. Node B offers a
tool; node A reaches it through its mesh node, which must be A's invoker's remote
executor after every start — the invocation runtime is rebuilt on each start, the mesh
node is not.
"""

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token
from bridge.config import ApiConfig, AuthConfig, BridgeConfig, MatterConfig, MeshConfig
from bridge.invocation.messages import ToolRequest, ToolResponse
from bridge.mesh.node_id import node_id_for
from bridge.service import BridgeService
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from tests.support.ports import free_port

ECHO = "test:echo_where@1.0.0"




def configs(tmp_path: Path, issuer: NodeKey) -> tuple[BridgeConfig, BridgeConfig]:
    ports = {"a": free_port(), "b": free_port()}
    ids = {
        name: node_id_for(NodeKey.load_or_create(tmp_path / name / "node.key").public_key_b64)
        for name in ports
    }
    out = []
    for name, other in (("a", "b"), ("b", "a")):
        out.append(BridgeConfig(
            state_dir=tmp_path / name,
            api=ApiConfig(host="127.0.0.1", port=ports[name]),
            matter=replace(MatterConfig(), enabled=False),
            auth=AuthConfig(trusted_issuers=(issuer.public_key_b64,)),
            mesh=MeshConfig(
                enabled=True, node_name=name, discovery=False, trusted_nodes=(ids[other],),
                peers=(f"http://127.0.0.1:{ports[other]}",), gossip_interval_s=0.1,
                announce_interval_s=0.5, announcement_ttl_s=3.0,
            ),
        ))
    return out[0], out[1]


async def echo_where(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {"text": params["text"], "ran_on": ctx.node_id}


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
    config_a, config_b = configs(tmp_path, issuer)
    a, b = BridgeService(config_a), BridgeService(config_b)
    b.registry.register(
        ToolDefinition(
            name="echo_where", namespace="test", description="Echo with the node that ran it",
            parameters={"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]},
        ),
        echo_where,
    )
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
        assert a.invocation.invoker.node_id == a.node_id == node_id_for(
            NodeKey.load(tmp_path / "a" / "node.key").public_key_b64)

        await wait_for_tool(a, ECHO)
        after = await call(a, token, ECHO, text="two")
        assert (after.error, after.result) == (None, {"text": "two", "ran_on": b.node_id})
        # The core tools were loaded again on the new database and see what the first run stored.
        got = await call(a, token, "core:get_data", key="greeting")
        assert (got.error, got.result["value"]) == (None, "hello")
    finally:
        await a.stop()
        await b.stop()
