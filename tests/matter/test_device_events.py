"""Matter events on ``/v1/events``: a press on a real matter.js button, through the real controller.

A bridge service runs against its own python-matter-server in the fabric namespace; the
controller commissions a matter.js Generic Switch (SIGUSR1: one short press). The press
must arrive on ``/v1/events`` as ``device.event`` messages with the button's device id and
the press types of the Switch cluster (spec 1.13.7: InitialPress, ShortRelease,
MultiPressComplete with the count), and must not reach a token that may not read the
button. The table of events is also checked against the specification's ids offline.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.demo.virtual_devices import VirtualDevice
from bridge.matter.spec.events import describe
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.home import Home, start_home


class Kind(StrEnum):
    """The ``--kind`` names of devices/kinds/index.mjs used here."""

    BUTTON = "button"


# Offline: the table against the specification's event ids and field names.
@pytest.mark.parametrize(
    ("cluster", "event", "data", "expected"),
    [
        (59, 1, {"newPosition": 1}, ("switch.initial_press", {"position": 1})),
        (59, 2, {"newPosition": 1}, ("switch.long_press", {"position": 1})),
        (59, 3, {"previousPosition": 1}, ("switch.short_release", {"position": 1})),
        (59, 4, {"previousPosition": 1}, ("switch.long_release", {"position": 1})),
        (
            59,
            6,
            {"previousPosition": 1, "totalNumberOfPressesCounted": 2},
            ("switch.multi_press_complete", {"position": 1, "count": 2}),
        ),
        (69, 0, {"stateValue": True}, ("boolean_state.changed", {"state": True})),
        (92, 0, {"alarmSeverityLevel": 2}, ("smoke_co.smoke_alarm", {"level": "critical"})),
        (92, 1, {"alarmSeverityLevel": 1}, ("smoke_co.co_alarm", {"level": "warning"})),
        (257, 0, {"alarmCode": 0}, ("door_lock.alarm", {"alarm": "lock_jammed"})),
        (
            257,
            2,
            {"lockOperationType": 1, "operationSource": 3, "userIndex": 2},
            ("door_lock.operation", {"operation": "unlock", "source": "keypad", "userIndex": 2}),
        ),
        (97, 0, {"errorState": {"errorStateID": 0x41}}, ("operation.error", {"error": "stuck"})),
        (129, 0, {"valveState": 0}, ("valve.state_changed", {"valve": "closed"})),
        (1234, 7, {"x": 1}, ("matter.event", {"raw": {"x": 1}})),
    ],
)
def test_events_are_named_as_the_specification_says(
    cluster: int, event: int, data: dict[str, Any], expected: tuple[str, dict[str, Any]]
) -> None:
    described = describe(cluster, event, data)
    assert (described.type, described.fields) == expected


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "device-events") as ctl:
        yield ctl


@pytest.fixture(scope="module")
def button(fabric: Fabric) -> VirtualDevice:
    dev = VirtualDevice(
        kind=Kind.BUTTON,  # type: ignore[arg-type]  # any StrEnum of the script's kind names
        state_dir=fabric.base_dir / "events-button",
        port=6300,
        passcode=20203301,
        discriminator=0xD21,  # distinct from every other test's device (QR: all 12 bits)
        label="Hall button",
        netns=fabric.namespace,
    )
    fabric.devices.append(dev)  # stopped with the fabric
    dev.start(timeout_s=120)
    return dev


async def commission(home: Home, dev: VirtualDevice) -> str:
    """Commission ``dev`` through the bridge's controller connection; return its device id."""
    assert dev.pairing is not None
    adapter = home.service.matter.bridge.adapter
    node = await adapter.send_command(
        "commission_with_code", timeout_s=180, code=dev.pairing.qr, network_only=True
    )
    device_id = f"{node['node_id']}-1"
    async with asyncio.timeout(30):
        while device_id not in {d.id for d in home.service.matter.bridge.devices()}:
            await asyncio.sleep(0.05)
    return device_id


@pytest.fixture
async def home(
    controller: ThreadedController, tmp_path: Path, button: VirtualDevice
) -> AsyncIterator[tuple[Home, str]]:
    async with start_home(controller.url, tmp_path / "state", [], controller.key_file) as running:
        yield running, await commission(running, button)


async def _next(ws: aiohttp.ClientWebSocketResponse, timeout_s: float) -> dict[str, Any]:
    msg = await ws.receive(timeout=timeout_s)
    assert msg.type is aiohttp.WSMsgType.TEXT, msg
    return json.loads(msg.data)  # type: ignore[no-any-return]


@pytest.mark.fabric
async def test_press_arrives_on_events_only_for_tokens_that_see_the_button(
    home: tuple[Home, str], button: VirtualDevice
) -> None:
    running, button_id = home
    seeing = running.token(f"device:read:{button_id}", agent_id="sees-button")
    blind = running.token("device:read:999-1", agent_id="sees-other")
    url = running.url.replace("http", "ws") + "/v1/events?types=device.event,registry."
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, headers={"Authorization": f"Bearer {seeing}"}) as ws_see,
        session.ws_connect(url, headers={"Authorization": f"Bearer {blind}"}) as ws_blind,
    ):
        await asyncio.sleep(0.2)  # both sockets subscribed before the press
        pressed = time.monotonic()
        await asyncio.to_thread(button.press)  # SIGUSR1: one short press
        got: list[dict[str, Any]] = []
        first_at = None
        while not got or got[-1]["data"]["event"] != "switch.multi_press_complete":
            event = await _next(ws_see, 15)
            if event["type"] == "device.event":
                first_at = first_at or time.monotonic()
                got.append(event)
        latency = first_at - pressed if first_at else None
        print(f"press -> first device.event on /v1/events: {latency:.3f} s")
        # A marker the blind token sees (an event of the device it may read), published
        # after the press's last event: the blind socket's queue is in publish order, so
        # anything before the marker is what it got.
        running.service.events.publish(
            "device.event", {"device_id": "999-1", "event": "test_marker"}
        )
        before_marker: list[dict[str, Any]] = []
        while (event := await _next(ws_blind, 15))["data"].get("event") != "test_marker":
            before_marker.append(event)
    assert [(e["data"]["device_id"], e["data"]["event"], e["data"]["fields"]) for e in got] == [
        (button_id, "switch.initial_press", {"position": 1}),
        (button_id, "switch.short_release", {"position": 1}),
        (button_id, "switch.multi_press_complete", {"position": 1, "count": 1}),
    ]
    assert got[0]["data"]["name"] is not None
    assert got[0]["data"]["matter"]["cluster_id"] == 59
    assert [e for e in before_marker if e["type"] == "device.event"] == []
    # The first event left the device ~0.07 s after the press (docs: matter-new-kinds);
    # the issue asks for 1 s (0.6 s measured on the loaded 2-core machine); 2 s is CI headroom.
    assert latency is not None
    assert latency < 2.0, latency
