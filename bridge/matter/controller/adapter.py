"""The Matter client adapter: the one connection to the controller's WebSocket API.

One module because the connection, its node mirror and the requests over it share one state.

``MatterAdapter`` connects, keeps a plain copy of every node's attributes, reports node
and attribute events, reconnects with backoff and executes ``MatterAction``s (commands,
attribute writes, reads), remembering the last ones it sent for tests and diagnostics;
the gateway sends raw controller commands over the same connection.

It speaks the controller's protocol itself: a ``server_info`` greeting, then JSON
messages — ``{"message_id", "command", "args"}`` out; results (``result``) or errors
(``error_code``, ``details``) by ``message_id`` and events (``event``, ``data``) in.
Messages are read and written with orjson, node attributes stay the controller's JSON
values, and commands go out as the checked payloads ``commands.build_command`` makes,
so the bridge loads none of the SDK's client or cluster objects (tens of megabytes
resident, and most of a state report's CPU when every message became SDK dataclasses).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import aiohttp
import orjson

from bridge.errors import (
    BridgeError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    InvalidParamsError,
    ToolFailedError,
    ToolTimeoutError,
)
from bridge.matter.controller.gateway import (
    CLIENT_SCHEMA_VERSION,
    ControllerCommandError,
    ServerInfo,
)
from bridge.matter.controller.responses import check_result
from bridge.matter.spec.commands import build_command
from bridge.matter.spec.models import (
    ActionKind,
    AdapterEvent,
    AdapterEventKind,
    Listener,
    MatterAction,
    NodeData,
)
from bridge.ratelog import RateLimitedLog

LOGGER = logging.getLogger(__name__)
# A controller that is gone is retried every few seconds: one line a minute says so.
_RATE_LOG = RateLimitedLog(LOGGER)

# How long a timed invoke (DoorLock unlock) may stay open on the device.
TIMED_REQUEST_TIMEOUT_MS = 10_000
SENT_HISTORY = 256
# ``start_listening`` answers with every node in one message (a large home: megabytes).
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
GREETING_TIMEOUT_S = 30.0
# The controller's error codes (python-matter-server's ``errors``).
_NOT_REACHABLE = frozenset({3, 4, 5})  # NodeNotReady, NodeNotResolving, NodeNotExists
_REJECTED = frozenset({8, 9})  # InvalidArguments, InvalidCommand


class _ConnectionLost(Exception):
    """The controller connection closed or failed (the adapter reconnects)."""


class _Refused(Exception):
    """The controller answered a request with an error code."""

    def __init__(self, code: int, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _Connection:
    """One open WebSocket to the controller: requests by ``message_id`` and the reader."""

    _ids = itertools.count(1)

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, url: str, greeting: dict[str, Any]):
        self.ws = ws
        self.url = url
        self.greeting = greeting
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self.closed = False

    async def request(self, command: str, args: dict[str, Any]) -> Any:
        """Send ``command`` and wait for its answer; raise ``ControllerCommandError``."""
        if self.closed:
            raise ControllerUnavailableError(
                f"not connected to the Matter controller at {self.url}", {"url": self.url}
            )
        msg_id = f"b{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            frame = orjson.dumps({"message_id": msg_id, "command": command, "args": args})
            try:
                await self.ws.send_frame(frame, aiohttp.WSMsgType.TEXT)
            except (aiohttp.ClientError, ConnectionError, RuntimeError) as err:
                raise ControllerUnavailableError(
                    f"the Matter controller at {self.url} connection failed during "
                    f"'{command}': {err}",
                    {"url": self.url},
                ) from err
            try:
                return await future
            except _Refused as err:
                raise ControllerCommandError(command, err.code, err.details) from None
        finally:
            self._pending.pop(msg_id, None)

    async def receive(self) -> Any:
        """Return the next message (decoded JSON); raise ``_ConnectionLost`` when closed."""
        msg = await self.ws.receive()
        if msg.type is aiohttp.WSMsgType.TEXT or msg.type is aiohttp.WSMsgType.BINARY:
            try:
                return orjson.loads(msg.data)
            except orjson.JSONDecodeError as err:
                raise _ConnectionLost(f"{self.url} sent a message that is not JSON") from err
        if msg.type is aiohttp.WSMsgType.ERROR:
            raise _ConnectionLost(f"{self.url}: {msg.data}")
        raise _ConnectionLost(f"{self.url} closed the connection")

    def answer(self, msg: dict[str, Any]) -> None:
        """Settle the request ``msg`` answers (late answers to abandoned requests drop)."""
        future = self._pending.get(str(msg.get("message_id")))
        if future is None or future.done():
            return
        if "error_code" in msg:
            code = msg["error_code"]
            future.set_exception(
                _Refused(
                    code if isinstance(code, int) and not isinstance(code, bool) else 0,
                    str(msg.get("details") or ""),
                )
            )
        else:
            future.set_result(msg.get("result"))

    def fail_pending(self) -> None:
        """Fail every waiting request: the connection dropped."""
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    ControllerUnavailableError(
                        "the Matter controller connection dropped during the request",
                        {"url": self.url},
                    )
                )

    async def close(self) -> None:
        """Close the WebSocket (idempotent)."""
        self.fail_pending()
        with contextlib.suppress(Exception):
            await self.ws.close()


class MatterAdapter:
    """A long-lived connection to one controller with reconnects and a node mirror."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 30.0,
        request_timeout_s: float = 30.0,
    ) -> None:
        self.url = url
        # Sent on every connection (the managed controller's key; never logged).
        self._headers = dict(headers or {})
        self._backoff_initial = backoff_initial_s
        self._backoff_max = backoff_max_s
        self._request_timeout = request_timeout_s
        self._nodes: dict[int, NodeData] = {}
        self._listeners: list[Listener] = []
        self._session: aiohttp.ClientSession | None = None
        self._conn: _Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._retry_now = asyncio.Event()
        self._stopping = False
        self.connect_count = 0
        self.sent: deque[MatterAction] = deque(maxlen=SENT_HISTORY)
        self.reads = 0  # ``read`` calls so far (the bridge's own checks; diagnostics)
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
        conn = self._conn
        if conn is not None:
            await conn.close()
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

    def reconnect_now(self) -> None:
        """Cut the wait before the next connection attempt short (the controller is up)."""
        self._retry_now.set()

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
            try:
                conn = await self._open()
            except (
                _ConnectionLost,
                ControllerUnavailableError,
                aiohttp.ClientError,
                OSError,
                TimeoutError,
            ) as err:
                _RATE_LOG.warning(
                    f"connect:{self.url}",
                    "Matter controller %s: %s",
                    self.url,
                    err or type(err).__name__,
                )
            else:
                delay = self._backoff_initial
                try:
                    await self._listen(conn)
                except (_ConnectionLost, aiohttp.ClientError, OSError) as err:
                    _RATE_LOG.warning(
                        f"lost:{self.url}",
                        "Matter controller %s: %s",
                        self.url,
                        err or type(err).__name__,
                    )
                finally:
                    self._conn = None
                    await conn.close()
                if self._connected.is_set():
                    self._connected.clear()
                    self._emit(AdapterEvent(kind=AdapterEventKind.DISCONNECTED))
            if self._stop_requested():
                break
            self.retry_delays.append(delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._retry_now.wait(), delay)
            self._retry_now.clear()
            delay = min(delay * 2, self._backoff_max)

    async def _open(self) -> _Connection:
        """Connect, check the greeting's schema and take the node snapshot."""
        assert self._session is not None  # noqa: S101 - set in start()
        ws = await self._session.ws_connect(
            self.url,
            heartbeat=55,
            compress=0,
            max_msg_size=MAX_MESSAGE_BYTES,
            headers=self._headers,
        )
        conn = _Connection(ws, self.url, {})
        try:
            async with asyncio.timeout(GREETING_TIMEOUT_S):
                greeting = await conn.receive()
            _check_greeting(greeting, self.url)
            conn.greeting = greeting
            self._conn = conn
            reader = asyncio.create_task(self._snapshot_reader(conn))
            try:
                nodes = await asyncio.wait_for(
                    conn.request("start_listening", {}), self._request_timeout + 60
                )
            finally:
                reader.cancel()
                with contextlib.suppress(
                    asyncio.CancelledError, _ConnectionLost, aiohttp.ClientError, OSError
                ):
                    await reader
        except BaseException:
            self._conn = None
            await conn.close()
            raise
        self._on_connected(nodes)
        return conn

    async def _snapshot_reader(self, conn: _Connection) -> None:
        """Read until ``start_listening`` is answered (events before it are superseded).

        It stops at that answer: events right behind it (already in the buffer) are the
        first ones ``_listen`` applies to the snapshot.
        """
        try:
            while True:
                msg = await conn.receive()
                if isinstance(msg, dict) and "event" not in msg:
                    conn.answer(msg)  # the only request in flight: start_listening
                    return
        except (_ConnectionLost, aiohttp.ClientError, OSError):
            conn.fail_pending()
            raise

    async def _listen(self, conn: _Connection) -> None:
        while True:
            msg = await conn.receive()
            if not isinstance(msg, dict):
                continue
            event = msg.get("event")
            if event is None:
                conn.answer(msg)
            elif event == "attribute_updated":
                self._on_attribute_message(msg.get("data"))
            else:
                self._on_event(str(event), msg.get("data"))

    def _on_connected(self, nodes: Any) -> None:
        self.connect_count += 1
        fresh: dict[int, NodeData] = {}
        for doc in nodes if isinstance(nodes, list) else ():
            node = _node_data(doc)
            if node is not None:
                fresh[node.node_id] = node
        removed = set(self._nodes) - set(fresh)
        self._nodes = fresh
        self._connected.set()
        for node_id in sorted(removed):
            self._emit(AdapterEvent(kind=AdapterEventKind.NODE_REMOVED, node_id=node_id))
        self._emit(AdapterEvent(kind=AdapterEventKind.CONNECTED))

    def _on_event(self, event: str, data: Any) -> None:
        if event in ("node_added", "node_updated"):
            node = _node_data(data)
            if node is None:
                return
            known = node.node_id in self._nodes
            self._nodes[node.node_id] = node
            kind = AdapterEventKind.NODE_UPDATED if known else AdapterEventKind.NODE_ADDED
            self._emit(AdapterEvent(kind=kind, node_id=node.node_id))
        elif event == "node_removed":
            if isinstance(data, int) and not isinstance(data, bool):
                self._nodes.pop(data, None)
                self._emit(AdapterEvent(kind=AdapterEventKind.NODE_REMOVED, node_id=data))
        elif event == "server_shutdown":
            self._emit(AdapterEvent(kind=AdapterEventKind.SERVER_SHUTDOWN))
        elif event == "node_event":
            self._on_node_event(data)

    def _on_node_event(self, data: Any) -> None:
        """Report a device's Matter event (a press, an alarm) as ``NODE_EVENT``."""
        if not isinstance(data, dict):
            return
        ids = [data.get(k) for k in ("node_id", "endpoint_id", "cluster_id", "event_id")]
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            return
        node_id, endpoint, cluster, event_id = ids
        self._emit(
            AdapterEvent(
                kind=AdapterEventKind.NODE_EVENT,
                node_id=node_id,
                path=f"{endpoint}/{cluster}/{event_id}",
                value=data,
            )
        )

    def _on_attribute_message(self, data: Any) -> None:
        if not isinstance(data, list) or len(data) != 3:
            return
        node_id, path, value = data
        if isinstance(node_id, int) and isinstance(path, str):
            self._on_attribute(node_id, path, value)

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

    def _live(self) -> _Connection:
        conn = self._conn
        if conn is None or conn.closed or not self._connected.is_set():
            raise ControllerUnavailableError(
                f"not connected to the Matter controller at {self.url}", {"url": self.url}
            )
        return conn

    async def execute(self, action: MatterAction, *, deadline: float | None = None) -> Any:
        """Send one action to the controller and return its result.

        ``deadline`` (``time.monotonic()``) is the caller's: the request waits until it at
        most, and a command tells the controller to end its interaction with the device
        by then too. Raises ``ToolTimeoutError`` when the deadline passes first,
        ``ControllerUnavailableError`` when not connected, ``DeviceUnavailableError``
        when the node cannot be reached (or does not answer within the adapter's own
        request timeout), ``InvalidParamsError`` when the controller rejects the command
        or payload and ``ToolFailedError`` for any other controller error.
        """
        conn = self._live()
        wait_s, by_caller = self._request_timeout, False
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ToolTimeoutError(
                    f"no time left to send {action.cluster}.{action.name} to node {action.node_id}",
                    {"node_id": action.node_id},
                )
            if left < wait_s:
                wait_s, by_caller = left, True
        self.sent.append(action)
        if action.kind is ActionKind.COMMAND:
            wire = action.wire or build_command(action.cluster, action.name, action.payload)
            command = "device_command"
            args: dict[str, Any] = {
                "node_id": action.node_id,
                "endpoint_id": action.endpoint_id,
                "cluster_id": wire.cluster_id,
                "command_name": wire.command_name,
                "payload": wire.payload,
                "response_type": None,
                "timed_request_timeout_ms": TIMED_REQUEST_TIMEOUT_MS if action.timed else None,
                # The controller gives up on the device when the caller does.
                "interaction_timeout_ms": max(1, int(wait_s * 1000)) if by_caller else None,
            }
        elif action.kind is ActionKind.WRITE:
            (path,) = action.paths
            command = "write_attribute"
            args = {"node_id": action.node_id, "attribute_path": path, "value": action.value}
        else:
            command = "read_attribute"
            args = {"node_id": action.node_id, "attribute_path": action.paths}
        try:
            async with asyncio.timeout(wait_s):
                result = await conn.request(command, args)
        except BridgeError:
            raise
        except TimeoutError as err:
            if by_caller:
                raise ToolTimeoutError(
                    f"node {action.node_id} did not answer before the caller's deadline "
                    f"({wait_s * 1000:.0f} ms)",
                    {"node_id": action.node_id, "timeout_ms": round(wait_s * 1000)},
                ) from err
            raise DeviceUnavailableError(
                f"node {action.node_id} did not answer within {self._request_timeout:g} s",
                {"node_id": action.node_id},
            ) from err
        except ControllerCommandError as err:
            raise _action_error(action, err) from err
        check_result(action, result)  # a refusal inside a successful answer
        return result

    async def read(self, node_id: int, paths: Sequence[str], timeout_s: float) -> dict[str, Any]:
        """Read attribute paths from the device itself in one interaction; return path → value.

        The controller answers with what the device holds now (and updates its own
        copy). Not recorded in ``sent``: it is the bridge checking, not a request of a
        caller. Raises ``ControllerUnavailableError`` when not connected,
        ``DeviceUnavailableError`` when the node cannot be reached or does not answer
        within ``timeout_s`` and ``ToolFailedError`` for any other controller error.
        """
        conn = self._live()
        self.reads += 1
        try:
            async with asyncio.timeout(timeout_s):
                result = await conn.request(
                    "read_attribute", {"node_id": node_id, "attribute_path": list(paths)}
                )
        except TimeoutError as err:
            raise DeviceUnavailableError(
                f"node {node_id} did not answer a read within {timeout_s:g} s", {"node_id": node_id}
            ) from err
        except ControllerCommandError as err:
            if err.error_code in _NOT_REACHABLE:
                raise DeviceUnavailableError(
                    f"node {node_id} is not reachable: {err.details}", {"node_id": node_id}
                ) from err
            raise ToolFailedError(
                f"reading node {node_id} failed: {err.details}", {"node_id": node_id}
            ) from err
        return dict(result) if isinstance(result, dict) else {}

    async def open_commissioning_window(self, node_id: int, timeout_s: int = 300) -> dict[str, Any]:
        """Open an enhanced commissioning window on a node (Matter multi-admin).

        Returns the controller's ``CommissioningParameters`` (``setup_pin_code``,
        ``setup_manual_code``, ``setup_qr_code``). Raises ``ControllerUnavailableError``
        when not connected, ``DeviceUnavailableError`` when the node cannot be reached and
        ``ToolFailedError`` when the controller refuses.
        """
        conn = self._live()
        args = {
            "node_id": node_id,
            "timeout": timeout_s,
            "iteration": 1000,
            "option": 1,
            "discriminator": None,
        }
        try:
            async with asyncio.timeout(self._request_timeout + 30):
                result = await conn.request("open_commissioning_window", args)
        except TimeoutError as err:
            raise DeviceUnavailableError(
                f"node {node_id} did not open a commissioning window in time",
                {"node_id": node_id},
            ) from err
        except ControllerCommandError as err:
            if err.error_code in _NOT_REACHABLE:
                raise DeviceUnavailableError(
                    f"node {node_id} is not reachable: {err.details}", {"node_id": node_id}
                ) from err
            raise ToolFailedError(
                f"node {node_id} did not open a commissioning window: {err.details}",
                {"node_id": node_id},
            ) from err
        if not isinstance(result, dict) or not all(
            isinstance(result.get(k), str) for k in ("setup_manual_code", "setup_qr_code")
        ):
            raise ToolFailedError(
                f"node {node_id}: the controller's commissioning window answer has no codes",
                {"node_id": node_id},
            )
        return result

    def server_info(self) -> dict[str, Any] | None:
        """Return the controller's greeting (SDK and schema versions …) while connected."""
        conn = self._conn
        if conn is None or not self._connected.is_set():
            return None
        return dict(conn.greeting)

    async def send_command(self, command: str, *, timeout_s: float, **args: Any) -> Any:
        """Send a raw controller command over this connection (the gateway's live path).

        Raise ``ControllerCommandError`` with the controller's error code when it answers
        an error, ``ControllerUnavailableError`` when not connected or the connection
        drops, and ``TimeoutError`` after ``timeout_s``.
        """
        conn = self._live()
        async with asyncio.timeout(timeout_s):
            return await conn.request(command, args)


def _check_greeting(greeting: Any, url: str) -> None:
    """Raise unless ``greeting`` is a ``server_info`` of a schema the bridge speaks."""
    if not isinstance(greeting, dict):
        raise _ConnectionLost(f"{url} sent a greeting that is not an object")
    info = ServerInfo.from_json(greeting)
    if info.schema_version < CLIENT_SCHEMA_VERSION:
        raise ControllerUnavailableError(
            f"the Matter controller at {url} speaks schema {info.schema_version}; "
            f"the bridge needs at least {CLIENT_SCHEMA_VERSION}",
            {"url": url},
        )
    if info.min_supported_schema_version > CLIENT_SCHEMA_VERSION:
        raise ControllerUnavailableError(
            f"the Matter controller at {url} needs clients of schema "
            f"{info.min_supported_schema_version} or newer; the bridge speaks "
            f"{CLIENT_SCHEMA_VERSION}",
            {"url": url},
        )


def _node_data(doc: Any) -> NodeData | None:
    try:
        return NodeData.from_json(doc)
    except InvalidParamsError as err:
        LOGGER.warning("Matter controller sent a node the bridge cannot read: %s", err.message)
        return None


def _action_error(action: MatterAction, err: ControllerCommandError) -> BridgeError:
    if err.error_code in _NOT_REACHABLE:
        return DeviceUnavailableError(
            f"node {action.node_id} is not reachable: {err.details}", {"node_id": action.node_id}
        )
    if err.error_code in _REJECTED:
        return InvalidParamsError(
            f"the controller rejected {action.cluster}.{action.name}: {err.details}",
            {"action": action.to_json()},
        )
    return ToolFailedError(
        f"{action.cluster}.{action.name} failed on node {action.node_id}: {err.details}",
        {"action": action.to_json()},
    )
