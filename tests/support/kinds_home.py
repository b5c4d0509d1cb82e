"""A bridge with matter.js devices of issue 29's kinds, commissioned with names and rooms.

The compact profile's and the console's end-to-end tests of the newer kinds start their
devices (all in one device host, tests/support/device_host.py), one ``ThreadedBridge``
(its managed controller in the fabric namespace) and the commissioning through the
bridge's own ``POST /v1/devices/commission`` the same way; each module gives its own
ports, passcodes and discriminators so that modules never share a device.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.device_host import device_host
from tests.support.fabric import Fabric, ThreadedBridge


@dataclass(frozen=True)
class Member:
    """One device of the home: its kind, the name and room it is commissioned with."""

    kind: DeviceKind
    name: str
    room: str


@dataclass
class KindsHome:
    """The started bridge, each member's device and the device id it was given."""

    bridge: ThreadedBridge
    devices: dict[str, VirtualDevice]  # member name -> device
    ids: dict[str, str] = field(default_factory=dict)  # member name -> device id

    def request(self, method: str, path: str, body: Any = None, token: str = "") -> Any:
        """Call the bridge's API (the admin token unless another is given); return JSON."""
        req = urllib.request.Request(
            f"{self.bridge.url}{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {token or self.bridge.token}",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(req, timeout=300) as res:
            return json.loads(res.read())


@contextmanager
def kinds_home(
    fabric: Fabric,
    name: str,
    members: Sequence[Member],
    *,
    port: int,
    passcode: int,
    discriminator: int,
) -> Iterator[KindsHome]:
    """Start one device per member (one device host) and a bridge; commission each."""
    with device_host(fabric, f"{name}-host") as host:
        devices: dict[str, VirtualDevice] = {}
        for i, member in enumerate(members):
            devices[member.name] = host.device(
                member.kind,
                id=f"{name}-{i}-{member.kind.value}",
                port=port + i,
                passcode=passcode + i,
                discriminator=discriminator + i,  # full discriminators (QR) no other test uses
                label=f"{name} {member.kind.value}",
            )
        host.start_all(host.devices.values())
        bridge = ThreadedBridge(fabric, name)
        bridge.start()
        try:
            home = KindsHome(bridge, devices)
            for member in members:
                pairing = devices[member.name].pairing
                assert pairing is not None
                body = home.request(
                    "POST",
                    "/v1/devices/commission",
                    {"code": pairing.qr, "name": member.name, "room": member.room},
                )
                home.ids[member.name] = f"{body['node_id']}-1"
            yield home
        finally:
            bridge.stop()
