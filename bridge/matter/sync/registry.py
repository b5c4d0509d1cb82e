"""MatterToolSync: the long-lived component that keeps Matter tools in the registry in sync.

Put together from its parts: ``state`` (devices, tools, the event path), ``resync``,
``renames`` (names, rooms, aliases) and ``calls`` (device calls and read-backs); while it
runs it also offers ``core:wait_for_event`` (``waits``).
Details: docs/modules.md, ``bridge.matter.sync.registry``.
"""

from __future__ import annotations

from typing import Any

from bridge.matter.sync.calls import READ_BACK_TIMEOUT_S, TEST_NODE_START, DeviceCalls
from bridge.matter.sync.floors import Flooring
from bridge.matter.sync.renames import Renaming
from bridge.matter.sync.resync import RESYNC_SLICE_S, Resyncing
from bridge.matter.sync.state import SEEN_EVENTS
from bridge.matter.sync.waits import wait_definition, wait_for_event
from bridge.matter.tools.generator import CAPABILITY
from bridge.tools.context import CallContext
from bridge.tools.definition import Routing, ToolDefinition

__all__ = [
    "READ_BACK_TIMEOUT_S",
    "RESYNC_SLICE_S",
    "SEEN_EVENTS",
    "TEST_NODE_START",
    "MatterToolSync",
]


class MatterToolSync(DeviceCalls, Renaming, Flooring, Resyncing):
    """Devices of one controller as tools in a registry, kept in sync with the controller."""

    async def start(self) -> None:
        """Offer ``core:wait_for_event`` (with an event bus), then start the sync."""
        wait = self._wait_tool()
        if wait is not None and self.registry.get(wait.identity) is None:
            self.registry.register(wait, self._wait)
        await super().start()

    async def stop(self) -> None:
        """Stop the sync and withdraw ``core:wait_for_event``."""
        await super().stop()
        wait = self._wait_tool()
        if wait is not None:
            self.registry.unregister(wait.identity)

    def _wait_tool(self) -> ToolDefinition | None:
        if self.events is None:
            return None
        node_id = self.generator.node_id
        routing = Routing(
            prefer_local=True, node_affinity=(node_id,) if node_id else (), hop_limit=1
        )
        return wait_definition(CAPABILITY, routing, self.generator.server_name)

    async def _wait(self, params: dict[str, Any], ctx: CallContext) -> Any:
        assert self.events is not None  # noqa: S101 - registered only with a bus
        return await wait_for_event(self.events, self._devices.get, params, ctx)
