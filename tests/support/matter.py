"""What tests ask of the Matter layer that the bridge itself never does.

- ``import_test_nodes`` loads recorded node dumps into the real controller as test
  nodes (python-matter-server's ``import_test_node`` command).
- ``import_node(adapter, dump)`` — import one dump and return the node id the
  controller gave it, once the adapter knows the node.
- ``connected_sync(controller)`` — a ``MatterAdapter`` on a running controller with a
  started ``MatterToolSync`` (registry, event bus), connected; stopped afterwards.
- ``names_saved`` waits until every slug the sync handed out is stored;
  ``resyncing`` says whether a re-sync is under way (its tools not registered yet).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from bridge.events import EventBus
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.sync.registry import MatterToolSync
from bridge.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from tests.support.fabric import ThreadedController

IMPORT_TIMEOUT_S = 60.0


async def import_test_nodes(client: MatterAdapter, dumps: list[dict[str, Any]]) -> None:
    """Load node dumps into the controller ``client`` talks to, as test nodes."""
    doc = {"data": {"server": {"nodes": dumps}}}
    await client.send_command(
        "import_test_node", timeout_s=IMPORT_TIMEOUT_S, dump=orjson.dumps(doc).decode()
    )


async def import_node(adapter: MatterAdapter, dump: dict[str, Any]) -> int:
    """Import ``dump`` as a test node; return its node id once the adapter has it."""
    known = {n.node_id for n in adapter.nodes()}
    await import_test_nodes(adapter, [dump])
    async with asyncio.timeout(10):
        while not {n.node_id for n in adapter.nodes()} - known:
            await asyncio.sleep(0.05)
    (node_id,) = {n.node_id for n in adapter.nodes()} - known
    return node_id


async def names_saved(sync: MatterToolSync) -> None:
    """Wait until every slug ``sync`` handed out so far is stored."""
    while sync._tasks:
        await asyncio.gather(*tuple(sync._tasks), return_exceptions=True)


def resyncing(sync: MatterToolSync) -> bool:
    """Return whether a re-sync of ``sync`` is under way."""
    return sync._resync is not None and not sync._resync.done()


@contextlib.asynccontextmanager
async def connected_sync(
    controller: ThreadedController,
) -> AsyncIterator[tuple[MatterAdapter, ToolRegistry, EventBus, MatterToolSync]]:
    """Yield an adapter connected to ``controller`` and its started sync (node ``node-a``)."""
    adapter = MatterAdapter(controller.url, headers=controller.headers)
    registry = ToolRegistry()
    events = EventBus()
    sync = MatterToolSync(adapter=adapter, registry=registry, events=events, node_id="node-a")
    await sync.start()
    try:
        await adapter.wait_connected(30)
        yield adapter, registry, events, sync
    finally:
        await sync.stop()
