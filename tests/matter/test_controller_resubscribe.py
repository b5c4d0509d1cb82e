"""The launcher's resubscribe command: a node whose device is back is set up at once.

python-matter-server 8.1.2 has no command that re-establishes a node: a device that
comes back waits for the CHIP SDK's resubscription back-off (tens of seconds after a
few failures) unless the server's mDNS handler happens to catch it. The bridge's
launcher (``bridge.matter.controller.guard``) adds ``atmosphere_resubscribe_node``, the
server's own node setup on demand. Here a real controller started by ``ManagedController`` in the
fabric namespace and a real matter.js light, talked to over the WebSocket.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.demo.virtual_devices import DeviceKind
from bridge.matter import RESUBSCRIBE_COMMAND
from tests.support.fabric import Fabric, running_controller

pytestmark = pytest.mark.fabric

# python-matter-server's error code for an unknown node (NodeNotExists).
NODE_NOT_EXISTS = 5
ON_OFF = "1/6/0"  # endpoint 1, On/Off cluster, OnOff attribute


class Client:
    """One WebSocket to the controller: commands and their answers."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)

    async def call(self, command: str, timeout_s: float = 30, **args: Any) -> dict[str, Any]:
        """Send ``command`` and return the controller's answer (result or error)."""
        message_id = str(next(self._ids))
        await self.ws.send_json({"message_id": message_id, "command": command, "args": args})
        async with asyncio.timeout(timeout_s):
            while True:
                msg = await self.ws.receive_json()
                if msg.get("message_id") == message_id:
                    answer: dict[str, Any] = msg
                    return answer

    async def node(self, node_id: int) -> dict[str, Any]:
        """Return the controller's record of ``node_id``."""
        node: dict[str, Any] = (await self.call("get_node", node_id=node_id))["result"]
        return node


def _log_since(path: Path, offset: int) -> str:
    with path.open("rb") as fh:
        fh.seek(offset)
        return fh.read().decode(errors="replace")


async def test_a_node_back_on_the_network_is_set_up_by_one_command(fabric: Fabric) -> None:
    light = fabric.device(DeviceKind.ONOFF, label="Resubscribed Light")
    assert light.pairing is not None
    with running_controller(fabric, "resubscribe") as ctl:
        log = ctl.controller.settings.log_path
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(ctl.url, headers=ctl.headers) as ws,
        ):
            await ws.receive_json(timeout=10)  # server_info greeting
            client = Client(ws)
            added = await client.call(
                "commission_with_code", timeout_s=300, code=light.pairing.manual, network_only=True
            )
            node_id = added["result"]["node_id"]

            unknown = await client.call(RESUBSCRIBE_COMMAND, node_id=node_id + 100)
            assert unknown["error_code"] == NODE_NOT_EXISTS, unknown

            # An available node is left alone: nothing is set up again.
            mark = log.stat().st_size
            assert (await client.call(RESUBSCRIBE_COMMAND, node_id=node_id))["result"] is True
            assert "Setting-up node" not in _log_since(log, mark)

            # The device gone: the command answers the server's error, nothing changes.
            await asyncio.to_thread(light.stop)
            deadline = time.monotonic() + 60
            while (await client.node(node_id))["available"]:
                assert time.monotonic() < deadline, _log_since(log, mark)[-3000:]
                await asyncio.sleep(0.3)
            gone = await client.call(RESUBSCRIBE_COMMAND, timeout_s=120, node_id=node_id)
            assert "error_code" in gone, gone
            assert (await client.node(node_id))["available"] is False

            # The device back: one command, and the node is available with its state.
            await asyncio.to_thread(light.start)
            back = await client.call(RESUBSCRIBE_COMMAND, node_id=node_id)
            assert back.get("result") is True, back
            node = await client.node(node_id)
            assert node["available"] is True
            # It answers commands at once: the light switches and says so itself.
            mark_state = light.mark()
            toggled = await client.call(
                "device_command",
                node_id=node_id,
                endpoint_id=1,
                cluster_id=6,
                command_name="Toggle",
                payload={},
            )
            assert "error_code" not in toggled, toggled
            await asyncio.to_thread(
                light.wait_state, "onOff", "onOff", not node["attributes"][ON_OFF], since=mark_state
            )
