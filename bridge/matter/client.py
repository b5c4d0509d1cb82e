"""The Matter client adapter: the only module that imports ``matter_server`` and ``chip``.

It owns three things. The cluster catalogue (``cluster_info``) answers questions about
``chip.clusters`` (ids, attribute and command names, feature bits) for the cluster maps
and the generator. ``build_command`` turns a ``(cluster, command, payload)`` triple into
the SDK's own command object, checking every field against the SDK's descriptors.
``MatterAdapter`` connects to a controller's WebSocket API, keeps a plain copy of every
node's attributes, reports node and attribute events, reconnects with backoff and
executes ``MatterAction``s (commands, attribute writes, reads), remembering the last ones
it sent so tests and diagnostics can see exactly what went to the controller.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import logging
import types
import typing
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache, lru_cache
from typing import Any

import aiohttp
from chip.clusters import ClusterObjects
from chip.clusters import Objects as Clusters
from chip.clusters.Types import Nullable, NullValue
from matter_server.client import MatterClient
from matter_server.client.exceptions import (
    InvalidServerVersion,
    MatterClientException,
    TransportError,
)
from matter_server.client.models.device_types import ALL_TYPES as DEVICE_TYPES
from matter_server.common import errors as server_errors
from matter_server.common.models import EventType

from bridge.errors import (
    BridgeError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    InvalidParamsError,
    ToolFailedError,
)
from bridge.matter.gateway import ControllerCommandError

LOGGER = logging.getLogger(__name__)

# How long a timed invoke (DoorLock unlock) may stay open on the device.
TIMED_REQUEST_TIMEOUT_MS = 10_000
SENT_HISTORY = 256
# Payload fields that are secrets (compared in lower case): shown as REDACTED in results,
# errors and diagnostics.
SECRET_FIELDS = frozenset({"pincode"})
REDACTED = "<redacted>"


# --- cluster catalogue -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldInfo:
    """One field of a command payload as the SDK declares it."""

    name: str
    type: Any
    optional: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandInfo:
    """A client→server command of a cluster."""

    name: str
    id: int
    fields: tuple[FieldInfo, ...]
    timed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterInfo:
    """Names and ids of one cluster from ``chip.clusters``."""

    id: int
    name: str
    attributes: Mapping[str, int]
    attribute_names: Mapping[int, str]
    commands: Mapping[str, CommandInfo]
    command_names: Mapping[int, str]
    features: Mapping[str, int]


def _public(namespace: Any) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in vars(namespace).items() if not k.startswith("_")]


def _field_optional(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in (
        typing.get_args(hint)
    )


def _make_cluster_info(cls: Any) -> ClusterInfo:
    attributes: dict[str, int] = {}
    for name, attr in _public(getattr(cls, "Attributes", object)):
        attr_id = getattr(attr, "attribute_id", None)
        if isinstance(attr_id, int):
            attributes[name] = attr_id
    commands: dict[str, CommandInfo] = {}
    for name, cmd in _public(getattr(cls, "Commands", object)):
        if not isinstance(cmd, type) or not getattr(cmd, "is_client", False):
            continue
        cmd_any: Any = cmd
        hints = typing.get_type_hints(cmd)
        fields = tuple(
            FieldInfo(
                name=f.Label,
                type=hints.get(f.Label, f.Type),
                optional=_field_optional(hints.get(f.Label, f.Type)),
            )
            for f in cmd_any.descriptor.Fields
        )
        commands[name] = CommandInfo(
            name=name,
            id=int(cmd_any.command_id),
            fields=fields,
            timed=bool(getattr(cmd, "must_use_timed_invoke", False)),
        )
    features: dict[str, int] = {}
    bitmaps = getattr(cls, "Bitmaps", None)
    feature_enum = getattr(bitmaps, "Feature", None) if bitmaps is not None else None
    if feature_enum is not None:
        for member in feature_enum:
            features[member.name.removeprefix("k")] = int(member.value)
    return ClusterInfo(
        id=int(cls.id),
        name=cls.__name__,
        attributes=attributes,
        attribute_names={v: k for k, v in attributes.items()},
        commands=commands,
        command_names={c.id: n for n, c in commands.items()},
        features=features,
    )


@lru_cache(maxsize=1)
def _catalogue() -> tuple[dict[int, ClusterInfo], dict[str, ClusterInfo]]:
    by_id: dict[int, ClusterInfo] = {}
    by_name: dict[str, ClusterInfo] = {}
    for cluster_id, cls in ClusterObjects.ALL_CLUSTERS.items():
        if getattr(Clusters, cls.__name__, None) is not cls:
            continue
        info = _make_cluster_info(cls)
        by_id[int(cluster_id)] = info
        by_name[info.name] = info
    return by_id, by_name


def cluster_info(cluster: str | int) -> ClusterInfo | None:
    """Return the catalogue entry for a cluster name or id, or ``None`` if unknown."""
    by_id, by_name = _catalogue()
    if isinstance(cluster, int):
        return by_id.get(cluster)
    return by_name.get(cluster)


def device_type_name(device_type_id: int) -> str | None:
    """Return the SDK's name of a device type id (``DimmableLight``) or ``None``."""
    found = DEVICE_TYPES.get(device_type_id)
    return found.__name__ if found is not None else None


# --- building commands from payloads -----------------------------------------------


def _check(value: Any, hint: Any, where: str) -> Any:
    """Return ``value`` converted to what ``hint`` asks for; raise on a mismatch."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and (Nullable in args):
            return NullValue
        if value is None and type(None) in args:
            return None
        errors: list[str] = []
        for arg in args:
            if arg in (Nullable, type(None)):
                continue
            try:
                return _check(value, arg, where)
            except InvalidParamsError as err:
                errors.append(err.message)
        raise InvalidParamsError(
            errors[0] if errors else f"{where} must not be null", {"field": where}
        )
    if origin is list:
        if not isinstance(value, list):
            raise InvalidParamsError(f"{where} must be a list", {"field": where})
        (item,) = typing.get_args(hint) or (Any,)
        return [_check(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if hint is Any:
        return value
    if isinstance(hint, type):
        if issubclass(hint, enum.IntFlag):
            mask = _flag_mask(hint)
            if not _is_int(value) or value < 0 or value & ~mask:
                raise InvalidParamsError(
                    f"{where} must be a bitmap of {hint.__name__} (mask {mask})", {"field": where}
                )
            return value
        if issubclass(hint, enum.IntEnum):
            allowed = _enum_values(hint)
            if not _is_int(value) or value not in allowed:
                raise InvalidParamsError(
                    f"{where} must be one of {sorted(allowed)} ({hint.__name__})",
                    {"field": where, "allowed": sorted(allowed)},
                )
            return allowed[value]
        if hint is bool:
            if not isinstance(value, bool):
                raise InvalidParamsError(f"{where} must be a boolean", {"field": where})
            return value
        if hint is str:
            if not isinstance(value, str):
                raise InvalidParamsError(f"{where} must be a string", {"field": where})
            return value
        if hint is bytes:
            if not isinstance(value, str):
                raise InvalidParamsError(f"{where} must be a string", {"field": where})
            return value.encode("utf-8")
        if issubclass(hint, float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidParamsError(f"{where} must be a number", {"field": where})
            return float(value)
        if issubclass(hint, int):
            if not _is_int(value):
                raise InvalidParamsError(f"{where} must be an integer", {"field": where})
            if hint.__name__ == "uint" and value < 0:
                raise InvalidParamsError(f"{where} must not be negative", {"field": where})
            return value
        if dataclasses.is_dataclass(hint):
            return _build_struct(hint, value, where)
    raise InvalidParamsError(
        f"{where} has a type the bridge cannot send ({hint})", {"field": where}
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def _flag_mask(hint: type[enum.IntFlag]) -> int:
    mask = 0
    for member in hint:
        mask |= int(member.value)
    return mask


@cache
def _enum_values(hint: type[enum.IntEnum]) -> dict[int, enum.IntEnum]:
    return {int(m.value): m for m in hint if m.name != "kUnknownEnumValue"}


@cache
def _struct_fields(cls: Any) -> tuple[tuple[str, Any, bool], ...]:
    """Return ``(label, type hint, optional)`` of each field of an SDK struct or command.

    Resolving the hints (``typing.get_type_hints`` on the SDK's string annotations) costs
    hundreds of microseconds, so it is done once per class, not on every command sent.
    """
    hints = typing.get_type_hints(cls)
    fields = []
    for f in cls.descriptor.Fields:
        hint = hints.get(f.Label, Any)
        fields.append((f.Label, hint, _field_optional(hint)))
    return tuple(fields)


def _build_struct(cls: Any, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise InvalidParamsError(f"{where} must be an object", {"field": where})
    fields = _struct_fields(cls)
    unknown = sorted(set(value) - {label for label, _, _ in fields})
    if unknown:
        labels = [label for label, _, _ in fields]
        raise InvalidParamsError(
            f"{where} has unknown field(s) {', '.join(unknown)}; known: {', '.join(labels)}",
            {"field": where, "unknown": unknown, "known": labels},
        )
    kwargs: dict[str, Any] = {}
    for label, hint, optional in fields:
        if label not in value:
            if not optional:
                raise InvalidParamsError(
                    f"{where}.{label} is required", {"field": f"{where}.{label}"}
                )
            continue
        kwargs[label] = _check(value[label], hint, f"{where}.{label}" if where else label)
    return cls(**kwargs)


def build_command(cluster: str | int, command: str, payload: Mapping[str, Any]) -> Any:
    """Return the SDK command object for ``cluster.command(payload)``.

    Raises ``InvalidParamsError`` naming the problem when the cluster or command does not
    exist in ``chip.clusters`` or a payload field is missing, unknown or of the wrong type.
    """
    info = cluster_info(cluster)
    if info is None:
        raise InvalidParamsError(f"unknown Matter cluster '{cluster}'", {"cluster": cluster})
    cmd_cls = getattr(getattr(Clusters, info.name).Commands, command, None)
    if command not in info.commands or cmd_cls is None:
        raise InvalidParamsError(
            f"cluster {info.name} has no command '{command}'",
            {"cluster": info.name, "command": command, "known": sorted(info.commands)},
        )
    return _build_struct_command(cmd_cls, dict(payload), info.name, command)


def _build_struct_command(
    cls: type[Any], payload: dict[str, Any], cluster: str, command: str
) -> Any:
    try:
        return _build_struct(cls, payload, "")
    except InvalidParamsError as err:
        err.details.update({"cluster": cluster, "command": command})
        raise


# --- actions and node data ---------------------------------------------------------


class ActionKind(StrEnum):
    """What a ``MatterAction`` does on the controller."""

    COMMAND = "command"
    WRITE = "write"
    READ = "read"


@dataclass(frozen=True, slots=True, kw_only=True)
class MatterAction:
    """One exact request to the controller: a command, an attribute write or a read."""

    kind: ActionKind
    node_id: int
    endpoint_id: int
    cluster: str
    cluster_id: int
    name: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    value: Any = None
    attribute_ids: tuple[int, ...] = ()
    timed: bool = False

    @property
    def paths(self) -> list[str]:
        """Return the attribute paths a write or read touches."""
        return [f"{self.endpoint_id}/{self.cluster_id}/{a}" for a in self.attribute_ids]

    def to_json(self) -> dict[str, Any]:
        """Return the wire form shown in tool results and diagnostics (secrets redacted)."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "node_id": self.node_id,
            "endpoint_id": self.endpoint_id,
            "cluster": self.cluster,
        }
        if self.kind is ActionKind.COMMAND:
            out["command"] = self.name
            out["payload"] = {
                k: REDACTED if k.lower() in SECRET_FIELDS else v for k, v in self.payload.items()
            }
            if self.timed:
                out["timed"] = True
        elif self.kind is ActionKind.WRITE:
            out["attribute"] = self.name
            out["value"] = self.value
        else:
            out["attributes"] = self.name.split(",")
        return out


@dataclass(slots=True, kw_only=True)
class NodeData:
    """A node's raw attributes (``"endpoint/cluster/attribute"`` → value) and status."""

    node_id: int
    available: bool
    is_bridge: bool = False
    attributes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Any) -> NodeData:
        """Read a node dump (``get_node`` form); raise ``InvalidParamsError`` if malformed."""
        if not isinstance(doc, dict):
            raise InvalidParamsError("a node dump must be a JSON object")
        node_id = doc.get("node_id")
        attributes = doc.get("attributes")
        if not isinstance(node_id, int) or isinstance(node_id, bool) or node_id < 0:
            raise InvalidParamsError("a node dump needs a non-negative integer 'node_id'")
        if not isinstance(attributes, dict):
            raise InvalidParamsError(f"node {node_id}: 'attributes' must be an object")
        clean: dict[str, Any] = {}
        for path, value in attributes.items():
            parts = str(path).split("/")
            if len(parts) == 3 and all(p.isdigit() for p in parts):
                clean[str(path)] = value
        return cls(
            node_id=node_id,
            available=bool(doc.get("available", False)),
            is_bridge=bool(doc.get("is_bridge", False)),
            attributes=clean,
        )


class AdapterEventKind(StrEnum):
    """Events the adapter reports to the bridge."""

    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    NODE_ADDED = "node_added"
    NODE_UPDATED = "node_updated"
    NODE_REMOVED = "node_removed"
    ATTRIBUTE_UPDATED = "attribute_updated"
    SERVER_SHUTDOWN = "server_shutdown"


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterEvent:
    """One event from the controller, already turned into the bridge's terms."""

    kind: AdapterEventKind
    node_id: int | None = None
    path: str | None = None
    value: Any = None


Listener = Callable[[AdapterEvent], None]


# --- the adapter -------------------------------------------------------------------


class _Client(MatterClient):
    """``MatterClient`` that also reports which attribute path changed.

    The client's own ``attribute_updated`` callbacks get only the new value, so the
    adapter hooks the message handler (pinned client 1.5.5) to learn node and path;
    attribute reports go to the adapter only.
    """

    def __init__(
        self,
        url: str,
        session: aiohttp.ClientSession,
        on_attribute: Callable[[int, str, Any], None],
    ) -> None:
        super().__init__(url, session)
        self._on_attribute = on_attribute

    def _handle_event_message(self, msg: Any) -> None:
        if msg.event == EventType.ATTRIBUTE_UPDATED:
            # The adapter keeps its own node mirror and nothing reads the SDK's node model
            # between (re)connects, which fetch every node afresh: skip the SDK's update of
            # it (parsing each value into chip.clusters objects was most of a report's CPU).
            node_id, path, value = msg.data
            self._on_attribute(int(node_id), str(path), value)
            return
        super()._handle_event_message(msg)


class _UncompressedSession:
    """The adapter's aiohttp session as the SDK client sees it: WebSockets without deflate.

    The pinned client always asks for ``permessage-deflate``; on the loopback or LAN link
    to a controller that only costs CPU on both ends for every command and reply (the
    controller then compresses every message it sends this connection).
    """

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self._session = session

    def ws_connect(self, url: str, **kwargs: Any) -> Any:
        """Open the WebSocket with compression off, the client's other options kept."""
        kwargs["compress"] = 0
        return self._session.ws_connect(url, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class MatterAdapter:
    """A long-lived connection to one controller with reconnects and a node mirror."""

    def __init__(
        self,
        url: str,
        *,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 30.0,
        request_timeout_s: float = 30.0,
    ) -> None:
        self.url = url
        self._backoff_initial = backoff_initial_s
        self._backoff_max = backoff_max_s
        self._request_timeout = request_timeout_s
        self._nodes: dict[int, NodeData] = {}
        self._listeners: list[Listener] = []
        self._session: aiohttp.ClientSession | None = None
        self._client: _Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._stopping = False
        self.connect_count = 0
        self.sent: deque[MatterAction] = deque(maxlen=SENT_HISTORY)
        # The waits between connection attempts, most recent last (for diagnostics).
        self.retry_delays: deque[float] = deque(maxlen=64)

    # lifecycle

    async def start(self) -> None:
        """Start connecting in the background; use ``wait_connected`` to wait."""
        if self._task is not None:
            return
        self._stopping = False
        self._session = aiohttp.ClientSession()
        self._task = asyncio.create_task(self._run(), name="matter-adapter")

    async def stop(self) -> None:
        """Disconnect and stop reconnecting (idempotent)."""
        self._stopping = True
        task, self._task = self._task, None
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.disconnect()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._session is not None:
            await self._session.close()
            self._session = None
        self._connected.clear()

    async def wait_connected(self, timeout_s: float) -> None:
        """Wait until the first node snapshot arrived; raise ``ControllerUnavailableError``."""
        try:
            await asyncio.wait_for(self._connected.wait(), timeout_s)
        except TimeoutError as err:
            raise ControllerUnavailableError(
                f"Matter controller at {self.url} did not answer within {timeout_s:g} s",
                {"url": self.url},
            ) from err

    @property
    def connected(self) -> bool:
        """Return whether the adapter is connected and has the node snapshot."""
        return self._connected.is_set()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for every event; return a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def nodes(self) -> list[NodeData]:
        """Return the mirrored nodes, ordered by node id."""
        return [self._nodes[k] for k in sorted(self._nodes)]

    def node(self, node_id: int) -> NodeData | None:
        """Return one mirrored node or ``None``."""
        return self._nodes.get(node_id)

    def _stop_requested(self) -> bool:
        return self._stopping

    async def _run(self) -> None:
        delay = self._backoff_initial
        while not self._stopping:
            assert self._session is not None  # noqa: S101 - set in start()
            session: Any = _UncompressedSession(self._session)
            client = _Client(self.url, session, self._on_attribute)
            self._client = client
            ready = asyncio.Event()
            listen = asyncio.create_task(client.start_listening(ready))
            ready_wait = asyncio.create_task(ready.wait())
            try:
                await asyncio.wait({listen, ready_wait}, return_when=asyncio.FIRST_COMPLETED)
                if ready.is_set():
                    delay = self._backoff_initial
                    self._on_connected(client)
                    await listen
                else:
                    listen.result()
            except asyncio.CancelledError:
                listen.cancel()
                ready_wait.cancel()
                raise
            except (TransportError, MatterClientException, aiohttp.ClientError, OSError) as err:
                LOGGER.warning("Matter controller %s: %s", self.url, err)
            finally:
                ready_wait.cancel()
            self._client = None
            if self._connected.is_set():
                self._connected.clear()
                self._emit(AdapterEvent(kind=AdapterEventKind.DISCONNECTED))
            if self._stop_requested():
                break
            self.retry_delays.append(delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._backoff_max)

    def _on_connected(self, client: _Client) -> None:
        self.connect_count += 1
        fresh: dict[int, NodeData] = {}
        for node in client.get_nodes():
            fresh[node.node_id] = self._to_node_data(node)
        removed = set(self._nodes) - set(fresh)
        self._nodes = fresh
        client.subscribe_events(self._on_client_event)
        self._connected.set()
        for node_id in sorted(removed):
            self._emit(AdapterEvent(kind=AdapterEventKind.NODE_REMOVED, node_id=node_id))
        self._emit(AdapterEvent(kind=AdapterEventKind.CONNECTED))

    @staticmethod
    def _to_node_data(node: Any) -> NodeData:
        data = node.node_data
        return NodeData(
            node_id=int(data.node_id),
            available=bool(data.available),
            is_bridge=bool(data.is_bridge),
            attributes=dict(data.attributes),
        )

    def _on_client_event(self, event: EventType, data: Any) -> None:
        if event in (EventType.NODE_ADDED, EventType.NODE_UPDATED):
            node = self._to_node_data(data)
            known = node.node_id in self._nodes
            self._nodes[node.node_id] = node
            kind = AdapterEventKind.NODE_UPDATED if known else AdapterEventKind.NODE_ADDED
            self._emit(AdapterEvent(kind=kind, node_id=node.node_id))
        elif event == EventType.NODE_REMOVED:
            self._nodes.pop(int(data), None)
            self._emit(AdapterEvent(kind=AdapterEventKind.NODE_REMOVED, node_id=int(data)))
        elif event == EventType.SERVER_SHUTDOWN:
            self._emit(AdapterEvent(kind=AdapterEventKind.SERVER_SHUTDOWN))

    def _on_attribute(self, node_id: int, path: str, value: Any) -> None:
        node = self._nodes.get(node_id)
        if node is None:
            return
        node.attributes[path] = value
        self._emit(
            AdapterEvent(
                kind=AdapterEventKind.ATTRIBUTE_UPDATED, node_id=node_id, path=path, value=value
            )
        )

    def _emit(self, event: AdapterEvent) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(event)
            except Exception:
                LOGGER.exception("Matter adapter listener failed on %s", event.kind.value)

    # requests

    async def execute(self, action: MatterAction) -> Any:
        """Send one action to the controller and return its result.

        Raises ``ControllerUnavailableError`` when not connected, ``DeviceUnavailableError``
        when the node cannot be reached, ``InvalidParamsError`` when the controller rejects
        the command or payload and ``ToolFailedError`` for any other controller error.
        """
        client = self._client
        if client is None or not self._connected.is_set():
            raise ControllerUnavailableError(
                f"not connected to the Matter controller at {self.url}"
            )
        self.sent.append(action)
        try:
            async with asyncio.timeout(self._request_timeout):
                if action.kind is ActionKind.COMMAND:
                    command = build_command(action.cluster, action.name, action.payload)
                    result = await client.send_device_command(
                        action.node_id,
                        action.endpoint_id,
                        command,
                        timed_request_timeout_ms=TIMED_REQUEST_TIMEOUT_MS if action.timed else None,
                    )
                    return _jsonable(result)
                if action.kind is ActionKind.WRITE:
                    (path,) = action.paths
                    return _jsonable(
                        await client.write_attribute(action.node_id, path, action.value)
                    )
                values = await client.read_attribute(action.node_id, action.paths)
                return _jsonable(values)
        except BridgeError:
            raise
        except asyncio.CancelledError as err:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            # The client cancels pending requests when the controller connection drops.
            raise ControllerUnavailableError(
                "the Matter controller connection dropped during the request",
                {"action": action.to_json()}) from err
        except TimeoutError as err:
            raise DeviceUnavailableError(
                f"node {action.node_id} did not answer within {self._request_timeout:g} s",
                {"node_id": action.node_id},
            ) from err
        except (
            server_errors.NodeNotReady,
            server_errors.NodeNotResolving,
            server_errors.NodeNotExists,
        ) as err:
            raise DeviceUnavailableError(
                f"node {action.node_id} is not reachable: {err}", {"node_id": action.node_id}
            ) from err
        except (server_errors.InvalidArguments, server_errors.InvalidCommand) as err:
            raise InvalidParamsError(
                f"the controller rejected {action.cluster}.{action.name}: {err}",
                {"action": action.to_json()},
            ) from err
        except (TransportError, InvalidServerVersion) as err:
            raise ControllerUnavailableError(f"Matter controller connection failed: {err}") from err
        except (server_errors.MatterError, MatterClientException) as err:
            raise ToolFailedError(
                f"{action.cluster}.{action.name} failed on node {action.node_id}: {err}",
                {"action": action.to_json()},
            ) from err

    async def open_commissioning_window(self, node_id: int, timeout_s: int = 300) -> Any:
        """Open an enhanced commissioning window on a node (Matter multi-admin).

        Returns the controller's ``CommissioningParameters`` (new passcode, manual code,
        QR text). Raises ``ControllerUnavailableError`` when not connected,
        ``DeviceUnavailableError`` when the node cannot be reached and
        ``ToolFailedError`` when the controller refuses.
        """
        client = self._client
        if client is None or not self._connected.is_set():
            raise ControllerUnavailableError(
                f"not connected to the Matter controller at {self.url}"
            )
        try:
            async with asyncio.timeout(self._request_timeout + 30):
                return await client.open_commissioning_window(node_id, timeout=timeout_s)
        except TimeoutError as err:
            raise DeviceUnavailableError(
                f"node {node_id} did not open a commissioning window in time",
                {"node_id": node_id},
            ) from err
        except (
            server_errors.NodeNotReady,
            server_errors.NodeNotResolving,
            server_errors.NodeNotExists,
        ) as err:
            raise DeviceUnavailableError(
                f"node {node_id} is not reachable: {err}", {"node_id": node_id}
            ) from err
        except (TransportError, InvalidServerVersion) as err:
            raise ControllerUnavailableError(f"Matter controller connection failed: {err}") from err
        except (server_errors.MatterError, MatterClientException) as err:
            raise ToolFailedError(
                f"node {node_id} did not open a commissioning window: {err}",
                {"node_id": node_id},
            ) from err

    async def send_command(self, command: str, *, timeout_s: float, **args: Any) -> Any:
        """Send a raw controller command over this connection (the gateway's live path).

        Raise ``ControllerCommandError`` with the controller's error code when it answers
        an error, ``ControllerUnavailableError`` when not connected or the connection
        drops, and ``TimeoutError`` after ``timeout_s``.
        """
        client = self._client
        if client is None or not self._connected.is_set():
            raise ControllerUnavailableError(
                f"not connected to the Matter controller at {self.url}", {"url": self.url}
            )
        try:
            async with asyncio.timeout(timeout_s):
                return await client.send_command(command, **args)
        except server_errors.MatterError as err:
            code = int(getattr(err, "error_code", 0))
            raise ControllerCommandError(command, code, str(err)) from err
        except (TransportError, InvalidServerVersion, MatterClientException) as err:
            raise ControllerUnavailableError(
                f"the Matter controller at {self.url} failed during '{command}': {err}",
                {"url": self.url},
            ) from err

    async def import_test_nodes(self, dumps: list[dict[str, Any]]) -> None:
        """Load node dumps into the controller as test nodes (``import_test_node``)."""
        import json

        client = self._client
        if client is None:
            raise ControllerUnavailableError(
                f"not connected to the Matter controller at {self.url}"
            )
        doc = {"data": {"server": {"nodes": dumps}}}
        await client.send_command("import_test_node", dump=json.dumps(doc))


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    if isinstance(value, bytes):
        return value.hex()
    return str(value)
