"""Tools loaded by the bounds process tests through a tools manifest (file: source)."""

from __future__ import annotations

import asyncio
from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.decorator import tool
from bridge.tools.definition import Confirmation


@tool(
    "door_unlock",
    description="Unlock a door (a person must approve)",
    category="acting",
    permissions=["test:door:open"],
    dangerous=True,
    confirmation=Confirmation(mode="always", message="Unlock {door}?", timeout_s=60),
)
async def door_unlock(door: str, ctx: CallContext) -> dict[str, Any]:
    return {"unlocked": door}


@tool(
    "slow_job",
    description="Wait a while, then answer (for background jobs)",
    category="computing",
    permissions=["test:slow:run"],
    async_allowed=True,
    timeout_ms=60_000,
)
async def slow_job(seconds: float, ctx: CallContext) -> dict[str, Any]:
    await asyncio.sleep(min(seconds, 30.0))
    return {"slept": seconds}


@tool(
    "measure_text",
    description="Answer how long a text is",
    category="computing",
    permissions=["test:measure:run"],
)
async def measure_text(text: str, ctx: CallContext) -> dict[str, Any]:
    return {"length": len(text)}
