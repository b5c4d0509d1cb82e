"""A small home of matter.js devices commissioned by a controller of a test module's own.

The voice fabric tests (covers, everyday speech) start their devices, a
python-matter-server and the commissioning the same way; each gives its own ports,
passcodes and discriminators so that modules never share a device.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.config import VoiceConfig
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.device_host import device_host
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.home import Home, start_home


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
    with device_host(fabric, f"{numbers.name}-host") as host:
        devices: list[VirtualDevice] = []
        for i, kind in enumerate(kinds):
            dev = host.device(
                DeviceKind(kind),
                id=f"{numbers.name}-{i}-{kind}",
                port=numbers.port + i,
                passcode=numbers.passcode + i,
                discriminator=numbers.discriminator + i,  # full discriminators no other test uses
                label=f"{numbers.name} {kind} {i}",
            )
            fabric.devices.append(dev)  # found by label (test_kinds_fabric)
            devices.append(dev)
        host.start_all(host.devices.values())
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


@asynccontextmanager
async def named_home(
    commissioned: tuple[str, str, list[int]],
    home: Sequence[tuple[str, str, str]],
    state_dir: Path,
    voice: VoiceConfig | None = None,
) -> AsyncIterator[Home]:
    """Run a bridge on the module's controller, each device named and placed as ``home``.

    ``home`` lists (kind, name, room) in commissioning order; a device is known to the
    test as the string of its position (``Home.ids["0"]``).
    """
    url, key_file, nodes = commissioned
    async with start_home(url, state_dir, [], key_file, voice) as running:
        assert running.service.matter is not None
        bridge = running.service.matter.bridge
        async with asyncio.timeout(30):
            while not set(nodes) <= {d.node_id for d in bridge.devices()}:
                await asyncio.sleep(0.05)
        for i, (node, (_, name, room)) in enumerate(zip(nodes, home, strict=True)):
            running.ids[str(i)] = next(d.id for d in bridge.devices() if d.node_id == node)
            await running.patch_device(str(i), {"name": name, "room": room})
        yield running


def fabric_fixtures(
    home: Sequence[tuple[str, str, str]], numbers: Numbering, voice: VoiceConfig | None = None
) -> tuple[Any, Any]:
    """Return a module's ``commissioned`` (its devices, once) and ``home`` fixtures.

    ``home`` lists (kind, name, room) in commissioning order; each test gets a bridge of
    its own on the module's controller with the devices named and placed.
    """

    @pytest.fixture(scope="module")
    def commissioned(fabric: Fabric) -> Iterator[tuple[str, str, list[int]]]:
        with commissioned_home(fabric, [kind for kind, _, _ in home], numbers) as found:
            yield found

    @pytest.fixture
    async def named(
        commissioned: tuple[str, str, list[int]], tmp_path: Path
    ) -> AsyncIterator[Home]:
        async with named_home(commissioned, home, tmp_path / "state", voice) as running:
            yield running

    return commissioned, named


async def device_tool(
    home: Home, tool: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return what the bridge's ``matter:<tool>`` answers (it must succeed)."""
    status, body = await home.invoke(
        f"matter:{tool}", params or {}, home.token("device:control:*", "device:read:*")
    )
    assert status == 200, body
    result: dict[str, Any] = body["result"]
    return result


async def device_state(home: Home, slug: str) -> dict[str, Any]:
    """Return a device's state as its state tool reads it, once its report has arrived."""
    return await device_tool(home, f"{slug}_state")


async def state_until(home: Home, slug: str, field: str, wanted: Any) -> dict[str, Any]:
    """Return the device's state once ``field`` reads ``wanted`` (its own report)."""
    state: dict[str, Any] = {}
    try:
        async with asyncio.timeout(20):
            while (state := await device_state(home, slug)).get(field) != wanted:
                await asyncio.sleep(0.1)
    except TimeoutError:
        pytest.fail(f"{slug}: {field} never read {wanted!r} in 20 s: {state}")
    return state


def slug_of(home: Home, name: str) -> str:
    """Return the slug of the device named ``name``."""
    assert home.service.matter is not None
    return next(d.slug for d in home.service.matter.bridge.devices() if d.name == name)


async def spoken(home: Home, text: str, lang: str = "en", area: str | None = None) -> Any:
    """Return the engine's reply to ``text`` from a caller who may control every device."""
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token("device:control:*", "device:read:*"))
    return await engine.handle(text, lang, token=token, area=area)
