"""Doctor check of the Matter controller: reachable, schema compatible, Thread dataset set.

python-matter-server (and its successor) greets every WebSocket client with a
``server_info`` message (read by ``bridge.matter.controller.gateway``); that is all the doctor
reads, so it never changes anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from bridge.doctor.models import CheckResult, Status
from bridge.errors import ControllerUnavailableError
from bridge.matter import CLIENT_SCHEMA_VERSION, ServerInfo, fetch_server_info

__all__ = [
    "CLIENT_SCHEMA_VERSION",
    "ServerInfo",
    "check_controller",
    "fetch_server_info",
    "probe_controller",
]


def check_controller(url: str, info: ServerInfo | None, error: str | None) -> CheckResult:
    """Turn the greeting (or the connection error) into the controller check."""
    title = "Matter controller reachable, schema compatible"
    if info is None:
        return CheckResult(
            name="controller",
            title=title,
            status=Status.FAIL,
            found=error or f"no answer from {url}",
            fix="systemctl status atmosphere-matter-controller; journalctl -u "
            "atmosphere-matter-controller -e (missing libnl-3-200/libnl-route-3-200 or an "
            "unwritable /data are the usual causes); check matter.controller_url",
        )
    found = (
        f"{url}: schema {info.schema_version} (accepts clients from "
        f"{info.min_supported_schema_version}), SDK {info.sdk_version}, fabric {info.fabric_id}"
    )
    details = {
        "schema_version": info.schema_version,
        "min_supported_schema_version": info.min_supported_schema_version,
        "sdk_version": info.sdk_version,
        "thread_credentials_set": info.thread_credentials_set,
    }
    if info.schema_version < CLIENT_SCHEMA_VERSION:
        return CheckResult(
            name="controller",
            title=title,
            status=Status.FAIL,
            found=found,
            details=details,
            fix=f"the controller is older than the bridge's client (schema "
            f"{CLIENT_SCHEMA_VERSION}): upgrade it (scripts/install.sh installs "
            f"python-matter-server 8.1.2)",
        )
    if info.min_supported_schema_version > CLIENT_SCHEMA_VERSION:
        return CheckResult(
            name="controller",
            title=title,
            status=Status.FAIL,
            found=found,
            details=details,
            fix=f"the controller needs clients of schema {info.min_supported_schema_version} "
            f"or newer, the bridge speaks {CLIENT_SCHEMA_VERSION}: upgrade the bridge",
        )
    return CheckResult(
        name="controller", title=title, status=Status.OK, found=found, details=details
    )


async def probe_controller(
    url: str, timeout_s: float, headers: Mapping[str, str] | None = None
) -> tuple[ServerInfo | None, str | None]:
    """Return the greeting or the reason there was none."""
    try:
        info = await asyncio.wait_for(fetch_server_info(url, timeout_s, headers), timeout_s + 1)
    except ControllerUnavailableError as err:
        return None, err.message
    except TimeoutError:
        return None, f"{url} did not answer within {timeout_s:g} s"
    return info, None
