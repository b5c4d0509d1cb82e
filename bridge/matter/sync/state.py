"""The tool sync's state: devices, tools and registry in step with the controller's events.

``SyncState`` holds what the sync knows (devices, generated tools, names) and brings the
registry in line on every controller event (a node added, updated or removed, an
attribute report, a Matter event, a lost connection). Re-sync, renames and calls build on
it in their own modules; ``MatterToolSync`` (``registry``) puts them together.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import dataclasses
import itertools
import logging
import sqlite3
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from bridge.errors import (
    NotFoundError,
    ToolNotFoundError,
)
from bridge.events import EventBus
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.home.devices import (
    BASIC_INFORMATION,
    BRIDGED_BASIC_INFORMATION,
    DESCRIPTOR,
    Device,
    UserNames,
    build_devices,
)
from bridge.matter.home.naming import DeviceNameStore
from bridge.matter.home.rooms import Room, rooms_of
from bridge.matter.spec.events import describe
from bridge.matter.spec.models import (
    AdapterEvent,
    AdapterEventKind,
    NodeData,
    gc_paused,
)
from bridge.matter.sync.views import ClustersView, reads_recorded, recording
from bridge.matter.tools.cluster_maps import ClusterMap, load_cluster_maps
from bridge.matter.tools.generator import (
    GeneratedTool,
    MatterToolGenerator,
    find_tool,
)
from bridge.tools.context import Handler
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import ToolRegistry

LOGGER = logging.getLogger(__name__)
SEEN_EVENTS = 4096  # Matter events remembered to drop exact repeats

# Clusters the device model itself is built from (names, device types, endpoints, parts):
# a report in one of them rebuilds the node.
_MODEL_CLUSTERS = frozenset({DESCRIPTOR, BASIC_INFORMATION, BRIDGED_BASIC_INFORMATION})


class SyncState(abc.ABC):
    """Devices of one controller as tools in a registry: the state and the event path."""

    def __init__(
        self,
        *,
        adapter: MatterAdapter,
        registry: ToolRegistry,
        events: EventBus | None = None,
        names: DeviceNameStore | None = None,
        maps: Sequence[ClusterMap] | None = None,
        node_id: str = "",
        unit: str = "C",
        server_name: str = "",
        read_back: bool = True,
    ) -> None:
        self.adapter = adapter
        # Read a device's state back after every call it accepted (off: until it reports).
        self.read_back = read_back
        self.registry = registry
        self.events = events
        self.names = names
        self.generator = MatterToolGenerator(
            maps if maps is not None else load_cluster_maps(),
            node_id=node_id,
            unit=unit,
            server_name=server_name,
        )
        self._user_names: dict[str, UserNames] = {}
        self._room_aliases: dict[str, tuple[str, ...]] = {}  # room slug -> aliases
        self._devices: dict[str, Device] = {}
        self._tools: dict[str, GeneratedTool] = {}
        self._tool_device: dict[str, str | None] = {}
        # (node, event number) of the Matter events already published: a controller that
        # sends one again (a resubscription) does not make a button press twice.
        self._seen_events: OrderedDict[tuple[int, int], None] = OrderedDict()
        self._unsubscribe: Any = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._unsaved_slugs: set[str] = set()  # device ids whose slug is not stored yet
        self._resync: asyncio.Task[None] | None = None
        self._dirty: set[int] | None = None  # nodes reported on while a re-sync runs
        self._slug_writer: asyncio.Task[None] | None = None
        # Devices a call changed whose state was not read back since (device id → the
        # number of that change), and the read-back under way per device with the
        # change it covers.
        self._unconfirmed: dict[str, int] = {}
        self._reading: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self._changes = itertools.count(1)

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Load stored names and start the adapter; tools follow the first snapshot."""
        if self.names is not None:
            self._user_names = await self.names.load()
            self._room_aliases = await self.names.load_room_aliases()
        self._unsubscribe = self.adapter.subscribe(self._on_event)
        await self.adapter.start()

    async def stop(self) -> None:
        """Stop following the controller and remove this bridge's tools."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        resync = self._resync
        self._cancel_resync()
        if resync is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await resync
        await self.adapter.stop()
        for task in tuple(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for identity in tuple(self._tools):
            self.registry.unregister(identity)
        self._tools.clear()
        self._devices.clear()

    def devices(self) -> list[Device]:
        """Return the current devices ordered by node and endpoint."""
        return list(self._devices.values())

    def rooms(self) -> list[Room]:
        """Return the rooms that have devices, with their aliases, ordered by slug."""
        return rooms_of(self._devices.values(), self._room_aliases)

    def find_room(self, ref: str) -> Room:
        """Return the room called ``ref`` (its name, slug or an alias; any case)."""
        rooms = self.rooms()
        wanted = ref.strip().casefold()
        for room in rooms:
            if wanted in {room.slug, *(label.casefold() for label in room.labels)}:
                return room
        raise NotFoundError(
            f"no room '{ref}'"
            + (
                f"; rooms: {', '.join(r.name for r in rooms)}"
                if rooms
                else "; no device is in a room yet"
            ),
            {"room": ref, "rooms": [r.name for r in rooms]},
        )

    def tool(self, identity: str) -> GeneratedTool:
        """Return the generated tool behind a registered identity."""
        found = self._tools.get(identity)
        if found is None:
            raise ToolNotFoundError(f"no Matter tool '{identity}'", {"tool": identity})
        return found

    def tool_for(
        self, capability: str, *, device_id: str | None = None, room: str | None = None
    ) -> ToolDefinition | None:
        """Return the tool that does ``capability`` for a device or a room (slug), if any."""
        found = find_tool(self._tools.values(), capability, device_id=device_id, room=room)
        return found.definition if found is not None else None

    # -- events -----------------------------------------------------------------------

    def _on_event(self, event: AdapterEvent) -> None:
        kind = event.kind
        if kind is AdapterEventKind.CONNECTED and self.adapter.connect_count > 1:
            # A reconnect (the controller restarted): every node again, without stalling.
            self.start_resync()
        elif kind in (
            AdapterEventKind.CONNECTED,
            AdapterEventKind.NODE_ADDED,
            AdapterEventKind.NODE_UPDATED,
            AdapterEventKind.NODE_REMOVED,
        ):
            self.sync()
        elif kind is AdapterEventKind.ATTRIBUTE_UPDATED and event.node_id is not None:
            if self._dirty is not None:
                self._dirty.add(event.node_id)
            self.refresh_node(event.node_id, event.path, event.value)
        elif kind is AdapterEventKind.NODE_EVENT and event.node_id is not None:
            self.publish_device_event(event.node_id, event.value)
        elif kind in (AdapterEventKind.DISCONNECTED, AdapterEventKind.SERVER_SHUTDOWN):
            self._cancel_resync()
            self._mark_all_unavailable()

    def sync(self) -> None:
        """Rebuild every device from the adapter's nodes and bring the registry in line.

        Synchronous: the first snapshot (before the API serves), a node added, updated or
        removed, a rename. It supersedes a re-sync under way.
        """
        self._cancel_resync()
        with gc_paused():  # one allocation burst: the model, the tools, the registry
            devices = build_devices(self.adapter.nodes(), self._user_names)
            self._apply(devices)

    @abc.abstractmethod
    def start_resync(self) -> asyncio.Task[None] | None:
        """Start a re-sync in the background (``resync``)."""

    @abc.abstractmethod
    def _cancel_resync(self) -> None:
        """Cancel a re-sync under way (``resync``)."""

    @abc.abstractmethod
    def _handler(self, identity: str) -> Handler:
        """Return the registry handler of one tool (``calls``)."""

    def refresh_node(self, node_id: int, path: str | None = None, value: Any = None) -> None:
        """Take in one attribute report; publish ``device.state``.

        A report no tool was built from only updates the device's cached value; any other
        rebuilds the node's devices and brings their tools in line.
        """
        node = self.adapter.node(node_id)
        if node is None:
            return
        if path is not None and self._known(node_id, path, value):
            return  # what the bridge already holds (its read-back, or a repeat)
        if path is None or not self._absorb(node_id, path, value):
            self.apply_node(node)
        if self.events is not None and path is not None:
            endpoint = path.split("/", 1)[0]
            device = self._devices.get(f"{node_id}-{endpoint}")
            if device is not None:
                self.events.publish(
                    "device.state",
                    {"device_id": device.id, "name": device.name, "path": path, "value": value},
                )

    def _known(self, node_id: int, path: str, value: Any) -> bool:
        """Return whether a device of the node already holds ``value`` at ``path``."""
        try:
            ep_text, cl_text, at_text = path.split("/")
            endpoint, cluster, attribute = int(ep_text), int(cl_text), int(at_text)
        except ValueError:
            return False
        device = self._devices.get(f"{node_id}-{endpoint}")
        attrs = device.clusters.get(cluster) if device is not None else None
        return attrs is not None and attribute in attrs and attrs[attribute] == value

    def publish_device_event(self, node_id: int, doc: Mapping[str, Any]) -> None:
        """Publish one Matter event of a device as ``device.event`` (stable type, fields).

        The event names the device (``node-endpoint``, the id visibility is checked
        against), its stable ``event`` type, a ``summary`` and human ``fields``, and the
        Matter ids it came from. An exact repeat (same node and event number) is dropped.
        """
        endpoint, cluster, event_id = (
            doc.get(k) for k in ("endpoint_id", "cluster_id", "event_id")
        )
        number = doc.get("event_number")
        if isinstance(number, int):
            key = (node_id, number)
            if key in self._seen_events:
                return
            self._seen_events[key] = None
            if len(self._seen_events) > SEEN_EVENTS:
                self._seen_events.popitem(last=False)
        if self.events is None or not isinstance(cluster, int) or not isinstance(event_id, int):
            return
        described = describe(cluster, event_id, doc.get("data"))
        device_id = f"{node_id}-{endpoint}"
        device = self._devices.get(device_id)
        self.events.publish(
            "device.event",
            {
                "device_id": device_id,
                "name": device.name if device is not None else None,
                "event": described.type,
                "summary": described.summary,
                "fields": described.fields,
                "matter": {
                    "endpoint_id": endpoint,
                    "cluster_id": cluster,
                    "event_id": event_id,
                    "event_number": number,
                    "timestamp_ms": doc.get("timestamp"),
                },
            },
        )

    def _absorb(self, node_id: int, path: str, value: Any) -> bool:
        """Put a reported value into the device cache if no tool depends on it.

        Return ``False`` (nothing stored) when the node must be rebuilt: a model
        cluster, an unparsable path, or an attribute some tool was generated from.
        """
        try:
            ep_text, cl_text, at_text = path.split("/")
            endpoint, cluster, attribute = int(ep_text), int(cl_text), int(at_text)
        except ValueError:
            return False
        if cluster in _MODEL_CLUSTERS:
            return False
        device = self._devices.get(f"{node_id}-{endpoint}")
        if device is None:
            # Not a device's endpoint: the model reads only model clusters there.
            return True
        clusters = device.clusters
        return isinstance(clusters, ClustersView) and clusters.absorb(cluster, attribute, value)

    def apply_node(self, node: NodeData) -> None:
        """Regenerate the tools of one node's devices (others are untouched)."""
        fresh = build_devices([node], self._user_names_with_slugs())
        others = [d for d in self._devices.values() if d.node_id != node.node_id]
        devices = sorted([*others, *fresh], key=lambda d: (d.node_id, d.endpoint_id))
        self._apply(devices, only_node=node.node_id)

    def _user_names_with_slugs(self) -> dict[str, UserNames]:
        merged = dict(self._user_names)
        for device in self._devices.values():
            current = merged.get(device.id, UserNames())
            if current.slug is None:
                merged[device.id] = dataclasses.replace(current, slug=device.slug)
        return merged

    def _apply(self, devices: list[Device], only_node: int | None = None) -> None:
        devices = [recording(d) for d in devices]
        with reads_recorded():
            self._apply_recorded(devices, only_node)

    def _apply_recorded(
        self,
        devices: list[Device],
        only_node: int | None,
        device_tools: Sequence[GeneratedTool] | None = None,
        same: Mapping[str, GeneratedTool] | None = None,
    ) -> None:
        """Bring devices, tools and registry in line with ``devices``.

        ``same`` maps identities to the tool objects already found to have the very
        definition generated now (a re-sync compares them in slices beforehand); one
        still registered as that object needs no comparison here.
        """
        previous = self._devices
        self._devices = {d.id: d for d in devices}
        self._persist_new_slugs(devices, previous)
        # Room tools span nodes: built from every device's current per-device tools.
        # A full sync regenerated every device's tools; one node's refresh keeps the others'.
        kept = (
            []
            if only_node is None
            else [
                t
                for t in self._tools.values()
                if t.device_id is not None
                and t.device_id in self._devices
                and self._devices[t.device_id].node_id != only_node
            ]
        )
        wanted: dict[str, GeneratedTool] = {}
        generated = (
            self.generator.generate(devices, self._room_aliases, only_node=only_node, kept=kept)
            if device_tools is None
            else self.generator.assemble(devices, device_tools, self._room_aliases)
        )
        for tool in generated:
            wanted[tool.definition.identity] = tool
        # Remove tools that are gone (in scope: one node's, or all).
        for identity, dev_id in tuple(self._tool_device.items()):
            in_scope = (
                only_node is None
                or dev_id is None
                or (self._node_of(dev_id, previous) == only_node)
            )
            if in_scope and identity not in wanted:
                self.registry.unregister(identity)
                self._tools.pop(identity, None)
                self._tool_device.pop(identity, None)
        for identity, tool in wanted.items():
            available = self._available(tool)
            old = self._tools.get(identity)
            self._tools[identity] = tool
            self._tool_device[identity] = tool.device_id
            entry = self.registry.get(identity)
            if entry is None:
                self.registry.register(
                    tool.definition, self._handler(identity), available=available
                )
            elif old is None or (
                (same is None or same.get(identity) is not old)
                and old.definition != tool.definition
            ):
                self.registry.replace(tool.definition, self._handler(identity), available=available)
            elif entry.available != available:
                self.registry.set_available(identity, available)
        for device in devices:
            before = previous.get(device.id)
            if self.events is not None and (before is None or before.available != device.available):
                self.events.publish(
                    "device.availability",
                    {"device_id": device.id, "name": device.name, "available": device.available},
                )

    @staticmethod
    def _node_of(device_id: str, devices: dict[str, Device]) -> int | None:
        device = devices.get(device_id)
        if device is not None:
            return device.node_id
        try:
            return int(device_id.split("-", 1)[0])
        except ValueError:
            return None

    def _available(self, tool: GeneratedTool) -> bool:
        if not self.adapter.connected:
            return False
        if tool.room is not None:
            return any(
                d.available
                for d in (self._devices.get(m.device_id) for m in tool.room.members)
                if d is not None
            )
        if tool.device_id is None:
            return True
        device = self._devices.get(tool.device_id)
        return device is not None and device.available

    def _mark_all_unavailable(self) -> None:
        for identity in self._tools:
            if self.registry.get(identity) is not None:
                self.registry.set_available(identity, False)
        # Remember it, so the sync after a reconnect (nodes not yet reachable) and a
        # shutdown followed by a disconnect do not announce the same change again.
        went = [d for d in self._devices.values() if d.available]
        self._devices = {
            i: dataclasses.replace(d, available=False) if d.available else d
            for i, d in self._devices.items()
        }
        if self.events is not None:
            for device in went:
                self.events.publish(
                    "device.availability",
                    {"device_id": device.id, "name": device.name, "available": False},
                )

    def _persist_new_slugs(self, devices: list[Device], previous: dict[str, Device]) -> None:
        new = {
            d.id: d.slug for d in devices if self._user_names.get(d.id, UserNames()).slug is None
        }
        if not new:
            return
        for dev_id, slug in new.items():
            current = self._user_names.get(dev_id, UserNames())
            self._user_names[dev_id] = dataclasses.replace(current, slug=slug)
        if self.names is not None:
            self._unsaved_slugs.update(new)
            if self._slug_writer is None or self._slug_writer.done():
                task = asyncio.get_running_loop().create_task(self._save_slugs(self.names))
                self._slug_writer = task
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _save_slugs(self, names: DeviceNameStore) -> None:
        """Store the slugs in use of every device marked unsaved, until none is left.

        One writer at a time, and it writes what the devices have *now*: a rename or a
        new device between two writes is stored by the next one, so a slug written
        late can never hold on to one that another device took meanwhile.
        """
        while self._unsaved_slugs:
            ids, self._unsaved_slugs = self._unsaved_slugs, set()
            current = {i: self._devices[i].slug for i in sorted(ids) if i in self._devices}
            try:
                await names.save_slugs(current)
            except sqlite3.Error as err:  # kept in memory; the next change retries
                self._unsaved_slugs |= ids
                LOGGER.warning("could not store device slugs: %s", err)
                return
