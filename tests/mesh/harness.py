"""In-process mesh nodes for tests: real keys, registries, invokers, aiohttp on loopback."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from bridge.api.mesh_routes import MESH_NODE_KEY, MESH_RUN_KEY
from bridge.api.mesh_routes import setup as setup_mesh_routes
from bridge.api.openapi import OPENAPI_KEY, OpenApiRegistry
from bridge.auth.keys import NodeKey
from bridge.auth.tokens import Constraints, TokenVerifier, issue_token
from bridge.config import MeshConfig
from bridge.invocation.invoker import Invoker
from bridge.invocation.messages import ToolRequest, ToolResponse
from bridge.mesh.node import MeshNode
from bridge.mesh.node_id import node_id_for
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import ToolRegistry
from tests.support.ports import free_port

WHOAMI_PARAMS = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


def whoami_definition(name: str, *, idempotent: bool = True) -> ToolDefinition:
    return ToolDefinition.from_json(
        {
            "tool": {
                "name": name,
                "namespace": "core",
                "version": "1.0.0",
                "description": f"Echo text with the executing node ({name})",
                "category": "computing",
                "parameters": WHOAMI_PARAMS,
                "requires": {"permissions": ["mesh:test:*"]},
                "execution": {"timeout_ms": 5000, "idempotent": idempotent},
            }
        }
    )


async def whoami(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {
        "text": params["text"],
        "node_id": ctx.node_id,
        "path": list(ctx.path),
        "hop_budget": ctx.hop_budget,
    }


@dataclass
class LoopNode:
    name: str
    key: NodeKey
    port: int
    registry: ToolRegistry
    mesh: MeshNode
    invoker: Invoker
    runner: web.AppRunner | None = None

    @property
    def node_id(self) -> str:
        return self.mesh.identity.node_id

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app[OPENAPI_KEY] = OpenApiRegistry()
        setup_mesh_routes(app)
        app[MESH_NODE_KEY] = self.mesh
        app[MESH_RUN_KEY] = self.invoker.invoke
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        await self.mesh.start()

    async def stop(self) -> None:
        await self.mesh.stop()
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def call(self, tool: str, token: str, **routing: Any) -> ToolResponse:
        doc: dict[str, Any] = {"tool": tool, "params": {"text": "hi"}, "auth": {"token": token}}
        if routing:
            doc["routing"] = routing
        return await self.invoker.invoke(ToolRequest.from_json(doc))


def build_nodes(
    names: list[str],
    tmp_path: Path,
    issuer: NodeKey,
    *,
    trusted: Callable[[str, list[str]], tuple[str, ...]] | None = None,
    **mesh_options: Any,
) -> list[LoopNode]:
    """Create nodes that know each other as static peers (no mDNS in-process)."""
    keys = {n: NodeKey.generate() for n in names}
    ports = {n: free_port() for n in names}
    ids = {n: node_id_for(keys[n].public_key_b64) for n in names}
    nodes = []
    for name in names:
        others = [o for o in names if o != name]
        allow = trusted(name, names) if trusted else tuple(ids[o] for o in others)
        options = {
            "enabled": True,
            "node_name": name,
            "discovery": False,
            "trusted_nodes": tuple(ids[o] if o in ids else o for o in allow),
            "peers": tuple(f"http://127.0.0.1:{ports[o]}" for o in others),
            "gossip_interval_s": 0.1,
            "announce_interval_s": 0.5,
            "announcement_ttl_s": 1.5,
        }
        options.update(mesh_options)
        registry = ToolRegistry()
        mesh = MeshNode(
            MeshConfig(**options),
            key=keys[name],
            registry=registry,
            state_dir=tmp_path / name,
            api_host="127.0.0.1",
            api_port=ports[name],
        )
        invoker = Invoker(
            registry=registry,
            verifier=TokenVerifier((issuer.public_key_b64,)),
            node_id=ids[name],
            remote=mesh,
        )
        mesh.use_verifier(invoker.verifier)  # revocations, and the issuers delegations need
        nodes.append(
            LoopNode(
                name=name,
                key=keys[name],
                port=ports[name],
                registry=registry,
                mesh=mesh,
                invoker=invoker,
            )
        )
    return nodes


def token(issuer: NodeKey, **constraints: Any) -> str:
    return issue_token(
        issuer,
        agent_id="agent-test",
        permissions=["mesh:test:*"],
        ttl_s=300,
        constraints=Constraints(**constraints) if constraints else None,
    )


async def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> float:
    """Wait until ``predicate()`` holds; return the seconds it took."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)
    return time.monotonic() - start
