"""MatterToolSync: the long-lived component that keeps Matter tools in the registry in sync.

One module because device state, availability and tool registration move together on
every controller event.
Details: docs/modules.md, ``bridge.matter.registry_sync``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import itertools
import logging
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from bridge.errors import (
    BridgeError,
    ConflictError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    NotFoundError,
    ToolFailedError,
    ToolNotFoundError,
)
from bridge.events import EventBus
from bridge.matter.client import MatterAdapter
from bridge.matter.cluster_maps import ClusterMap, load_cluster_maps
from bridge.matter.device_events import describe
from bridge.matter.devices import (
    BASIC_INFORMATION,
    BRIDGED_BASIC_INFORMATION,
    DESCRIPTOR,
    Device,
    UserNames,
    build_devices,
)
from bridge.matter.generator import (
    GeneratedTool,
    MatterToolGenerator,
    ToolKind,
    find_tool,
    state_paths,
)
from bridge.matter.models import (
    ActionKind,
    AdapterEvent,
    AdapterEventKind,
    MatterAction,
    NodeData,
    gc_paused,
)
from bridge.matter.naming import DeviceNameStore, clean_aliases
from bridge.matter.rooms import MemberCall, Room, RoomPlan, rooms_of
from bridge.tools.context import CallContext, Handler
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import ToolRegistry

LOGGER = logging.getLogger(__name__)
# Interaction-model statuses a refused attribute write most often carries.
_WRITE_STATUS = {
    0x7E: "unsupported access", 0x86: "unsupported attribute", 0x87: "constraint error",
    0x88: "unsupported write", 0x8D: "invalid in state", 0xC6: "needs a timed interaction",
}  # fmt: skip


# How long a read-back waits for the device, at most (it answered the call just before):
# a device that is slower is left to its reports.
READ_BACK_TIMEOUT_S = 2.0
# The controller numbers imported test nodes (recorded dumps) from here up. Reading one
# answers from its recording, which no command or write changes: a read-back would undo
# what the bridge just learned, so test nodes keep the accepted value until they report
# (and a state tool's read of one does not go into the cache either).
TEST_NODE_START = 900_000

# A re-sync works for at most this long, then lets other work run for as long (a yield
# of one loop round is not enough: a call needs several rounds).
RESYNC_SLICE_S = 0.003
SEEN_EVENTS = 4096  # Matter events remembered to drop exact repeats

# Clusters the device model itself is built from (names, device types, endpoints, parts):
# a report in one of them rebuilds the node.
_MODEL_CLUSTERS = frozenset({DESCRIPTOR, BASIC_INFORMATION, BRIDGED_BASIC_INFORMATION})


class _Reads:
    """What tool generation read of one device's attributes, while ``recording`` is on.

    ``values`` holds the (cluster, attribute) pairs whose value was looked at,
    ``keys`` the clusters whose presence or key set was looked at, ``everything`` is
    set when the whole cluster table was iterated. Generation is a function of what it
    reads: a report outside these sets cannot change any tool.
    """

    __slots__ = ("everything", "keys", "values")

    recording = False  # switched on by MatterToolSync._apply only, for every device at once

    def __init__(self) -> None:
        self.values: set[tuple[int, int]] = set()
        self.keys: set[int] = set()
        self.everything = False


class _ClusterView(Mapping[int, Any]):
    """One cluster's attribute values, noting reads into a ``_Reads``."""

    __slots__ = ("_cid", "_data", "_reads")

    def __init__(self, cid: int, data: dict[int, Any], reads: _Reads) -> None:
        self._cid, self._data, self._reads = cid, data, reads

    def __getitem__(self, aid: int) -> Any:
        if _Reads.recording:
            self._reads.values.add((self._cid, aid))
        return self._data[aid]

    def get(self, aid: int, default: Any = None) -> Any:
        if _Reads.recording:
            self._reads.values.add((self._cid, aid))
        return self._data.get(aid, default)

    def __contains__(self, aid: object) -> bool:
        if _Reads.recording and isinstance(aid, int):
            self._reads.values.add((self._cid, aid))
        return aid in self._data

    def __iter__(self) -> Iterator[int]:
        if _Reads.recording:
            self._reads.keys.add(self._cid)
        return iter(self._data)

    def __len__(self) -> int:
        if _Reads.recording:
            self._reads.keys.add(self._cid)
        return len(self._data)


class _ClustersView(Mapping[int, Mapping[int, Any]]):
    """A device's cluster table (cluster id → attribute values), noting reads."""

    __slots__ = ("_data", "_reads", "_views")

    def __init__(self, data: Mapping[int, Mapping[int, Any]], reads: _Reads) -> None:
        # build_devices hands each device fresh dicts: take them over, copy anything else.
        self._data = {cid: attrs if isinstance(attrs, dict) else dict(attrs)
                      for cid, attrs in data.items()}  # fmt: skip
        self._reads = reads
        self._views: dict[int, _ClusterView] = {}

    def _view(self, cid: int) -> _ClusterView:
        view = self._views.get(cid)
        if view is None:
            view = self._views[cid] = _ClusterView(cid, self._data[cid], self._reads)
        return view

    def __getitem__(self, cid: int) -> Mapping[int, Any]:
        if _Reads.recording:
            self._reads.keys.add(cid)
        if cid not in self._data:
            raise KeyError(cid)
        return self._view(cid)

    def get(self, cid: int, default: Any = None) -> Any:
        if _Reads.recording:
            self._reads.keys.add(cid)
        return self._view(cid) if cid in self._data else default

    def __contains__(self, cid: object) -> bool:
        if _Reads.recording and isinstance(cid, int):
            self._reads.keys.add(cid)
        return cid in self._data

    def __iter__(self) -> Iterator[int]:
        if _Reads.recording:
            self._reads.everything = True
        return iter(self._data)

    def __len__(self) -> int:
        if _Reads.recording:
            self._reads.everything = True
        return len(self._data)

    def absorb(self, cid: int, aid: int, value: Any) -> bool:
        """Store a reported value unless a tool was built from it; return whether stored."""
        reads = self._reads
        attrs = self._data.get(cid)
        if reads.everything or attrs is None:
            return False  # a new cluster changes has_cluster(); rebuild
        if aid not in attrs:
            if cid in reads.keys or (cid, aid) in reads.values:
                return False
        elif (cid, aid) in reads.values and attrs[aid] != value:
            return False
        attrs[aid] = value
        return True


@contextlib.contextmanager
def _reads_recorded() -> Iterator[None]:
    """Note what generation reads of the devices' cluster tables while inside."""
    _Reads.recording = True
    try:
        yield
    finally:
        _Reads.recording = False


async def _in_slices[T](
    items: Sequence[T],
    step: Callable[[T], object],
    around: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> None:
    """Call ``step`` on each item, ``RESYNC_SLICE_S`` at a time, resting as long between."""
    index = 0
    while index < len(items):
        deadline = time.perf_counter() + RESYNC_SLICE_S
        with around():
            while index < len(items) and time.perf_counter() < deadline:
                step(items[index])
                index += 1
        if index < len(items):
            await asyncio.sleep(RESYNC_SLICE_S)


def _recording(device: Device) -> Device:
    """Return ``device`` with a cluster table that notes what generation reads of it."""
    if isinstance(device.clusters, _ClustersView):
        return device
    return dataclasses.replace(device, clusters=_ClustersView(device.clusters, _Reads()))


def _refuse_taken(
    aliases: Sequence[str], taken: Mapping[str, tuple[str, dict[str, Any]]], kind: str
) -> None:
    """Raise ``CONFLICT`` for the first alias ``taken`` (casefolded label → owner) holds."""
    for alias in aliases:
        found = taken.get(alias.casefold())
        if found is not None:
            owner, details = found
            raise ConflictError(
                f"'{alias}' already names {owner}; pick an alias no other {kind} uses",
                {"alias": alias, **details},
            )


class MatterToolSync:
    """Devices of one controller as tools in a registry, kept in sync with the controller."""

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
            f"no room '{ref}'" + (f"; rooms: {', '.join(r.name for r in rooms)}"
                                  if rooms else "; no device is in a room yet"),
            {"room": ref, "rooms": [r.name for r in rooms]},
        )  # fmt: skip

    async def set_room_aliases(self, ref: str, aliases: Sequence[str]) -> Room:
        """Replace a room's aliases (persisted when a store is set); its tools follow.

        An alias that is another room's name or alias is a ``CONFLICT``: spoken commands
        could not tell the two rooms apart.
        """
        room = self.find_room(ref)
        clean = clean_aliases(list(aliases), owner="room")
        taken = {label.casefold(): (f"the room {other.name}", {"room": other.name})
                 for other in self.rooms() if other.slug != room.slug
                 for label in other.labels}  # fmt: skip
        _refuse_taken(clean, taken, "room")
        if self.names is not None:
            await self.names.set_room_aliases(room.slug, clean)
        if clean:
            self._room_aliases[room.slug] = clean
        else:
            self._room_aliases.pop(room.slug, None)
        self.sync()
        return self.find_room(room.slug)

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

    def start_resync(self) -> asyncio.Task[None] | None:
        """Start ``resync`` in the background (replacing one under way); return its task.

        Outside an event loop the registry is brought in line at once (``sync``).
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.sync()
            return None
        self._cancel_resync()
        self._dirty = set()
        task = loop.create_task(self._resync_body(), name="matter-resync")
        task.add_done_callback(self._resync_done)
        self._resync = task
        return task

    def _resync_done(self, task: asyncio.Task[None]) -> None:
        if task is self._resync:
            self._resync, self._dirty = None, None
        if not task.cancelled() and (err := task.exception()) is not None:
            # The registry keeps the tools it had; the next sync or reconnect tries again.
            LOGGER.error("re-sync of the Matter devices failed; keeping the tools as they were",
                         exc_info=err)  # fmt: skip

    def _cancel_resync(self) -> None:
        task, self._resync, self._dirty = self._resync, None, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()

    async def resync(self) -> None:
        """Run a re-sync (``start_resync``) and wait for it; a superseding sync ends it."""
        task = self.start_resync()
        if task is not None:
            await asyncio.wait([task])  # ended by a sync: not this caller's cancellation

    async def _resync_body(self) -> None:
        """Rebuild every device and tool from the adapter's nodes without stalling calls.

        The model is built in a worker thread from a copy of the nodes (the event loop
        only copies them); the device tools are generated on the loop a slice of at most
        ``RESYNC_SLICE_S`` at a time, other work running as long between slices; the
        shared and room tools and the registry change then land in one step. Until then the
        registry keeps the tools it had. A node reported on meanwhile is rebuilt from
        its latest state right after; a sync (a node added, a rename) supersedes it.
        """
        # The cyclic collector stays off for the whole re-sync (as for a sync): with it
        # on, the hundreds of thousands of objects a home's tools are made of set off
        # full collections between slices, each a stall of 50-120 ms on 1,000 devices.
        with gc_paused():
            devices = await self._resync_model()
            device_tools: list[GeneratedTool] = []
            await _in_slices(
                devices, lambda d: device_tools.extend(self.generator.device_tools(d)),
                _reads_recorded,
            )  # fmt: skip
            # Which device tools are unchanged, compared against the registered ones a
            # slice at a time (most are, after a restart): the step below skips them.
            same: dict[str, GeneratedTool] = {}

            def compare(tool: GeneratedTool) -> None:
                old = self._tools.get(tool.definition.identity)
                if old is not None and old.definition == tool.definition:
                    same[tool.definition.identity] = old

            await _in_slices(device_tools, compare)
            dirty, self._dirty, self._resync = self._dirty or set(), None, None
            with _reads_recorded():
                self._apply_recorded(devices, None, device_tools, same)
            # The home's new model and tools live until the next re-sync: out of the
            # cyclic collector with them (as `run` does with what start-up built), or the
            # first collection after the pause scans them all (a 20-40 ms stall on 1,000
            # devices). Reference counting still frees them when they are replaced.
            gc.freeze()
        for node_id in sorted(dirty):
            latest = self.adapter.node(node_id)
            if latest is not None:
                self.apply_node(latest)
        # The replaced tools are freed a slice at a time: dropping ~3,500 tools' schemas
        # at once was a stall of its own (20-40 ms on 1,000 devices).
        await _in_slices(tuple(same), same.pop)

    async def _resync_model(self) -> list[Device]:
        """Return every device, built in a worker thread from a copy of the nodes."""
        copies: list[NodeData] = []
        await _in_slices(
            self.adapter.nodes(),
            lambda node: copies.append(
                dataclasses.replace(node, attributes=dict(node.attributes))),
        )  # fmt: skip
        built = await asyncio.to_thread(build_devices, copies, dict(self._user_names))
        return [_recording(d) for d in built]

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
        endpoint, cluster, event_id = (doc.get(k) for k in ("endpoint_id", "cluster_id",
                                                             "event_id"))  # fmt: skip
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
        self.events.publish("device.event", {
            "device_id": device_id,
            "name": device.name if device is not None else None,
            "event": described.type,
            "summary": described.summary,
            "fields": described.fields,
            "matter": {"endpoint_id": endpoint, "cluster_id": cluster, "event_id": event_id,
                       "event_number": number, "timestamp_ms": doc.get("timestamp")},
        })  # fmt: skip

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
        return isinstance(clusters, _ClustersView) and clusters.absorb(cluster, attribute, value)

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
        devices = [_recording(d) for d in devices]
        with _reads_recorded():
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
        kept = [] if only_node is None else [
            t for t in self._tools.values() if t.device_id is not None
            and t.device_id in self._devices and self._devices[t.device_id].node_id != only_node]
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
            in_scope = only_node is None or dev_id is None or (
                self._node_of(dev_id, previous) == only_node)
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
                self.registry.register(tool.definition, self._handler(identity),
                                       available=available)
            elif old is None or (
                (same is None or same.get(identity) is not old)
                and old.definition != tool.definition
            ):
                self.registry.replace(tool.definition, self._handler(identity),
                                      available=available)
            elif entry.available != available:
                self.registry.set_available(identity, available)
        for device in devices:
            before = previous.get(device.id)
            if self.events is not None and (before is None or
                                            before.available != device.available):
                self.events.publish("device.availability", {
                    "device_id": device.id, "name": device.name, "available": device.available})

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
                d.available for d in (self._devices.get(m.device_id) for m in tool.room.members)
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
        self._devices = {i: dataclasses.replace(d, available=False) if d.available else d
                         for i, d in self._devices.items()}  # fmt: skip
        if self.events is not None:
            for device in went:
                self.events.publish("device.availability", {
                    "device_id": device.id, "name": device.name, "available": False})

    def _persist_new_slugs(self, devices: list[Device], previous: dict[str, Device]) -> None:
        new = {d.id: d.slug for d in devices
               if self._user_names.get(d.id, UserNames()).slug is None}
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

    async def rename(
        self,
        device_id: str,
        name: str | None,
        room: str | None = None,
        aliases: Sequence[str] | None = None,
    ) -> Device:
        """Rename a device now (persisted when a store is set) and regenerate its tools.

        ``name=None`` keeps the name (and so the tool names); ``room=None`` keeps the room
        and ``room=""`` removes it; ``aliases=None`` keeps the aliases, a list replaces
        them. An alias that is another device's name or alias is a ``CONFLICT`` (spoken
        commands could not tell the two apart). Old tools are unregistered and new ones
        registered.
        """
        if device_id not in self._devices:
            raise NotFoundError(f"no Matter device '{device_id}'", {"device_id": device_id})
        clean = clean_aliases(list(aliases)) if aliases is not None else None
        if clean:
            self._check_alias_clashes(device_id, clean)
        if self.names is not None:
            stored = await self.names.rename(device_id, name, room=room, aliases=clean)
        else:
            current = self._user_names.get(device_id, UserNames())
            stored = UserNames(
                name=current.name if name is None else name,
                room=current.room if room is None else (room or None),
                slug=current.slug if name is None else None,
                aliases=current.aliases if clean is None else clean,
            )
        self._user_names[device_id] = stored
        self.sync()
        return self._devices[device_id]

    def _check_alias_clashes(self, device_id: str, aliases: Sequence[str]) -> None:
        taken: dict[str, tuple[str, dict[str, Any]]] = {}
        for device in self._devices.values():
            if device.id == device_id:
                continue
            for label in (device.name, *device.aliases):
                taken.setdefault(label.casefold(),
                                 (f"{device.name} ({device.id})", {"device_id": device.id}))
        _refuse_taken(aliases, taken, "device")

    # -- calls ------------------------------------------------------------------------

    def _handler(self, identity: str) -> Handler:
        async def handle(params: dict[str, Any], ctx: CallContext) -> Any:
            return await self.call(identity, params)

        return handle

    async def call(self, identity: str, params: dict[str, Any]) -> Any:
        """Run one call of a Matter tool: check availability, plan, send, report.

        Raises ``DeviceUnavailableError`` at once for an unavailable device,
        ``ControllerUnavailableError`` without a controller connection, and whatever the
        plan or the controller raise (``INVALID_PARAMS``, ``TOOL_FAILED``).
        """
        tool = self.tool(identity)
        if not self.adapter.connected:
            raise ControllerUnavailableError("the Matter controller is not connected")
        if tool.room is not None:
            return await self._call_room(tool.room, params)
        device_id = tool.device_id or (
            str(params["device_id"]) if "device_id" in params else None)
        device = self._devices.get(device_id) if device_id else None
        if device is not None and not device.available:
            raise DeviceUnavailableError(
                f"{device.name} is not reachable right now", {"device_id": device.id})
        actions = tool.plan(params)
        before = self._unconfirmed.get(tool.device_id or "")
        results = []
        for action in actions:
            result = await self.adapter.execute(action)
            results.append(result)
            if action.kind is ActionKind.WRITE:
                self._written(action, result)
        if tool.kind in (ToolKind.STATE, ToolKind.SENSOR):
            values: dict[str, Any] = {}
            for action, result in zip(actions, results, strict=True):
                if isinstance(result, dict):
                    values.update(result)
                    if action.node_id < TEST_NODE_START:
                        self._learn(action.node_id, result)
            if tool.kind is ToolKind.STATE and tool.device_id is not None:
                # It read every state attribute from the device after ``before``'s change.
                self._confirmed(tool.device_id, before)
            return tool.state_from(values, self.generator.unit, params)
        if device is not None and self.read_back and device.node_id < TEST_NODE_START:
            self._unconfirmed[device.id] = next(self._changes)
            if self.events is not None and self.events.wanted("device.state"):
                await self.confirm((device.id,))  # someone watches: before answering
        return {
            "ok": True,
            "device_id": device.id if device is not None else device_id,
            "sent": [action.to_json() for action in actions],
            "results": results,
        }

    async def confirm(self, device_ids: Iterable[str] | None = None) -> None:
        """Read back the state of every device a call changed since it was last read.

        Readers call it before answering from the cache (``home_state``, the console):
        each device a command or write changed is read from the device itself, all at
        once, one ``read_attribute`` per device, and what it holds goes into the cache
        (published as ``device.state``). A device nobody asks about is never read: its
        report updates the cache a moment later. Restricted to ``device_ids`` when
        given; a read already under way that covers the latest change is joined.
        """
        wanted = set(device_ids) if device_ids is not None else None
        tasks: list[asyncio.Task[None]] = []
        for device_id, change in tuple(self._unconfirmed.items()):
            if wanted is not None and device_id not in wanted:
                continue
            reading = self._reading.get(device_id)
            if reading is None or reading[0] < change:
                task = asyncio.get_running_loop().create_task(
                    self._confirm_one(device_id, change))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                reading = self._reading[device_id] = (change, task)
            tasks.append(reading[1])
        if tasks:
            # Not cancelled with a caller that gives up: another reader may share them.
            await asyncio.wait(tasks)

    async def _confirm_one(self, device_id: str, change: int) -> None:
        try:
            await self._read_back(device_id)
        finally:
            if self._reading.get(device_id, (0,))[0] == change:
                del self._reading[device_id]
            # Read (or unreadable: left to its reports) up to this change.
            self._confirmed(device_id, change)

    def _confirmed(self, device_id: str, change: int | None) -> None:
        """Forget ``device_id``'s unread change ``change`` (not a later one)."""
        if change is not None and self._unconfirmed.get(device_id) == change:
            del self._unconfirmed[device_id]

    async def _read_back(self, device_id: str) -> None:
        """Read the device's state attributes from the device itself into the cache.

        What it holds now (a level its trim cut, a colour command a light that is off
        ignored) is taken in as its own report would be, and what changed is published
        as ``device.state``. A device that does not answer in time is left to its
        reports.
        """
        device = self._devices.get(device_id)
        if device is None or not device.available:
            return
        paths = state_paths(device, self.generator.state_parts(device))
        if not paths:
            return
        try:
            values = await self.adapter.read(device.node_id, paths, READ_BACK_TIMEOUT_S)
        except BridgeError as err:
            LOGGER.debug("no read-back of %s after a call: %s", device_id, err.message)
            return
        self._learn(device.node_id, values)

    def _learn(self, node_id: int, values: Mapping[str, Any]) -> None:
        """Take in values read from the device itself, as its own report would be."""
        node = self.adapter.node(node_id)
        if node is None:
            return
        for path, value in values.items():
            if isinstance(value, dict) and "TLVValue" in value:
                continue  # the controller could not decode it: not a value to keep
            node.attributes[path] = value
            self.refresh_node(node_id, path, value)

    async def _call_room(self, plan: RoomPlan, params: dict[str, Any]) -> dict[str, Any]:
        """Send every member's call at once; one member failing is part of the answer."""
        calls = plan.calls(params)

        async def one(call: MemberCall) -> dict[str, Any]:
            entry: dict[str, Any] = {
                "device_id": call.member.device_id,
                "name": call.member.name,
                "tool": call.identity,
            }
            if call.note is not None:
                entry["note"] = call.note
            if call.identity is None:
                entry["ok"] = call.note is not None
                entry["skipped"] = True
                return entry
            try:
                entry["result"] = await self.call(call.identity, dict(call.params))
            except BridgeError as err:
                entry["ok"] = False
                entry["error"] = {"code": str(err.code), "message": err.message}
            else:
                entry["ok"] = True
            return entry

        results = await asyncio.gather(*(one(c) for c in calls))
        failed = sum(1 for r in results if not r["ok"])
        return {
            "ok": failed == 0,
            "room": plan.room,
            "action": plan.action,
            "succeeded": len(results) - failed,
            "failed": failed,
            "devices": list(results),
        }

    def _written(self, action: MatterAction, result: Any) -> None:
        """Raise for a refused write; else put the written value in the cache now."""
        statuses = [r.get("Status") for r in result if isinstance(r, dict)] if isinstance(
            result, list) else []
        refused = next((s for s in statuses if isinstance(s, int) and s != 0), None)
        if refused is not None:
            reason = _WRITE_STATUS.get(refused, "refused")
            raise ToolFailedError(
                f"node {action.node_id} refused {action.cluster}.{action.name} = "
                f"{action.value!r}: {reason} (status 0x{refused:02X})",
                {"action": action.to_json(), "status": refused},
            )
        # Accepted: the device holds the value now (the read-back that follows corrects it
        # if the device stored another, and so does its report).
        self._learn(action.node_id, {path: action.value for path in action.paths})
