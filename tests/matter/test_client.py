"""MatterAdapter against the real python-matter-server: pending calls, backoff, reconnects.

The controller is our own instance inside the fabric's private network namespace (see
tests/support/fabric.py), so stopping and killing it touches no other test. The fabric
e2e tests cover a killed controller at the service level over HTTP; this one checks the
adapter itself: a request pending when the controller dies fails at once with
CONTROLLER_UNAVAILABLE, calls while it is down fail fast, reconnect attempts back off
0.2 → 0.4 → 0.8 s (the cap) and start over after a success, and after every reconnect
each controller event reaches a listener exactly once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator

import pytest

from bridge.errors import ControllerUnavailableError
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.spec.models import ActionKind, AdapterEvent, AdapterEventKind
from bridge.matter.sync.registry import MatterToolSync
from bridge.tools.registry import ToolRegistry
from tests.matter.dumps import load_dump
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.matter import import_test_nodes

pytestmark = pytest.mark.controller


@pytest.fixture
def own_controller(fabric: Fabric) -> Iterator[ThreadedController]:
    """A controller this test may stop, freeze and kill."""
    with running_controller(fabric, "reconnect") as ctl:
        yield ctl


async def until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    for _ in range(int(timeout_s * 20)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def matter_tools(registry: ToolRegistry) -> list[str]:
    return sorted(e.definition.identity for e in registry.list(namespace="matter"))


async def test_pending_calls_backoff_and_reconnects(own_controller: ThreadedController) -> None:
    adapter = MatterAdapter(
        own_controller.url,
        headers=own_controller.headers,
        backoff_initial_s=0.2,
        backoff_max_s=0.8,
        request_timeout_s=60,
    )
    registry = ToolRegistry()
    bridge = MatterToolSync(adapter=adapter, registry=registry, node_id="node-a")
    events: list[AdapterEvent] = []
    adapter.subscribe(events.append)
    light = load_dump("matterjs-commissioned/node-1-onoff")
    await bridge.start()
    try:
        await adapter.wait_connected(30)
        await import_test_nodes(adapter, [light])
        await until(lambda: len(bridge.devices()) == 1, 10, "the imported light")
        (device,) = bridge.devices()
        tools = matter_tools(registry)
        assert tools == [
            f"matter:{n}@1.0.0"
            for n in (
                "control_matter_device",
                "light_test_onoff_off",
                "light_test_onoff_on",
                "light_test_onoff_state",
                "light_test_onoff_toggle",
            )
        ]
        on = f"matter:{device.slug}_on@1.0.0"

        # 1. A call pending when the controller dies fails at once, not after the timeout.
        pid = own_controller.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        sent_before = len(adapter.sent)
        call = asyncio.create_task(bridge.call(on, {}))
        await until(lambda: len(adapter.sent) > sent_before, 5, "the On command on the wire")
        assert adapter.sent[-1].kind is ActionKind.COMMAND
        assert adapter.sent[-1].name == "On"
        await asyncio.sleep(0.5)
        assert not call.done()  # the frozen controller does not answer
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ControllerUnavailableError, match="dropped during the request"):
            await asyncio.wait_for(call, 10)
        # Every tool stays listed but unavailable while the controller is away.
        assert all(e.available is False for e in registry.list(namespace="matter"))

        # 2. The supervisor restarts the server; the adapter reconnects by itself.
        await until(
            lambda: adapter.connected and adapter.connect_count == 2,
            60,
            "the reconnect after the kill",
        )
        assert own_controller.pid not in (None, pid)
        # Test nodes live only in the server's memory: the fresh snapshot drops the light
        # and its tools; importing it again brings back the very same tools, once each.
        await until(lambda: bridge.devices() == [], 5, "the dropped test node")
        assert matter_tools(registry) == []
        events.clear()
        await import_test_nodes(adapter, [light])
        await until(lambda: len(bridge.devices()) == 1, 10, "the re-imported light")
        assert matter_tools(registry) == tools
        added = [e for e in events if e.kind is AdapterEventKind.NODE_ADDED]
        assert [e.node_id for e in added] == [bridge.devices()[0].node_id]
        result = await bridge.call(f"matter:{bridge.devices()[0].slug}_on@1.0.0", {})
        assert result["sent"][0]["command"] == "On"

        # 3. A stopped controller: calls fail fast, attempts back off up to the cap.
        delays_before = len(adapter.retry_delays)
        await asyncio.to_thread(own_controller._call, own_controller.controller.stop())
        await until(lambda: not adapter.connected, 10, "the disconnect")
        with pytest.raises(ControllerUnavailableError, match="not connected"):
            await asyncio.wait_for(bridge.call(on, {}), 1)
        await until(
            lambda: len(adapter.retry_delays) - delays_before >= 5, 10, "five reconnect attempts"
        )
        schedule = list(adapter.retry_delays)[delays_before : delays_before + 5]
        assert schedule == [0.2, 0.4, 0.8, 0.8, 0.8]
        assert adapter.connect_count == 2

        # 4. Started again: the adapter reconnects and the schedule starts over next time.
        await asyncio.to_thread(own_controller.start)
        await until(
            lambda: adapter.connected and adapter.connect_count == 3,
            60,
            "the reconnect after the restart",
        )
        events.clear()
        await import_test_nodes(adapter, [light])
        await until(lambda: len(bridge.devices()) == 1, 10, "the light after the restart")
        assert matter_tools(registry) == tools
        assert len([e for e in events if e.kind is AdapterEventKind.NODE_ADDED]) == 1
        assert len([e for e in events if e.kind is AdapterEventKind.CONNECTED]) == 0
        delays_before = len(adapter.retry_delays)
        await asyncio.to_thread(own_controller._call, own_controller.controller.stop())
        await until(lambda: len(adapter.retry_delays) > delays_before, 10, "a retry")
        assert adapter.retry_delays[delays_before] == 0.2
    finally:
        await bridge.stop()
    assert registry.list(namespace="matter") == []


async def test_adapter_websocket_is_not_deflated(own_controller: ThreadedController) -> None:
    """The adapter asks for no permessage-deflate (CPU per call on a loopback or LAN link)."""
    adapter = MatterAdapter(own_controller.url, headers=own_controller.headers)
    await adapter.start()
    try:
        await adapter.wait_connected(30)
        conn = adapter._conn
        assert conn is not None
        assert conn.ws.compress == 0
        # And the uncompressed connection works: a request answers with the real result.
        result = await adapter.send_command("server_info", timeout_s=10)
        info = adapter.server_info()
        assert info is not None
        assert result["schema_version"] == info["schema_version"]
    finally:
        await adapter.stop()
