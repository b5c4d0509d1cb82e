"""The Matter layer as one service component: controller, tool bridge and commissioner.

One module because it is the front door's one object: every face asks it, and each of
its methods only hands a question to the sub-package that answers it.

``MatterComponent.build(config, ...)`` decides where the controller comes from: the
configured ``matter.controller_url`` (an external python-matter-server, matterjs-server
or Home Assistant add-on), or else a ``ManagedController`` that the bridge starts from
its own venv, inside ``matter.netns`` when one is named. ``start()`` brings up the
controller, then the ``MatterToolSync`` (adapter + generated tools); ``stop()`` reverses
it. It also serves the device operations the CLI and API expose: commission, list,
rename (live: tools are regenerated at once) and remove.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bridge.config import BridgeConfig
from bridge.errors import BridgeError, ConfigInvalidError, NotFoundError
from bridge.events import EventBus
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.controller.bindings import MatterBindings
from bridge.matter.controller.commissioning import (
    Commissioner,
    CommissionRequest,
    CommissionResult,
    tools_of_node,
)
from bridge.matter.controller.gateway import ControllerGateway
from bridge.matter.controller.guard import KEY_HEADER, GuardError, read_key
from bridge.matter.controller.managed import ControllerSettings, ManagedController
from bridge.matter.controller.recovery import NodeRecovery
from bridge.matter.home.devices import Device
from bridge.matter.home.floors import Floor, FloorChange, FloorStore
from bridge.matter.home.naming import DeviceNameStore, DeviceRename
from bridge.matter.home.rooms import Room
from bridge.matter.sync.registry import MatterToolSync
from bridge.matter.tools.generator import ToolKind, cached_values, device_state
from bridge.matter.tools.unknown import describe
from bridge.netns import find_namespace
from bridge.storage import Database
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import RegisteredTool, ToolRegistry

LOGGER = logging.getLogger(__name__)
REPO_VENV = Path(__file__).resolve().parents[2] / ".venv-controller"
CONTROLLER_DIR = "controller"


def default_controller_venv(config: BridgeConfig) -> Path:
    """Return the controller venv: configured, ``$ATMOSPHERE_CONTROLLER_VENV`` or the repo's."""
    if config.matter.controller_venv:
        return Path(config.matter.controller_venv)
    env = os.environ.get("ATMOSPHERE_CONTROLLER_VENV")
    return Path(env) if env else REPO_VENV


def controller_settings(config: BridgeConfig) -> ControllerSettings:
    """Return the managed controller's settings for this configuration."""
    netns = None
    if config.matter.netns:
        netns = find_namespace(config.matter.netns)
        if netns is None:
            raise ConfigInvalidError(
                f"matter.netns names '{config.matter.netns}', which is not a fabric "
                "namespace on this machine (create it first, e.g. with 'make demo')",
                {"key": "matter.netns"},
            )
    return ControllerSettings(
        venv=default_controller_venv(config),
        state_dir=config.state_dir / CONTROLLER_DIR,
        port=config.matter.controller_port,
        netns=netns,
        # Outside a namespace the WebSocket stays on loopback; inside, the host link reaches it.
        listen_address=None if netns is not None else "127.0.0.1",
    )


def _sees_device_network(controller: ManagedController | None) -> bool:
    """Return whether this process is on the devices' network (to watch their mDNS).

    A managed controller in a fabric namespace the bridge itself is not in (a test or a
    demo driving the namespace from outside) has its devices out of sight: no watch
    then, and no mDNS queries sent on this host's own links.
    """
    netns = controller.settings.netns if controller is not None else None
    if netns is None:
        return True
    try:
        mine = os.stat("/proc/self/ns/net").st_ino
        theirs = os.stat(f"/run/netns/{netns.name}").st_ino
    except OSError:
        return False
    return mine == theirs


def external_controller_headers(config: BridgeConfig) -> dict[str, str]:
    """Return the headers for an external controller (its key from ``controller_key_file``).

    Raise ``ConfigInvalidError`` when the file cannot be read or holds no key.
    """
    name = config.matter.controller_key_file
    if name is None:
        return {}
    try:
        key = read_key(Path(name))
    except GuardError as err:
        raise ConfigInvalidError(str(err), {"key": "matter.controller_key_file"}) from err
    return {KEY_HEADER: key.decode("ascii", "replace")}


class MatterComponent:
    """Controller (managed or external), the tool bridge and commissioning, as one part."""

    def __init__(
        self,
        *,
        url: str,
        bridge: MatterToolSync,
        commissioner: Commissioner,
        controller: ManagedController | None = None,
        recovery: NodeRecovery | None = None,
        connect_timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.url = url
        # What the controller demands of a client (its key): the doctor's probe sends it.
        self.headers: Mapping[str, str] = dict(headers or {})
        self.bridge = bridge
        self.commissioner = commissioner
        self.controller = controller
        self.recovery = recovery
        self._connect_timeout_s = connect_timeout_s
        # Switch -> light bindings written on the devices through this controller.
        self.bindings = MatterBindings(lambda: self.bridge.adapter)

    @classmethod
    def build(
        cls,
        config: BridgeConfig,
        *,
        registry: ToolRegistry,
        events: EventBus,
        db: Database,
        node_id: str = "",
    ) -> MatterComponent:
        """Build the runtime for ``config`` (nothing starts yet)."""
        controller: ManagedController | None = None
        if config.matter.controller_url:
            url = config.matter.controller_url
            headers = external_controller_headers(config)
        else:
            controller = ManagedController(controller_settings(config), events)
            url = controller.url
            headers = controller.headers
        bridge = MatterToolSync(
            adapter=MatterAdapter(url, headers=headers),
            registry=registry,
            events=events,
            names=DeviceNameStore(db),
            floors=FloorStore(db),
            floor_seeds=config.voice.floors,
            node_id=node_id,
            unit=config.matter.temperature_unit,
        )
        gateway = ControllerGateway(url, headers)
        gateway.attach(bridge.adapter)  # commands share the adapter's connection
        commissioner = Commissioner(
            gateway=gateway,
            events=events,
            registry=registry,
            thread=config.thread,
            log_follower=controller.follow_log if controller is not None else None,
        )
        if controller is not None:
            controller.on_ready = bridge.adapter.reconnect_now
        recovery = NodeRecovery(
            bridge.adapter,
            restart=controller.restart if controller is not None else None,
            listen=_sees_device_network(controller),
        )
        runtime = cls(
            url=url,
            bridge=bridge,
            commissioner=commissioner,
            controller=controller,
            recovery=recovery,
            headers=headers,
        )
        commissioner.set_namer(runtime.name_node)
        commissioner.set_node_known(
            lambda node_id: any(d.node_id == node_id for d in bridge.devices())
        )
        return runtime

    async def start(self) -> None:
        """Start the managed controller (if any), then the bridge, and wait for the snapshot."""
        try:
            # Inside the try: a start cut short (a signal, a timeout) ends the server the
            # supervisor already launched; it runs in its own session and would outlive us.
            if self.controller is not None:
                await self.controller.start()
            await self.bridge.start()
            await self.bridge.adapter.wait_connected(self._connect_timeout_s)
            if self.recovery is not None:
                await self.recovery.start()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop the bridge, then the managed controller (idempotent)."""
        try:
            if self.recovery is not None:
                await self.recovery.stop()
            await self.bridge.stop()
        finally:
            if self.controller is not None:
                await self.controller.stop()

    def status(self) -> dict[str, Any]:
        """Return the controller's connection and supervision state."""
        out: dict[str, Any] = {
            "url": self.url,
            "managed": self.controller is not None,
            "connected": self.bridge.adapter.connected,
        }
        if self.controller is not None:
            out.update(
                state=self.controller.state.value,
                pid=self.controller.pid,
                restarts=self.controller.restarts,
                requested_restarts=self.controller.requested_restarts,
            )
        if self.recovery is not None:
            out["recovery"] = dict(self.recovery.counts)
        return out

    # -- what the faces read -----------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Return whether the controller's connection is up."""
        return self.bridge.adapter.connected

    @property
    def managed(self) -> bool:
        """Return whether this bridge runs the controller itself."""
        return self.controller is not None

    def server_info(self) -> dict[str, Any] | None:
        """Return the controller's last ``server_info`` (None before the first greeting)."""
        return self.bridge.adapter.server_info()

    def device_list(self) -> list[Device]:
        """Return the devices as they are now."""
        return self.bridge.devices()

    def room_list(self) -> list[Room]:
        """Return the rooms as they are now."""
        return self.bridge.rooms()

    def find_room(self, ref: str) -> Room:
        """Return the room named by slug, name or alias; else NOT_FOUND."""
        return self.bridge.find_room(ref)

    def tool_for(
        self, capability: str, *, device_id: str | None = None, room: str | None = None
    ) -> ToolDefinition | None:
        """Return the tool that does ``capability`` for a device or a room (slug), if any."""
        return self.bridge.tool_for(capability, device_id=device_id, room=room)

    def device_tools(self) -> list[RegisteredTool]:
        """Return the registered tools that belong to one Matter device."""
        return [
            t
            for t in self.bridge.registry.list()
            if (t.definition.metadata.get("device") or {}).get("id") is not None
        ]

    def device_view(self, device: Device) -> dict[str, Any]:
        """Return a device's state in human units and its action tools by map-row suffix.

        ``state`` is what its state tool answers from the cached values (W, kWh, %, a
        vacuum's room, minutes left …); ``actions`` maps each row suffix (``open``,
        ``set_fan_speed``, ``clean_areas`` …) to the tool's name, its parameters' schemas
        (with the device's own enums and limits) and whether it needs a confirmation.
        """
        generator = self.bridge.generator
        parts = generator.state_parts(device)
        state = device_state(device, parts, cached_values(device), generator.unit)
        actions: dict[str, dict[str, Any]] = {}
        for registered in self.device_tools():
            if (registered.definition.metadata.get("device") or {}).get("id") != device.id:
                continue
            try:
                tool = self.bridge.tool(registered.definition.identity)
            except BridgeError:
                continue
            if tool.kind is not ToolKind.ACTION or tool.context is None:
                continue
            actions[tool.context.row.suffix] = {
                "name": tool.definition.name,
                "cluster": tool.context.cluster.name,
                "params": tool.definition.parameters.get("properties") or {},
                "dangerous": tool.definition.dangerous,
            }
        return {"state": {k: v for k, v in state.items() if v is not None}, "actions": actions}

    def attribute(self, device_id: str, path: str) -> Any:
        """Return a device's node attribute ``endpoint/cluster/attribute`` (None if unknown)."""
        node_id, _, _endpoint = device_id.partition("-")
        node = self.bridge.adapter.node(int(node_id)) if node_id.isdigit() else None
        return node.attributes.get(path) if node is not None else None

    async def confirm(self) -> None:
        """Wait until devices a call just changed have been read back."""
        await self.bridge.confirm()

    # -- devices ----------------------------------------------------------------------

    async def commission(
        self, request: CommissionRequest, *, commission_id: str | None = None
    ) -> CommissionResult:
        """Commission a device (named and placed in its room when asked) and return it."""
        return await self.commissioner.commission(request, commission_id=commission_id)

    async def name_node(self, node_id: int, request: CommissionRequest) -> None:
        """Give a freshly commissioned node's devices the requested name and room."""
        devices = [d for d in self.bridge.devices() if d.node_id == node_id]
        for index, device in enumerate(devices):
            name = request.name or device.name
            if request.name and len(devices) > 1:
                name = f"{request.name} {index + 1}"
            await self.bridge.rename(device.id, name, room=request.room)

    def devices(self) -> list[dict[str, Any]]:
        """Return every device with its availability and tool names."""
        out = []
        maps = self.bridge.generator.maps
        mapped = frozenset(m.cluster.id for m in maps)
        acting = frozenset(m.cluster.id for m in maps if m.rows)
        for device in self.bridge.devices():
            doc = device.to_json()
            doc["tools"] = self._tool_names(device.id)
            # What it is and what has no friendly tool (unknown is not silent).
            doc.update(describe(device, mapped, acting))
            out.append(doc)
        return out

    def _tool_names(self, device_id: str) -> list[str]:
        return sorted(
            t.definition.name
            for t in self.bridge.registry.list()
            if (t.definition.metadata.get("device") or {}).get("id") == device_id
        )

    async def rename(self, ref: str, change: DeviceRename) -> dict[str, Any]:
        """Rename a device and/or move it to a room live; return it and its tool changes."""
        device = self.find_device(ref)
        before = self._tool_names(device.id)
        renamed = await self.bridge.rename(
            device.id, change.name, room=change.room, aliases=change.aliases
        )
        doc = renamed.to_json()
        doc["tools"] = self._tool_names(device.id)
        return {
            "device": doc,
            "added_tools": sorted(set(doc["tools"]) - set(before)),
            "removed_tools": sorted(set(before) - set(doc["tools"])),
        }

    def rooms(self) -> list[dict[str, Any]]:
        """Return every room with its aliases, devices and room tool names."""
        return [self._room_json(room) for room in self.bridge.rooms()]

    def _room_json(self, room: Room) -> dict[str, Any]:
        doc = room.to_json()
        floor = self.bridge.floor_of(room.slug)
        doc["floor"] = floor.name if floor is not None else None
        doc["tools"] = sorted(
            t.definition.name
            for t in self.bridge.registry.list()
            if (t.definition.metadata.get("room") or {}).get("slug") == room.slug
        )
        return doc

    async def set_room_aliases(self, ref: str, aliases: Sequence[str]) -> dict[str, Any]:
        """Replace a room's aliases live; return the room."""
        return self._room_json(await self.bridge.set_room_aliases(ref, aliases))

    # -- floors -----------------------------------------------------------------------

    def floor_list(self) -> list[Floor]:
        """Return the floors as they are now (each with the slugs of its rooms)."""
        return self.bridge.floors()

    def find_floor(self, ref: str) -> Floor:
        """Return the floor named by slug, name or alias; else NOT_FOUND."""
        return self.bridge.find_floor(ref)

    def floors(self, sees: Callable[[Room], bool] | None = None) -> dict[str, Any]:
        """Return the floors with their rooms, and the rooms on no floor.

        ``sees`` says which rooms a caller may know of (``None``: all): a floor shows only
        those, and a floor with none of them is left out. Rooms given a floor before they
        have a device are listed (``waiting_rooms``) only when all are seen.
        """
        rooms = {r.slug: r for r in self.bridge.rooms()}
        shown = {s: r for s, r in rooms.items() if sees is None or sees(r)}
        out = []
        placed: set[str] = set()
        for floor in self.bridge.floors():
            placed.update(floor.rooms)
            mine = [{"room": shown[s].name, "slug": s} for s in floor.rooms if s in shown]
            if sees is not None and not mine:
                continue
            doc = floor.to_json()
            doc["rooms"] = mine
            if sees is None:
                doc["waiting_rooms"] = [s for s in floor.rooms if s not in rooms]
            out.append(doc)
        return {
            "floors": out,
            "count": len(out),
            "rooms_without_floor": [
                {"room": r.name, "slug": s} for s, r in shown.items() if s not in placed
            ],
        }

    def floor_json(self, floor: Floor) -> dict[str, Any]:
        """Return one floor with all its rooms (for a caller that may manage it)."""
        rooms = {r.slug: r for r in self.bridge.rooms()}
        doc = floor.to_json()
        doc["rooms"] = [{"room": rooms[s].name, "slug": s} for s in floor.rooms if s in rooms]
        doc["waiting_rooms"] = [s for s in floor.rooms if s not in rooms]
        return doc

    def floor_rooms(self, floor: Floor) -> list[Room]:
        """Return the rooms (with devices) on ``floor``."""
        return [r for r in self.bridge.rooms() if r.slug in floor.rooms]

    async def create_floor(self, change: FloorChange) -> dict[str, Any]:
        """Add a floor; return it."""
        return self.floor_json(await self.bridge.create_floor(change))

    async def change_floor(self, ref: str, change: FloorChange) -> dict[str, Any]:
        """Rename, re-level or re-alias a floor; return it."""
        return self.floor_json(await self.bridge.change_floor(ref, change))

    async def delete_floor(self, ref: str) -> dict[str, Any]:
        """Delete a floor (its rooms are then on none); return what it was."""
        floor = await self.bridge.delete_floor(ref)
        return {"deleted": self.floor_json(floor)}

    async def set_room_floor(self, ref: str, floor: str | None) -> dict[str, Any]:
        """Put a room on a floor (``None``: on none); return the room."""
        await self.bridge.set_room_floor(ref, floor)
        return self._room_json(self.find_room(ref))

    def find_device(self, ref: str) -> Device:
        """Return the device named by id (``node-endpoint``), slug or name; else NOT_FOUND."""
        wanted = ref.strip()
        devices = self.bridge.devices()
        for key in ("id", "slug", "name"):
            found = [d for d in devices if _key(d, key) == wanted.casefold()]
            if len(found) == 1:
                return found[0]
        if wanted.isdigit():
            found = [d for d in devices if d.node_id == int(wanted)]
            if found:
                return found[0]
        raise NotFoundError(f"no Matter device '{ref}'", {"device": ref})

    async def share(self, ref: str, *, window_s: int = 300) -> dict[str, Any]:
        """Open a commissioning window on a device's node so another ecosystem can add it.

        Returns the device, the new manual pairing code, the QR text and the window's
        length; the node stays on this fabric too (Matter multi-admin).
        """
        device = self.find_device(ref)
        params = await self.bridge.adapter.open_commissioning_window(
            device.node_id, timeout_s=window_s
        )
        return {
            "device_id": device.id,
            "node_id": device.node_id,
            "name": device.name,
            "manual_code": str(params["setup_manual_code"]),
            "qr_code": str(params["setup_qr_code"]),
            "window_s": window_s,
        }

    async def remove(self, ref: str, *, timeout_s: float = 30.0) -> dict[str, Any]:
        """Remove the node behind a device from the fabric and wait until its tools are gone."""
        device = self.find_device(ref)
        node_id = device.node_id
        removed_tools = list(tools_of_node(self.bridge.registry, node_id))
        device_ids = [d.id for d in self.bridge.devices() if d.node_id == node_id]
        await self.commissioner.remove(node_id)
        await self._wait_tools_gone(node_id, timeout_s)
        # A new node never reuses the id, but its stored names would linger forever.
        if self.bridge.names is not None:
            for dev_id in device_ids:
                await self.bridge.names.forget(dev_id)
        return {"node_id": node_id, "device_id": device.id, "removed_tools": removed_tools}

    async def _wait_tools_gone(self, node_id: int, timeout_s: float) -> None:
        registry = self.bridge.registry
        changed = asyncio.Event()
        unsubscribe = registry.subscribe(lambda _action, _tool: changed.set())
        try:
            async with asyncio.timeout(timeout_s):
                while tools_of_node(registry, node_id):
                    changed.clear()
                    await changed.wait()
        except TimeoutError:
            LOGGER.warning("node %s removed but its tools are still registered", node_id)
        finally:
            unsubscribe()


def _key(device: Device, key: str) -> str:
    value = device.id if key == "id" else device.slug if key == "slug" else device.name
    return value.casefold()
