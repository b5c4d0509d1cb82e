"""Commissioning: request validation, and each failure as a clear error on the real fabric.

The fabric tests use the session's managed controller and fresh matter.js devices. A
device that saw a wrong setup code is spent (matter.js closes its commissioning window
after 20 failed PASE attempts), so each failure gets its own device.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from bridge.config import ThreadConfig
from bridge.demo.virtual_devices import DeviceKind
from bridge.errors import (
    BridgeError,
    CommissioningFailedError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    InvalidParamsError,
)
from bridge.events import EventBus, Subscription
from bridge.matter.controller.commissioning import Commissioner, CommissionRequest, NetworkKind
from bridge.matter.controller.gateway import ControllerGateway
from bridge.matter.controller.managed import ManagedController
from bridge.matter.controller.pairing import manual_code
from bridge.matter.controller.thread import NoThreadDatasetError
from tests.matter.test_thread import DATASET
from tests.support.fabric import Fabric, ThreadedController


def drain(sub: Subscription) -> list[dict[str, Any]]:
    out = []
    while not sub.queue.empty():
        out.append(sub.queue.get_nowait().data)
    return out


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({}, "give a pairing 'code'"),
        ({"code": "34970112332", "passcode": 20202021}, "either 'code' or"),
        ({"passcode": 20202021}, "give a pairing 'code'"),
        ({"passcode": 12345678, "discriminator": 3840}, "invalid setup passcode"),
        ({"passcode": 20202021, "discriminator": 4096}, "discriminator is 0-4095"),
        ({"code": "34970112332", "network": "wifi"}, "needs 'wifi_ssid' and 'wifi_password'"),
        ({"code": "34970112332", "wifi_ssid": "home"}, "needs 'wifi_ssid' and 'wifi_password'"),
        ({"code": "34970112332", "network": "zigbee"}, "'network' is one of"),
        ({"code": "34970112332", "thread_dataset": "0e08"}, "Thread dataset"),
        ({"code": 34970112332}, "'code' must be a string"),
        ({"code": "34970112332", "colour": "red"}, "unknown fields: colour"),
        ({"passcode": 20202021, "discriminator": 1, "network": "thread"}, "need a pairing 'code'"),
    ],
)
def test_request_validation(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParamsError, match=message):
        CommissionRequest.from_json(doc)


def test_request_infers_the_network() -> None:
    wifi = CommissionRequest.from_json(
        {"code": "34970112332", "wifi_ssid": "home", "wifi_password": "secret"}
    )
    assert wifi.network is NetworkKind.WIFI
    thread = CommissionRequest.from_json({"code": "34970112332", "thread_dataset": DATASET})
    assert thread.network is NetworkKind.THREAD
    plain = CommissionRequest.from_json({"passcode": 20202021, "discriminator": 3840})
    assert (plain.network, plain.passcode, plain.discriminator) == (
        NetworkKind.ON_NETWORK,
        20202021,
        3840,
    )


async def test_controller_down_is_a_clear_error() -> None:
    bus = EventBus()
    sub = bus.subscribe("commissioning.")
    commissioner = Commissioner(controller_url="ws://127.0.0.1:1/ws", events=bus)
    with pytest.raises(ControllerUnavailableError, match="is not reachable"):
        await commissioner.commission(CommissionRequest(code="34970112332"))
    stages = [e["stage"] for e in drain(sub)]
    assert stages == ["discovering", "failed"]


async def test_thread_without_dataset_is_a_clear_error() -> None:
    commissioner = Commissioner(controller_url="ws://127.0.0.1:1/ws", events=EventBus())
    request = CommissionRequest(code="34970112332", network=NetworkKind.THREAD)
    with pytest.raises(NoThreadDatasetError, match="no Thread dataset"):
        await commissioner.commission(request)


@pytest.mark.fabric
async def test_thread_dataset_reaches_the_controller_before_commissioning(
    matter_controller: ThreadedController,
) -> None:
    bus = EventBus()
    sub = bus.subscribe("commissioning.")
    commissioner = Commissioner(
        gateway=ControllerGateway(matter_controller.url, matter_controller.headers),
        events=bus,
        thread=ThreadConfig(dataset_hex=DATASET),
    )
    request = CommissionRequest(code="34970112332", network=NetworkKind.THREAD)
    # The controller accepted the dataset; Thread devices then pair over Bluetooth LE,
    # which this machine (and so its controller) does not have.
    with pytest.raises(CommissioningFailedError, match="no Bluetooth adapter") as info:
        await commissioner.commission(request)
    assert info.value.details["reason"] == "no_bluetooth"
    assert [e["stage"] for e in drain(sub)] == ["discovering", "failed"]


async def _expect_failure(
    commissioner: Commissioner, bus_sub: Subscription, code: str
) -> tuple[BridgeError, list[str]]:
    with pytest.raises(BridgeError) as info:
        await commissioner.commission(CommissionRequest(code=code))
    return info.value, [e["stage"] for e in drain(bus_sub)]


@pytest.mark.fabric
async def test_wrong_code_and_missing_device_fail_clearly(
    fabric: Fabric, matter_controller: ThreadedController
) -> None:
    bus = EventBus()
    sub = bus.subscribe("commissioning.")
    # The session controller is supervised in another loop; follow its log from here.
    commissioner = Commissioner(
        gateway=ControllerGateway(matter_controller.url, matter_controller.headers),
        events=bus,
        log_follower=matter_controller.controller.follow_log,
    )
    dev = await asyncio.to_thread(fabric.device, DeviceKind.ONOFF)
    assert dev.pairing is not None
    short = dev.discriminator >> 8
    wrong = manual_code(dev.passcode + 1, short)
    err, stages = await _expect_failure(commissioner, sub, wrong)
    assert isinstance(err, CommissioningFailedError)
    assert err.details["reason"] == "wrong_code"
    assert "refused the setup code" in err.message
    assert stages == ["discovering", "failed"]

    # No device advertises this discriminator at all.
    used = {d.discriminator >> 8 for d in fabric.devices}
    free = next(s for s in range(16) if s not in used)
    err, stages = await _expect_failure(commissioner, sub, manual_code(20202021, free))
    assert isinstance(err, DeviceUnavailableError)
    assert err.details["reason"] == "not_found"
    assert f"discriminator {free} of 16" in err.message
    assert stages == ["discovering", "failed"]


@pytest.mark.fabric
async def test_untrusted_attestation_fails_clearly(fabric: Fabric) -> None:
    # A trust store without the test PAA (but marked current, so nothing is fetched).
    settings = fabric.controller_settings("no-paa")
    empty_store = settings.state_dir / "empty-paa"
    empty_store.mkdir(parents=True)
    (empty_store / ".version").write_text("1\n")

    controller = ManagedController(replace(settings, paa_dir=empty_store))
    await controller.start()
    try:
        bus = EventBus()
        sub = bus.subscribe("commissioning.")
        commissioner = Commissioner(
            gateway=ControllerGateway(controller.url, controller.headers),
            events=bus,
            log_follower=controller.follow_log,
        )
        dev = await asyncio.to_thread(fabric.device, DeviceKind.ONOFF)
        assert dev.pairing is not None
        err, stages = await _expect_failure(commissioner, sub, dev.pairing.manual)
        assert isinstance(err, CommissioningFailedError)
        assert err.details["reason"] == "attestation_failed"
        assert "attestation failed" in err.message
        assert stages == ["discovering", "pase", "attestation", "failed"]
    finally:
        await controller.stop()
