"""What brings a device that is back on the network back into use: each controller lever.

A real python-matter-server (started through the bridge's launcher by
``ManagedController``) and one real matter.js light in a private network namespace. Each
round SIGKILLs the controller (its supervisor restarts it), waits until the light is
available again, stops the light for ``--away`` seconds and starts it; from the light's
READY the lever is applied every 0.5 s until the controller holds the node available.
It prints, per round, the seconds from READY to ``available`` and each lever call's
time and answer:

- ``none``: nothing (the CHIP SDK's resubscription back-off, the server's mDNS trigger);
- ``ping``: ``ping_node`` (ICMP pings of the node's addresses);
- ``interview``: ``interview_node`` (reads every attribute of the device);
- ``resub``: ``atmosphere_resubscribe_node``, the launcher's command.

    .venv/bin/python bench/recovery_levers.py [--levers none,ping,interview,resub]
        [--rounds 3] [--away 3]

Results: docs/faults.md, "What re-establishes a device that is back".
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.demo.virtual_devices import DeviceKind
from bridge.matter import RESUBSCRIBE_COMMAND
from tests.support.fabric import ThreadedController, open_fabric, running_controller

LEVERS = {"ping": "ping_node", "interview": "interview_node", "resub": RESUBSCRIBE_COMMAND}
LIMIT_S = 60.0


class Client:
    """One WebSocket to the controller, opened again after each kill."""

    def __init__(self, ctl: ThreadedController, http: aiohttp.ClientSession) -> None:
        self.ctl = ctl
        self.http = http
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)

    async def connect(self, limit_s: float = 120) -> None:
        """Connect (the controller may still be starting) and read its greeting."""
        deadline = time.monotonic() + limit_s
        while True:
            try:
                self.ws = await self.http.ws_connect(self.ctl.url, headers=self.ctl.headers)
                await self.ws.receive_json(timeout=10)
            except (aiohttp.ClientError, OSError, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.3)
            else:
                return

    async def call(self, command: str, timeout_s: float = 30, **args: Any) -> dict[str, Any]:
        """Send ``command``; return the controller's answer (result or error)."""
        assert self.ws is not None
        message_id = str(next(self._ids))
        await self.ws.send_json({"message_id": message_id, "command": command, "args": args})
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await self.ws.receive_json()
                if msg.get("message_id") == message_id:
                    answer: dict[str, Any] = msg
                    return answer

    async def available(self, node_id: int) -> bool:
        """Return whether the controller holds the node available."""
        return bool((await self.call("get_node", node_id=node_id))["result"]["available"])


async def one_round(client: Client, node_id: int, lever: str, light: Any, away_s: float) -> None:
    """Kill the controller, then stop and start the light; apply ``lever`` from READY."""
    assert client.ws is not None
    assert client.ctl.pid is not None
    os.kill(client.ctl.pid, signal.SIGKILL)
    await client.ws.close()
    await asyncio.sleep(1)
    await client.connect()
    deadline = time.monotonic() + LIMIT_S
    while not await client.available(node_id) and time.monotonic() < deadline:
        await asyncio.sleep(0.3)
    await asyncio.to_thread(light.stop)
    await asyncio.sleep(away_s)
    await asyncio.to_thread(light.start)
    ready = time.monotonic()
    calls: list[tuple[float, Any]] = []
    took: float | None = None
    while time.monotonic() - ready < LIMIT_S:
        if await client.available(node_id):
            took = time.monotonic() - ready
            break
        if lever in LEVERS:
            answer = await client.call(LEVERS[lever], node_id=node_id)
            calls.append(
                (round(time.monotonic() - ready, 2), answer.get("result", answer.get("error_code")))
            )
        await asyncio.sleep(0.5 if lever in LEVERS else 0.2)
    shown = "never" if took is None else f"{took:.2f}"
    print(
        f"lever={lever} away={away_s:g}s READY->available={shown} s calls={calls[:8]}", flush=True
    )


async def main(levers: list[str], rounds: int, away_s: float) -> None:
    with open_fabric(f"atm-levers-{os.getpid()}") as fabric:
        light = fabric.device(DeviceKind.ONOFF, label="Lever Light")
        assert light.pairing is not None
        with running_controller(fabric, "levers") as ctl:
            async with aiohttp.ClientSession() as http:
                client = Client(ctl, http)
                await client.connect()
                added = await client.call(
                    "commission_with_code",
                    timeout_s=300,
                    code=light.pairing.manual,
                    network_only=True,
                )
                node_id = added["result"]["node_id"]
                for lever in levers:
                    for _ in range(rounds):
                        await one_round(client, node_id, lever, light, away_s)
                if client.ws is not None:
                    await client.ws.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levers", default="none,ping,interview,resub")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--away", type=float, default=3.0, help="seconds the light is off")
    args = parser.parse_args()
    chosen = [x for x in args.levers.split(",") if x]
    unknown = [x for x in chosen if x != "none" and x not in LEVERS]
    if unknown:
        parser.error(f"unknown lever(s): {', '.join(unknown)}")
    asyncio.run(main(chosen, max(1, min(20, args.rounds)), max(0.0, min(120.0, args.away))))
