"""The generic tool's read mode on the real controller with matter.js devices.

``matter:control_matter_device`` with ``access: "read"`` reads one attribute of any
cluster a device serves. A bridge service runs against its own python-matter-server in
the fabric namespace with an on/off light and a leak sensor commissioned. Checked over
HTTP with signed tokens:

- a read answers what the device itself reports (its STATE lines after a press of its
  own button), by name and by ids;
- the permission is the per-device read tools' ``device:read:<id>``: a token that may
  only read cannot command, one that may only command cannot read, and a device the
  token may not use answers exactly as a device that does not exist;
- hostile parameters get a stable JSON error (400 INVALID_PARAMS), never a 5xx, and
  the tool keeps working.

Expected values come from the Matter specification (ids) and the device script.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.demo.virtual_devices import DeviceKind, StateChange, VirtualDevice
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.home import Home, start_home

pytestmark = pytest.mark.fabric

TOOL = "control_matter_device"
ON_OFF, BOOLEAN_STATE = 6, 69  # cluster ids (spec 1.5, 1.7)


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "generic-read") as ctl:
        yield ctl


@pytest.fixture(scope="module")
def devices(fabric: Fabric) -> dict[DeviceKind, VirtualDevice]:
    out: dict[DeviceKind, VirtualDevice] = {}
    for i, kind in enumerate((DeviceKind.ONOFF, DeviceKind.LEAK)):
        dev = VirtualDevice(
            kind=kind,
            state_dir=fabric.base_dir / f"generic-read-{kind.value}",
            port=6340 + i,
            passcode=20203401 + i,
            discriminator=0xD31 + i,  # distinct from every other test's device (QR: 12 bits)
            label=f"Generic read {kind.value}",
            netns=fabric.namespace,
        )
        fabric.devices.append(dev)  # stopped with the fabric
        dev.start(timeout_s=120)
        out[kind] = dev
    return out


COMMISSIONED: dict[DeviceKind, str] = {}  # once per module: each test's bridge sees them


async def _commission(home: Home, kind: DeviceKind, dev: VirtualDevice) -> str:
    assert home.service.matter is not None
    device_id = COMMISSIONED.get(kind)
    if device_id is None:
        assert dev.pairing is not None
        adapter = home.service.matter.bridge.adapter
        node = await adapter.send_command(
            "commission_with_code", timeout_s=180, code=dev.pairing.qr, network_only=True
        )
        device_id = COMMISSIONED[kind] = f"{node['node_id']}-1"
    async with asyncio.timeout(30):
        while device_id not in {d.id for d in home.service.matter.bridge.devices()}:
            await asyncio.sleep(0.05)
    return device_id


@pytest.fixture
async def home(
    controller: ThreadedController, tmp_path: Path, devices: dict[DeviceKind, VirtualDevice]
) -> AsyncIterator[tuple[Home, dict[DeviceKind, str]]]:
    async with start_home(controller.url, tmp_path / "state", [], controller.key_file) as running:
        ids = {kind: await _commission(running, kind, dev) for kind, dev in devices.items()}
        yield running, ids


async def own_report(dev: VirtualDevice, since: int) -> StateChange:
    """Return the light's own report of its OnOff after ``since`` (its button's press)."""
    async with asyncio.timeout(20):
        while True:
            for change in dev.changes()[since:]:
                if (change.cluster, change.attribute, change.local) == ("onOff", "onOff", True):
                    return change
            await asyncio.sleep(0.05)


async def call(home: Home, token: str, **params: Any) -> tuple[int, Any]:
    return await home.request("POST", "/v1/invoke", token, {"tool": TOOL, "params": params})


async def test_a_read_answers_what_the_device_reports(
    home: tuple[Home, dict[DeviceKind, str]], devices: dict[DeviceKind, VirtualDevice]
) -> None:
    running, ids = home
    light, light_id = devices[DeviceKind.ONOFF], ids[DeviceKind.ONOFF]
    token = running.token(f"device:read:{light_id}")
    for _ in range(2):  # both values, each the device's own report first
        mark = light.mark()
        light.press()  # its own button: OnOff toggles on the device
        change = await own_report(light, mark)
        status, body = await call(
            running, token, device_id=light_id, access="read", cluster="OnOff", attribute="OnOff"
        )
        assert status == 200, body
        assert body["result"] == {
            "device_id": light_id,
            "cluster": "OnOff",
            "cluster_id": ON_OFF,
            "attribute": "OnOff",
            "attribute_id": 0,
            "value": change.value,
        }
    # By ids: BooleanState (69) StateValue (0); the leak script starts dry (false).
    leak_id = ids[DeviceKind.LEAK]
    status, body = await call(
        running,
        running.token("device:read:*"),
        device_id=leak_id,
        access="read",
        cluster=BOOLEAN_STATE,
        attribute=0,
    )
    assert status == 200, body
    assert (body["result"]["cluster"], body["result"]["attribute"], body["result"]["value"]) == (
        "BooleanState",
        "StateValue",
        False,
    )


async def test_read_and_control_need_their_own_permission(
    home: tuple[Home, dict[DeviceKind, str]], devices: dict[DeviceKind, VirtualDevice]
) -> None:
    running, ids = home
    light_id, leak_id = ids[DeviceKind.ONOFF], ids[DeviceKind.LEAK]
    reader = running.token(f"device:read:{light_id}")
    read = {"access": "read", "cluster": "OnOff", "attribute": "OnOff"}
    # A token that may only read cannot command (access defaults to "control").
    mark = devices[DeviceKind.ONOFF].mark()
    for params in (
        {"cluster": "OnOff", "command": "Toggle"},
        {"access": "control", "cluster": "OnOff", "command": "Toggle"},
    ):
        status, body = await call(running, reader, device_id=light_id, **params)
        assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED"), body
    await asyncio.sleep(1)
    assert devices[DeviceKind.ONOFF].changes()[mark:] == []  # nothing reached the light
    # One that may only command cannot read, and commands still work with it.
    controller = running.token(f"device:control:{light_id}")
    status, body = await call(running, controller, device_id=light_id, **read)
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED"), body
    status, body = await call(
        running, controller, device_id=light_id, cluster="OnOff", command="Toggle"
    )
    assert status == 200, body
    # A device the token may not read answers as one that does not exist (999-1).
    forbidden = await call(running, reader, device_id=leak_id, **read)
    unknown = await call(running, reader, device_id="999-1", **read)
    assert forbidden[0] == unknown[0] == 403
    assert forbidden[1]["error"]["code"] == unknown[1]["error"]["code"] == "PERMISSION_DENIED"
    assert forbidden[1]["error"]["message"].replace(leak_id, "X") == (
        unknown[1]["error"]["message"].replace("999-1", "X")
    )
    # Who may read every device learns that 999-1 does not exist.
    status, body = await call(running, running.token("device:read:*"), device_id="999-1", **read)
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND"), body
    # The listing follows: a reader of the light sees the tool, a token with no device
    # permission does not.
    for token, seen in ((reader, True), (running.token("core:*"), False)):
        status, body = await running.request("GET", "/v1/tools?namespace=matter", token)
        assert status == 200, body
        assert any(t["tool"]["name"] == TOOL for t in body["tools"]) is seen


HOSTILE: list[dict[str, Any]] = [
    {"cluster": "OnOff", "attribute": "NoSuchAttribute"},
    {"cluster": "NoSuchCluster", "attribute": "OnOff"},
    {"cluster": 0xFFF1FC00, "attribute": 0},  # a vendor cluster the light does not serve
    {"cluster": ON_OFF, "attribute": 0xFFF0},  # an attribute the light does not list
    {"cluster": ON_OFF, "attribute": 2**32},  # beyond 32 bits
    {"cluster": -1, "attribute": 0},
    {"cluster": ON_OFF, "attribute": -5},
    {"cluster": ON_OFF, "attribute": 1.5},
    {"cluster": ON_OFF, "attribute": True},
    {"cluster": ON_OFF, "attribute": None},
    {"cluster": ON_OFF, "attribute": [0]},
    {"cluster": {"id": 6}, "attribute": 0},
    {"cluster": "onoff", "attribute": "OnOff"},  # names are the specification's
    {"cluster": "OnOff" * 100, "attribute": "OnOff"},
    {"cluster": "OnOff"},  # a read without an attribute
    {"cluster": "OnOff", "attribute": "OnOff", "command": "On"},
    {"cluster": "OnOff", "attribute": "OnOff", "payload": {"x": 1}},
    {"cluster": "OnOff", "attribute": "OnOff", "access": "write"},
    {"cluster": "OnOff", "attribute": "OnOff", "access": 1},
    {"cluster": "OnOff", "attribute": "OnOff", "extra": 1},
]


async def test_hostile_reads_get_stable_json_errors(
    home: tuple[Home, dict[DeviceKind, str]],
) -> None:
    running, ids = home
    light_id = ids[DeviceKind.ONOFF]
    token = running.token("device:*")
    for params in HOSTILE:
        merged = {"device_id": light_id, "access": "read", **params}
        first = await call(running, token, **merged)
        again = await call(running, token, **merged)
        assert first[0] == 400, (params, first)
        assert first[1]["error"]["code"] == "INVALID_PARAMS", (params, first)
        assert first[1]["error"]["message"] == again[1]["error"]["message"], params
    # Integers no JSON number of the API holds are refused while reading the body.
    for huge in (2**63, 10**40, -(2**70)):
        status, body = await call(
            running, token, device_id=light_id, access="read", cluster=huge, attribute=0
        )
        assert (status, body["error"]["code"]) == (400, "INVALID_REQUEST"), body
        assert body["error"]["details"] == {"reason": "number_out_of_range"}
    for device_id in ("1", "-1-1", "1-1-1", 5, None, "x" * 10_000):
        status, body = await call(
            running, token, device_id=device_id, access="read", cluster="OnOff", attribute="OnOff"
        )
        assert status == 400, (device_id, body)
        assert body["error"]["code"] == "INVALID_PARAMS"
    # Still answering after all that.
    status, body = await call(
        running, token, device_id=light_id, access="read", cluster="OnOff", attribute="OnOff"
    )
    assert status == 200, body
    assert isinstance(body["result"]["value"], bool)
