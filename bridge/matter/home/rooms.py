"""Room tools: one call that switches, dims, colours or heats every device of a room at once.

Lights (on, off, brightness, colour), thermostats (temperature), fans (on, off, speed),
window coverings (open, close, position; optionally only those of one covering type,
such as the curtains) and water valves (open, close). A closure (garage door, gate)
never gets a room tool: opening one needs a person's confirmation, device by device.
Room actions other than the lights' are named with their kind (``fans_on``,
``covers_open``) so that a question for a room's "on" never finds its fans.

One module because a kind's room tools are two halves of one thing, made from the same
room: the tool specs (names, schemas, permissions) and the plan that turns a call into
each member's own call.

Details: docs/modules.md, ``bridge.matter.home.rooms``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bridge.matter.home.devices import Device, slugify
from bridge.tools.definition import Category, Execution, Requires
from bridge.tools.device_permissions import DEVICE_CONTROL, device_permission
from bridge.tools.naming import CLIENT_NAME_MAX, fit_name, short_hash

ROOM_PREFIX = "room"
# Room tool names stay within what clients accept once MCP prefixes ``matter__``.
NAME_LIMIT = CLIENT_NAME_MAX - len("matter__")
LIGHT_KINDS = frozenset({"light"})
THERMOSTAT_KINDS = frozenset({"thermostat"})
FAN_KINDS = frozenset({"fan"})
COVER_KINDS = frozenset({"blind"})
VALVE_KINDS = frozenset({"valve"})
COLOR_PARAMS = {"color", "hue", "saturation"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Room:
    """A room: its name, slug, aliases and devices."""

    name: str
    slug: str
    aliases: tuple[str, ...]
    devices: tuple[Device, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """Return the room's name and aliases."""
        return (self.name, *self.aliases)

    def to_json(self) -> dict[str, Any]:
        """Return the API form of the room."""
        return {
            "room": self.name,
            "slug": self.slug,
            "aliases": list(self.aliases),
            "devices": [{"id": d.id, "name": d.name, "kind": d.kind} for d in self.devices],
        }


def rooms_of(devices: Iterable[Device], aliases: Mapping[str, Sequence[str]]) -> list[Room]:
    """Group ``devices`` into rooms by room slug (devices without a room are in none)."""
    grouped: dict[str, tuple[str, list[Device]]] = {}
    for device in devices:
        slug = room_slug(device.room) if device.room else ""
        if slug and device.room:
            grouped.setdefault(slug, (device.room, []))[1].append(device)
    return [
        Room(name=name, slug=slug, aliases=tuple(aliases.get(slug, ())), devices=tuple(members))
        for slug, (name, members) in sorted(grouped.items())
    ]


def room_slug(room: str) -> str:
    """Return a room's slug; a name without letters or digits gets ``r_<hash>``."""
    return slugify(room) or (f"r_{short_hash(room)}" if room.strip() else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class RoomMember:
    """One device of a room tool and its per-device tools by suffix (``on`` → identity)."""

    device_id: str
    name: str
    tools: Mapping[str, str]
    # What sort of the kind it is, where a room tool can choose by it (a covering's type).
    variety: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberCall:
    """What a room call sends to one member: a per-device tool and its parameters."""

    member: RoomMember
    identity: str | None
    params: Mapping[str, Any]
    note: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RoomPlan:
    """What a room tool does: its action, room and members."""

    action: str
    room: str
    room_slug: str
    kind: str
    members: tuple[RoomMember, ...]

    def calls(self, params: Mapping[str, Any]) -> list[MemberCall]:
        """Return the per-device call each member gets for validated ``params``."""
        return [self._call(m, params) for m in self.members]

    def _call(self, member: RoomMember, params: Mapping[str, Any]) -> MemberCall:
        tools = member.tools
        if self.kind == "fans":
            return _fan_call(self.action, member, params)
        if self.kind == "covers":
            return _cover_call(self.action, member, params)
        if self.kind == "valves":
            return MemberCall(
                member=member, identity=tools.get(self.action.removeprefix("valves_")), params={}
            )
        if self.action in ("on", "off"):
            return MemberCall(member=member, identity=tools.get(self.action), params={})
        if self.action == "brightness":
            percent = float(params["percent"])
            extra = {k: params[k] for k in ("transition_seconds",) if k in params}
            if "brightness" in tools:
                return MemberCall(
                    member=member,
                    identity=tools["brightness"],
                    params={"percent": params["percent"], **extra},
                )
            switch = "off" if percent <= 0 else "on"
            return MemberCall(
                member=member,
                identity=tools.get(switch),
                params={},
                note=f"no brightness control: switched {switch}",
            )
        if self.action == "color":
            if "set_color" not in tools:
                return MemberCall(
                    member=member, identity=None, params={}, note="no colour: skipped"
                )
            return MemberCall(
                member=member,
                identity=tools["set_color"],
                params={k: v for k, v in params.items() if k in COLOR_PARAMS},
            )
        # temperature: the per-device tools take the same "celsius" / "fahrenheit" key.
        return MemberCall(member=member, identity=tools.get("set_temperature"), params=params)


def _fan_call(action: str, member: RoomMember, params: Mapping[str, Any]) -> MemberCall:
    """Return a fan's call: its own on/off where it has them, else its mode or speed."""
    tools = member.tools
    if action in ("fans_on", "fans_off"):
        word = action.removeprefix("fans_")
        if word in tools:
            return MemberCall(member=member, identity=tools[word], params={})
        if "set_fan_mode" in tools:
            # Every FanModeSequence (spec 4.4.6.2) offers off and high.
            mode = "off" if word == "off" else "high"
            note = None if word == "off" else "no on/off: set to high"
            return MemberCall(
                member=member, identity=tools["set_fan_mode"], params={"mode": mode}, note=note
            )
        percent = 0 if word == "off" else 100
        return MemberCall(
            member=member, identity=tools.get("set_fan_speed"), params={"percent": percent}
        )
    # fans_speed
    if "set_fan_speed" in tools:
        return MemberCall(
            member=member, identity=tools["set_fan_speed"], params={"percent": params["percent"]}
        )
    word = "off" if float(params["percent"]) <= 0 else "on"
    if word in tools:
        return MemberCall(
            member=member,
            identity=tools[word],
            params={},
            note=f"no speed control: switched {word}",
        )
    return MemberCall(member=member, identity=None, params={}, note="no speed control: skipped")


def _cover_call(action: str, member: RoomMember, params: Mapping[str, Any]) -> MemberCall:
    """Return a covering's call, or a skip when the call asked for another covering type."""
    tools = member.tools
    wanted = params.get("covering_type")
    if wanted is not None and member.variety != wanted:
        return MemberCall(
            member=member, identity=None, params={}, note=f"not a {wanted}: left as it is"
        )
    if action in ("covers_open", "covers_close"):
        return MemberCall(
            member=member, identity=tools.get(action.removeprefix("covers_")), params={}
        )
    percent = float(params["percent_open"])
    if "set_position" in tools:
        return MemberCall(
            member=member, identity=tools["set_position"], params={"percent_open": percent}
        )
    if percent in (0, 100):
        word = "open" if percent == 100 else "close"
        return MemberCall(
            member=member, identity=tools.get(word), params={}, note=f"no position: {word}d fully"
        )
    return MemberCall(member=member, identity=None, params={}, note="no position control: skipped")


@dataclass(frozen=True, slots=True, kw_only=True)
class RoomToolSpec:
    """Everything but the common fields of a room tool's ``ToolDefinition``."""

    name: str
    description: str
    category: Category
    parameters: dict[str, Any]
    requires: Requires
    execution: Execution
    metadata: dict[str, Any]
    plan: RoomPlan


_NO_PARAMS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _members(
    devices: Sequence[Device],
    tools: Mapping[str, Mapping[str, str]],
    varieties: Mapping[str, str] | None = None,
) -> tuple[RoomMember, ...]:
    return tuple(
        RoomMember(
            device_id=d.id,
            name=d.name,
            tools=dict(tools.get(d.id, {})),
            variety=(varieties or {}).get(d.id),
        )
        for d in devices
    )


def _listing(devices: Sequence[Device]) -> str:
    return ", ".join(d.name for d in devices)


def _also_called(room: Room) -> str:
    return f" The {room.name} is also called {', '.join(room.aliases)}." if room.aliases else ""


def room_tool_specs(
    devices: Sequence[Device],
    tools_by_device: Mapping[str, Mapping[str, str]],
    *,
    unit: str = "C",
    capability: str,
    room_aliases: Mapping[str, Sequence[str]] | None = None,
    cover_types: Mapping[str, str] | None = None,
) -> list[RoomToolSpec]:
    """Return the room tools for ``devices`` (each member's per-device tools by suffix).

    ``cover_types`` names each window covering's type (device id → ``drapery`` …).
    """
    specs: list[RoomToolSpec] = []
    for room in rooms_of(devices, room_aliases or {}):
        lights = [
            d
            for d in room.devices
            if d.kind in LIGHT_KINDS and {"on", "off"} <= set(tools_by_device.get(d.id, {}))
        ]
        thermostats = [
            d
            for d in room.devices
            if d.kind in THERMOSTAT_KINDS and "set_temperature" in tools_by_device.get(d.id, {})
        ]
        if lights:
            specs.extend(_light_specs(room, lights, tools_by_device, capability))
        if thermostats:
            specs.append(_thermostat_spec(room, thermostats, tools_by_device, unit, capability))
        fans = [
            d
            for d in room.devices
            if d.kind in FAN_KINDS
            and set(tools_by_device.get(d.id, {})) & {"set_fan_mode", "set_fan_speed", "off"}
        ]
        if fans:
            specs.extend(_fan_specs(room, fans, tools_by_device, capability))
        covers = [
            d
            for d in room.devices
            if d.kind in COVER_KINDS and {"open", "close"} <= set(tools_by_device.get(d.id, {}))
        ]
        if covers:
            specs.extend(_cover_specs(room, covers, tools_by_device, cover_types or {}, capability))
        valves = [
            d
            for d in room.devices
            if d.kind in VALVE_KINDS and {"open", "close"} <= set(tools_by_device.get(d.id, {}))
        ]
        if valves:
            specs.extend(_valve_specs(room, valves, tools_by_device, capability))
    return specs


def _common(
    room: Room,
    kind: str,
    devices: Sequence[Device],
    capability: str,
) -> dict[str, Any]:
    return {
        "requires": Requires(
            capabilities=(capability,),
            permissions=tuple(device_permission(DEVICE_CONTROL, d.id) for d in devices),
        ),
        "execution": Execution(timeout_ms=15_000, idempotent=True, async_allowed=True),
        "metadata": {
            "room": {
                "room": room.name,
                "slug": room.slug,
                "kind": kind,
                "devices": [d.id for d in devices],
            },
            "aliases": list(room.aliases),
            "tags": ["matter", "room", kind],
        },
    }


def _light_specs(
    room: Room,
    lights: Sequence[Device],
    tools_by_device: Mapping[str, Mapping[str, str]],
    capability: str,
) -> list[RoomToolSpec]:
    members = _members(lights, tools_by_device)
    common = _common(room, "lights", lights, capability)
    names = _listing(lights)
    head = f"{ROOM_PREFIX}_{room.slug}"

    def spec(action: str, description: str, parameters: dict[str, Any]) -> RoomToolSpec:
        return RoomToolSpec(
            name=fit_name(head, f"lights_{action}", NAME_LIMIT),
            description=description + _also_called(room),
            category=Category.ACTING,
            parameters=parameters,
            plan=RoomPlan(
                action=action, room=room.name, room_slug=room.slug, kind="lights", members=members
            ),
            **common,
        )

    specs = [
        spec("on", f"Turn on every light in the {room.name} at once ({names}).", dict(_NO_PARAMS)),
        spec(
            "off", f"Turn off every light in the {room.name} at once ({names}).", dict(_NO_PARAMS)
        ),
        spec(
            "brightness",
            f"Set the brightness of every light in the {room.name} at once, 0-100 % "
            f"(0 turns them off; lights without dimming switch on or off) ({names}).",
            {
                "type": "object",
                "properties": {
                    "percent": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 100,
                        "description": "Brightness in percent (0-100).",
                    },
                    "transition_seconds": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 6553.4,
                        "description": "Fade time in seconds (optional).",
                    },
                },
                "required": ["percent"],
                "additionalProperties": False,
            },
        ),
    ]
    coloured = [d for d in lights if "set_color" in tools_by_device.get(d.id, {})]
    if coloured:
        specs.append(
            spec(
                "color",
                f"Set the colour of every colour light in the {room.name} at once "
                f"({_listing(coloured)}): a CSS colour name or hex like '#ff8800'.",
                {
                    "type": "object",
                    "properties": {
                        "color": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 40,
                            "description": "A CSS colour name or a hex colour '#rrggbb'.",
                        },
                    },
                    "required": ["color"],
                    "additionalProperties": False,
                },
            )
        )
    return specs


def _thermostat_spec(
    room: Room,
    thermostats: Sequence[Device],
    tools_by_device: Mapping[str, Mapping[str, str]],
    unit: str,
    capability: str,
) -> RoomToolSpec:
    param = "fahrenheit" if unit.upper() == "F" else "celsius"
    symbol = "°F" if unit.upper() == "F" else "°C"
    return RoomToolSpec(
        name=fit_name(f"{ROOM_PREFIX}_{room.slug}", "temperature", NAME_LIMIT),
        description=(
            f"Set the target temperature ({symbol}) of every thermostat in the {room.name} at "
            f"once ({_listing(thermostats)}); each one clamps it to its own limits."
            + _also_called(room)
        ),
        category=Category.ACTING,
        parameters={
            "type": "object",
            "properties": {param: {"type": "number", "description": f"Target in {symbol}."}},
            "required": [param],
            "additionalProperties": False,
        },
        plan=RoomPlan(
            action="temperature",
            room=room.name,
            room_slug=room.slug,
            kind="thermostats",
            members=_members(thermostats, tools_by_device),
        ),
        **_common(room, "thermostats", thermostats, capability),
    )


def _kind_spec(
    room: Room,
    kind: str,
    members: tuple[RoomMember, ...],
    common: dict[str, Any],
    action: str,
    description: str,
    parameters: dict[str, Any],
) -> RoomToolSpec:
    return RoomToolSpec(
        name=fit_name(f"{ROOM_PREFIX}_{room.slug}", action, NAME_LIMIT),
        description=description + _also_called(room),
        category=Category.ACTING,
        parameters=parameters,
        plan=RoomPlan(
            action=action, room=room.name, room_slug=room.slug, kind=kind, members=members
        ),
        **common,
    )


def _fan_specs(
    room: Room,
    fans: Sequence[Device],
    tools_by_device: Mapping[str, Mapping[str, str]],
    capability: str,
) -> list[RoomToolSpec]:
    members = _members(fans, tools_by_device)
    common = _common(room, "fans", fans, capability)
    names = _listing(fans)
    return [
        _kind_spec(
            room,
            "fans",
            members,
            common,
            "fans_on",
            f"Turn on every fan in the {room.name} at once ({names}); a fan without "
            "on/off is set to high.",
            dict(_NO_PARAMS),
        ),
        _kind_spec(
            room,
            "fans",
            members,
            common,
            "fans_off",
            f"Turn off every fan in the {room.name} at once ({names}).",
            dict(_NO_PARAMS),
        ),
        _kind_spec(
            room,
            "fans",
            members,
            common,
            "fans_speed",
            f"Set the speed of every fan in the {room.name} at once, 0-100 % (0 stops "
            f"them) ({names}).",
            {
                "type": "object",
                "properties": {
                    "percent": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 100,
                        "description": "Fan speed in percent (0-100).",
                    },
                },
                "required": ["percent"],
                "additionalProperties": False,
            },
        ),
    ]


def _cover_specs(
    room: Room,
    covers: Sequence[Device],
    tools_by_device: Mapping[str, Mapping[str, str]],
    cover_types: Mapping[str, str],
    capability: str,
) -> list[RoomToolSpec]:
    members = _members(covers, tools_by_device, cover_types)
    common = _common(room, "covers", covers, capability)
    names = _listing(covers)
    types = sorted({m.variety for m in members if m.variety})
    choose: dict[str, Any] = {}
    if types:
        choose = {
            "covering_type": {
                "type": "string",
                "enum": types,
                "description": "Only the coverings of this type (default: all of them).",
            }
        }

    def params(extra: dict[str, Any], required: list[str]) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {**extra, **choose},
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        return schema

    choice = f"; covering_type chooses one kind ({', '.join(types)})" if types else ""
    return [
        _kind_spec(
            room,
            "covers",
            members,
            common,
            "covers_open",
            f"Open every blind, curtain and shade in the {room.name} at once ({names}){choice}.",
            params({}, []),
        ),
        _kind_spec(
            room,
            "covers",
            members,
            common,
            "covers_close",
            f"Close every blind, curtain and shade in the {room.name} at once ({names}){choice}.",
            params({}, []),
        ),
        _kind_spec(
            room,
            "covers",
            members,
            common,
            "covers_position",
            f"Move every blind, curtain and shade in the {room.name} to a position, "
            f"0 % (closed) - 100 % (open), at once ({names}){choice}.",
            params(
                {
                    "percent_open": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": 100,
                        "description": "How far open, in percent.",
                    }
                },
                ["percent_open"],
            ),
        ),
    ]


def _valve_specs(
    room: Room,
    valves: Sequence[Device],
    tools_by_device: Mapping[str, Mapping[str, str]],
    capability: str,
) -> list[RoomToolSpec]:
    members = _members(valves, tools_by_device)
    common = _common(room, "valves", valves, capability)
    names = _listing(valves)
    return [
        _kind_spec(
            room,
            "valves",
            members,
            common,
            "valves_open",
            f"Open every water valve in the {room.name} at once ({names}).",
            dict(_NO_PARAMS),
        ),
        _kind_spec(
            room,
            "valves",
            members,
            common,
            "valves_close",
            f"Close every water valve in the {room.name} at once ({names}), e.g. when "
            "a leak is found.",
            dict(_NO_PARAMS),
        ),
    ]
