"""Starting N matter.js devices: one process each against one device host for all.

In a private network namespace, each round starts ``--devices`` devices of mixed kinds
as separate ``virtual_device.mjs`` processes (all at once), then the same kinds in one
``device_host.mjs`` (tests/support/device_host.py). It prints, per round and way, the
wall time until every device printed READY and the CPU the device processes spent up
to that moment, and the ratios host / processes of the same round.

    .venv/bin/python bench/device_starts.py [--devices 8] [--rounds 2]

Results: docs/testing.md, "Where the suite's time goes".
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.benchlib import tree_cpu_seconds
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.device_host import DeviceHost
from tests.support.fabric import Fabric, open_fabric

KINDS = [
    DeviceKind.ONOFF,
    DeviceKind.DIMMABLE,
    DeviceKind.THERMOSTAT,
    DeviceKind.COVER,
    DeviceKind.BUTTON,
    DeviceKind.FAN,
    DeviceKind.CONTACT,
    DeviceKind.SPEAKER,
]
_passcodes = itertools.count(20208001)


def processes(fabric: Fabric, n: int, round_no: int) -> tuple[float, float]:
    devices = [
        VirtualDevice(
            kind=KINDS[i % len(KINDS)],
            state_dir=fabric.base_dir / f"proc-{round_no}-{i}",
            port=7800 + i,
            passcode=next(_passcodes),
            discriminator=0xFB0 + i,
            netns=fabric.namespace,
        )
        for i in range(n)
    ]
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(lambda dev: dev.start(timeout_s=300), devices))
        wall = time.monotonic() - started
        cpu = tree_cpu_seconds([dev.pid for dev in devices if dev.pid is not None])
    finally:
        for dev in devices:
            dev.stop()
    return wall, cpu


def hosted(fabric: Fabric, n: int, round_no: int) -> tuple[float, float]:
    host = DeviceHost(fabric.base_dir / f"host-{round_no}", netns=fabric.namespace)
    started = time.monotonic()
    try:
        host.start()
        devices = [
            host.device(
                KINDS[i % len(KINDS)],
                id=f"d{i}",
                port=7800 + i,
                passcode=next(_passcodes),
                discriminator=0xFB0 + i,
            )
            for i in range(n)
        ]
        host.start_all(devices, timeout_s=300)
        wall = time.monotonic() - started
        assert host.pid is not None
        cpu = tree_cpu_seconds([host.pid])
    finally:
        host.stop()
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    ratios_wall: list[float] = []
    ratios_cpu: list[float] = []
    with open_fabric("bench-device-starts") as fabric:
        for r in range(args.rounds):
            p_wall, p_cpu = processes(fabric, args.devices, r)
            h_wall, h_cpu = hosted(fabric, args.devices, r)
            ratios_wall.append(h_wall / p_wall)
            ratios_cpu.append(h_cpu / p_cpu)
            print(
                f"round {r + 1}: {args.devices} devices  processes {p_wall:6.2f} s wall "
                f"{p_cpu:6.2f} s CPU | host {h_wall:6.2f} s wall {h_cpu:6.2f} s CPU | "
                f"host/processes wall {h_wall / p_wall:.2f} CPU {h_cpu / p_cpu:.2f}",
                flush=True,
            )
    print(
        f"median host/processes: wall {statistics.median(ratios_wall):.2f}, "
        f"CPU {statistics.median(ratios_cpu):.2f}"
    )


if __name__ == "__main__":
    main()
