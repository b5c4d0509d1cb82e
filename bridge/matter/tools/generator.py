"""MatterToolGenerator: devices x cluster-map rows → friendly, typed ``ToolDefinition``s.

For every device, each map row whose requirements the device meets yields one tool
``<slug>_<suffix>`` (the first matching row claims a suffix, so specific rows come first).
Each device with readable state gets ``<slug>_state``; sensors are also readable through
``core:query_sensor``; ``matter:control_matter_device`` sends any other command that
exists in the cluster catalogue, its payload checked against the SDK's declarations.
A ``GeneratedTool`` keeps what it needs to turn a call's parameters into the exact
``MatterAction``s (``plan``) or to turn read values back into human units (``state_from``).

One module because device, shared and room tools are one assembly (``generate``) that
the bridge and ``atmosphere-bridge generate`` share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bridge.errors import InvalidParamsError, NotFoundError
from bridge.matter.home.devices import Device
from bridge.matter.home.rooms import RoomPlan, room_tool_specs
from bridge.matter.spec.catalogue import ClusterInfo
from bridge.matter.spec.commands import build_command
from bridge.matter.spec.device_library import controlled_clusters, offers
from bridge.matter.spec.models import SECRET_FIELDS, ActionKind, MatterAction, gc_paused
from bridge.matter.tools.actions import Converter, RowContext
from bridge.matter.tools.cluster_maps import ClusterMap, MapRow, Requirement, StateField
from bridge.matter.tools.generic_read import (
    ACCESS,
    CONTROL,
    DEVICE_ACCESS,
    NAME_PATTERN,
    READ,
    name_or_id_schema,
    read_action,
    read_result,
    resolve_cluster,
)
from bridge.matter.tools.kind_actions import CONVERTERS, STATE_CONVERTERS
from bridge.tools.definition import (
    Audit,
    Category,
    Confirmation,
    Execution,
    Requires,
    Routing,
    ToolDefinition,
    ToolIntent,
)
from bridge.tools.device_permissions import DEVICE_CONTROL, DEVICE_READ, device_permission
from bridge.tools.naming import CLIENT_NAME_MAX, fit_name

NAMESPACE = "matter"
CAPABILITY = "matter_bridge"
GENERIC_TOOL = "control_matter_device"
SENSOR_TOOL = "query_sensor"
TOOL_VERSION = "1.0.0"
DEVICE_ID_PATTERN = "^[0-9]+-[0-9]+$"
WINDOW_COVERING, WINDOW_COVERING_TYPE = 0x0102, 0x0000  # the cluster and its Type attribute
# Tool names stay within what clients accept once MCP prefixes ``matter__``.
NAME_LIMIT = CLIENT_NAME_MAX - len(NAMESPACE) - 2
# The state field that says a device is changing (a level or colour transition, a cover
# travelling); ``motion`` fields appear only while it is true.
MOVING = "moving"


def tool_name(slug: str, suffix: str) -> str:
    """Return the name of a device's tool: ``<slug>_<suffix>``, fitted to ``NAME_LIMIT``."""
    return fit_name(slug, suffix, NAME_LIMIT)


class ToolKind(StrEnum):
    """What a generated tool does when called."""

    ACTION = "action"
    STATE = "state"
    SENSOR = "sensor"
    GENERIC = "generic"
    ROOM = "room"


@dataclass(frozen=True, slots=True, kw_only=True)
class StatePart:
    """One state field of one device, with the cluster it is read from."""

    field: StateField
    cluster: ClusterInfo


@dataclass(frozen=True, slots=True, kw_only=True)
class GeneratedTool:
    """A tool definition plus what turns its calls into Matter requests."""

    definition: ToolDefinition
    kind: ToolKind
    device_id: str | None = None
    context: RowContext | None = None
    converter: Converter | None = None
    state: tuple[StatePart, ...] = ()
    devices: Mapping[str, Device] = field(default_factory=dict)
    sensors: Mapping[str, Mapping[str, StatePart]] = field(default_factory=dict)
    guarded: Mapping[tuple[str, str], str] = field(default_factory=dict)
    room: RoomPlan | None = None

    def plan(self, params: Mapping[str, Any]) -> list[MatterAction]:
        """Return the exact actions a call with validated ``params`` sends.

        Raises ``InvalidParamsError`` for values a converter or the SDK rejects and
        ``NotFoundError`` for an unknown device.
        """
        if self.kind is ToolKind.ACTION:
            assert self.context is not None  # noqa: S101
            assert self.converter is not None  # noqa: S101
            return self.converter.actions(self.context, params)
        if self.kind is ToolKind.STATE:
            return read_actions(self._device(self.device_id), self.state)
        if self.kind is ToolKind.SENSOR:
            device = self._device(str(params["device_id"]))
            part = self._sensor_part(device.id, str(params["sensor"]))
            return read_actions(device, (part,))
        if params.get("access") == READ:
            return [read_action(self._device(str(params["device_id"])), params)]
        return [self._generic_action(params)]

    def read_result(self, action: MatterAction, result: Any) -> dict[str, Any]:
        """Return the answer of the generic tool's read (``access: "read"``)."""
        return read_result(self._device(f"{action.node_id}-{action.endpoint_id}"), action, result)

    def state_from(
        self, values: Mapping[str, Any], unit: str = "C", params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Return the human-unit state from attribute values keyed by path."""
        if self.kind is ToolKind.SENSOR:
            assert params is not None  # noqa: S101 - sensor calls always have params
            device = self._device(str(params["device_id"]))
            part = self._sensor_part(device.id, str(params["sensor"]))
            return {
                "device_id": device.id,
                "name": device.name,
                "sensor": params["sensor"],
                "value": convert_state(device, part, values, unit),
            }
        return device_state(self._device(self.device_id), self.state, values, unit)

    def _device(self, device_id: str | None) -> Device:
        device = self.devices.get(device_id or "")
        if device is None:
            raise NotFoundError(f"no Matter device '{device_id}'", {"device_id": device_id})
        return device

    def _sensor_part(self, device_id: str, sensor: str) -> StatePart:
        part = self.sensors.get(device_id, {}).get(sensor)
        if part is None:
            known = sorted(self.sensors.get(device_id, {}))
            raise InvalidParamsError(
                f"device {device_id} has no {sensor} sensor (it has: {', '.join(known) or 'none'})",
                {"device_id": device_id, "sensor": sensor, "known": known},
            )
        return part

    def _generic_action(self, params: Mapping[str, Any]) -> MatterAction:
        device = self._device(str(params["device_id"]))
        if "attribute" in params:
            raise InvalidParamsError(
                "a command takes no 'attribute' (access 'read' reads one)", {"field": "attribute"}
            )
        if "command" not in params:
            raise InvalidParamsError("a command needs 'command' (its name)", {"field": "command"})
        cluster_id, known = resolve_cluster(device, params["cluster"])
        if known is None:
            raise InvalidParamsError(
                f"cluster 0x{cluster_id:04X} is not in the catalogue: its commands cannot be "
                "checked, only its attributes read (access 'read')",
                {"cluster": cluster_id},
            )
        info = known
        command = str(params["command"])
        payload = params.get("payload") or {}
        if not isinstance(payload, Mapping):
            raise InvalidParamsError("payload must be an object", {"field": "payload"})
        suffix = self.guarded.get((info.name, command))
        if suffix is not None:
            # A dangerous command must go through its own tool (and its confirmation).
            raise InvalidParamsError(
                f"{info.name}.{command} needs a person's confirmation: use the tool "
                f"'{tool_name(device.slug, suffix)}' instead",
                {"device_id": device.id, "cluster": info.name, "command": command},
            )
        secret = sorted(k for k in payload if str(k).lower() in SECRET_FIELDS)
        if secret:
            raise InvalidParamsError(
                f"{', '.join(secret)} cannot be sent through {GENERIC_TOOL} (it would be "
                "logged); use the device's own tool",
                {"device_id": device.id, "cluster": info.name, "command": command},
            )
        wire = build_command(info.name, command, payload)  # InvalidParamsError on any mismatch
        accepted = device.accepted_commands(info.id)
        if accepted is not None and info.commands[command].id not in accepted:
            raise InvalidParamsError(
                f"{device.name} does not accept {info.name}.{command}",
                {"device_id": device.id, "cluster": info.name, "command": command},
            )
        return MatterAction(
            kind=ActionKind.COMMAND,
            node_id=device.node_id,
            endpoint_id=device.endpoint_id,
            cluster=info.name,
            cluster_id=info.id,
            name=command,
            payload=dict(payload),
            timed=info.commands[command].timed,
            wire=wire,
        )


def capability_of(tool: GeneratedTool) -> str | None:
    """Return what ``tool`` does for its device or room: map row, ``state`` or room action."""
    if tool.kind is ToolKind.ACTION and tool.context is not None:
        return tool.context.row.suffix
    if tool.kind is ToolKind.STATE:
        return "state"
    if tool.kind is ToolKind.ROOM and tool.room is not None:
        return tool.room.action
    return None


def find_tool(
    tools: Iterable[GeneratedTool],
    capability: str,
    *,
    device_id: str | None = None,
    room: str | None = None,
) -> GeneratedTool | None:
    """Return the tool doing ``capability`` for a device (by id) or a room (by slug), if any."""
    for tool in tools:
        if capability_of(tool) != capability:
            continue
        if device_id is not None and tool.kind is not ToolKind.ROOM and tool.device_id == device_id:
            return tool
        if room is not None and tool.room is not None and tool.room.room_slug == room:
            return tool
    return None


def covering_type(device: Device) -> Any:
    """Return a window covering's Type in words (``drapery`` …), ``None`` for any other device."""
    raw = device.clusters.get(WINDOW_COVERING, {}).get(WINDOW_COVERING_TYPE)
    return None if raw is None else STATE_CONVERTERS["covering_type"]([raw], "C")


def read_actions(device: Device, parts: Sequence[StatePart]) -> list[MatterAction]:
    """Return one read per cluster covering every attribute the parts need."""
    by_cluster: dict[int, tuple[ClusterInfo, list[int], list[str]]] = {}
    for part in parts:
        _info, ids, names = by_cluster.setdefault(part.cluster.id, (part.cluster, [], []))
        for attr_id, name in zip(part.field.attribute_ids, part.field.attributes, strict=True):
            if attr_id not in ids:
                ids.append(attr_id)
                names.append(name)
    return [
        MatterAction(
            kind=ActionKind.READ,
            node_id=device.node_id,
            endpoint_id=device.endpoint_id,
            cluster=info.name,
            cluster_id=info.id,
            name=",".join(names),
            attribute_ids=tuple(ids),
        )
        for info, ids, names in by_cluster.values()
    ]


def convert_state(device: Device, part: StatePart, values: Mapping[str, Any], unit: str) -> Any:
    """Return one state field in human units from attribute values keyed by path."""
    raw: list[Any] = []
    for attr_id in part.field.attribute_ids:
        value = values.get(f"{device.endpoint_id}/{part.cluster.id}/{attr_id}")
        raw.append(None if isinstance(value, dict) and "TLVValue" in value else value)
    return STATE_CONVERTERS[part.field.convert](raw, unit)


def device_state(
    device: Device, parts: Sequence[StatePart], values: Mapping[str, Any], unit: str
) -> dict[str, Any]:
    """Return a device's state fields in human units from attribute values keyed by path.

    ``moving`` is true when any cluster says a change is under way (a level or colour
    transition, a cover travelling); it and the other ``motion`` fields (a cover's
    target) appear only then, so a device at rest answers its plain state.
    """
    state: dict[str, Any] = {}
    motion: list[str] = []
    for part in parts:
        value = convert_state(device, part, values, unit)
        name = part.field.field
        if part.field.motion:
            motion.append(name)
            value = state.get(name) or value
        state[name] = value
    if motion and state.get(MOVING) is not True:
        for name in motion:
            state.pop(name, None)
    return state


def state_paths(device: Device, parts: Sequence[StatePart]) -> list[str]:
    """Return the attribute paths the device's state is made of (those it has), once each."""
    paths = {
        f"{device.endpoint_id}/{p.cluster.id}/{a}": None
        for p in parts
        for a in p.field.attribute_ids
        if device.has_attr(p.cluster.id, a)
    }
    return list(paths)


def cached_values(device: Device) -> dict[str, Any]:
    """Return the device's known attribute values keyed by path."""
    return {
        f"{device.endpoint_id}/{cid}/{aid}": value
        for cid, attrs in device.clusters.items()
        for aid, value in attrs.items()
    }


def matches(device: Device, cluster_id: int, req: Requirement, command_id: int | None) -> bool:
    """Return whether ``device`` meets ``req`` on the cluster (cheap checks first)."""
    if req.device_types and not set(req.device_types) & set(device.device_types):
        return False
    if req.absent_device_types and set(req.absent_device_types) & set(device.device_types):
        return False
    if not device.has_cluster(cluster_id):
        return False
    features = device.features(cluster_id)
    if features & req.features != req.features:
        return False
    if req.any_features and not features & req.any_features:
        return False
    if features & req.absent_features:
        return False
    accepted = device.accepted_commands(cluster_id)
    if accepted is not None:
        needed = set(req.accepted_commands) | ({command_id} if command_id is not None else set())
        if not needed <= accepted:
            return False
    return all(device.has_attr(cluster_id, a) for a in req.attributes)


class _SafeFormat(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class MatterToolGenerator:
    """Turn devices into tools with the loaded cluster maps."""

    def __init__(
        self,
        maps: Iterable[ClusterMap],
        *,
        node_id: str = "",
        unit: str = "C",
        server_name: str = "",
    ) -> None:
        self.maps = tuple(maps)
        # Map order decides which row claims a suffix first; a device is matched only
        # against the maps of clusters it serves (a few of the ~50), in that order.
        self._map_index = {cmap.cluster.id: i for i, cmap in enumerate(self.maps)}
        self.node_id = node_id
        self.unit = unit.upper()
        self.server_name = server_name
        self._sensor_kinds = tuple(
            sorted({sf.sensor for cmap in self.maps for sf in cmap.state if sf.sensor})
        )
        # Each device's state parts, computed once per device object: device_tools and
        # shared_tools both need them. Devices are immutable snapshots (a change builds
        # a new object), so the object's identity is the key's proof of freshness.
        self._parts: dict[str, tuple[Device, tuple[StatePart, ...]]] = {}
        # Every tool of this node routes the same way: one frozen value shared by all.
        self._routing = Routing(
            prefer_local=True, node_affinity=(node_id,) if node_id else (), hop_limit=1
        )

    # -- per device -----------------------------------------------------------------

    def device_tools(self, device: Device) -> list[GeneratedTool]:
        """Return the action tools and the state tool of one device."""
        tools: list[GeneratedTool] = []
        claimed: set[str] = set()
        controlled = controlled_clusters(device.device_types)
        for cmap in self._maps_of(device):
            if not offers(cmap.cluster.id, bool(cmap.rows), controlled):
                continue
            for row in cmap.rows:
                name = tool_name(device.slug, row.suffix)
                if name in claimed:
                    continue
                if not matches(device, cmap.cluster.id, row.requires, row.command_id):
                    continue
                ctx = RowContext(device=device, row=row, cluster=cmap.cluster, unit=self.unit)
                converter = CONVERTERS[row.convert]
                if not converter.applies(ctx):
                    continue
                claimed.add(name)
                tools.append(self._action_tool(device, row, ctx, converter, name))
        parts = self.state_parts(device)
        if parts:
            tools.append(self._state_tool(device, parts))
        return tools

    def _maps_of(self, device: Device) -> list[ClusterMap]:
        """Return the maps of the clusters the device serves with data, in map order."""
        index = self._map_index
        found = sorted(index[c] for c in device.clusters if c in index and device.has_cluster(c))
        return [self.maps[i] for i in found]

    def state_parts(self, device: Device) -> tuple[StatePart, ...]:
        """Return the state fields the device can report (first claim of a field wins)."""
        known = self._parts.get(device.id)
        if known is not None and known[0] is device:
            return known[1]
        found = self._state_parts(device)
        self._parts[device.id] = (device, found)
        return found

    def _state_parts(self, device: Device) -> tuple[StatePart, ...]:
        parts: list[StatePart] = []
        seen: set[str] = set()
        controlled = controlled_clusters(device.device_types)
        for cmap in self._maps_of(device):
            if not offers(cmap.cluster.id, bool(cmap.rows), controlled):
                continue
            for sf in cmap.state:
                if sf.field in seen and not sf.motion:
                    continue
                if not matches(device, cmap.cluster.id, sf.requires, None):
                    continue
                if not all(device.has_attr(cmap.cluster.id, a) for a in sf.attribute_ids[:1]):
                    continue
                seen.add(sf.field)
                parts.append(StatePart(field=sf, cluster=cmap.cluster))
        return tuple(parts)

    def _common(self, device: Device, permission: str) -> dict[str, Any]:
        return {
            "namespace": NAMESPACE,
            "version": TOOL_VERSION,
            "requires": Requires(capabilities=(CAPABILITY,), permissions=(permission,)),
            "routing": self._routing,
            "server_name": self.server_name,
        }

    def _device_meta(self, device: Device) -> dict[str, Any]:
        return {
            "id": device.id,
            "name": device.name,
            "slug": device.slug,
            "room": device.room,
            "kind": device.kind,
        }

    def _action_tool(
        self, device: Device, row: MapRow, ctx: RowContext, converter: Converter, name: str
    ) -> GeneratedTool:
        facts = _SafeFormat(name=device.name, where=device.where, **converter.facts(ctx))
        targets = converter.targets(ctx)
        key = "command" if row.command is not None else "attribute"
        matter: dict[str, Any] = {
            "node_id": device.node_id,
            "endpoint_id": device.endpoint_id,
            "cluster": ctx.cluster.name,
            key: targets[0] if len(targets) == 1 else targets,
        }
        confirmation = None
        if row.dangerous:
            confirmation = Confirmation(
                mode="always", message=(row.confirmation or "").format_map(facts)
            )
        definition = ToolDefinition(
            name=name,
            description=row.description.format_map(facts),
            category=Category(row.category),
            parameters=converter.parameters(ctx, dict(row.parameters)),
            execution=Execution(timeout_ms=10_000, idempotent=row.idempotent, async_allowed=True),
            metadata={
                "matter": matter,
                "device": self._device_meta(device),
                # The names people use for it: found by tool search, heard by spoken
                # commands; an alias change is a definition change every follower sees.
                "aliases": list(device.aliases),
                "tags": ["matter", device.kind, ctx.cluster.name, *row.tags],
            },
            dangerous=row.dangerous,
            confirmation=confirmation,
            intent=ToolIntent.ACTION,
            # Secret parameters (a lock's PIN) keep every parameter out of the audit log.
            audit=Audit(
                log_params=not row.secret_params,
                notify_admins=row.dangerous,
                extra={"secret_params": list(row.secret_params)} if row.secret_params else {},
            ),
            **self._common(device, device_permission(DEVICE_CONTROL, device.id)),
        )
        return GeneratedTool(
            definition=definition,
            kind=ToolKind.ACTION,
            device_id=device.id,
            context=ctx,
            converter=converter,
            devices={device.id: device},
        )

    def _state_tool(self, device: Device, parts: tuple[StatePart, ...]) -> GeneratedTool:
        fields = ", ".join(
            dict.fromkeys(p.field.description or p.field.field.replace("_", " ") for p in parts)
        )
        clusters = list(dict.fromkeys(p.cluster.name for p in parts))
        attributes = list(dict.fromkeys(a for p in parts for a in p.field.attributes))
        definition = ToolDefinition(
            name=tool_name(device.slug, "state"),
            description=f"Read the current state of {device.name}{device.where}: {fields}.",
            category=Category.SENSING,
            parameters={"type": "object", "properties": {}, "additionalProperties": False},
            returns={
                "type": "object",
                "properties": {
                    p.field.field: {"description": p.field.description or p.field.field}
                    for p in parts
                },
            },
            execution=Execution(timeout_ms=10_000, idempotent=True, async_allowed=True),
            metadata={
                "matter": {
                    "node_id": device.node_id,
                    "endpoint_id": device.endpoint_id,
                    "cluster": clusters[0] if len(clusters) == 1 else clusters,
                    "attribute": attributes,
                },
                "device": self._device_meta(device),
                # The names people use for it: found by tool search, heard by spoken
                # commands; an alias change is a definition change every follower sees.
                "aliases": list(device.aliases),
                "tags": ["matter", device.kind, "state"]
                + (["sensor"] if any(p.field.sensor for p in parts) else []),
            },
            **self._common(device, device_permission(DEVICE_READ, device.id)),
        )
        return GeneratedTool(
            definition=definition,
            kind=ToolKind.STATE,
            device_id=device.id,
            state=parts,
            devices={device.id: device},
        )

    # -- shared tools ---------------------------------------------------------------

    def shared_tools(self, devices: Sequence[Device]) -> list[GeneratedTool]:
        """Return ``core:query_sensor`` (when there are sensors) and the generic tool."""
        by_id = {d.id: d for d in devices}
        tools: list[GeneratedTool] = []
        sensors: dict[str, dict[str, StatePart]] = {}
        for device in devices:
            for part in self.state_parts(device):
                if part.field.sensor:
                    sensors.setdefault(device.id, {}).setdefault(part.field.sensor, part)
        # Every device passed through here: forget devices that are gone.
        for gone in self._parts.keys() - by_id.keys():
            del self._parts[gone]
        if sensors:
            tools.append(
                GeneratedTool(
                    definition=ToolDefinition(
                        name=SENSOR_TOOL,
                        namespace="core",
                        version=TOOL_VERSION,
                        # Names no device and no reading of this home: every token that
                        # may read some device lists the same text (a token learns
                        # nothing of the devices it may not see).
                        description=(
                            "Read one sensor of a Matter device by its device id "
                            "('<node>-<endpoint>'). Each sensor device's state tool (tag "
                            "'sensor': GET /v1/tools?tag=sensor) names the device, its id "
                            "(metadata.device.id) and its readings."
                        ),
                        category=Category.SENSING,
                        parameters={
                            "type": "object",
                            "properties": {
                                # A pattern, never the list of ids: an unknown id was
                                # answered with every sensor's id.
                                "device_id": {
                                    "type": "string",
                                    "pattern": DEVICE_ID_PATTERN,
                                    "description": "The device to read ('<node>-<endpoint>').",
                                },
                                # Every reading the maps know, not those of this home.
                                "sensor": {
                                    "type": "string",
                                    "enum": list(self._sensor_kinds),
                                    "description": "Which reading.",
                                },
                            },
                            "required": ["device_id", "sensor"],
                            "additionalProperties": False,
                        },
                        requires=Requires(capabilities=(CAPABILITY,), permissions=(DEVICE_READ,)),
                        execution=Execution(timeout_ms=10_000, idempotent=True, async_allowed=True),
                        routing=Routing(
                            prefer_local=True,
                            node_affinity=(self.node_id,) if self.node_id else (),
                            hop_limit=1,
                        ),
                        metadata={"tags": ["matter", "sensor"]},
                        server_name=self.server_name,
                    ),
                    kind=ToolKind.SENSOR,
                    devices=by_id,
                    sensors=sensors,
                )
            )
        if devices:
            tools.append(self._generic_tool(by_id))
        return tools

    def _generic_tool(self, by_id: Mapping[str, Device]) -> GeneratedTool:
        definition = ToolDefinition(
            name=GENERIC_TOOL,
            description=(
                "Send any Matter cluster command the other tools do not cover, e.g. "
                "cluster 'Identify', command 'Identify', payload {'identifyTime': 5}; "
                "or, with access 'read', read one attribute of any cluster a device "
                "serves, e.g. cluster 'Switch', attribute 'CurrentPosition' (a vendor's "
                "cluster by its ids). "
                "Names and payload fields are those of the Matter specification. "
                "A device's id ('<node>-<endpoint>') is in each of its tools "
                "(metadata.device.id; GET /v1/tools?tag=matter)."
            ),
            category=Category.ACTING,
            parameters={
                "type": "object",
                "properties": {
                    # A pattern, never the list of ids: a device the token may not use and
                    # one that does not exist must get the same answer.
                    "device_id": {
                        "type": "string",
                        "pattern": DEVICE_ID_PATTERN,
                        "description": "The device to command or read ('<node>-<endpoint>').",
                    },
                    "access": {
                        "type": "string",
                        "enum": list(ACCESS),
                        "default": CONTROL,
                        "description": "'control' sends a command (needs "
                        "device:control), 'read' reads an attribute "
                        "(needs device:read).",
                    },
                    "cluster": name_or_id_schema("The cluster: its name, or its id."),
                    "command": {"type": "string", "pattern": NAME_PATTERN, "maxLength": 64},
                    "attribute": name_or_id_schema("For a read: the attribute's name or id."),
                    "payload": {"type": "object"},
                },
                "required": ["device_id", "cluster"],
                "additionalProperties": False,
            },
            execution=Execution(timeout_ms=10_000, idempotent=False, async_allowed=True),
            metadata={"matter": {"cluster": "*", "command": "*"}, "tags": ["matter", "generic"]},
            intent=ToolIntent.ACTION,
            **self._common_generic(),
        )
        guarded = {
            (cmap.cluster.name, row.command): row.suffix
            for cmap in self.maps
            for row in cmap.rows
            if row.dangerous and row.command is not None
        }
        return GeneratedTool(
            definition=definition, kind=ToolKind.GENERIC, devices=by_id, guarded=guarded
        )

    def _common_generic(self) -> dict[str, Any]:
        return {
            "namespace": NAMESPACE,
            "version": TOOL_VERSION,
            # device:control:<id> to command, device:read:<id> to read.
            "requires": Requires(capabilities=(CAPABILITY,), permissions=(DEVICE_ACCESS,)),
            "routing": Routing(
                prefer_local=True,
                node_affinity=(self.node_id,) if self.node_id else (),
                hop_limit=1,
            ),
            "server_name": self.server_name,
        }

    # -- room tools -------------------------------------------------------------------

    def room_tools(
        self,
        devices: Sequence[Device],
        device_tools: Iterable[GeneratedTool],
        room_aliases: Mapping[str, Sequence[str]] | None = None,
    ) -> list[GeneratedTool]:
        """Return the room tools of ``devices`` built on their per-device action tools."""
        by_device: dict[str, dict[str, str]] = {}
        for tool in device_tools:
            if tool.kind is ToolKind.ACTION and tool.device_id and tool.context is not None:
                by_device.setdefault(tool.device_id, {})[tool.context.row.suffix] = (
                    tool.definition.identity
                )
        out: list[GeneratedTool] = []
        cover_types = {
            d.id: str(kind)
            for d in devices
            if (kind := covering_type(d)) is not None and kind != "unknown"
        }
        for spec in room_tool_specs(
            devices,
            by_device,
            unit=self.unit,
            capability=CAPABILITY,
            room_aliases=room_aliases,
            cover_types=cover_types,
        ):
            definition = ToolDefinition(
                name=spec.name,
                namespace=NAMESPACE,
                version=TOOL_VERSION,
                description=spec.description,
                category=spec.category,
                parameters=spec.parameters,
                requires=spec.requires,
                execution=spec.execution,
                routing=Routing(
                    prefer_local=True,
                    node_affinity=(self.node_id,) if self.node_id else (),
                    hop_limit=1,
                ),
                metadata=spec.metadata,
                server_name=self.server_name,
                intent=ToolIntent.ACTION,
            )
            members = {m.device_id for m in spec.plan.members}
            out.append(
                GeneratedTool(
                    definition=definition,
                    kind=ToolKind.ROOM,
                    devices={d.id: d for d in devices if d.id in members},
                    room=spec.plan,
                )
            )
        return out

    def generate(
        self,
        devices: Sequence[Device],
        room_aliases: Mapping[str, Sequence[str]] | None = None,
        *,
        only_node: int | None = None,
        kept: Iterable[GeneratedTool] = (),
    ) -> list[GeneratedTool]:
        """Return the device tools, then the shared tools, then the room tools.

        The one assembly both ``generate`` and the running bridge use. With ``only_node``
        only that node's devices get their tools rebuilt; the room tools are then built on
        them plus ``kept`` (the other devices' current tools, unless rebuilt here).
        """
        with gc_paused():
            return self._generate(devices, room_aliases, only_node, kept)

    def _generate(
        self,
        devices: Sequence[Device],
        room_aliases: Mapping[str, Sequence[str]] | None,
        only_node: int | None,
        kept: Iterable[GeneratedTool],
    ) -> list[GeneratedTool]:
        tools: list[GeneratedTool] = []
        for device in devices:
            if only_node is None or device.node_id == only_node:
                tools.extend(self.device_tools(device))
        return self._assemble(devices, tools, room_aliases, kept)

    def assemble(
        self,
        devices: Sequence[Device],
        device_tools: Sequence[GeneratedTool],
        room_aliases: Mapping[str, Sequence[str]] | None = None,
    ) -> list[GeneratedTool]:
        """Return ``generate(devices)`` from every device's ``device_tools``, built earlier.

        For a re-sync that builds the device tools a slice at a time: this adds the
        shared and room tools, which span every device, in one go.
        """
        with gc_paused():
            return self._assemble(devices, list(device_tools), room_aliases, ())

    def _assemble(
        self,
        devices: Sequence[Device],
        tools: list[GeneratedTool],
        room_aliases: Mapping[str, Sequence[str]] | None,
        kept: Iterable[GeneratedTool],
    ) -> list[GeneratedTool]:
        tools.extend(self.shared_tools(devices))
        built = {t.definition.identity for t in tools}
        on = [*tools, *(t for t in kept if t.definition.identity not in built)]
        tools.extend(self.room_tools(devices, on, room_aliases))
        return tools
