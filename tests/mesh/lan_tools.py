"""A tool node B of the LAN attacker test loads through its tools manifest (file: source)."""

from __future__ import annotations

from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.decorator import tool


@tool(
    "garage_temp",
    namespace="garage",
    description="Read the garage temperature (answers with the node that ran the call)",
    category="sensing",
    permissions=["mesh:test:*"],
)
async def garage_temp(ctx: CallContext) -> dict[str, Any]:
    return {"celsius": 11.5, "node_id": ctx.node_id}
