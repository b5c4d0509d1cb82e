"""A core tool loaded by node A of the process tests through its tools manifest (file: source)."""

from __future__ import annotations

from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.decorator import tool


@tool(
    "mesh_whoami",
    description="Echo a text with the node that ran the call and the path it took",
    category="computing",
    permissions=["mesh:test:*"],
    idempotent=True,
)
async def mesh_whoami(text: str, ctx: CallContext) -> dict[str, Any]:
    return {
        "text": text,
        "node_id": ctx.node_id,
        "path": list(ctx.path),
        "hop_budget": ctx.hop_budget,
    }
