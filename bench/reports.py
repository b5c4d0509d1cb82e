"""CPU per state report received: the bridge beside its controller, in a home of N devices.

In a private network namespace: ``atmosphere-bridge run`` (a separate process) with its
managed python-matter-server, one real matter.js on/off light commissioned through the
bridge's API, and ``--devices`` - 1 more devices imported into the same controller as
test nodes (recorded dumps, replicated), so the bridge holds a home of that size. The
light's "button" is pressed ``--reports`` times (SIGUSR1: it toggles itself and reports
OnOff to the controller, which forwards the report to the bridge); each report is
counted when its ``device.state`` event reaches a WebSocket subscriber of the bridge,
which also counts ``registry.changed`` events meanwhile (a report that changes no tool
should cause none).

Prints one JSON line: per report, the CPU the bridge process used (``bridge_cpu_ms``)
and the controller (``controller_cpu_ms``), each raw and minus their idle CPU over the
same wall time (measured first, nothing happening), the report's wall time from press
to event (p50/p99), and the home's size. The bridge figure includes publishing the
event to that one subscriber. ``--profile FILE`` records the bridge with py-spy during
the reports and prints where its CPU goes (collapsed stacks in FILE).

``--inprocess`` skips the fabric and times only the bridge's own handling of a report
(``MatterAdapter._on_attribute`` → ``MatterToolSync.refresh_node`` → ``device.state``) in
this process, for a report no tool depends on (OnOff) and for one that rebuilds the
node (the node label), with the same home; no controller, so no client parsing.

Then the same presses again with no one subscribed to the bridge, watched on the
bench's own controller connection: ``bridge_cpu_ms_unwatched`` is the bridge's CPU per
report when nobody listens, and ``bare_client_cpu_ms`` the CPU of the bench's event loop thread for
receiving the same report on a bare aiohttp WebSocket (the floor for any Python client).
``bridge_rss_mb`` is the running bridge's resident memory with all those devices, and
``bridge_threads_cpu_ms`` which of its threads spent the CPU.

Usage (root, after ``make install``):
    .venv/bin/python bench/reports.py [--devices 100] [--reports 40] [--profile FILE]
    .venv/bin/python bench/reports.py --inprocess [--devices 100]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from benchlib import (
    controller_headers,
    cpu_seconds,
    descendants,
    percentile,
    rss_mb,
    start_profile,
    stop_process,
    summarize_profile,
    thread_cpu_seconds,
    tree_cpu_seconds,
)

from bridge import netns
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, node_available, write_test_paa
from bridge.matter import NodeData, build_devices

REPO = Path(__file__).resolve().parents[1]
NODES = REPO / "tests" / "fixtures" / "nodes"


def test_nodes(devices_wanted: int) -> list[dict[str, Any]]:
    """Return recorded node dumps, replicated, holding at least ``devices_wanted`` devices."""
    dumps = [json.loads(p.read_text()) for p in sorted(NODES.glob("*/*.json"))]
    out: list[dict[str, Any]] = []
    count = 0
    while count < devices_wanted:
        for dump in dumps:
            n = len(build_devices([NodeData.from_json(dump)]))
            if n == 0:
                continue
            out.append(copy.deepcopy(dump))
            count += n
            if count >= devices_wanted:
                break
    return out


async def wait_for_line(proc: asyncio.subprocess.Process, prefix: str, timeout_s: float) -> str:
    assert proc.stdout is not None
    async with asyncio.timeout(timeout_s):
        while True:
            line = (await proc.stdout.readline()).decode()
            if not line:
                raise RuntimeError("the bridge exited before it was ready")
            if line.startswith(prefix):
                return line.strip()


async def run(
    devices: int, reports: int, idle_s: float, profile: Path | None, program: Path
) -> dict[str, Any]:
    reason = netns.unsupported_reason() or node_available()
    if reason:
        raise SystemExit(f"reports benchmark needs a fabric namespace: {reason}")
    base = Path(tempfile.mkdtemp(prefix="atmosphere-bench-", dir="/var/tmp"))
    ns = netns.create_namespace(f"atm-rep-{os.getpid()}")
    light = VirtualDevice(
        kind=DeviceKind.ONOFF,
        state_dir=base / "device",
        port=5540,
        passcode=20202401,
        discriminator=0x60A,
        label="Report Lamp",
        netns=ns,
    )
    bridge: asyncio.subprocess.Process | None = None
    out: dict[str, Any] = {}
    try:
        state = base / "state"
        await asyncio.to_thread(write_test_paa, state / "controller" / "paa")
        await asyncio.to_thread(light.start)
        config = base / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "state_dir": str(state),
                    "api": {"host": "127.0.0.1", "port": 0},
                    "matter": {"netns": ns.name, "controller_venv": str(REPO / ".venv-controller")},
                }
            )
        )
        token = issue_token(
            NodeKey.load_or_create(state / KEY_FILE_NAME),
            agent_id="bench",
            permissions=["device:*"],
            ttl_s=3600,
        )
        bridge = await asyncio.create_subprocess_exec(
            str(program),
            "--config",
            str(config),
            "run",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        url = (await wait_for_line(bridge, "atmosphere-bridge listening on", 120)).rsplit(" ", 1)[1]
        headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            assert light.pairing is not None
            async with http.post(
                f"{url}/v1/devices/commission", json={"code": light.pairing.manual}
            ) as resp:
                result = await resp.json()
            if resp.status != 201:
                raise RuntimeError(f"commissioning failed: {result}")
            light_id = f"{result['node_id']}-1"
            nodes = test_nodes(devices - 1)
            async with (
                aiohttp.ClientSession() as plain,
                plain.ws_connect(
                    f"ws://{ns.ns_address}:5580/ws", compress=0, headers=controller_headers(state)
                ) as ctl,
            ):
                await ctl.receive_json()
                await ctl.send_json(
                    {
                        "message_id": "import",
                        "command": "import_test_node",
                        "args": {"dump": json.dumps({"data": {"server": {"nodes": nodes}}})},
                    }
                )
                while (await ctl.receive_json()).get("message_id") != "import":
                    pass
            async with asyncio.timeout(120):
                while True:
                    async with http.get(f"{url}/v1/devices") as resp:
                        listed = (await resp.json())["devices"]
                    if len(listed) >= devices:
                        break
                    await asyncio.sleep(0.5)
            events = await http.ws_connect(
                f"{url.replace('http', 'ws')}/v1/events?types=device.state,registry."
            )
            registry_changes = 0

            async def one_report() -> float:
                started = time.perf_counter()
                light.press()
                async with asyncio.timeout(10):
                    while True:
                        event = json.loads((await events.receive()).data)
                        if event.get("type") == "registry.changed":
                            nonlocal registry_changes
                            registry_changes += 1
                            continue
                        data = event.get("data", {})
                        if data.get("device_id") == light_id and data.get("path") == "1/6/0":
                            return (time.perf_counter() - started) * 1000

            for _ in range(10):  # first-report paths, caches
                await one_report()
            registry_changes = 0
            controller = descendants(bridge.pid)
            await asyncio.sleep(1)
            idle_start = time.perf_counter()
            b0, c0 = cpu_seconds(bridge.pid), tree_cpu_seconds(controller)
            await asyncio.sleep(idle_s)
            idle_wall = time.perf_counter() - idle_start
            idle_b = (cpu_seconds(bridge.pid) - b0) / idle_wall
            idle_c = (tree_cpu_seconds(controller) - c0) / idle_wall
            spy = start_profile(bridge.pid, profile) if profile else None
            wall: list[float] = []
            started = time.perf_counter()
            b0, c0 = cpu_seconds(bridge.pid), tree_cpu_seconds(controller)
            threads0 = thread_cpu_seconds(bridge.pid)
            for _ in range(reports):
                wall.append(await one_report())
            elapsed = time.perf_counter() - started
            bridge_s = cpu_seconds(bridge.pid) - b0
            threads1 = thread_cpu_seconds(bridge.pid)
            controller_s = tree_cpu_seconds(controller) - c0
            await events.close()
            rss = rss_mb(bridge.pid)
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                await asyncio.to_thread(spy.wait, 30)
            # The same reports with no one subscribed to the bridge: the bench watches
            # them on a connection of its own to the controller (its event loop
            # thread's CPU for receiving one report is the floor: an aiohttp WebSocket
            # client and a JSON parse).
            quiet = await reports_unwatched(
                light, ns.ns_address, controller_headers(state), bridge.pid, reports
            )
        n = len(wall)
        out = {
            "devices": len(listed),
            "reports": n,
            "bridge_cpu_ms": round(bridge_s * 1000 / n, 3),
            "bridge_cpu_ms_minus_idle": round((bridge_s - idle_b * elapsed) * 1000 / n, 3),
            "controller_cpu_ms": round(controller_s * 1000 / n, 3),
            "controller_cpu_ms_minus_idle": round((controller_s - idle_c * elapsed) * 1000 / n, 3),
            "bridge_idle_cpu_pct": round(idle_b * 100, 3),
            "controller_idle_cpu_pct": round(idle_c * 100, 3),
            "registry_changes_during_reports": registry_changes,
            **quiet,
            "press_to_event_p50_ms": round(percentile(wall, 0.5), 3),
            "press_to_event_p99_ms": round(percentile(wall, 0.99), 3),
            # The running bridge (all faces on, connected, every device's tools built).
            "bridge_rss_mb": round(rss, 1),
            # Which of the bridge's threads spent that CPU (ms per report, busiest first).
            "bridge_threads_cpu_ms": dict(
                sorted(
                    (
                        (k, round((v - threads0.get(k, 0.0)) * 1000 / n, 3))
                        for k, v in threads1.items()
                        if v - threads0.get(k, 0.0) > 0
                    ),
                    key=lambda kv: -kv[1],
                )[:6]
            ),
        }
    finally:
        if bridge is not None:
            await stop_process(bridge)
        await asyncio.to_thread(light.stop)
        netns.delete_namespace(ns.name)
        shutil.rmtree(base, ignore_errors=True)
    return out


async def reports_unwatched(
    light: VirtualDevice, address: str, headers: dict[str, str], bridge_pid: int, reports: int
) -> dict[str, Any]:
    """Press the light ``reports`` times with no bridge subscriber; CPU per report."""
    async with (
        aiohttp.ClientSession() as plain,
        plain.ws_connect(
            f"ws://{address}:5580/ws", compress=0, max_msg_size=0, headers=headers
        ) as ctl,
    ):
        await ctl.receive_json()
        await ctl.send_json({"message_id": "listen", "command": "start_listening"})
        while (await ctl.receive_json()).get("message_id") != "listen":
            pass

        async def one_report() -> None:
            light.press()
            async with asyncio.timeout(10):
                while True:
                    msg = await ctl.receive_json()
                    data = msg.get("data")
                    if (
                        msg.get("event") == "attribute_updated"
                        and isinstance(data, list)
                        and str(data[1]) == "1/6/0"
                    ):
                        return

        for _ in range(3):
            await one_report()
        b0, own0 = cpu_seconds(bridge_pid), time.thread_time()
        for _ in range(reports):
            await one_report()
        bridge_s, own_s = cpu_seconds(bridge_pid) - b0, time.thread_time() - own0
    return {
        "bridge_cpu_ms_unwatched": round(bridge_s * 1000 / reports, 3),
        "bare_client_cpu_ms": round(own_s * 1000 / reports, 3),
    }


def inprocess(devices: int, rounds: int = 2000) -> dict[str, Any]:
    """Return the bridge's own CPU per report (µs), absorbed and rebuilding, in-process."""
    from bridge.events import EventBus
    from bridge.matter.controller.adapter import MatterAdapter
    from bridge.matter.sync.registry import MatterToolSync
    from bridge.tools.registry import ToolRegistry

    async def go() -> dict[str, Any]:
        adapter = MatterAdapter("ws://127.0.0.1:9/ws")  # never connected: nodes set below
        events = EventBus()
        bridge = MatterToolSync(adapter=adapter, registry=ToolRegistry(events), events=events)
        adapter.subscribe(bridge._on_event)
        dumps = test_nodes(devices)
        for i, doc in enumerate(dumps):
            node = NodeData.from_json({**doc, "node_id": 1000 + i})
            adapter._nodes[node.node_id] = node
        bridge.sync()
        sub = events.subscribe("device.state")  # one subscriber, like a console
        light = next(d for d in bridge.devices() if d.has_attr(6, 0))
        out: dict[str, Any] = {"devices": len(bridge.devices()), "tools": len(bridge._tools)}
        for label, path, values, n in (
            ("absorbed_us", f"{light.endpoint_id}/6/0", (True, False), rounds),
            ("rebuilt_us", "0/40/5", ("Lamp A", "Lamp B"), max(20, rounds // 50)),
        ):
            c0 = time.process_time()
            for i in range(n):
                adapter._on_attribute(light.node_id, path, values[i % 2])
                while not sub.queue.empty():
                    sub.queue.get_nowait()
            out[label] = round((time.process_time() - c0) * 1e6 / n, 1)
        return out

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=100, help="devices in the home (100)")
    parser.add_argument(
        "--reports",
        type=int,
        default=40,
        help="reports to time (40; the light reports about once a second)",
    )
    parser.add_argument("--idle", type=float, default=10.0, help="idle seconds measured first")
    parser.add_argument(
        "--bridge",
        type=Path,
        default=REPO / ".venv" / "bin" / "atmosphere-bridge",
        help="the atmosphere-bridge to run (another checkout's, for a before)",
    )
    parser.add_argument("--profile", type=Path, help="py-spy the bridge into this file")
    parser.add_argument(
        "--inprocess",
        action="store_true",
        help="time only the bridge's report handling, in this process",
    )
    args = parser.parse_args()
    if args.inprocess:
        print(json.dumps(inprocess(max(1, args.devices))), flush=True)
        return
    line = asyncio.run(
        run(
            max(1, args.devices),
            max(10, min(args.reports, 5000)),
            args.idle,
            args.profile,
            args.bridge,
        )
    )
    print(json.dumps(line), flush=True)
    if args.profile:
        print(summarize_profile(args.profile), flush=True)


if __name__ == "__main__":
    sys.exit(main())
