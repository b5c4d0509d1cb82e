"""Controller check against the real python-matter-server, plus a full doctor run.

The real controller (tests/support/fabric.py, its own instance in the fabric namespace)
answers ``server_info``; a Thread dataset is handed to it with ``set_thread_dataset`` and
the doctor must then see ``thread_credentials_set``. Controllers with another schema
cannot be run here, so one loopback WebSocket server stands in for an older and a newer
controller version; it is named as such below.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from matter_server.common.const import SCHEMA_VERSION

from bridge.config import load_config
from bridge.doctor.border_router import check_thread_credentials, probe_border_router
from bridge.doctor.controller_check import (
    CLIENT_SCHEMA_VERSION,
    check_controller,
    fetch_server_info,
    probe_controller,
)
from bridge.doctor.host import Host
from bridge.doctor.models import Status
from bridge.doctor.runner import run_doctor
from tests.appliance.otbr_standin import (
    DATASET,
    BorderRouterState,
    border_router_standin,
    free_loopback_port,
)
from tests.appliance.trees import HostTree, healthy_pi
from tests.support.fabric import Fabric, ThreadedController, running_controller


@pytest.fixture(scope="module")
def doctor_controller(fabric: Fabric) -> Iterator[ThreadedController]:
    """A controller of our own: the test hands it a Thread dataset."""
    with running_controller(fabric, "doctor") as ctl:
        yield ctl


async def _set_thread_dataset(
    url: str, headers: dict[str, str], dataset_hex: str
) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.ws_connect(url, headers=headers) as ws:
        await ws.receive_json(timeout=10)  # server_info greeting
        await ws.send_json(
            {
                "message_id": "doctor-1",
                "command": "set_thread_dataset",
                "args": {"dataset": dataset_hex},
            }
        )
        for _ in range(20):
            msg = await ws.receive_json(timeout=10)
            if msg.get("message_id") == "doctor-1":
                return dict(msg)
    raise AssertionError("no answer to set_thread_dataset")


def test_client_schema_matches_the_installed_client() -> None:
    assert CLIENT_SCHEMA_VERSION == SCHEMA_VERSION == 11


@pytest.mark.fabric
async def test_real_controller_and_thread_dataset_handover(
    doctor_controller: ThreadedController, tmp_path: Path
) -> None:
    url = doctor_controller.url
    info = await fetch_server_info(url, 10.0, doctor_controller.headers)
    assert info.schema_version == 11
    assert info.min_supported_schema_version == 9
    assert info.thread_credentials_set is False
    result = check_controller(url, info, None)
    assert result.status is Status.OK
    assert result.found.startswith(f"{url}: schema 11 (accepts clients from 9), SDK ")

    async with border_router_standin(BorderRouterState()) as otbr_url:
        probe = await probe_border_router(otbr_url, 5.0)
        assert check_thread_credentials(probe, info).status is Status.WARN

        answer = await _set_thread_dataset(url, doctor_controller.headers, DATASET.hex())
        assert "error_code" not in answer, answer
        after = await fetch_server_info(url, 10.0, doctor_controller.headers)
        assert after.thread_credentials_set is True
        handed = check_thread_credentials(probe, after)
        assert handed.status is Status.OK

        # The whole doctor over a prepared healthy Pi, the real controller and the
        # stand-in border router: every check passes.
        tree = HostTree(tmp_path / "root")
        healthy_pi(tree)
        for path, uid in (
            ("var/lib/atmosphere-bridge", 999),
            ("var/lib/atmosphere-matter-controller", 998),
        ):
            (tree.root / path).mkdir(parents=True, mode=0o700)
            (tree.root / path).chmod(0o700)
            os.chown(tree.root / path, uid, uid)
        key = tree.root / "var/lib/atmosphere-bridge/node.key"
        key.write_text("k")
        key.chmod(0o600)
        config_file = tmp_path / "config.yaml"
        config_file.write_text(
            f"state_dir: /var/lib/atmosphere-bridge\n"
            f"matter:\n  controller_url: {url}\n"
            f"  controller_key_file: {doctor_controller.key_file}\n"
            f"thread:\n  otbr_url: {otbr_url}\n"
            f"doctor:\n  root: {tree.root}\n"
            f"  controller_storage: /var/lib/atmosphere-matter-controller\n"
            f"  free_disk_warn_mb: 1\n  free_disk_fail_mb: 0\n"
        )
        config = load_config(config_file)
        report = await run_doctor(config, host=Host(root=tree.root))
    statuses = {r.name: r.status.value for r in report.results}
    assert statuses == {
        "controller": "ok",
        "border_router": "ok",
        "thread_network": "ok",
        "thread_dataset": "ok",
        "thread_credentials": "ok",
        "interface": "ok",
        "ipv6_sysctl": "ok",
        "ipv6_address": "ok",
        "ipv6_route": "ok",
        "controller_storage": "ok",
        "clock": "ok",
        "free_disk": "ok",
        "secrets": "ok",
    }, report.to_json()
    assert report.status is Status.OK
    assert report.to_json()["counts"] == {"ok": 13, "warn": 0, "fail": 0}


@asynccontextmanager
async def old_or_new_controller_standin(greeting: Any) -> AsyncIterator[str]:
    """Stand-in for a controller of another version: it only sends its greeting."""

    async def ws_handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps(greeting))
        await ws.close()
        return ws

    app = web.Application()
    app.router.add_get("/ws", ws_handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"ws://127.0.0.1:{runner.addresses[0][1]}/ws"
    finally:
        await runner.cleanup()


GREETING = {
    "fabric_id": 1,
    "compressed_fabric_id": 77,
    "schema_version": 11,
    "min_supported_schema_version": 9,
    "sdk_version": "2025.7.0",
    "wifi_credentials_set": False,
    "thread_credentials_set": False,
    "bluetooth_enabled": False,
}


@pytest.mark.parametrize(
    ("changes", "fix_start"),
    [
        ({"schema_version": 8}, "the controller is older than the bridge's client (schema 11)"),
        (
            {"schema_version": 14, "min_supported_schema_version": 12},
            "the controller needs clients of schema 12 or newer, the bridge speaks 11",
        ),
    ],
)
async def test_incompatible_controller_versions_fail(
    changes: dict[str, int], fix_start: str
) -> None:
    async with old_or_new_controller_standin({**GREETING, **changes}) as url:
        info, error = await probe_controller(url, 5.0)
    assert error is None
    assert info is not None
    result = check_controller(url, info, error)
    assert result.status is Status.FAIL
    assert result.fix.startswith(fix_start)


async def test_greeting_that_is_not_server_info_fails() -> None:
    async with old_or_new_controller_standin({"hello": "world"}) as url:
        info, error = await probe_controller(url, 5.0)
    assert info is None
    assert error == "the controller's greeting is not a server_info message"
    assert check_controller(url, info, error).status is Status.FAIL


async def test_unreachable_controller_fails() -> None:
    url = f"ws://127.0.0.1:{free_loopback_port()}/ws"
    info, error = await probe_controller(url, 2.0)
    assert info is None
    assert error is not None
    assert error.startswith(f"cannot connect to {url}: Cannot connect to host 127.0.0.1")
    result = check_controller(url, None, error)
    assert result.status is Status.FAIL
    assert result.fix.startswith("systemctl status atmosphere-matter-controller")


async def test_disabled_matter_warns(tmp_path: Path) -> None:
    tree = HostTree(tmp_path / "root")
    healthy_pi(tree)
    config = load_config(None)
    config = replace(config, matter=replace(config.matter, enabled=False))
    report = await run_doctor(config, host=Host(root=tree.root))
    controller = report.get("controller")
    assert controller.status is Status.WARN
    assert controller.found == "Matter is disabled in the configuration (matter.enabled)"
    assert report.get("border_router").status is Status.WARN
    names = [r.name for r in report.results]
    assert "thread_network" not in names
