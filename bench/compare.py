"""Before and after in one run: two bridges, one controller, one device, calls interleaved.

A device call's figures drift by up to 1.5x between runs minutes apart on this machine
(the controller's own CPU per command, which no bridge change touches, moves as much),
so a before/after taken from two runs says little. Here both bridges serve the same
matter.js light in one private network namespace:

  after    this checkout's ``atmosphere-bridge run`` with its managed controller
  before   ``--other``'s ``atmosphere-bridge run`` (another checkout's venv), connected to
           that same controller as an external one (``matter.controller_url``)

(``--watch``: each with a ``device.state`` subscriber on ``/v1/events`` throughout) and
every round sends, in an order that rotates, one direct ``device_command`` Toggle
over the controller's WebSocket, the light's ``_toggle`` through "after" and the same
through "before". Each bridge's figures: overhead p50 and paired p99 over the direct
command of its round, and its own process's CPU per call (both bridges receive every
round's three state reports alike). Then each sender alone (direct, after, before) for
as many calls, with the CPU the controller and the device spend per call: what a
bridge's call costs beyond its own process.

Floors, in the same rounds (``bench/bare_peer.py``): a bare aiohttp server on the
bridge's event loop, called by the same client as the bridges in every round (its CPU
per round trip: the HTTP part of a call with no middleware, pipeline, audit or device);
the same bare server sending the light's Toggle to the controller over one WebSocket
before it answers (``bare+matter``: an HTTP -> Matter call in Python and nothing else);
and a bare listener on the controller's WebSocket parsing every frame (its CPU per
round: receiving the round's state reports, which each bridge also does).

One phase per ``--channel``: ``rawhttp`` (POST
/v1/invoke from a minimal keep-alive client), ``http`` (aiohttp's client), ``ws`` (one
``/v1/calls/ws`` socket). Waits for quiet and warms the device up first, as
``overhead.py`` does. Prints a table and one JSON line.

Usage (root, after ``make install``; the other checkout installed with its own venv):
    .venv/bin/python bench/compare.py --other /path/to/checkout/.venv/bin/atmosphere-bridge
                                      [--calls 600] [--channel rawhttp,ws,http]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from benchlib import (
    controller_headers,
    cpu_seconds,
    descendants,
    paired,
    percentile,
    settle,
    stop_process,
)
from overhead import direct_toggler, wait_for_line

from bridge import netns
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, node_available, write_test_paa

REPO = Path(__file__).resolve().parents[1]
Via = Callable[[], Awaitable[float]]


async def start_bridge(
    program: Path, base: Path, matter: dict[str, Any]
) -> tuple[asyncio.subprocess.Process, str, str]:
    """Start one bridge; return (process, base URL, a token it accepts)."""
    state = base / "state"
    state.mkdir(parents=True, exist_ok=True)
    config = base / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {"state_dir": str(state), "api": {"host": "127.0.0.1", "port": 0}, "matter": matter}
        )
    )
    token = issue_token(
        NodeKey.load_or_create(state / KEY_FILE_NAME),
        agent_id="bench",
        permissions=["device:*"],
        ttl_s=3600,
    )
    proc = await asyncio.create_subprocess_exec(
        str(program),
        "--config",
        str(config),
        "run",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    line = await wait_for_line(proc, "atmosphere-bridge listening on", 120)
    return proc, line.rsplit(" ", 1)[1], token


class Side:
    """One bridge's call channels, opened once and reused for every call."""

    def __init__(self, name: str, url: str, token: str, tool: str, pid: int) -> None:
        self.name, self.url, self.token, self.tool, self.pid = name, url, token, tool, pid
        self.http: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.raw: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.ids = itertools.count(1)
        self.watcher: asyncio.Task[None] | None = None

    async def open(self) -> None:
        self.http = aiohttp.ClientSession(headers={"Authorization": f"Bearer {self.token}"})
        await self.fresh("ws")
        await self.fresh("rawhttp")
        host, port = self.url.removeprefix("http://").rsplit(":", 1)
        body = json.dumps({"tool": self.tool, "params": {}}).encode()
        self.raw_request = (
            f"POST /v1/invoke HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body

    async def fresh(self, channel: str) -> None:
        """Open a fresh connection for ``channel``: one left idle through another phase
        is closed by the server (the call socket's 30 s heartbeat went unanswered, the
        keep-alive connection timed out)."""
        assert self.http is not None
        if channel == "ws":
            if self.ws is not None:
                await self.ws.close()
            self.ws = await self.http.ws_connect(
                f"{self.url.replace('http', 'ws', 1)}/v1/calls/ws", compress=0
            )
        elif channel == "rawhttp":
            if self.raw is not None:
                self.raw[1].close()
            host, port = self.url.removeprefix("http://").rsplit(":", 1)
            self.raw = await asyncio.open_connection(host, int(port))

    async def watch(self) -> None:
        """Subscribe to ``device.state`` on ``/v1/events`` and drain it in the background
        (a console or agent watching the home)."""
        assert self.http is not None
        events = await self.http.ws_connect(
            f"{self.url.replace('http', 'ws', 1)}/v1/events?types=device.state", compress=0
        )

        async def drain() -> None:
            async for _msg in events:
                pass

        self.watcher = asyncio.get_running_loop().create_task(drain())

    async def close(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
        if self.ws is not None:
            await self.ws.close()
        if self.raw is not None:
            self.raw[1].close()
        if self.http is not None:
            await self.http.close()

    def via(self, channel: str) -> Via:
        async def http() -> float:
            assert self.http is not None
            started = time.perf_counter()
            async with self.http.post(
                f"{self.url}/v1/invoke", json={"tool": self.tool, "params": {}}
            ) as resp:
                body = await resp.json()
            return self._check(started, body)

        async def rawhttp() -> float:
            assert self.raw is not None
            reader, writer = self.raw
            started = time.perf_counter()
            writer.write(self.raw_request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            return self._check(started, json.loads(await reader.readexactly(length)))

        async def ws() -> float:
            assert self.ws is not None
            call_id = f"c{next(self.ids)}"
            started = time.perf_counter()
            await self.ws.send_str(
                json.dumps({"type": "tool_invoke", "id": call_id, "tool": self.tool, "params": {}})
            )
            while True:
                body = json.loads((await self.ws.receive()).data)
                if body.get("request_id") == call_id:
                    return self._check(started, body)

        return {"http": http, "rawhttp": rawhttp, "ws": ws}[channel]

    def _check(self, started: float, body: dict[str, Any]) -> float:
        elapsed = (time.perf_counter() - started) * 1000
        if body.get("status") != "success":
            raise RuntimeError(f"{self.name}: call failed: {body}")
        return elapsed


async def start_peer(*args: str) -> tuple[asyncio.subprocess.Process, dict[str, Any]]:
    """Start ``bench/bare_peer.py ARGS``; return it and the line it prints when ready."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(Path(__file__).with_name("bare_peer.py")),
        *args,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    async with asyncio.timeout(30):
        line = await proc.stdout.readline()
    if not line:
        raise RuntimeError(f"bare_peer.py {args[0]} did not start")
    return proc, json.loads(line)


async def phase(
    direct: Via, sides: list[Side], channel: str, calls: int, listener: int
) -> dict[str, Any]:
    """Rounds of direct + each side, order rotating; return each side's figures.

    ``listener`` is the bare controller listener's pid: its CPU per round is the floor
    of receiving the round's state reports.
    """
    for side in sides:
        await side.fresh(channel)
    runners: list[tuple[str, Via]] = [("direct", direct)]
    runners += [(s.name, s.via(channel)) for s in sides]
    for _ in range(30):  # first-call paths of this channel
        for _, run in runners:
            await run()
    samples: dict[str, list[float]] = {name: [] for name, _ in runners}
    orders = list(itertools.permutations(range(len(runners))))
    cpu0 = {s.name: cpu_seconds(s.pid) for s in sides}
    listener0 = cpu_seconds(listener)
    for i in range(calls):
        for k in orders[i % len(orders)]:
            name, run = runners[k]
            samples[name].append(await run())
    cpu = {s.name: cpu_seconds(s.pid) - cpu0[s.name] for s in sides}
    out: dict[str, Any] = {
        "direct_p50_ms": round(percentile(samples["direct"], 0.5), 3),
        "bare_listener_cpu_ms_per_round": round(
            (cpu_seconds(listener) - listener0) * 1000 / calls, 3
        ),
    }
    for s in sides:
        diffs = paired(samples[s.name], samples["direct"])
        out[s.name] = {
            "overhead_p50_ms": round(percentile(diffs, 0.5), 3),
            "overhead_p99_ms": round(percentile(diffs, 0.99), 3),
            "bridge_cpu_ms_per_call": round(cpu[s.name] * 1000 / calls, 3),
        }
    return out


async def alone(
    direct: Via, sides: list[Side], channel: str, calls: int, others: dict[str, list[int]]
) -> dict[str, Any]:
    """Each sender on its own, ``calls`` in a row: the CPU the controller and the device
    spend per call (what a bridge's call costs beyond its own process), and its p50.

    The interleaved phases cannot split the controller's and the device's work between
    the sides; here only one side sends while they are measured.
    """
    out: dict[str, Any] = {}
    for name, side in [("direct", None), *((s.name, s) for s in sides)]:
        if side is not None:
            await side.fresh(channel)  # idle since its last phase: the server closed it
        run = direct if side is None else side.via(channel)
        for _ in range(30):
            await run()
        cpu0 = {k: sum(cpu_seconds(p) for p in pids) for k, pids in others.items()}
        samples = [await run() for _ in range(calls)]
        out[name] = {"p50_ms": round(percentile(samples, 0.5), 3)} | {
            f"{k}_cpu_ms_per_call": round(
                (sum(cpu_seconds(p) for p in pids) - cpu0[k]) * 1000 / calls, 3
            )
            for k, pids in others.items()
        }
    return out


async def run(other: Path, calls: int, channels: list[str], watch: bool) -> dict[str, Any]:
    reason = netns.unsupported_reason() or node_available()
    if reason:
        raise SystemExit(f"compare benchmark needs a fabric namespace: {reason}")
    base = Path(tempfile.mkdtemp(prefix="atmosphere-compare-", dir="/var/tmp"))
    ns = netns.create_namespace(f"atm-cmp-{os.getpid()}")
    device = VirtualDevice(
        kind=DeviceKind.ONOFF,
        state_dir=base / "device",
        port=5540,
        passcode=20202301,
        discriminator=0x50A,
        label="Bench Lamp",
        netns=ns,
    )
    procs: list[asyncio.subprocess.Process] = []
    sides: list[Side] = []
    floors: list[Side] = []
    out: dict[str, Any] = {}
    try:
        await asyncio.to_thread(write_test_paa, base / "after" / "state" / "controller" / "paa")
        await asyncio.to_thread(device.start)
        after, after_url, after_token = await start_bridge(
            REPO / ".venv" / "bin" / "atmosphere-bridge",
            base / "after",
            {"netns": ns.name, "controller_venv": str(REPO / ".venv-controller")},
        )
        procs.append(after)
        controller_url = f"ws://{ns.ns_address}:5580/ws"
        async with aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {after_token}"}
        ) as http:
            assert device.pairing is not None
            async with http.post(
                f"{after_url}/v1/devices/commission", json={"code": device.pairing.manual}
            ) as resp:
                result = await resp.json()
            if resp.status != 201:
                raise RuntimeError(f"commissioning failed: {result}")
        node_id = result["node_id"]
        toggle = next(t for t in result["tools"] if t.endswith("_toggle"))
        before, before_url, before_token = await start_bridge(
            other,
            base / "before",
            {
                "controller_url": controller_url,
                "controller_key_file": str(
                    base / "after" / "state" / "controller" / "controller.key"
                ),
            },
        )
        procs.append(before)
        sides = [
            Side("after", after_url, after_token, toggle, after.pid),
            Side("before", before_url, before_token, toggle, before.pid),
        ]
        for side in sides:
            await side.open()
            if watch:
                await side.watch()
        key_headers = json.dumps(controller_headers(base / "after" / "state"))
        bare, ready = await start_peer("server")
        procs.append(bare)
        floors.append(Side("bare", f"http://127.0.0.1:{ready['port']}", "-", "bare", bare.pid))
        relay, ready = await start_peer("server", controller_url, key_headers, str(node_id))
        procs.append(relay)
        floors.append(
            Side("bare+matter", f"http://127.0.0.1:{ready['port']}", "-", "bare", relay.pid)
        )
        for side in floors:
            await side.open()
        listener, _ = await start_peer("listener", controller_url, key_headers)
        procs.append(listener)
        # The other bridge names the light from the same node: wait for its tool.
        async with asyncio.timeout(60):
            while True:
                try:
                    await sides[1].via("rawhttp")()
                    break
                except RuntimeError:
                    await asyncio.sleep(0.5)
        async with (
            aiohttp.ClientSession() as plain,
            plain.ws_connect(
                controller_url, compress=0, headers=controller_headers(base / "after" / "state")
            ) as ctl,
        ):
            await ctl.receive_json()
            direct = direct_toggler(ctl, node_id)

            busy = [after.pid, before.pid, *(p.pid for p in procs[2:]), *descendants(after.pid)]
            out.update(await settle([*busy, *([device.pid] if device.pid else [])]))
            for _ in range(600):  # the device's and controller's warm-up (see overhead.py)
                await direct()
            for channel in channels:
                out[channel] = await phase(direct, [*sides, *floors], channel, calls, listener.pid)
                print(json.dumps({channel: out[channel]}), flush=True)
            # The same calls, one sender at a time: the controller's and device's share.
            others = {
                "controller": [
                    p for p in descendants(after.pid) if p not in (bare.pid, listener.pid)
                ],
                "device": [device.pid] if device.pid else [],
            }
            out["alone"] = await alone(direct, sides, channels[0], calls, others)
    finally:
        for side in [*sides, *floors]:
            await side.close()
        for proc in reversed(procs):
            await stop_process(proc)
        await asyncio.to_thread(device.stop)
        netns.delete_namespace(ns.name)
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--other",
        type=Path,
        required=True,
        help="the other checkout's atmosphere-bridge (the before)",
    )
    parser.add_argument("--calls", type=int, default=600, help="rounds per channel (600)")
    parser.add_argument("--channel", default="rawhttp,ws,http")
    parser.add_argument(
        "--watch",
        action="store_true",
        help="a /v1/events device.state subscriber on each bridge throughout",
    )
    args = parser.parse_args()
    channels = [c.strip() for c in args.channel.split(",") if c.strip()]
    if not channels or any(c not in ("http", "rawhttp", "ws") for c in channels):
        parser.error("--channel takes http, rawhttp, ws or a comma-separated list of them")
    out = asyncio.run(run(args.other, max(50, min(args.calls, 20_000)), channels, args.watch))
    print(f"{'channel':8s} {'side':7s} {'overhead p50':>13s} {'paired p99':>11s} {'CPU/call':>9s}")
    for channel in channels:
        for side in ("before", "after"):
            f = out[channel][side]
            print(
                f"{channel:8s} {side:7s} {f['overhead_p50_ms']:10.3f} ms "
                f"{f['overhead_p99_ms']:8.3f} ms {f['bridge_cpu_ms_per_call']:6.3f} ms"
            )
        b, a = out[channel]["before"], out[channel]["after"]
        print(
            f"{channel:8s} after/before: overhead p50 "
            f"{a['overhead_p50_ms'] / b['overhead_p50_ms']:.2f}, CPU "
            f"{a['bridge_cpu_ms_per_call'] / b['bridge_cpu_ms_per_call']:.2f}"
        )
        server = out[channel]["bare"]["bridge_cpu_ms_per_call"]
        relay = out[channel]["bare+matter"]["bridge_cpu_ms_per_call"]
        reports = out[channel]["bare_listener_cpu_ms_per_round"]
        print(
            f"{channel:8s} floors, CPU per call: a bare aiohttp server {server:.3f} ms, the "
            f"same sending the Toggle {relay:.3f} ms; a bare listener {reports:.3f} ms per "
            f"round's state reports. after - bare+matter: "
            f"{a['bridge_cpu_ms_per_call'] - relay:.3f} ms (pipeline, audit, objects)"
        )
    print(f"one sender at a time ({channels[0]}): p50, controller and device CPU per call")
    for name, f in out["alone"].items():
        print(
            f"  {name:7s} {f['p50_ms']:8.3f} ms {f['controller_cpu_ms_per_call']:8.3f} ms "
            f"{f['device_cpu_ms_per_call']:8.3f} ms"
        )
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
