"""Peers' tools in the local registry: registered while announced, gone when not.

``RegistrySync.sync`` makes the registry's peer tools match the live announcements; ``withdraw``
removes them all when the node stops. A local tool (one with a handler here) owns its
whole ``namespace:name``: no version a peer announces of it is registered, whatever
its number, and ``ToolRegistry.resolve`` never lets a peer's tool make a local name
ambiguous. Of several peers offering one identity the registry shows one; the router
still knows them all.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bridge.errors import InvalidDefinitionError
from bridge.mesh.announce import DeviceInfo
from bridge.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from bridge.mesh.announce import Announcement, ToolSummary
    from bridge.mesh.gossip import Change, GossipState
    from bridge.tools.registry import RegisteredTool, ToolRegistry

_LOGGER = logging.getLogger(__name__)


class RegistrySync:
    """Keeps the registry's remote tools in step with the gossip state."""

    def __init__(self, *, registry: ToolRegistry, gossip: GossipState, own_node_id: str) -> None:
        self.registry = registry
        self.gossip = gossip
        self.own_node_id = own_node_id
        self._remote: dict[str, str] = {}  # identity -> origin registered by the mesh
        self.shadowed: list[str] = []  # "<origin>:<identity>" refused for a local name
        self._peer_keys: set[str] = set()  # every namespace:name a peer announces

    def on_gossip_change(self, change: Change, announcement: Announcement) -> None:
        """Re-sync when a peer's announcement changed."""
        if announcement.node_id != self.own_node_id:
            self.sync()

    def announced(self, key: str) -> bool:
        """Return whether some peer announces a version of ``namespace:name`` ``key``."""
        return key in self._peer_keys

    def withdraw(self) -> None:
        """Remove every peer tool this sync registered."""
        for identity, origin in list(self._remote.items()):
            entry = self.registry.get(identity)
            if entry is not None and entry.definition.server_name == origin:
                self.registry.unregister(identity)
        self._remote.clear()

    def sync(self) -> None:
        """Make the registry's peer tools match the live announcements."""
        local_keys = {e.key for e in self.registry.list() if e.handler is not None}
        shadowed: list[str] = []
        self._peer_keys = set()
        wanted: dict[str, tuple[str, ToolSummary]] = {}
        for entry in sorted(self.gossip.entries(), key=lambda e: e.announcement.node_id):
            ann = entry.announcement
            if ann.node_id == self.own_node_id:
                continue
            for summary in ann.tools():
                key = summary.identity.split("@", 1)[0]
                self._peer_keys.add(key)
                if key in local_keys:
                    shadowed.append(f"{ann.node_id}:{summary.identity}")
                    continue  # a local tool owns its whole name
                current = wanted.get(summary.identity)
                keep_registered = self._remote.get(summary.identity) == ann.node_id
                if current is None or keep_registered:
                    wanted[summary.identity] = (ann.node_id, summary)
        for identity, origin in list(self._remote.items()):
            if wanted.get(identity, ("", None))[0] != origin:
                registered = self.registry.get(identity)
                if registered is not None and registered.definition.server_name == origin:
                    self.registry.unregister(identity)
                del self._remote[identity]
        for identity, (origin, summary) in wanted.items():
            existing = self.registry.get(identity)
            if existing is not None and existing.handler is not None:
                continue  # a local tool wins
            try:
                defn = ToolDefinition.from_json(summary.definition).replace(server_name=origin)
            except InvalidDefinitionError as err:
                _LOGGER.warning("peer %s announced an invalid tool %s: %s", origin, identity, err)
                continue
            if defn.identity != identity:
                _LOGGER.warning("peer %s announced %s under another identity", origin, identity)
                continue
            if (
                existing is not None
                and existing.definition == defn
                and existing.available == summary.available
            ):
                self._remote[identity] = origin
                continue
            self.registry.replace(defn, None, available=summary.available)
            self._remote[identity] = origin
        if shadowed and shadowed != self.shadowed:
            _LOGGER.info(
                "peers announce tools under local names, not taken: %s", ", ".join(shadowed[:20])
            )
        self.shadowed = shadowed


def device_of(tool: RegisteredTool) -> DeviceInfo | None:
    """Return the device behind a tool from its metadata (``device``, else ``matter``)."""
    metadata = tool.definition.metadata
    device = metadata.get("device")
    if isinstance(device, dict) and device.get("id"):
        return DeviceInfo(
            id=str(device["id"])[:200],
            name=str(device.get("name") or "")[:200],
            type=str(device.get("kind") or device.get("type") or "")[:100],
            reachable=tool.available,
        )
    matter = metadata.get("matter")
    if isinstance(matter, dict) and "node_id" in matter:
        return DeviceInfo(
            id=f"matter:{matter['node_id']}", name="", type="", reachable=tool.available
        )
    return None
