"""Tools a real bridge of the credential and authority tests loads through its manifest.

``door_unlock`` needs one approver, ``vault_open`` two; ``slow_echo`` may run as a job
and takes ``seconds`` to answer. Each tool that changes something appends a line to
``ran.log`` in the process's working directory, so a test sees what really ran.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.decorator import tool
from bridge.tools.definition import Confirmation

RAN_LOG = "ran.log"


def _by(ctx: CallContext) -> str:
    # The token id of the call (the agent's name on a bridge from before issue 26).
    return getattr(ctx, "token_id", ctx.agent_id)


def _ran(what: str) -> None:
    with Path(RAN_LOG).open("a", encoding="utf-8") as out:
        out.write(what + "\n")


@tool(
    "door_unlock",
    namespace="home",
    description="Unlock a door (needs an approver)",
    category="acting",
    permissions=["home:door:unlock"],
    dangerous=True,
    confirmation=Confirmation(mode="always", message="Unlock {door}?", timeout_s=120),
)
async def door_unlock(door: str, ctx: CallContext) -> dict[str, Any]:
    _ran(f"door_unlock {door} by {_by(ctx)}")
    return {"unlocked": door}


@tool(
    "vault_open",
    namespace="home",
    description="Open the vault (needs two approvers)",
    category="acting",
    permissions=["home:vault:open"],
    dangerous=True,
    confirmation=Confirmation(
        mode="always", message="Open the vault?", multi_party=2, timeout_s=120
    ),
)
async def vault_open(ctx: CallContext) -> dict[str, Any]:
    _ran(f"vault_open by {_by(ctx)}")
    return {"opened": True}


@tool(
    "slow_echo",
    namespace="home",
    description="Echo a text after some seconds (may run as a job)",
    category="computing",
    permissions=["home:echo:run"],
    async_allowed=True,
)
async def slow_echo(text: str, seconds: float, ctx: CallContext) -> dict[str, Any]:
    await asyncio.sleep(seconds)
    _ran(f"slow_echo {text} by {_by(ctx)}")
    return {"text": text}
