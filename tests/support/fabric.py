"""Pytest fixtures for the real Matter fabric: namespace, managed controller, virtual devices.

Use them from any test (they are imported by ``tests/conftest.py``) and mark the test
``@pytest.mark.fabric``:

- ``fabric`` (session): a private network namespace with a PAA trust store and a
  factory for fresh virtual devices (``fabric.device(DeviceKind.COLOR)``) with unique
  ports, discriminators and passcodes. Skips with the reason when namespaces, Node.js
  or the controller venv are missing here (fails with it under ATMOSPHERE_REQUIRE_REAL=1).
- ``matter_controller`` (session): a ``ManagedController`` (python-matter-server 8.1.2)
  running inside the namespace, supervised from a background event loop so any test's
  loop can use it; ``.url`` is reachable from the test process.
- ``virtual_devices`` (session): the four fresh devices (on/off, dimmable, colour,
  thermostat), started, not yet commissioned, with ``.pairing`` codes.

A missing part goes through ``tests.support.real.require``: skip here, fail under CI.

Everything started here is stopped by PID at session end and the namespace removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest
import yaml

from bridge import netns
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import (
    DeviceKind,
    VirtualDevice,
    node_available,
    write_test_paa,
)
from bridge.matter.controller.managed import ControllerSettings, ManagedController
from tests.support.real import require

REPO = Path(__file__).resolve().parents[2]
CONTROLLER_VENV = Path(os.environ.get("ATMOSPHERE_CONTROLLER_VENV", REPO / ".venv-controller"))
T = TypeVar("T")

# The lights and the thermostat every fabric test module may share.
FOUR_KINDS = (DeviceKind.ONOFF, DeviceKind.DIMMABLE, DeviceKind.COLOR, DeviceKind.THERMOSTAT)
# Valid Matter passcodes (not in the spec's list of trivial ones), one per device.
_PASSCODES = itertools.count(20202101)


def fabric_unavailable_reason() -> str | None:
    """Return why the real fabric cannot run on this machine, or None."""
    reason = netns.unsupported_reason()
    if reason:
        return f"real Matter fabric skipped: {reason}"
    reason = node_available()
    if reason:
        return f"real Matter fabric skipped: {reason}"
    if not (CONTROLLER_VENV / "bin" / "matter-server").exists():
        return (
            f"real Matter fabric skipped: controller venv {CONTROLLER_VENV} is missing "
            "(run 'make install')"
        )
    return None


@dataclass
class Fabric:
    """A private namespace, a trust store and a factory of fresh virtual devices."""

    namespace: netns.NetworkNamespace
    base_dir: Path
    paa_dir: Path
    devices: list[VirtualDevice] = field(default_factory=list)
    _ports: Iterator[int] = field(default_factory=lambda: itertools.count(5540))
    _controller_ports: Iterator[int] = field(default_factory=lambda: itertools.count(5580))
    _short_discriminators: Iterator[int] = field(default_factory=lambda: itertools.count(0))

    def device(
        self, kind: DeviceKind, *, label: str | None = None, options: tuple[str, ...] = ()
    ) -> VirtualDevice:
        """Start and return a fresh (uncommissioned) virtual device of ``kind``.

        ``options`` are more of the script's flags (``("--level-trim", "200")``).
        """
        index = len(self.devices)
        # Manual codes carry only the top 4 bits of the discriminator: keep them distinct
        # so a controller never dials another test's device.
        short = next(self._short_discriminators) % 16
        dev = VirtualDevice(
            kind=kind,
            state_dir=self.base_dir / f"device-{index}-{kind.value}",
            port=next(self._ports),
            passcode=next(_PASSCODES),
            discriminator=(short << 8) | 0x0A,
            label=label,
            netns=self.namespace,
            options=options,
        )
        self.devices.append(dev)
        dev.start()
        return dev

    def controller_settings(self, name: str) -> ControllerSettings:
        """Return settings for a new managed controller inside the namespace."""
        return ControllerSettings(
            venv=CONTROLLER_VENV,
            state_dir=self.base_dir / f"controller-{name}",
            port=next(self._controller_ports),
            netns=self.namespace,
            paa_dir=self.paa_dir,
        )

    def close(self) -> None:
        """Stop every device started here (in parallel: each takes a moment to close)."""
        stoppers = [threading.Thread(target=dev.stop) for dev in self.devices]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join(30)


class ThreadedController:
    """A ManagedController supervised by its own event loop in a background thread."""

    def __init__(self, settings: ControllerSettings) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.controller = self._call(self._create(settings))

    async def _create(self, settings: ControllerSettings) -> ManagedController:
        return ManagedController(settings)

    def _call(self, coro: Coroutine[Any, Any, T], timeout_s: float = 120.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    @property
    def url(self) -> str:
        """Return the controller's WebSocket URL (reachable from the host namespace)."""
        return self.controller.url

    @property
    def pid(self) -> int | None:
        """Return the server's PID."""
        return self.controller.pid

    @property
    def headers(self) -> dict[str, str]:
        """Return the key header the controller demands of every client."""
        return self.controller.headers

    @property
    def key_file(self) -> str:
        """Return the 0600 file holding that key (for a bridge using it as external)."""
        return str(self.controller.settings.key_path)

    def start(self) -> None:
        """Start the server and wait until it answers."""
        self._call(self.controller.start())

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """Wait until the (possibly restarted) server answers again."""
        self._call(self.controller.wait_ready(timeout_s), timeout_s + 5)

    def stop(self) -> None:
        """Stop the server and the loop thread."""
        try:
            self._call(self.controller.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


@contextlib.contextmanager
def open_fabric(name: str) -> Iterator[Fabric]:
    """Create the fabric namespace ``name`` with a trust store; tear it all down on exit."""
    # Not under /tmp: the controller's private mount binds its own directory over /tmp.
    base = Path(tempfile.mkdtemp(prefix="atmosphere-fabric-", dir="/var/tmp"))
    ns = netns.create_namespace(name)
    paa_dir = base / "paa"
    fab = Fabric(namespace=ns, base_dir=base, paa_dir=paa_dir)
    try:
        write_test_paa(paa_dir)
        yield fab
    finally:
        fab.close()
        netns.delete_namespace(ns.name)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def fabric() -> Iterator[Fabric]:
    """Yield a private fabric namespace with a PAA trust store and a device factory."""
    require(fabric_unavailable_reason())
    with open_fabric(f"atm-test-{os.getpid()}") as fab:
        yield fab


@contextlib.contextmanager
def running_controller(fabric: Fabric, name: str) -> Iterator[ThreadedController]:
    """Run a controller of its own (state under ``name``) in the fabric; stop it after."""
    ctl = ThreadedController(fabric.controller_settings(name))
    try:
        ctl.start()
        yield ctl
    finally:
        ctl.stop()


@pytest.fixture(scope="session")
def matter_controller(fabric: Fabric) -> Iterator[ThreadedController]:
    """Yield a running managed controller inside the fabric namespace."""
    with running_controller(fabric, "session") as ctl:
        yield ctl


@pytest.fixture(scope="session")
def virtual_devices(fabric: Fabric) -> dict[DeviceKind, VirtualDevice]:
    """Return the four fresh virtual devices, started and waiting to be commissioned."""
    return {kind: fabric.device(kind) for kind in FOUR_KINDS}


class ThreadedBridge:
    """A full ``BridgeService`` (managed controller in the fabric namespace, HTTP API on
    127.0.0.1) run by its own event loop in a background thread, with an admin token."""

    def __init__(self, fabric: Fabric, name: str) -> None:
        from bridge.auth.keys import KEY_FILE_NAME, NodeKey
        from bridge.auth.tokens import issue_token
        from bridge.config import ApiConfig, BridgeConfig, MatterConfig
        from bridge.demo.virtual_devices import write_test_paa as _paa

        settings = fabric.controller_settings(name)
        self.state_dir = settings.state_dir.parent / f"bridge-{name}"
        _paa(self.state_dir / "controller" / "paa")
        self.config = BridgeConfig(
            state_dir=self.state_dir,
            api=ApiConfig(host="127.0.0.1", port=0),
            matter=MatterConfig(
                netns=fabric.namespace.name,
                controller_venv=str(CONTROLLER_VENV),
                controller_port=settings.port,
            ),
        )
        key = NodeKey.load_or_create(self.state_dir / KEY_FILE_NAME)
        self.token = issue_token(key, agent_id="fabric-tests", permissions=["*"], ttl_s=86_400)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.service: Any = None
        self.url = ""

    def call(self, coro: Coroutine[Any, Any, T], timeout_s: float = 180.0) -> T:
        """Run ``coro`` on the bridge's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    async def _start(self) -> None:
        from bridge.service import BridgeService

        self.service = BridgeService(self.config)
        await self.service.start()
        port = await self.service.start_api("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        """Start the service (controller, tools, API)."""
        self.call(self._start())

    @property
    def controller(self) -> ManagedController:
        """Return the bridge's managed controller."""
        ctl = self.service.matter.controller
        assert ctl is not None
        return ctl  # type: ignore[no-any-return]

    def stop(self) -> None:
        """Stop the service and the loop thread."""
        try:
            if self.service is not None:
                self.call(self.service.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


async def commission_codes(url: str, headers: dict[str, str], codes: list[str]) -> list[int]:
    """Commission each pairing code in turn over the controller's WebSocket; return node ids."""
    ids = itertools.count(1)
    nodes: list[int] = []
    # The controller answers only clients sending its per-run key (controller_guard).
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, max_msg_size=0, headers=headers) as ws,
    ):
        await ws.receive_json()  # server info
        for code in codes:
            message_id = str(next(ids))
            await ws.send_json(
                {
                    "message_id": message_id,
                    "command": "commission_with_code",
                    "args": {"code": code, "network_only": True},
                }
            )
            async with asyncio.timeout(180):
                while (msg := await ws.receive_json()).get("message_id") != message_id:
                    pass
            assert "error_code" not in msg, msg
            nodes.append(int(msg["result"]["node_id"]))
    return nodes


def start_and_commission(controller: ThreadedController, devices: list[VirtualDevice]) -> list[int]:
    """Start ``devices`` (three at a time) and commission each by its QR code; return node ids."""
    with ThreadPoolExecutor(3) as pool:  # list() re-raises a device that did not start
        list(pool.map(lambda dev: dev.start(timeout_s=120), devices))
    codes = []
    for dev in devices:
        assert dev.pairing is not None
        codes.append(dev.pairing.qr)
    return asyncio.run(commission_codes(controller.url, controller.headers, codes))


BRIDGE_PROGRAM = Path(sys.executable).parent / "atmosphere-bridge"


@dataclass
class BridgeProcess:
    """A real ``atmosphere-bridge run`` in a fabric's namespace, called over HTTP."""

    url: str
    token: str
    log: Path
    process: subprocess.Popen[bytes]

    def request(self, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
        """Send one request with the bridge's token; return the JSON answer, error or not."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            return json.loads(err.read() or b"null")

    def commission(self, device: VirtualDevice, name: str) -> list[str]:
        """Commission ``device`` under ``name`` through the bridge; return its tools' names."""
        assert device.pairing is not None
        body = self.request(
            "POST",
            "/v1/devices/commission",
            {"code": device.pairing.manual, "name": name},
            timeout=300,
        )
        assert isinstance(body, dict), body
        assert isinstance(body.get("tools"), list), body
        return list(body["tools"])

    def tail(self) -> str:
        """Return the end of the bridge's log (for an assertion's message)."""
        return self.log.read_text(errors="replace")[-3000:]


@contextlib.contextmanager
def bridge_process(fabric: Fabric, port: int, agent_id: str) -> Iterator[BridgeProcess]:
    """Run ``atmosphere-bridge run`` with its managed controller inside ``fabric``.

    It listens on ``port`` at the namespace's address; the token it is called with
    holds every permission. Yields once ``/healthz`` answers (at most 120 s); stopped
    with SIGINT (SIGKILL after 30 s) on exit.
    """
    ns = fabric.namespace
    state = fabric.base_dir / f"bridge-state-{port}"
    token = issue_token(
        NodeKey.load_or_create(state / KEY_FILE_NAME),
        agent_id=agent_id,
        permissions=["*"],
        ttl_s=3600,
    )
    write_test_paa(state / "controller" / "paa")
    config = fabric.base_dir / f"bridge-{port}.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(state),
                "api": {"host": "0.0.0.0", "port": port},
                "matter": {
                    "enabled": True,
                    "netns": ns.name,
                    "controller_venv": str(CONTROLLER_VENV),
                    "controller_port": fabric.controller_settings(f"bridge-{port}").port,
                },
            }
        )
    )
    log = fabric.base_dir / f"bridge-{port}.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*ns.exec_prefix(), str(BRIDGE_PROGRAM), "--config", str(config), "run"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    bridge = BridgeProcess(f"http://{ns.ns_address}:{port}", token, log, proc)
    try:
        deadline = time.monotonic() + 120
        while True:
            with contextlib.suppress(OSError, ValueError):
                if bridge.request("GET", "/healthz", timeout=2) is not None:
                    break
            assert proc.poll() is None, bridge.tail()
            assert time.monotonic() < deadline, bridge.tail()
            time.sleep(0.3)
        yield bridge
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
