"""``atmosphere-bridge demo`` (``make demo``): a working bridge with ten virtual Matter devices.

It creates a private network namespace, starts ten matter.js devices in it (an on/off
light, a dimmable light, an extended-colour light, a heating/cooling thermostat, a fan, a
robot vacuum with rooms, a plug with energy metering, a button, a leak sensor and a
garage door),
runs the bridge with its managed controller inside the namespace, commissions the
devices through the bridge's own HTTP API, names them and puts them in rooms, and then
serves the API on ``127.0.0.1`` in the user's ordinary network namespace. It prints a
ready banner with a demo token and three commands to paste. Ctrl-C (or SIGTERM) stops
every process it started and removes the namespace. Nothing reaches any other network:
the namespace's only link is a veth pair with private addresses to this host.

The bridge runs on the resolved configuration (``bridge.cli.config``: file, environment,
flags) except what the sandbox needs: its state lives under ``--state-dir`` (not the
configured ``state_dir``, since it is recreated on each run), the controller is the
managed one inside the namespace, the API listens on 127.0.0.1 at ``--port`` (else
``$DEMO_PORT``, else ``api.port``), and the mesh and ``mcp_servers`` stay off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from bridge import netns
from bridge.cli.config import add_config_flag, resolved_config
from bridge.demo.virtual_devices import (
    DeviceKind,
    VirtualDevice,
    node_available,
    write_test_paa,
)
from bridge.errors import InternalError

if TYPE_CHECKING:
    from bridge.config import BridgeConfig
    from bridge.service import BridgeService

REPO = Path(__file__).resolve().parents[2]
NETNS_PREFIX = "atm-demo-"
DEMO_TOKEN_TTL_S = 7 * 86_400


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoDevice:
    """One virtual device of the demo and what it is called."""

    kind: DeviceKind
    name: str
    room: str
    discriminator: int
    passcode: int


DEMO_DEVICES = (
    DemoDevice(
        kind=DeviceKind.ONOFF,
        name="Living Room Light",
        room="Living Room",
        discriminator=0x10A,
        passcode=20202201,
    ),
    DemoDevice(
        kind=DeviceKind.DIMMABLE,
        name="Kitchen Dimmer",
        room="Kitchen",
        discriminator=0x20A,
        passcode=20202202,
    ),
    DemoDevice(
        kind=DeviceKind.COLOR,
        name="Bedroom Color Light",
        room="Bedroom",
        discriminator=0x30A,
        passcode=20202203,
    ),
    DemoDevice(
        kind=DeviceKind.THERMOSTAT,
        name="Hall Thermostat",
        room="Hall",
        discriminator=0x40A,
        passcode=20202204,
    ),
    # Issue 29's kinds: a fan, a robot vacuum with rooms, a plug with energy metering, a
    # button (events only: no tool of its own), a leak sensor and a garage door.
    DemoDevice(
        kind=DeviceKind.FAN,
        name="Bedroom Fan",
        room="Bedroom",
        discriminator=0x50A,
        passcode=20202205,
    ),
    DemoDevice(
        kind=DeviceKind.ROBOT_VACUUM,
        name="Robot Vacuum",
        room="Living Room",
        discriminator=0x60A,
        passcode=20202206,
    ),
    DemoDevice(
        kind=DeviceKind.ENERGY_PLUG,
        name="Desk Energy Plug",
        room="Office",
        discriminator=0x70A,
        passcode=20202207,
    ),
    DemoDevice(
        kind=DeviceKind.BUTTON,
        name="Hall Button",
        room="Hall",
        discriminator=0x80A,
        passcode=20202208,
    ),
    DemoDevice(
        kind=DeviceKind.LEAK,
        name="Sink Leak Sensor",
        room="Kitchen",
        discriminator=0x90A,
        passcode=20202209,
    ),
    DemoDevice(
        kind=DeviceKind.GARAGE_DOOR,
        name="Garage Door",
        room="Garage",
        discriminator=0xA0A,
        passcode=20202210,
    ),
)


class DemoError(InternalError):
    """The demo cannot run here."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` command."""
    p = subparsers.add_parser("demo", help="run the bridge with ten virtual Matter devices")
    add_config_flag(
        p,
        "--port",
        key="api.port",
        type=int,
        help="API port on 127.0.0.1 (default $DEMO_PORT, else api.port)",
    )
    p.add_argument(
        "--state-dir",
        type=Path,
        default=REPO / ".demo",
        help="demo state (recreated on each run; default .demo/)",
    )
    p.add_argument(
        "--exit-after-ready",
        action="store_true",
        help="stop right after the banner (for checks and timing)",
    )
    p.set_defaults(func=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    """Run the demo until Ctrl-C."""
    from bridge import eventloop
    from bridge.config import Source

    resolved = resolved_config(args)
    base = resolved.config
    demo_port = os.environ.get("DEMO_PORT", "").strip()
    if resolved.sources["api.port"] is not Source.FLAG and demo_port:
        try:
            base = replace(base, api=replace(base.api, port=int(demo_port)))
        except ValueError as err:
            raise DemoError(f"$DEMO_PORT must be a port number, not {demo_port!r}") from err
    if not 0 < base.api.port < 65536:
        raise DemoError(f"the demo needs a fixed API port (1-65535), not {base.api.port}")
    return eventloop.run(run_demo(args.state_dir, base, exit_after_ready=args.exit_after_ready))


def _cleanup_stale_namespaces() -> None:
    # A demo killed with SIGKILL leaves its namespace behind; its PID says whose it was.
    out = subprocess.run(
        ["ip", "netns", "list"],  # noqa: S607 - iproute2 from PATH
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    for match in re.finditer(rf"^{NETNS_PREFIX}(\d+)", out, re.MULTILINE):
        pid = int(match.group(1))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            netns.delete_namespace(match.group(0))
        except PermissionError:
            continue


def _check_prerequisites(port: int) -> None:
    reason = netns.unsupported_reason() or node_available()
    if reason:
        raise DemoError(f"the demo needs a private network namespace and Node.js: {reason}")
    import socket

    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as err:
            raise DemoError(
                f"port {port} on 127.0.0.1 is in use; run with DEMO_PORT=<free port> make demo"
            ) from err


async def run_demo(state_root: Path, base: BridgeConfig, *, exit_after_ready: bool = False) -> int:
    """Bring the demo up on ``base`` (sandboxed), print the banner, wait, tear all down."""
    # The service pulls in the Matter SDK (seconds): only a running demo needs it.
    from bridge.auth.keys import KEY_FILE_NAME, NodeKey
    from bridge.auth.tokens import issue_token
    from bridge.matter import CONTROLLER_DIR
    from bridge.service import BridgeService

    t0 = time.monotonic()
    port = base.api.port
    _check_prerequisites(port)
    _cleanup_stale_namespaces()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    shutil.rmtree(state_root, ignore_errors=True)
    state_dir = state_root / "state"
    ns = await asyncio.to_thread(netns.create_namespace, f"{NETNS_PREFIX}{os.getpid()}")
    devices: list[VirtualDevice] = []
    service: BridgeService | None = None
    try:
        _say(t0, f"namespace {ns.name}: host {ns.host_address} <-> {ns.ns_address}")
        await asyncio.to_thread(write_test_paa, state_dir / CONTROLLER_DIR / "paa")
        devices = [
            VirtualDevice(
                kind=d.kind,
                state_dir=state_root / "devices" / d.kind.value,
                port=5540 + i,
                passcode=d.passcode,
                discriminator=d.discriminator,
                label=d.name,
                netns=ns,
            )
            for i, d in enumerate(DEMO_DEVICES)
        ]
        await asyncio.gather(*(asyncio.to_thread(dev.start) for dev in devices))
        _say(t0, f"{len(devices)} virtual devices are up")
        config = replace(
            base,
            state_dir=state_dir,
            api=replace(base.api, host="127.0.0.1"),
            matter=replace(base.matter, enabled=True, controller_url=None, netns=ns.name),
            mesh=replace(base.mesh, enabled=False),
            mcp_servers=(),
        )
        service = BridgeService(config)
        await service.start()
        assert service.matter is not None  # noqa: S101 - Matter is on in this config
        await service.start_api("127.0.0.1", port)
        pid = service.matter.status().get("pid")
        _say(t0, f"bridge up; controller {service.matter.url} (pid {pid})")
        key = NodeKey.load_or_create(state_dir / KEY_FILE_NAME)
        token = issue_token(
            key, agent_id="demo", permissions=["device:*", "core:*"], ttl_s=DEMO_TOKEN_TTL_S
        )
        await _commission_all(service, devices, token, port, t0)
        _banner(token, port, time.monotonic() - t0, service)
        if not exit_after_ready:
            await stop.wait()
        _say(t0, "stopping")
    finally:
        if service is not None:
            await service.stop()
        for dev in devices:
            await asyncio.to_thread(dev.stop)
        await asyncio.to_thread(netns.delete_namespace, ns.name)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    print("demo stopped; namespace removed", flush=True)
    return 0


async def _commission_all(
    service: BridgeService, devices: list[VirtualDevice], token: str, port: int, t0: float
) -> None:
    from bridge.cli.client import call
    from bridge.cli.commission import request_body
    from bridge.matter import CommissionRequest

    for spec, dev in zip(DEMO_DEVICES, devices, strict=True):
        if dev.pairing is None:
            raise DemoError(f"the {spec.kind} device printed no pairing code")
        req = CommissionRequest(code=dev.pairing.manual, name=spec.name, room=spec.room)
        answer = await call(
            "POST",
            f"http://127.0.0.1:{port}/v1/devices/commission",
            token,
            request_body(req),
            timeout_s=300,
        )
        _say(
            t0,
            f"commissioned {spec.name} ({spec.room}) as node {answer['node_id']} in "
            f"{answer['elapsed_s']:.1f} s: {len(answer['tools'])} tools",
        )


def _say(t0: float, text: str) -> None:
    print(f"[{time.monotonic() - t0:6.1f}s] {text}", flush=True)


def _banner(token: str, port: int, took_s: float, service: BridgeService) -> None:
    from bridge.cli.console import make_link

    base = f"http://127.0.0.1:{port}"
    console_link = make_link(service.state_dir, base)
    names = sorted(t.definition.name for t in service.registry.list(namespace="matter"))
    on_tool = next(
        (n for n in names if n.startswith("living_room_light") and n.endswith("_on")),
        "living_room_light_on",
    )
    state_tool = next(
        (n for n in names if n.startswith("hall_thermostat") and n.endswith("_state")),
        "hall_thermostat_state",
    )
    auth = '-H "Authorization: Bearer $TOKEN"'
    lines = [
        "",
        "=" * 78,
        f" Atmosphere Matter Bridge demo is ready in {took_s:.1f} s: {len(names)} Matter tools",
        f" API: {base}    (Ctrl-C stops everything)",
        "=" * 78,
        "",
        f" Web console (one-time sign-in link, 10 min): {console_link}",
        "",
        f"export TOKEN='{token}'",
        "",
        "# 1. list the generated tools",
        f"curl -s {auth} '{base}/v1/tools?namespace=matter&view=flat'",
        "",
        "# 2. switch the living room light on",
        f"curl -s {auth} -H 'Content-Type: application/json' \\",
        f'     -d \'{{"tool": "{on_tool}", "params": {{}}}}\' {base}/v1/invoke',
        "",
        "# 3. read the hall thermostat",
        f"curl -s {auth} -H 'Content-Type: application/json' \\",
        f'     -d \'{{"tool": "{state_tool}", "params": {{}}}}\' {base}/v1/invoke',
        "",
        "# 4. say it (en, de, fr, es, nl): every light of the kitchen off",
        f"curl -s {auth} -H 'Content-Type: application/json' \\",
        f'     -d \'{{"text": "turn off the kitchen lights", "language": "en"}}\' '
        f"{base}/v1/intents/handle",
        "",
    ]
    print("\n".join(lines), flush=True)
