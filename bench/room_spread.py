"""How far apart the lights of one room change: a room tool against one call per light.

Three real matter.js lights (on/off, dimmable, colour) are commissioned through a real
bridge and controller in a private network namespace, all into room "Studio". Each
round switches them off and on with ``room_studio_lights_off`` / ``_on`` (one HTTP call,
commands sent concurrently), then with each light's own ``_off`` / ``_on`` called one
after another (the "popcorn" baseline), in the same run. The spread of a switch is the
time between the first and the last light reporting its new state (the devices' own
reports, timestamped as they arrive); the bench prints p50 / max per method and their
ratio.

    .venv/bin/python bench/room_spread.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.fabric import ThreadedBridge, open_fabric

LIGHTS = {
    DeviceKind.ONOFF: "Studio Spot",
    DeviceKind.DIMMABLE: "Studio Dimmer",
    DeviceKind.COLOR: "Studio Strip",
}


async def post(http: aiohttp.ClientSession, url: str, body: Any) -> Any:
    async with http.post(url, json=body) as resp:
        answer = await resp.json()
        assert resp.status < 300, answer
        return answer


def spread(devices: list[VirtualDevice], marks: list[int], value: bool) -> float:
    """Return ms between the first and the last device reporting onOff == value."""
    times = [
        d.wait_state("onOff", "onOff", value, since=m).at
        for d, m in zip(devices, marks, strict=True)
    ]
    return (max(times) - min(times)) * 1000


async def run(
    bridge: ThreadedBridge, devices: dict[DeviceKind, VirtualDevice], rounds: int
) -> None:
    headers = {"Authorization": f"Bearer {bridge.token}"}
    async with aiohttp.ClientSession(
        headers=headers, timeout=aiohttp.ClientTimeout(total=120)
    ) as http:
        slugs = []
        for kind, name in LIGHTS.items():
            dev = devices[kind]
            assert dev.pairing is not None
            answer = await post(
                http,
                f"{bridge.url}/v1/devices/commission",
                {"code": dev.pairing.manual, "name": name, "room": "Studio"},
            )
            # Each light's own tools share its slug: "<slug>_on", "<slug>_off", ...
            slugs.append(next(t for t in answer["tools"] if t.endswith("_on"))[: -len("_on")])
        lights = [devices[k] for k in LIGHTS]
        invoke = f"{bridge.url}/v1/invoke"
        await post(http, invoke, {"tool": "room_studio_lights_off"})
        await asyncio.sleep(1.0)
        room: list[float] = []
        one_by_one: list[float] = []
        state = False  # after the room tool's "off" above

        async def room_to(value: bool) -> float:
            nonlocal state
            marks = [d.mark() for d in lights]
            answer = await post(
                http, invoke, {"tool": f"room_studio_lights_{'on' if value else 'off'}"}
            )
            assert answer["result"]["ok"], answer
            state = value
            return await asyncio.to_thread(spread, lights, marks, value)

        for _ in range(rounds):
            for value in (True, False):
                if state == value:
                    await room_to(not value)
                room.append(await room_to(value))
                await room_to(not value)
                marks = [d.mark() for d in lights]
                started = time.monotonic()
                for slug in slugs:
                    await post(http, invoke, {"tool": f"{slug}_{'on' if value else 'off'}"})
                assert time.monotonic() - started < 30
                one_by_one.append(await asyncio.to_thread(spread, lights, marks, value))
                state = value
    for label, values in (("room tool (concurrent)", room), ("one call per light", one_by_one)):
        print(
            f"{label:<24} switches {len(values):>3}  spread p50 "
            f"{statistics.median(values):7.1f} ms  max {max(values):7.1f} ms"
        )
    print(
        f"ratio one-by-one / room p50: "
        f"{statistics.median(one_by_one) / max(statistics.median(room), 0.001):.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="on+off rounds (1-50)")
    rounds = max(1, min(50, parser.parse_args().rounds))
    with open_fabric(f"atm-spread-{os.getpid()}") as fab:
        devices = {kind: fab.device(kind) for kind in LIGHTS}
        bridge = ThreadedBridge(fab, "spread")
        bridge.start()
        try:
            asyncio.run(run(bridge, devices, rounds))
        finally:
            bridge.stop()


if __name__ == "__main__":
    main()
