"""Two bridges meshed on loopback, and the tool tests call across them.

- ``two_node_configs(tmp, …)`` — the configurations of bridges ``a`` and ``b``: Matter
  off, API on free loopback ports, the mesh on with static peers (each the other) and
  no mDNS. ``mutual=True``: each trusts the other by configuration; else only B trusts
  A. ``issuer``: a key both take tokens from.
- ``ECHO`` / ``register_echo_where(service)`` — ``test:echo_where``, which answers its
  text and the node that ran it (register it on B, call it on A).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bridge.auth.keys import NodeKey
from bridge.config import ApiConfig, AuthConfig, BridgeConfig, MatterConfig, MeshConfig
from bridge.mesh.node_id import node_id_for
from bridge.service import BridgeService
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from tests.support.ports import free_port

ECHO = "test:echo_where@1.0.0"


async def echo_where(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Answer the text and the node that ran the call."""
    return {"text": params["text"], "ran_on": ctx.node_id}


def register_echo_where(service: BridgeService) -> None:
    """Register ``test:echo_where`` on ``service``."""
    service.registry.register(
        ToolDefinition(
            name="echo_where",
            namespace="test",
            description="Echo with the node that ran it",
            parameters={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        ),
        echo_where,
    )


def two_node_configs(
    tmp: Path,
    *,
    issuer: NodeKey | None = None,
    mutual: bool = True,
    name_prefix: str = "",
    gossip_interval_s: float = 0.1,
) -> tuple[BridgeConfig, BridgeConfig]:
    """Return the configurations of bridges ``a`` and ``b`` (state in ``tmp/a``, ``tmp/b``)."""
    ports = {"a": free_port(), "b": free_port()}
    ids = {
        n: node_id_for(NodeKey.load_or_create(tmp / n / "node.key").public_key_b64) for n in ports
    }
    auth = AuthConfig(trusted_issuers=(issuer.public_key_b64,)) if issuer else AuthConfig()
    out = []
    for name, other in (("a", "b"), ("b", "a")):
        trusted = (ids[other],) if mutual or name == "b" else ()
        out.append(
            BridgeConfig(
                state_dir=tmp / name,
                api=ApiConfig(host="127.0.0.1", port=ports[name]),
                matter=replace(MatterConfig(), enabled=False),
                auth=auth,
                mesh=MeshConfig(
                    enabled=True,
                    node_name=f"{name_prefix}{name}",
                    discovery=False,
                    trusted_nodes=trusted,
                    peers=(f"http://127.0.0.1:{ports[other]}",),
                    gossip_interval_s=gossip_interval_s,
                    announce_interval_s=0.5,
                    announcement_ttl_s=3.0,
                ),
            )
        )
    return out[0], out[1]
