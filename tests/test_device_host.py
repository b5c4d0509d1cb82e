"""Many matter.js devices in one process (devices/device_host.mjs), as the kinds modules use.

The host must give each device what a device process gives: its own pairing codes, its
own reports, its own button, a stop that leaves the others running and a restart from
its storage. A bad command line is answered with an ERROR naming what is wrong and
changes nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, VirtualDeviceError
from tests.support.device_host import DeviceHost, HostedDevice, device_host
from tests.support.fabric import Fabric

pytestmark = pytest.mark.fabric

PORT = 7700  # no other module's devices use 7700-7709
PASSCODE = 20207001
DISCRIMINATOR = 0xFA0  # full discriminators no other test uses


@pytest.fixture(scope="module")
def host(fabric: Fabric) -> Iterator[DeviceHost]:
    with device_host(fabric, "host-tests") as running:
        yield running


@pytest.fixture(scope="module")
def three(host: DeviceHost) -> dict[DeviceKind, HostedDevice]:
    kinds = [DeviceKind.ONOFF, DeviceKind.BUTTON, DeviceKind.THERMOSTAT]
    devices = {
        kind: host.device(
            kind,
            id=f"host-{kind.value}",
            port=PORT + i,
            passcode=PASSCODE + i,
            discriminator=DISCRIMINATOR + i,
            label=f"Host {kind.value}",
        )
        for i, kind in enumerate(kinds)
    }
    host.start_all(devices.values())
    return devices


def test_each_device_has_its_own_codes_and_reports(
    host: DeviceHost, three: dict[DeviceKind, HostedDevice]
) -> None:
    codes = {kind: dev.pairing for kind, dev in three.items()}
    assert all(code is not None for code in codes.values())
    assert len({code.qr for code in codes.values() if code}) == 3
    assert [code.passcode for code in codes.values() if code] == [
        PASSCODE,
        PASSCODE + 1,
        PASSCODE + 2,
    ]
    assert {dev.pid for dev in three.values()} == {host.pid}
    light, thermostat = three[DeviceKind.ONOFF], three[DeviceKind.THERMOSTAT]
    mark_light, mark_thermostat = light.mark(), thermostat.mark()
    light.press()
    change = light.wait_state("onOff", "onOff", True, since=mark_light, local=True)
    assert change.local
    thermostat.press()
    thermostat.wait_state("thermostat", "localTemperature", 2100, since=mark_thermostat)
    # One device's press is reported by that device only.
    assert all(c.cluster != "onOff" for c in thermostat.changes()[mark_thermostat:])
    assert all(c.cluster != "thermostat" for c in light.changes()[mark_light:])


def test_one_device_stops_and_restarts_while_the_others_run(
    host: DeviceHost, three: dict[DeviceKind, HostedDevice]
) -> None:
    light, button = three[DeviceKind.ONOFF], three[DeviceKind.BUTTON]
    before = light.pairing
    light.stop()
    assert light.pid is None
    with pytest.raises(VirtualDeviceError, match="not running"):
        light.press()
    mark = button.mark()
    button.press()  # the others still run
    button.wait_state("switch", "pressed", 1, since=mark, local=True)
    light.start(timeout_s=60)  # from its storage, under the host's folder by its id
    assert light.pid == host.pid
    assert light.pairing == before
    assert (host.state_dir / "storage" / light.id).is_dir()
    _toggle(light)  # its button still works


@pytest.mark.parametrize(
    ("line", "who", "message"),
    [
        ("nonsense", "-", "not a JSON object"),
        ("[1, 2]", "-", "not a JSON object"),
        ("null", "-", "not a JSON object"),
        ('{"op": "press"}', "-", "id must be"),
        ('{"op": "press", "id": "../../etc"}', "-", "id must be"),
        ('{"op": "press", "id": "' + "a" * 65 + '"}', "-", "id must be"),
        ('{"op": "zap", "id": "host-onoff"}', "host-onoff", 'unknown op "zap"'),
        ('{"op": "press", "id": "ghost"}', "ghost", "device ghost is not running"),
        ('{"op": "stop", "id": "ghost"}', "ghost", "device ghost is not running"),
        (
            '{"op": "start", "id": "host-onoff", "kind": "onoff", "port": 7709, '
            '"passcode": 20207009, "discriminator": 4009}',
            "host-onoff",
            "device host-onoff is already running",
        ),
        (
            '{"op": "start", "id": "x1", "kind": "toaster", "port": 7709, '
            '"passcode": 20207009, "discriminator": 4009}',
            "x1",
            "unknown kind toaster",
        ),
        (
            '{"op": "start", "id": "x2", "kind": "onoff", "port": "7709", '
            '"passcode": 20207009, "discriminator": 4009}',
            "x2",
            "port must be an integer",
        ),
        (
            '{"op": "start", "id": "x3", "kind": "onoff", "port": 7709, '
            '"passcode": 20207009, "discriminator": 5000}',
            "x3",
            "discriminator must be an integer from 0 to 4095",
        ),
        (
            '{"op": "start", "id": "x4", "kind": "cover", "port": 7709, '
            '"passcode": 20207009, "discriminator": 4009, "travelS": NaN}',
            "-",
            "not a JSON object",
        ),
        (
            '{"op": "start", "id": "x5", "kind": "cover", "port": 7709, '
            '"passcode": 20207009, "discriminator": 4009, "travelS": -3}',
            "x5",
            "travelS must be an integer from 1 to 600",
        ),
        ('{"op": "action", "id": "host-onoff", "line": "press 2"}', "host-onoff", "unknown action"),
        ("x" * 5000, "-", "line longer than 4096 characters"),
    ],
)
def test_a_bad_command_is_refused_and_changes_nothing(
    host: DeviceHost, three: dict[DeviceKind, HostedDevice], line: str, who: str, message: str
) -> None:
    seen = len(host.errors())
    host.send_line(line)
    (error,) = host.wait_errors(seen + 1)[seen:]
    assert error[0] == who
    assert message in error[1]
    # The host still runs every device, and made none of the refused ones.
    _toggle(three[DeviceKind.ONOFF])
    for refused in ("x1", "x2", "x3", "x4", "x5"):
        assert not (host.state_dir / "storage" / refused).exists()


def _toggle(light: VirtualDevice) -> None:
    """Press the light's button; it must report its own change within 10 s."""
    mark = light.mark()
    light.press()
    deadline = time.monotonic() + 10
    while not [c for c in light.changes()[mark:] if c.attribute == "onOff" and c.local]:
        assert time.monotonic() < deadline, f"no press reported: {light.changes()[mark:]}"
        time.sleep(0.05)


def test_ids_ports_and_a_stopped_host_are_refused_before_anything_starts(
    host: DeviceHost, three: dict[DeviceKind, HostedDevice], fabric: Fabric
) -> None:
    with pytest.raises(VirtualDeviceError, match="not valid here or is taken"):
        host.device(DeviceKind.ONOFF, id="host-onoff", port=7709, passcode=1, discriminator=1)
    with pytest.raises(VirtualDeviceError, match="not valid here or is taken"):
        host.device(DeviceKind.ONOFF, id="a b", port=7709, passcode=1, discriminator=1)
    # Another device on a running one's port, in the host or as a process, is refused.
    clash = host.device(
        DeviceKind.ONOFF, id="clash", port=PORT, passcode=PASSCODE + 8, discriminator=0xFA8
    )
    with pytest.raises(VirtualDeviceError, match=f"port {PORT} is held by running device"):
        clash.start(timeout_s=5)
    process = VirtualDevice(
        kind=DeviceKind.ONOFF,
        state_dir=fabric.base_dir / "host-clash-process",
        port=PORT,
        netns=fabric.namespace,
    )
    with pytest.raises(VirtualDeviceError, match=f"port {PORT} is held by running device"):
        process.start(timeout_s=5)
    # A host that is not running refuses a command instead of losing it.
    stopped = DeviceHost(fabric.base_dir / "never-started", netns=fabric.namespace)
    dev = stopped.device(
        DeviceKind.ONOFF, id="lonely", port=PORT + 9, passcode=PASSCODE + 9, discriminator=0xFA9
    )
    with pytest.raises(VirtualDeviceError, match="the device host is not running"):
        dev.start(timeout_s=5)
    assert json.dumps(host.errors())  # every error line was kept as text
    # The light's refused action (above) is no reason to fail its stop and restart.
    light = three[DeviceKind.ONOFF]
    assert any(who == light.id for who, _ in host.errors())
    light.stop()
    light.start(timeout_s=60)
    _toggle(light)
