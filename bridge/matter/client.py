"""The Matter client adapter: the one connection to the controller's WebSocket API.

``MatterAdapter`` connects, keeps a plain copy of every node's attributes, reports node
and attribute events, reconnects with backoff and executes ``MatterAction``s (commands,
attribute writes, reads), remembering the last ones it sent for tests and diagnostics;
the gateway sends raw controller commands over the same connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp
from matter_server.client import MatterClient
from matter_server.client.exceptions import (
    InvalidServerVersion,
    MatterClientException,
    TransportError,
)
from matter_server.common import errors as server_errors
from matter_server.common.models import EventType

from bridge.errors import (
    BridgeError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    InvalidParamsError,
    ToolFailedError,
)
from bridge.matter.commands import build_command
from bridge.matter.gateway import ControllerCommandError
from bridge.matter.models import (
    ActionKind,
    AdapterEvent,
    AdapterEventKind,
    Listener,
    MatterAction,
    NodeData,
)

LOGGER = logging.getLogger(__name__)

# How long a timed invoke (DoorLock unlock) may stay open on the device.
TIMED_REQUEST_TIMEOUT_MS = 10_000
SENT_HISTORY = 256



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

    def server_info(self) -> dict[str, Any] | None:
        """Return the controller's greeting (SDK and schema versions …) while connected."""
        client = self._client
        if client is None or not self._connected.is_set():
            return None
        info = client.server_info
        return _jsonable(info) if info is not None else None

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
