"""Doctor check of the Matter controller: reachable, schema compatible, Thread dataset set.

python-matter-server (and its successor) greets every WebSocket client with a
``server_info`` message; that is all the doctor reads, so it never changes anything.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import aiohttp

from bridge.doctor.models import CheckResult, Status
from bridge.errors import ControllerUnavailableError

# The schema matter-python-client 1.5.5 (the bridge's client) speaks; it needs a server
# whose schema_version is at least this and whose min_supported_schema_version is at most it.
CLIENT_SCHEMA_VERSION = 11


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerInfo:
    """The fields of the controller's ``server_info`` greeting the doctor uses."""

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


async def fetch_server_info(url: str, timeout_s: float) -> ServerInfo:
    """Connect to the controller's WebSocket, read its greeting and disconnect."""
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.ws_connect(url, heartbeat=None) as ws,
        ):
            msg = await ws.receive(timeout=timeout_s)
    except (aiohttp.ClientError, OSError, TimeoutError) as err:
        raise ControllerUnavailableError(
            f"cannot connect to {url}: {err or type(err).__name__}"
        ) from err
    if msg.type is not aiohttp.WSMsgType.TEXT:
        raise ControllerUnavailableError(f"{url} sent no greeting ({msg.type.name})")
    try:
        data = json.loads(msg.data)
    except ValueError as err:
        raise ControllerUnavailableError(f"{url} sent a greeting that is not JSON") from err
    if not isinstance(data, dict):
        raise ControllerUnavailableError(f"{url} sent a greeting that is not an object")
    return ServerInfo.from_json(data)


def check_controller(url: str, info: ServerInfo | None, error: str | None) -> CheckResult:
    """Turn the greeting (or the connection error) into the controller check."""
    title = "Matter controller reachable, schema compatible"
    if info is None:
        return CheckResult(
            name="controller", title=title, status=Status.FAIL,
            found=error or f"no answer from {url}",
            fix="systemctl status atmosphere-matter-controller; journalctl -u "
            "atmosphere-matter-controller -e (missing libnl-3-200/libnl-route-3-200 or an "
            "unwritable /data are the usual causes); check matter.controller_url",
        )
    found = (
        f"{url}: schema {info.schema_version} (accepts clients from "
        f"{info.min_supported_schema_version}), SDK {info.sdk_version}, fabric {info.fabric_id}"
    )
    details = {"schema_version": info.schema_version,
               "min_supported_schema_version": info.min_supported_schema_version,
               "sdk_version": info.sdk_version,
               "thread_credentials_set": info.thread_credentials_set}
    if info.schema_version < CLIENT_SCHEMA_VERSION:
        return CheckResult(
            name="controller", title=title, status=Status.FAIL, found=found, details=details,
            fix=f"the controller is older than the bridge's client (schema "
            f"{CLIENT_SCHEMA_VERSION}): upgrade it (scripts/install.sh installs "
            f"python-matter-server 8.1.2)",
        )
    if info.min_supported_schema_version > CLIENT_SCHEMA_VERSION:
        return CheckResult(
            name="controller", title=title, status=Status.FAIL, found=found, details=details,
            fix=f"the controller needs clients of schema {info.min_supported_schema_version} "
            f"or newer, the bridge speaks {CLIENT_SCHEMA_VERSION}: upgrade the bridge",
        )
    return CheckResult(name="controller", title=title, status=Status.OK, found=found,
                       details=details)


async def probe_controller(url: str, timeout_s: float) -> tuple[ServerInfo | None, str | None]:
    """Return the greeting or the reason there was none."""
    try:
        return await asyncio.wait_for(fetch_server_info(url, timeout_s), timeout_s + 1), None
    except ControllerUnavailableError as err:
        return None, err.message
    except TimeoutError:
        return None, f"{url} did not answer within {timeout_s:g} s"
