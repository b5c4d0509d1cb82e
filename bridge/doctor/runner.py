"""Run every doctor check for a configuration and collect the report.

Network checks (controller, border router) run concurrently; host checks read files and
run in a worker thread so the event loop never blocks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

from bridge.config import BridgeConfig
from bridge.doctor import host as host_checks
from bridge.doctor.border_router import (
    BorderRouterProbe,
    check_border_router,
    check_thread_credentials,
    check_thread_dataset,
    check_thread_network,
    probe_border_router,
)
from bridge.doctor.controller_check import ServerInfo, check_controller, probe_controller
from bridge.doctor.host import Host
from bridge.doctor.models import CheckResult, DoctorReport, Status
from bridge.matter import KEY_HEADER, GuardError, read_key


def controller_url(config: BridgeConfig) -> str:
    """Return the WebSocket URL of the controller the bridge uses."""
    return config.matter.controller_url or f"ws://127.0.0.1:{config.matter.controller_port}/ws"


def controller_headers(config: BridgeConfig) -> dict[str, str]:
    """Return the key header the controller demands (empty when no key file is readable).

    The key is ``matter.controller_key_file``'s, or else the managed controller's own
    (``<state_dir>/controller/controller.key``, written at each bridge start).
    """
    name = config.matter.controller_key_file
    path = Path(name) if name else config.state_dir / "controller" / "controller.key"
    try:
        return {KEY_HEADER: read_key(path).decode("ascii", "replace")}
    except GuardError:
        return {}


def _host_results(config: BridgeConfig, host: Host) -> list[CheckResult]:
    d = config.doctor
    interface, how = host_checks.primary_interface(host, d.interface)
    return [
        host_checks.check_interface(host, interface, how),
        host_checks.check_ipv6_sysctl(host, interface, how),
        host_checks.check_ipv6_address(host, interface, how),
        host_checks.check_ipv6_route(host, interface, how),
        host_checks.check_controller_storage(host, d.controller_storage, d.controller_user),
        host_checks.check_clock(host),
        host_checks.check_free_disk(
            host, config.state_dir.absolute(), d.free_disk_warn_mb, d.free_disk_fail_mb
        ),
        host_checks.check_secret_files(host, [config.state_dir.absolute(), d.controller_storage]),
    ]


async def run_doctor(
    config: BridgeConfig,
    *,
    host: Host | None = None,
    controller: tuple[str, Mapping[str, str]] | None = None,
) -> DoctorReport:
    """Run all checks and return the report (never raises for a failing check).

    ``controller`` is the running controller's URL and headers (a running bridge's
    health page passes its component's: a managed controller in a network namespace
    is not where the configuration alone would look); else the configuration's.
    """
    view = host or Host(root=config.doctor.root)
    timeout = config.doctor.timeout_s
    url, headers = controller or (controller_url(config), controller_headers(config))
    otbr = config.thread.otbr_url

    async def no_controller() -> tuple[ServerInfo | None, str | None]:
        return None, None

    async def no_border_router() -> BorderRouterProbe | None:
        return None

    controller_task = (
        probe_controller(url, timeout, headers) if config.matter.enabled else no_controller()
    )
    otbr_task = probe_border_router(otbr, timeout) if otbr else no_border_router()
    (info, error), probe = await asyncio.gather(controller_task, otbr_task)
    results: list[CheckResult] = []
    if config.matter.enabled:
        results.append(check_controller(url, info, error))
    else:
        results.append(
            CheckResult(
                name="controller",
                title="Matter controller reachable, schema compatible",
                status=Status.WARN,
                found="Matter is disabled in the configuration (matter.enabled)",
                fix="set matter.enabled: true to control Matter devices",
            )
        )
    results.append(check_border_router(otbr, probe))
    if otbr:
        # Without a border router there is no Thread network to check, only the warning.
        results += [
            check_thread_network(probe),
            check_thread_dataset(probe, config.thread.dataset_hex),
            check_thread_credentials(probe, info),
        ]
    results += await asyncio.to_thread(_host_results, config, view)
    return DoctorReport(results=tuple(results))
