"""The controller's WebSocket greeting, read in one place.

python-matter-server (and its successor, matterjs-server) greets every WebSocket client
with a ``server_info`` message before anything else. ``read_server_info`` reads and
checks it on an open connection and ``fetch_server_info`` connects, reads it and
disconnects; the controller supervisor's readiness probe, the commissioning calls and
the doctor use them. This module is where the single shared controller connection
(the gateway of docs/architecture.md) is to grow; it imports no Matter SDK.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from bridge.errors import ControllerUnavailableError


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


async def fetch_server_info(url: str, timeout_s: float) -> ServerInfo:
    """Connect to the controller's WebSocket, read its greeting and disconnect."""
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.ws_connect(url, heartbeat=None) as ws,
        ):
            return await read_server_info(ws, url, timeout_s)
    except (aiohttp.ClientError, OSError) as err:
        raise ControllerUnavailableError(
            f"cannot connect to {url}: {err or type(err).__name__}"
        ) from err
