"""The one way to the controller: its greeting and its commands, in one place.

``ControllerGateway.call`` sends a command over the adapter's live connection (the one
the device reports arrive on) once it is attached, and over a short connection of its
own only while there is none (a bridge starting, a standalone tool); the greeting
(``server_info``) is read by ``read_server_info`` wherever a connection opens. It
imports no Matter SDK. Details: docs/architecture.md, "The controller gateway".
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from bridge.errors import ControllerUnavailableError

# The controller API schema the bridge speaks (that of matter-python-client 1.5.5, whose
# catalogue it ships): a controller must speak at least this schema and accept clients
# of it (its min_supported_schema_version at most this).
CLIENT_SCHEMA_VERSION = 11


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerInfo:
    """The fields of the controller's ``server_info`` greeting the bridge uses."""

    schema_version: int
    min_supported_schema_version: int
    sdk_version: str
    fabric_id: int
    thread_credentials_set: bool

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ServerInfo:
        """Build from the greeting; raise ``ControllerUnavailableError`` if it is not one."""
        try:
            return cls(
                schema_version=int(data["schema_version"]),
                min_supported_schema_version=int(data["min_supported_schema_version"]),
                sdk_version=str(data.get("sdk_version", "")),
                fabric_id=int(data.get("fabric_id", 0)),
                thread_credentials_set=bool(data.get("thread_credentials_set", False)),
            )
        except (KeyError, TypeError, ValueError) as err:
            raise ControllerUnavailableError(
                "the controller's greeting is not a server_info message",
                {"keys": sorted(data)},
            ) from err


async def read_server_info(
    ws: aiohttp.ClientWebSocketResponse, url: str, timeout_s: float
) -> ServerInfo:
    """Read the greeting on a just-opened connection; raise ``ControllerUnavailableError``."""
    try:
        msg = await ws.receive(timeout=timeout_s)
    except TimeoutError as err:
        raise ControllerUnavailableError(f"{url} sent no greeting within {timeout_s:g} s") from err
    if msg.type is not aiohttp.WSMsgType.TEXT:
        raise ControllerUnavailableError(f"{url} sent no greeting ({msg.type.name})")
    try:
        data = json.loads(msg.data)
    except ValueError as err:
        raise ControllerUnavailableError(f"{url} sent a greeting that is not JSON") from err
    if not isinstance(data, dict):
        raise ControllerUnavailableError(f"{url} sent a greeting that is not an object")
    return ServerInfo.from_json(data)


async def fetch_server_info(
    url: str, timeout_s: float, headers: Mapping[str, str] | None = None
) -> ServerInfo:
    """Connect to the controller's WebSocket, read its greeting and disconnect."""
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.ws_connect(url, heartbeat=None, headers=headers) as ws,
        ):
            return await read_server_info(ws, url, timeout_s)
    except TimeoutError as err:  # an OSError whose text is empty: say what it means
        raise ControllerUnavailableError(f"{url} did not answer within {timeout_s:g} s") from err
    except (aiohttp.ClientError, OSError) as err:
        raise ControllerUnavailableError(
            f"cannot connect to {url}: {str(err) or type(err).__name__}"
        ) from err


class ControllerCommandError(Exception):
    """The controller answered a command with an error code."""

    def __init__(self, command: str, error_code: int, details: str) -> None:
        super().__init__(f"{command} failed with controller error {error_code}: {details}")
        self.command = command
        self.error_code = error_code
        self.details = details


class LiveConnection(Protocol):
    """A connection to the controller that is already open (the adapter's)."""

    @property
    def connected(self) -> bool:
        """Return whether the connection is up now."""

    async def send_command(self, command: str, *, timeout_s: float, **args: Any) -> Any:
        """Send ``command``; raise ``ControllerCommandError`` or ``ControllerUnavailableError``."""


class ControllerGateway:
    """Commands to the controller: over the live connection, or one short one without it."""

    _ids = itertools.count(1)

    def __init__(
        self, url: str | Callable[[], str], headers: Mapping[str, str] | None = None
    ) -> None:
        self._url = url
        self._headers = dict(headers or {})
        self._live: LiveConnection | None = None
        # Commands sent over the live connection and over a connection of their own.
        self.counts = {"shared": 0, "own": 0}

    @property
    def url(self) -> str:
        """Return the current controller URL."""
        return self._url() if callable(self._url) else self._url

    def attach(self, live: LiveConnection | None) -> None:
        """Send commands over ``live`` while it is connected (``None`` detaches)."""
        self._live = live

    @property
    def shared(self) -> bool:
        """Return whether the next command goes over the live connection."""
        return self._live is not None and self._live.connected

    async def call(self, command: str, *, timeout_s: float = 30.0, **args: Any) -> Any:
        """Send ``command`` and return its result.

        Raise ``ControllerCommandError`` when the controller answers an error and
        ``ControllerUnavailableError`` when it cannot be reached.
        """
        live = self._live
        if live is not None and live.connected:
            self.counts["shared"] += 1
            return await live.send_command(command, timeout_s=timeout_s, **args)
        self.counts["own"] += 1
        return await self._call_once(command, timeout_s, args)

    async def _call_once(self, command: str, timeout_s: float, args: dict[str, Any]) -> Any:
        url = self.url
        msg_id = f"atm-{next(self._ids)}"
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.ws_connect(
                    url, timeout=aiohttp.ClientWSTimeout(ws_close=5), headers=self._headers
                ) as ws,
            ):
                await read_server_info(ws, url, 10)
                await ws.send_json({"message_id": msg_id, "command": command, "args": args})
                async with asyncio.timeout(timeout_s):
                    return await _answer_to(ws, url, command, msg_id)
        except TimeoutError:
            raise  # the command took too long: the caller says what that means
        except (aiohttp.ClientError, OSError) as err:
            raise ControllerUnavailableError(
                f"the Matter controller at {url} is not reachable: {err}", {"url": url}
            ) from err


async def _answer_to(
    ws: aiohttp.ClientWebSocketResponse, url: str, command: str, msg_id: str
) -> Any:
    while True:
        msg = await ws.receive()
        if msg.type is not aiohttp.WSMsgType.TEXT:
            raise ControllerUnavailableError(
                f"the Matter controller at {url} closed the connection during '{command}'",
                {"url": url},
            )
        data = msg.json()
        if data.get("message_id") != msg_id:
            continue
        if "error_code" in data:
            raise ControllerCommandError(
                command, int(data["error_code"]), str(data.get("details") or "")
            )
        return data.get("result")
