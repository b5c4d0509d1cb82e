"""Two virtual devices never share a port in one network namespace.

A second matter.js device on a running one's port cannot listen: a full run of the suite
once had three modules' devices on ports 6700+, and two dozen fabric tests failed at
set-up with no word of why. ``start`` now refuses before any process starts, naming the
device that holds the port.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, VirtualDeviceError


def device(tmp_path: Path, name: str, port: int, discriminator: int) -> VirtualDevice:
    # devices_dir without the script: a start that got past the check would fail to run.
    return VirtualDevice(
        kind=DeviceKind.ONOFF,
        state_dir=tmp_path / name,
        port=port,
        discriminator=discriminator,
        label=name,
        devices_dir=tmp_path / "no-devices",
    )


def test_a_second_device_on_a_held_port_is_refused(tmp_path: Path) -> None:
    first = device(tmp_path, "first", 7100, 0x122)
    first._hold()  # what a running device holds (start claims it before it spawns)
    try:
        second = device(tmp_path, "second", 7100, 0x124)
        with pytest.raises(VirtualDeviceError, match="port 7100 is held by running device first"):
            second.start(timeout_s=1)
        assert second.pid is None
        assert not (tmp_path / "second").exists()  # refused before anything was made
    finally:
        first.stop()
    # Another port is free; so is the first's once it stopped.
    other = device(tmp_path, "other", 7101, 0x122)
    other._hold()
    other.stop()
    again = device(tmp_path, "again", 7100, 0x122)
    again._hold()
    again.stop()
