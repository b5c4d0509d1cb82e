"""The compact tool profile: a few capability tools instead of one tool per device action.

One module because every capability tool is built from the same table of clusters,
actions and parameters, which is read best in one place.

Details: docs/modules.md, ``bridge.matter.sync.compact``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bridge.errors import BridgeError, InvalidParamsError, NotFoundError
from bridge.tools.definition import Category, Execution, ToolDefinition, ToolIntent
from bridge.tools.registry import ToolRegistry

if TYPE_CHECKING:  # the Matter SDK loads only where Matter runs (a bridge exists)
    from bridge.matter.sync.registry import MatterToolSync
    from bridge.matter.tools.generator import GeneratedTool

NAMESPACE = "home"
STATE_TOOL = "home_state"
PROFILES = ("per-device", "compact")


@dataclass(frozen=True, slots=True)
class Capability:
    """One compact tool: its actions → per-device suffix, room action, extra parameters."""

    name: str
    title: str
    device_actions: Mapping[str, str]
    room_actions: Mapping[str, str]
    params: Mapping[str, dict[str, Any]]
    dangerous: bool = False
    # The clusters whose tools it stands for: a suffix alone is not a kind (a valve and a
    # blind both "open", a washer and a vacuum both "stop").
    clusters: frozenset[str] = frozenset()


CAPABILITIES: tuple[Capability, ...] = (
    Capability(
        "lights",
        "lights and switches",
        {
            "on": "on",
            "off": "off",
            "brightness": "brightness",
            "color": "set_color",
            "color_temperature": "color_temperature",
        },
        {"on": "on", "off": "off", "brightness": "brightness", "color": "color"},
        {
            "percent": {
                "type": "number",
                "minimum": 0,
                "maximum": 100,
                "description": "brightness: percent 0-100",
            },
            "color": {"type": "string", "description": "color: CSS name or '#rrggbb'"},
            "kelvin": {"type": "number", "description": "color_temperature: kelvin"},
        },
        clusters=frozenset({"OnOff", "LevelControl", "ColorControl"}),
    ),
    Capability(
        "climate",
        "thermostats and water heaters",
        {
            "set_temperature": "set_temperature",
            "set_mode": "set_mode",
            "boost": "boost",
            "cancel_boost": "cancel_boost",
            "heater_mode": "set_heater_mode",
        },
        {"set_temperature": "temperature"},
        {
            "celsius": {"type": "number", "description": "set_temperature: target °C"},
            "fahrenheit": {"type": "number", "description": "set_temperature: target °F"},
            "mode": {
                "type": "string",
                "description": "set_mode: e.g. heat, cool, off; heater_mode: the heater's name",
            },
            "minutes": {"type": "number", "description": "boost: for how many minutes"},
        },
        clusters=frozenset({"Thermostat", "WaterHeaterManagement", "WaterHeaterMode"}),
    ),
    Capability(
        "locks",
        "door locks (each call needs a person's approval)",
        {"lock": "lock", "unlock": "unlock"},
        {},
        {"pin_code": {"type": "string", "description": "PIN, when the lock needs one"}},
        dangerous=True,
        clusters=frozenset({"DoorLock"}),
    ),
    Capability(
        "covers",
        "blinds, shades and other coverings",
        {
            "open": "open",
            "close": "close",
            "stop": "stop",
            "position": "set_position",
            "tilt": "set_tilt",
        },
        {"open": "covers_open", "close": "covers_close", "position": "covers_position"},
        {
            "percent_open": {
                "type": "number",
                "minimum": 0,
                "maximum": 100,
                "description": "position, tilt: percent open 0-100",
            }
        },
        clusters=frozenset({"WindowCovering"}),
    ),
    Capability(
        "closures",
        "garage doors and gates (each call needs a person's approval)",
        {"open": "open", "close": "close", "stop": "stop"},
        {},
        {},
        dangerous=True,
        clusters=frozenset({"ClosureControl"}),
    ),
    Capability(
        "fans",
        "fans, air purifiers and extractor hoods",
        {"mode": "set_fan_mode", "speed": "set_fan_speed", "step": "set_fan_step"},
        {"speed": "fans_speed"},
        {
            "mode": {"type": "string", "description": "mode: e.g. off, low, medium, high, auto"},
            "percent": {
                "type": "number",
                "minimum": 0,
                "maximum": 100,
                "description": "speed: percent 0-100",
            },
            "speed": {"type": "integer", "minimum": 0, "description": "step: speed step, 0 off"},
        },
        clusters=frozenset({"FanControl"}),
    ),
    Capability(
        "vacuums",
        "robot vacuums",
        {
            "start": "start",
            "stop": "stop",
            "pause": "pause",
            "resume": "resume",
            "dock": "return_to_base",
            "clean_rooms": "clean_areas",
            "clean_mode": "set_clean_mode",
        },
        {},
        {
            "areas": {
                "type": "array",
                "items": {"type": "string"},
                "description": "clean_rooms: the rooms, by the robot's names",
            },
            "mode": {"type": "string", "description": "clean_mode: the robot's mode name"},
        },
        clusters=frozenset({"RvcRunMode", "RvcOperationalState", "ServiceArea", "RvcCleanMode"}),
    ),
    Capability(
        "appliances",
        "washers, dryers, dishwashers, ovens, microwaves and fridges",
        {
            "start": "start",
            "stop": "stop",
            "pause": "pause",
            "resume": "resume",
            "cycle": "set_cycle",
            "mode": "set_mode",
            "cook": "cook",
            "temperature": "set_temperature",
        },
        {},
        {
            "mode": {
                "type": "string",
                "description": "cycle, mode: the appliance's own name for it",
            },
            "minutes": {"type": "number", "description": "cook: cooking time in minutes"},
            "power": {"type": "number", "description": "cook: power setting"},
            "celsius": {"type": "number", "description": "temperature: target °C"},
            "fahrenheit": {"type": "number", "description": "temperature: target °F"},
        },
        clusters=frozenset(
            {
                "OperationalState",
                "LaundryWasherMode",
                "DishwasherMode",
                "OvenMode",
                "MicrowaveOvenMode",
                "MicrowaveOvenControl",
                "RefrigeratorAndTemperatureControlledCabinetMode",
                "TemperatureControl",
            }
        ),
    ),
    Capability(
        "valves",
        "water valves",
        {"open": "open", "close": "close"},
        {"open": "valves_open", "close": "valves_close"},
        {"minutes": {"type": "number", "description": "open: close again after minutes"}},
        clusters=frozenset({"ValveConfigurationAndControl"}),
    ),
    Capability(
        "chargers",
        "EV chargers",
        {
            "enable": "enable_charging",
            "disable": "disable_charging",
            "mode": "set_charging_mode",
        },
        {},
        {
            "max_current_amps": {"type": "number", "description": "enable: highest amperes"},
            "mode": {"type": "string", "description": "mode: the charger's name for it"},
        },
        clusters=frozenset({"EnergyEvse", "EnergyEvseMode"}),
    ),
    Capability(
        "sounds",
        "chimes and speakers",
        # a speaker's OnOff is its mute and its LevelControl its volume (their own
        # suffixes: a light's on/off and brightness never land here)
        {"play": "play", "mute": "mute", "unmute": "unmute", "volume": "volume"},
        {},
        {
            "percent": {
                "type": "number",
                "minimum": 0,
                "maximum": 100,
                "description": "volume: percent 0-100",
            }
        },
        clusters=frozenset({"Chime", "OnOff", "LevelControl"}),
    ),
)
BY_NAME = {c.name: c for c in CAPABILITIES}


@dataclass(slots=True)
class _Target:
    kind: str  # "device" | "room"
    id: str
    label: str
    names: set[str]
    tools: dict[str, ToolDefinition] = field(default_factory=dict)  # compact action → tool


@dataclass(slots=True)
class _Index:
    targets: dict[str, list[_Target]]  # capability → targets
    state: list[tuple[GeneratedTool, ToolDefinition]]


@dataclass(frozen=True, slots=True)
class Resolved:
    """The per-device (or room) tool a compact call stands for, with its parameters."""

    key: str
    params: dict[str, Any]
    via: str


class CompactProfile:
    """The compact tools of one bridge, built from the registry and the Matter bridge."""

    def __init__(self, registry: ToolRegistry, bridge: Callable[[], MatterToolSync | None]):
        self.registry = registry
        self._bridge = bridge
        self._index: _Index | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        """Follow registry changes (idempotent)."""
        if self._unsubscribe is None:
            self._unsubscribe = self.registry.subscribe(self._changed)

    def stop(self) -> None:
        """Stop following the registry."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _changed(self, _action: str, _tool: Any) -> None:
        self._index = None

    # -- index ---------------------------------------------------------------------

    def index(self) -> _Index:
        """Return the capability targets (rebuilt after any registry change)."""
        if self._index is not None and self._unsubscribe is not None:
            return self._index
        index = self._build()
        self._index = index
        return index

    def _build(self) -> _Index:
        from bridge.matter.tools.generator import ToolKind  # lazy: see TYPE_CHECKING

        bridge = self._bridge()
        targets: dict[str, dict[str, _Target]] = {c.name: {} for c in CAPABILITIES}
        state: list[tuple[GeneratedTool, ToolDefinition]] = []
        if bridge is None:
            return _Index({k: [] for k in targets}, state)
        devices = {d.id: d for d in bridge.devices()}
        rooms = {r.slug: r for r in bridge.rooms()}
        seen: set[str] = set()
        for entry in self.registry.list(namespace="matter"):
            key = entry.definition.key
            if key in seen:
                continue
            seen.add(key)
            try:
                defn = self.registry.resolve(key).definition
                tool = bridge.tool(defn.identity)
            except BridgeError:
                continue
            if tool.kind is ToolKind.STATE:
                state.append((tool, defn))
            elif tool.kind is ToolKind.ACTION and tool.context is not None:
                device = devices.get(tool.device_id or "")
                if device is None:
                    continue
                suffix = tool.context.row.suffix
                cluster = tool.context.cluster.name
                for cap in CAPABILITIES:
                    if cluster not in cap.clusters:
                        continue
                    for action, wanted in cap.device_actions.items():
                        if wanted != suffix:
                            continue
                        target = targets[cap.name].setdefault(
                            device.id,
                            _Target(
                                "device",
                                device.id,
                                device.name,
                                {
                                    device.id,
                                    device.slug,
                                    *(n.casefold() for n in (device.name, *device.aliases)),
                                },
                            ),
                        )
                        target.tools[action] = defn
            elif tool.kind is ToolKind.ROOM and tool.room is not None:
                room = rooms.get(tool.room.room_slug)
                if room is None:
                    continue
                for cap in CAPABILITIES:
                    for action, wanted in cap.room_actions.items():
                        if wanted != tool.room.action:
                            continue
                        target = targets[cap.name].setdefault(
                            "room:" + room.slug,
                            _Target(
                                "room",
                                room.slug,
                                room.name,
                                {room.slug, *(n.casefold() for n in room.labels)},
                            ),
                        )
                        target.tools[action] = defn
        state.sort(key=lambda s: s[0].device_id or "")
        return _Index({k: list(v.values()) for k, v in targets.items()}, state)

    # -- listing -------------------------------------------------------------------

    def tools_for(self, allows: Callable[[ToolDefinition], bool]) -> list[ToolDefinition]:
        """Return the compact tools whose targets ``allows`` reaches (``home_state`` too)."""
        index = self.index()
        out: list[ToolDefinition] = []
        for cap in CAPABILITIES:
            reachable = [
                t for t in index.targets[cap.name] if any(allows(d) for d in t.tools.values())
            ]
            if reachable:
                out.append(self._definition(cap, reachable, allows))
        readable = [t for t, d in index.state if allows(d)]
        if readable:
            areas = sorted({d.room for t in readable for d in t.devices.values() if d.room})
            out.append(self._state_definition(areas))
        return out

    def _labels(self, targets: list[_Target]) -> list[str]:
        counts: dict[str, int] = {}
        for t in targets:
            counts[t.label.casefold()] = counts.get(t.label.casefold(), 0) + 1
        return [t.label if counts[t.label.casefold()] == 1 else t.id for t in targets]

    def _definition(
        self, cap: Capability, targets: list[_Target], allows: Callable[[ToolDefinition], bool]
    ) -> ToolDefinition:
        actions = [
            a
            for a in cap.device_actions
            if any(a in t.tools and allows(t.tools[a]) for t in targets)
        ]
        return ToolDefinition(
            name=cap.name,
            namespace=NAMESPACE,
            description=(
                f"Control {cap.title}: pick a target (a device or a room, by name, alias or "
                "id) and an action; give the action's value."
            ),
            category=Category.ACTING,
            parameters={
                "type": "object",
                "properties": {
                    "target": {"type": "string", "enum": self._labels(targets)},
                    "action": {"type": "string", "enum": actions},
                    **{k: dict(v) for k, v in cap.params.items()},
                },
                "required": ["target", "action"],
                "additionalProperties": False,
            },
            execution=Execution(timeout_ms=15_000, idempotent=not cap.dangerous),
            metadata={"tags": ["compact", cap.name]},
            dangerous=cap.dangerous,
            intent=ToolIntent.ACTION,
        )

    def _state_definition(self, areas: list[str]) -> ToolDefinition:
        props: dict[str, Any] = {"area": {"type": "string", "description": "Only this room."}}
        if areas:
            props["area"]["enum"] = areas
        return ToolDefinition(
            name=STATE_TOOL,
            namespace=NAMESPACE,
            description=(
                "The live state of every device you may read (or one room's), in human "
                "units: lights, temperatures, fans (mode, speed %), robot vacuums (status, "
                "room), valves and doors (open/closed), energy (W, kWh), sensors (lux, hPa, "
                "ppm, µg/m³, leak, smoke and CO alarms, air quality) and appliances "
                "(status, cycle, minutes left)."
            ),
            category=Category.SENSING,
            parameters={"type": "object", "properties": props, "additionalProperties": False},
            execution=Execution(timeout_ms=5_000, idempotent=True),
            metadata={"tags": ["compact", "state"]},
        )

    # -- calls ---------------------------------------------------------------------

    def resolve(
        self,
        name: str,
        params: Mapping[str, Any],
        allows: Callable[[ToolDefinition], bool] = lambda _d: True,
    ) -> Resolved:
        """Return the per-device or room tool a call of ``home:<name>`` stands for.

        A name several devices share means the one(s) ``allows`` reaches. Permissions
        are not enforced here: the resolved tool's call checks them.
        """
        cap = BY_NAME.get(name)
        if cap is None:
            raise NotFoundError(f"no compact tool '{name}'", {"tool": name})
        unknown = sorted(set(params) - {"target", "action", *cap.params})
        if unknown:
            raise InvalidParamsError(
                f"unknown parameter(s): {', '.join(unknown)}", {"fields": unknown}
            )
        target_ref, action = params.get("target"), params.get("action")
        if not isinstance(target_ref, str) or not target_ref.strip():
            raise InvalidParamsError("'target' must name a device or a room", {"field": "target"})
        if action not in cap.device_actions:
            raise InvalidParamsError(
                f"'action' must be one of: {', '.join(cap.device_actions)}", {"field": "action"}
            )
        target = self._find(cap, target_ref, allows)
        defn = target.tools.get(str(action))
        if defn is None:
            raise InvalidParamsError(
                f"{target.label} cannot {action} (it can: {', '.join(target.tools)})",
                {"target": target.label, "action": action, "actions": sorted(target.tools)},
            )
        props = defn.parameters.get("properties") or {}
        # A value the chosen tool does not take is refused, never dropped unsaid (a
        # valve room's "open" has no "minutes"; a plain light has no "kelvin").
        unused = sorted(set(params) - {"target", "action"} - set(props))
        if unused:
            raise InvalidParamsError(
                f"{target.label} does not take {', '.join(unused)} for {action}",
                {"target": target.label, "action": action, "fields": unused},
            )
        forwarded = {k: v for k, v in params.items() if k in props}
        return Resolved(key=defn.key, params=forwarded, via=f"{NAMESPACE}:{cap.name}")

    def _find(self, cap: Capability, ref: str, allows: Callable[[ToolDefinition], bool]) -> _Target:
        wanted = ref.strip().casefold()
        targets = self.index().targets[cap.name]
        for kind in ("device", "room"):
            hits = [t for t in targets if t.kind == kind and (wanted in t.names or wanted == t.id)]
            # Only what the caller may reach: a target out of reach answers as an
            # unknown one does (no oracle of which names exist).
            hits = [t for t in hits if any(allows(d) for d in t.tools.values())]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise InvalidParamsError(
                    f"'{ref}' names {len(hits)} devices; use an id: "
                    + ", ".join(f"{t.id} ({t.label})" for t in hits),
                    {"target": ref, "ids": [t.id for t in hits]},
                )
        raise NotFoundError(f"no {cap.title} target '{ref}'", {"target": ref})

    def state_args(self, arguments: Mapping[str, Any]) -> str | None:
        """Return the ``area`` of ``home_state`` arguments; raise on anything else."""
        unknown = sorted(set(arguments) - {"area"})
        area = arguments.get("area")
        if unknown or (area is not None and not isinstance(area, str)):
            raise InvalidParamsError(
                f"{STATE_TOOL} takes only 'area' (a room name)", {"unknown": unknown}
            )
        return area

    async def home_state(
        self, allows: Callable[[ToolDefinition], bool], area: str | None = None
    ) -> dict[str, Any]:
        """Return the live state of every device ``allows`` may read (one area's).

        Devices a call changed since they were last read are read back from the devices
        first (``MatterToolSync.confirm``), so the answer shows what they hold now.
        An ``area`` that names no room holding a device the caller may read is
        ``NOT_FOUND`` naming only the rooms the caller may see, whether or not such a
        room exists: the answer never tells of rooms or devices out of reach.
        """
        from bridge.matter.tools.generator import cached_values  # lazy: see TYPE_CHECKING

        wanted = area.strip().casefold() if isinstance(area, str) and area.strip() else None
        bridge = self._bridge()
        if bridge is None:
            return {"devices": [], "count": 0}
        # The live device and tool: attribute changes replace them without a registry
        # change when the definitions stay the same.
        live = {d.id: d for d in bridge.devices()}
        readable: list[tuple[Any, Any]] = []
        for indexed, defn in self.index().state:
            if not allows(defn):
                continue
            device = live.get(indexed.device_id or "")
            try:
                tool = bridge.tool(defn.identity)
            except BridgeError:
                continue
            if device is not None:
                readable.append((device, tool))
        if wanted is not None:
            seen = {(d.room or "").casefold() for d, _ in readable if d.room}
            rooms = [
                r
                for r in bridge.rooms()
                if {r.slug, *(label.casefold() for label in r.labels)} & seen
            ]
            room = next(
                (r for r in rooms if wanted in {r.slug, *(label.casefold() for label in r.labels)}),
                None,
            )
            if room is None:
                names = [r.name for r in rooms]
                raise NotFoundError(
                    f"no room '{area}'" + (f"; rooms: {', '.join(names)}" if names else ""),
                    {"room": area, "rooms": names},
                )
            room_names = {room.slug, *(label.casefold() for label in room.labels)}
            readable = [(d, t) for d, t in readable if (d.room or "").casefold() in room_names]
        await bridge.confirm(device.id for device, _tool in readable)
        # Read back devices are replaced: take each one's state from the live one now.
        live = {d.id: d for d in bridge.devices()}
        devices: list[dict[str, Any]] = []
        for known, tool in readable:
            device = live.get(known.id, known)
            entry: dict[str, Any] = {"id": device.id, "name": device.name}
            if device.room:
                entry["room"] = device.room
            try:
                state = tool.state_from(cached_values(device), bridge.generator.unit)
            except (BridgeError, KeyError, TypeError, ValueError):
                state = {}
            entry.update({k: v for k, v in state.items() if v is not None})
            devices.append(entry)
        return {"devices": devices, "count": len(devices)}
