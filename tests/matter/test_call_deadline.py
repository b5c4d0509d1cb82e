"""A device call ends by its caller's deadline, even when the device does not answer.

A real matter.js light, commissioned by the real controller, is frozen (SIGSTOP: its
process keeps its sockets but answers nothing). A call of its ``_on`` tool made with a
context whose deadline is 1.5 s away answers ``TIMEOUT`` by then — the handler hands the
context to the device command, which waits until the deadline at most and tells the
controller to end the interaction then — instead of waiting for the controller's own
retransmissions and the adapter's 30 s request timeout. Timing is the point here, with
a wide margin for a loaded machine.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

import pytest

from bridge.demo.virtual_devices import DeviceKind
from bridge.errors import ToolTimeoutError
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.sync.registry import MatterToolSync
from bridge.tools.context import CallContext
from bridge.tools.registry import ToolRegistry
from tests.support.fabric import Fabric, ThreadedController

pytestmark = pytest.mark.fabric

DEADLINE_S = 1.5
# The answer must come after the deadline (it is the deadline that ends it) and well
# before the adapter's own request timeout (30 s) and the controller's retransmissions.
LATEST_S = DEADLINE_S + 3.0


async def until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_a_call_gives_up_at_its_callers_deadline(
    fabric: Fabric, matter_controller: ThreadedController
) -> None:
    light = fabric.device(DeviceKind.ONOFF, label="Frozen Light")
    assert light.pairing is not None
    adapter = MatterAdapter(matter_controller.url, headers=matter_controller.headers)
    registry = ToolRegistry()
    bridge = MatterToolSync(adapter=adapter, registry=registry, node_id="node-a")
    await bridge.start()
    node_id: int | None = None
    stopped = False
    try:
        await adapter.wait_connected(30)
        known = {n.node_id for n in adapter.nodes()}
        node = await adapter.send_command(
            "commission_with_code", timeout_s=180, code=light.pairing.manual, network_only=True
        )
        node_id = int(node["node_id"])
        assert node_id not in known
        await until(
            lambda: any(d.node_id == node_id and d.available for d in bridge.devices()),
            60,
            "the commissioned light",
        )
        (device,) = [d for d in bridge.devices() if d.node_id == node_id]
        on = registry.get(f"matter:{device.slug}_on@1.0.0")
        assert on is not None
        assert on.handler is not None
        # Awake, it answers well within the deadline.
        done = await on.handler({}, CallContext(deadline=time.monotonic() + 10))
        assert done["ok"] is True

        assert light.pid is not None
        os.kill(light.pid, signal.SIGSTOP)
        stopped = True
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError) as caught:
            await on.handler({}, CallContext(deadline=started + DEADLINE_S))
        took = time.monotonic() - started
        assert DEADLINE_S - 0.05 <= took <= LATEST_S, took
        assert caught.value.code.value == "TIMEOUT"
        assert caught.value.details["node_id"] == node_id
        # The command went out once, and the controller was told the caller's deadline.
        assert adapter.sent[-1].name == "On"
    finally:
        if stopped and light.pid is not None:
            os.kill(light.pid, signal.SIGCONT)
        if node_id is not None:
            await adapter.send_command("remove_node", timeout_s=60, node_id=node_id)
        await bridge.stop()
