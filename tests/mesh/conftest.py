"""Shared helpers for mesh tests: real ed25519 node keys and signed announcements."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bridge.auth.keys import NodeKey
from bridge.mesh.announce import Announcement, Capability, DeviceInfo, ToolSummary, parameters_hash
from bridge.mesh.node_id import NodeIdentity

ECHO_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
}


def make_identity(name: str) -> NodeIdentity:
    return NodeIdentity.from_key(NodeKey.generate(), name)


def make_announcement(
    identity: NodeIdentity,
    *,
    version: int = 1,
    timestamp: float | None = None,
    ttl_s: float = 60.0,
    tools: tuple[str, ...] = ("echo",),
) -> Announcement:
    summaries = tuple(
        ToolSummary(
            identity=f"core:{name}@1.0.0",
            description=f"{name} tool",
            parameters_hash=parameters_hash(ECHO_PARAMS),
            available=True,
            definition={"name": name, "namespace": "core", "parameters": ECHO_PARAMS},
        )
        for name in tools
    )
    return Announcement(
        node_id=identity.node_id,
        node_name=identity.name,
        public_key=identity.public_key_b64,
        version=version,
        timestamp=time.time() if timestamp is None else timestamp,
        ttl_s=ttl_s,
        endpoints=("http://127.0.0.1:9",),
        capabilities=(Capability(name="core", tools=summaries),),
        devices=(DeviceInfo(id="matter:1", name="Lamp", type="light", reachable=True),),
    ).signed(identity)


@pytest.fixture
def alice() -> NodeIdentity:
    return make_identity("alice")


@pytest.fixture
def bob() -> NodeIdentity:
    return make_identity("bob")
