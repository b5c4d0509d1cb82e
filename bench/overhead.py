"""What the bridge adds to a Matter command: direct controller WebSocket vs a bridge tool call.

In one run against the same real device (a matter.js on/off light commissioned on the
bridge's managed python-matter-server, all inside a private network namespace):

(a) ``device_command`` OnOff.Toggle sent straight over the controller's WebSocket API;
(b) the same action as ``POST /v1/invoke`` of the light's ``_toggle`` tool over HTTP to
    the bridge (a separate ``atmosphere-bridge run`` process), with a real signed token
    checked on every call (resolve → validate → authorize → execute → record).

Calls alternate in small batches so drift hits both sides alike. Prints one JSON line:
``direct_p50_ms``, ``direct_p99_ms``, ``bridge_p50_ms``, ``bridge_p99_ms``,
``overhead_p50_ms``, ``overhead_p99_ms`` (bridge minus direct) and the sample count.

Usage (root, after ``make install``): .venv/bin/python bench/overhead.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
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

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.matter import netns
from bridge.matter.virtual_devices import DeviceKind, VirtualDevice, node_available, write_test_paa

REPO = Path(__file__).resolve().parents[1]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def wait_for_line(proc: asyncio.subprocess.Process, prefix: str, timeout_s: float) -> str:
    assert proc.stdout is not None
    async with asyncio.timeout(timeout_s):
        while True:
            line = (await proc.stdout.readline()).decode()
            if not line:
                raise RuntimeError("the bridge exited before it was ready")
            if line.startswith(prefix):
                return line.strip()


async def run(calls: int, batch: int) -> dict[str, Any]:
    reason = netns.unsupported_reason() or node_available()
    if reason:
        raise SystemExit(f"overhead benchmark needs a fabric namespace: {reason}")
    base = Path(tempfile.mkdtemp(prefix="atmosphere-bench-", dir="/var/tmp"))
    ns = netns.create_namespace(f"atm-bench-{os.getpid()}")
    device = VirtualDevice(
        kind=DeviceKind.ONOFF, state_dir=base / "device", port=5540,
        passcode=20202301, discriminator=0x50A, label="Bench Lamp", netns=ns,
    )  # fmt: skip
    bridge: asyncio.subprocess.Process | None = None
    try:
        state = base / "state"
        await asyncio.to_thread(write_test_paa, state / "controller" / "paa")
        await asyncio.to_thread(device.start)
        config = base / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "state_dir": str(state),
                    "api": {"host": "127.0.0.1", "port": 0},
                    "matter": {"netns": ns.name},
                }
            )
        )
        token = issue_token(
            NodeKey.load_or_create(state / KEY_FILE_NAME),
            agent_id="bench", permissions=["device:*"], ttl_s=3600,
        )  # fmt: skip
        bridge = await asyncio.create_subprocess_exec(
            str(REPO / ".venv" / "bin" / "atmosphere-bridge"), "--config", str(config), "run",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        line = await wait_for_line(bridge, "atmosphere-bridge listening on", 120)
        url = line.rsplit(" ", 1)[1]
        headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            assert device.pairing is not None
            async with http.post(
                f"{url}/v1/devices/commission", json={"code": device.pairing.manual}
            ) as resp:
                result = await resp.json()
            if resp.status != 201:
                raise RuntimeError(f"commissioning failed: {result}")
            node_id = result["node_id"]
            toggle = next(t for t in result["tools"] if t.endswith("_toggle"))
            controller_url = f"ws://{ns.ns_address}:5580/ws"
            async with (
                aiohttp.ClientSession() as ws_session,
                ws_session.ws_connect(controller_url) as ws,
            ):
                await ws.receive_json()
                ids = itertools.count(1)

                async def direct() -> float:
                    msg_id = str(next(ids))
                    started = time.perf_counter()
                    await ws.send_json({
                        "message_id": msg_id, "command": "device_command",
                        "args": {"node_id": node_id, "endpoint_id": 1, "cluster_id": 6,
                                 "command_name": "Toggle", "payload": {}},
                    })  # fmt: skip
                    while True:
                        msg = await ws.receive_json()
                        if msg.get("message_id") == msg_id:
                            break
                    elapsed = time.perf_counter() - started
                    if "error_code" in msg:
                        raise RuntimeError(f"direct call failed: {msg}")
                    return elapsed * 1000

                async def via_bridge() -> float:
                    started = time.perf_counter()
                    async with http.post(
                        f"{url}/v1/invoke", json={"tool": toggle, "params": {}}
                    ) as resp:
                        body = await resp.json()
                    elapsed = time.perf_counter() - started
                    if body.get("status") != "success":
                        raise RuntimeError(f"bridge call failed: {body}")
                    return elapsed * 1000

                for _ in range(20):  # warm-up: sessions, caches, JIT-free paths
                    await direct()
                    await via_bridge()
                direct_ms: list[float] = []
                bridge_ms: list[float] = []
                while len(direct_ms) < calls:
                    for _ in range(batch):
                        direct_ms.append(await direct())
                    for _ in range(batch):
                        bridge_ms.append(await via_bridge())
    finally:
        if bridge is not None and bridge.returncode is None:
            bridge.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(bridge.wait(), 20)
            except TimeoutError:
                bridge.kill()
                await bridge.wait()
        await asyncio.to_thread(device.stop)
        netns.delete_namespace(ns.name)
        shutil.rmtree(base, ignore_errors=True)
    d50, d99 = percentile(direct_ms, 0.5), percentile(direct_ms, 0.99)
    b50, b99 = percentile(bridge_ms, 0.5), percentile(bridge_ms, 0.99)
    return {
        "direct_p50_ms": round(d50, 3),
        "direct_p99_ms": round(d99, 3),
        "bridge_p50_ms": round(b50, 3),
        "bridge_p99_ms": round(b99, 3),
        "overhead_p50_ms": round(b50 - d50, 3),
        "overhead_p99_ms": round(b99 - d99, 3),
        "calls_each": len(direct_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per side (default 300)")
    parser.add_argument("--batch", type=int, default=10, help="alternation batch (default 10)")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.calls, args.batch))), flush=True)


if __name__ == "__main__":
    sys.exit(main())
