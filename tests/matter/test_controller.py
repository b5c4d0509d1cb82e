"""The managed controller against real matter.js devices in a private namespace."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import os
import signal
import sys
import time
from typing import Any

import aiohttp
import pytest

from bridge.demo.virtual_devices import DeviceKind
from bridge.errors import ControllerUnavailableError
from bridge.matter.controller.managed import (
    GUARD_SCRIPT,
    ControllerSettings,
    ControllerState,
    ManagedController,
)
from tests.support.fabric import Fabric, ThreadedController
from tests.support.real import require, root_reason

pytestmark = pytest.mark.fabric

_ids = itertools.count(1)


async def ws_call(
    ctl: ThreadedController, command: str, timeout_s: float = 60.0, **args: Any
) -> Any:
    """Send one command to the controller and return its result (raise on error)."""
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(ctl.url, headers=ctl.headers) as ws,
    ):
        await ws.receive_json()
        msg_id = str(next(_ids))
        await ws.send_json({"message_id": msg_id, "command": command, "args": args})
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await ws.receive_json()
                if msg.get("message_id") == msg_id:
                    assert "error_code" not in msg, msg
                    return msg.get("result")


async def test_commission_command_and_restart_after_kill(
    fabric: Fabric, matter_controller: ThreadedController
) -> None:
    dev = await asyncio.to_thread(fabric.device, DeviceKind.ONOFF)
    assert dev.pairing is not None
    node = await ws_call(
        matter_controller, "commission_with_code", code=dev.pairing.manual, network_only=True
    )
    node_id = node["node_id"]
    assert node["available"] is True
    assert node["attributes"]["0/40/5"] == "Test onoff"  # NodeLabel read from the device

    mark = dev.mark()
    await ws_call(
        matter_controller,
        "device_command",
        node_id=node_id,
        endpoint_id=1,
        cluster_id=6,
        command_name="On",
        payload={},
    )
    change = await asyncio.to_thread(dev.wait_state, "onOff", "onOff", True, since=mark)
    assert change.local is False

    # The SDK's hard-coded files live in the instance's own directory, not in /data.
    settings = matter_controller.controller.settings
    sdk_files = sorted(p.name for p in (settings.state_dir / "sdk-data").iterdir())
    assert sdk_files == ["chip_config.ini", "chip_counters.ini", "chip_factory.ini"]
    assert (settings.state_dir / "sdk-tmp" / "chip_kvs").is_file()

    old_pid = matter_controller.pid
    assert old_pid is not None
    restarts = matter_controller.controller.restarts
    os.kill(old_pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while matter_controller.pid in (old_pid, None) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.to_thread(matter_controller.wait_ready, 60)
    assert matter_controller.controller.restarts == restarts + 1
    assert matter_controller.pid not in (None, old_pid)

    # The stored node comes back and still obeys.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        nodes = await ws_call(matter_controller, "get_nodes")
        if any(n["node_id"] == node_id and n["available"] for n in nodes):
            break
        await asyncio.sleep(0.5)
    mark = dev.mark()
    await ws_call(
        matter_controller,
        "device_command",
        node_id=node_id,
        endpoint_id=1,
        cluster_id=6,
        command_name="Off",
        payload={},
    )
    await asyncio.to_thread(dev.wait_state, "onOff", "onOff", False, since=mark)


async def test_missing_venv_is_a_clear_error(fabric: Fabric) -> None:
    settings = ControllerSettings(
        venv=fabric.base_dir / "no-such-venv", state_dir=fabric.base_dir / "ctl-missing"
    )
    ctl = ManagedController(settings)
    with pytest.raises(ControllerUnavailableError, match="make install"):
        await ctl.start()
    assert ctl.state is ControllerState.STOPPED


async def test_stop_ends_the_process_and_reports_states(fabric: Fabric) -> None:
    from bridge.events import EventBus

    bus = EventBus()
    sub = bus.subscribe("controller.")
    ctl = ManagedController(fabric.controller_settings("lifecycle"), bus)
    await ctl.start()
    pid = ctl.pid
    assert pid is not None
    assert ctl.state is ControllerState.RUNNING
    await ctl.stop()
    assert ctl.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    states = []
    while not sub.queue.empty():
        states.append((await sub.get()).data["state"])
    assert states == ["starting", "running", "stopped"]


async def test_a_restart_the_bridge_asks_for_is_immediate_and_no_crash(fabric: Fabric) -> None:
    ctl = ManagedController(fabric.controller_settings("asked-restart"))
    ready: list[float] = []
    ctl.on_ready = lambda: ready.append(time.monotonic())
    await ctl.start()
    try:
        old = ctl.pid
        assert old is not None
        assert len(ready) == 1
        assert await ctl.restart("test") is True
        with pytest.raises(ProcessLookupError):
            os.kill(old, 0)
        await ctl.wait_ready(90)
        assert ctl.pid not in (None, old)
        # Not a crash: no back-off, not counted among the restarts after a death.
        assert (ctl.restarts, ctl.requested_restarts) == (0, 1)
        assert len(ready) == 2  # the adapter is told at once that it may reconnect
    finally:
        await ctl.stop()
    assert await ctl.restart("after stop") is False


# A supervising process (as a bridge is) that starts the managed controller, says its
# PID and waits to be killed.
_SUPERVISOR = """
import asyncio, json, sys
from pathlib import Path
from bridge.matter.controller.managed import ControllerSettings, ManagedController
from bridge.netns import NetworkNamespace

async def main():
    a = json.loads(sys.argv[1])
    ctl = ManagedController(ControllerSettings(
        venv=Path(a["venv"]), state_dir=Path(a["state_dir"]), port=a["port"],
        netns=NetworkNamespace(**a["netns"]), paa_dir=Path(a["paa_dir"])))
    await ctl.start()
    print(ctl.pid, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.mark.parametrize("pid_file", ["written", "missing", "stale"])
async def test_a_server_left_by_a_killed_bridge_is_ended_on_the_next_start(
    fabric: Fabric, pid_file: str
) -> None:
    """``missing`` / ``stale``: a server restarted while the state disk was full could not
    write its pid file (the soak's disk-full fault, then a bridge SIGKILL, left one
    running, and the restarted bridge never came up)."""
    settings = fabric.controller_settings(f"orphan-{pid_file}")
    assert settings.netns is not None
    assert settings.paa_dir is not None
    args = json.dumps(
        {
            "venv": str(settings.venv),
            "state_dir": str(settings.state_dir),
            "port": settings.port,
            "netns": dataclasses.asdict(settings.netns),
            "paa_dir": str(settings.paa_dir),
        }
    )
    bridge = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _SUPERVISOR, args, stdout=asyncio.subprocess.PIPE
    )
    assert bridge.stdout is not None
    orphan = int(await asyncio.wait_for(bridge.stdout.readline(), 120))
    bridge.kill()  # SIGKILL: no chance to stop its server, which runs in its own session
    await bridge.wait()
    await asyncio.sleep(0.5)
    assert _alive(orphan)  # the server outlived its supervisor
    assert settings.pid_path.read_text() == f"{orphan}\n"
    if pid_file == "missing":
        settings.pid_path.unlink()
    elif pid_file == "stale":  # an earlier server's pid, long gone
        settings.pid_path.write_text(f"{bridge.pid}\n")

    ctl = ManagedController(settings)
    try:
        await ctl.start()
        assert not _alive(orphan)
        assert ctl.pid is not None
        assert ctl.pid != orphan
        assert settings.pid_path.read_text() == f"{ctl.pid}\n"
        # The orphan is gone, so what answers on the port is the new server.
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(ctl.url, headers=ctl.headers) as ws,
        ):
            info = await ws.receive_json()
        assert "schema_version" in info
        assert ctl.state is ControllerState.RUNNING
        assert ctl.restarts == 0  # it bound the port at the first try
    finally:
        await ctl.stop()
        if _alive(orphan):
            os.kill(orphan, signal.SIGKILL)
    assert not settings.pid_path.exists()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


@pytest.mark.namespaces
def test_isolation_keeps_the_servers_own_tmp_paths_visible() -> None:
    """A checkout under /tmp (a CI clone) still gets a private /tmp for chip_kvs."""
    require(root_reason("path isolation (mount namespaces)"))
    from pathlib import Path

    settings = ControllerSettings(
        venv=Path("/tmp/ci-clone/.venv-controller"), state_dir=Path("/var/tmp/atm/ctrl")
    )
    argv = ManagedController(settings).command()
    assert argv[:4] == ["unshare", "--mount", "--propagation", "private"]
    script_args = argv[argv.index("-c") + 3 :]  # after: -c SCRIPT $0
    # Kept visible: the venv's top folder under /tmp and, when this checkout itself lives
    # under /tmp (a CI clone), the guard launcher's too.
    keep = ["ci-clone"]
    if GUARD_SCRIPT.parts[:2] == ("/", "tmp"):
        keep.append(GUARD_SCRIPT.parts[2])
    assert script_args[:3] == [
        "/var/tmp/atm/ctrl/sdk-data",
        "/var/tmp/atm/ctrl/sdk-tmp",
        ":".join(keep),
    ]
    # The controller's interpreter runs the guard launcher (isolated from PYTHON* vars).
    assert script_args[3:6] == [
        "/tmp/ci-clone/.venv-controller/bin/python",
        "-I",
        str(GUARD_SCRIPT),
    ]

    moved = ControllerSettings(venv=Path("/opt/venv"), state_dir=Path("/tmp/a/state"))
    argv = ManagedController(moved).command()
    script_args = argv[argv.index("-c") + 3 :]  # after: -c SCRIPT $0
    assert script_args[:3] == [
        "/tmp/a/state/sdk-data",
        "/tmp/a/state/sdk-tmp",
        ":".join(["a", *keep[1:]]),
    ]
