"""A small home of matter.js devices commissioned by a controller of a test module's own.

The voice fabric tests (covers, everyday speech) start their devices, a
python-matter-server and the commissioning the same way; each gives its own ports,
passcodes and discriminators so that modules never share a device.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import aiohttp

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.fabric import Fabric, ThreadedController, running_controller


@dataclass(frozen=True)
class Numbering:
    """Where a module's devices live: name prefix, first port, passcode, discriminator."""

    name: str
    port: int
    passcode: int
    discriminator: int


@contextmanager
def commissioned_home(
    fabric: Fabric, kinds: Sequence[str], numbers: Numbering
) -> Iterator[tuple[str, str, list[int]]]:
    """Start one device per kind, commission each; yield the URL, key file and node ids."""
    devices = []
    for i, kind in enumerate(kinds):
        dev = VirtualDevice(
            kind=DeviceKind(kind),
            state_dir=fabric.base_dir / f"{numbers.name}-{i}-{kind}",
            port=numbers.port + i,
            passcode=numbers.passcode + i,
            discriminator=numbers.discriminator + i,  # full discriminators no other test uses
            label=f"{numbers.name} {kind} {i}",
            netns=fabric.namespace,
        )
        fabric.devices.append(dev)  # stopped by the fabric at session end
        devices.append(dev)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda dev: dev.start(timeout_s=120), devices))
    with running_controller(fabric, numbers.name) as ctl:
        nodes = asyncio.run(_commission(ctl, devices))
        yield ctl.url, ctl.key_file, nodes


async def _commission(ctl: ThreadedController, devices: list[VirtualDevice]) -> list[int]:
    nodes = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(ctl.url, headers=ctl.headers) as ws,
    ):
        await ws.receive_json()  # server info
        for i, dev in enumerate(devices):
            assert dev.pairing is not None
            args = {"code": dev.pairing.qr, "network_only": True}
            await ws.send_json(
                {"message_id": str(i), "command": "commission_with_code", "args": args}
            )
            async with asyncio.timeout(180):
                while (msg := await ws.receive_json()).get("message_id") != str(i):
                    pass
            assert "error_code" not in msg, msg
            nodes.append(int(msg["result"]["node_id"]))
    return nodes
