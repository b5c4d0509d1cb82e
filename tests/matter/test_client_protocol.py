"""The adapter's own controller protocol against a controller that misbehaves.

The real controller is used everywhere else (test_client.py, the fabric tests); it never
sends a malformed message, an unknown error code or an answer nobody asked for, so this
file's stand-in is a small aiohttp WebSocket server on loopback that speaks the same
protocol (greeting, ``start_listening``, results, errors, events) and then does what a
broken or hostile controller might. The adapter must keep its mirror sane, map every
error to the bridge's typed errors, fail waiting requests at once when the connection
drops, and never raise out of its reader.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import WSMsgType, web

from bridge.errors import (
    ControllerUnavailableError,
    DeviceUnavailableError,
    InvalidParamsError,
    ToolFailedError,
)
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.controller.gateway import CLIENT_SCHEMA_VERSION, ControllerCommandError
from bridge.matter.spec.models import ActionKind, AdapterEvent, AdapterEventKind, MatterAction

GREETING = {
    "fabric_id": 1,
    "compressed_fabric_id": 2,
    "schema_version": CLIENT_SCHEMA_VERSION,
    "min_supported_schema_version": 1,
    "sdk_version": "stand-in",
    "wifi_credentials_set": False,
    "thread_credentials_set": False,
    "bluetooth_enabled": False,
}
LIGHT = {
    "node_id": 7,
    "available": True,
    "is_bridge": False,
    "attributes": {"1/6/0": False, "0/40/5": "Desk"},
}


@dataclass
class StandIn:
    """What the stand-in controller does; tests change it while it runs."""

    greeting: Any = field(default_factory=lambda: dict(GREETING))
    nodes: Any = field(default_factory=lambda: [LIGHT])
    answer: Callable[[dict[str, Any]], Any] | None = None  # -> frames to send (str/bytes)
    after_snapshot: list[Any] = field(default_factory=list)  # sent right behind the nodes
    received: list[dict[str, Any]] = field(default_factory=list)
    sockets: list[web.WebSocketResponse] = field(default_factory=list)
    url: str = ""

    async def push(self, *frames: Any) -> None:
        for ws in list(self.sockets):
            for frame in frames:
                if isinstance(frame, bytes):
                    await ws.send_bytes(frame)
                else:
                    await ws.send_str(frame if isinstance(frame, str) else json.dumps(frame))


@pytest.fixture
async def standin() -> AsyncIterator[StandIn]:
    state = StandIn()

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        state.sockets.append(ws)
        await ws.send_str(json.dumps(state.greeting))
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT:
                break
            doc = json.loads(msg.data)
            state.received.append(doc)
            if doc["command"] == "start_listening":
                await ws.send_str(
                    json.dumps({"message_id": doc["message_id"], "result": state.nodes})
                )
                for frame in state.after_snapshot:
                    await ws.send_str(json.dumps(frame))
                continue
            frames = (
                state.answer(doc)
                if state.answer is not None
                else [{"message_id": doc["message_id"], "result": None}]
            )
            for frame in frames or []:
                if frame == "close":
                    await ws.close()
                    break
                await ws.send_str(frame if isinstance(frame, str) else json.dumps(frame))
        state.sockets.remove(ws)
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    state.url = f"ws://127.0.0.1:{port}/ws"
    try:
        yield state
    finally:
        for ws in list(state.sockets):
            await ws.close()
        await runner.cleanup()


@pytest.fixture
async def adapter(standin: StandIn) -> AsyncIterator[MatterAdapter]:
    found = MatterAdapter(
        standin.url, backoff_initial_s=0.05, backoff_max_s=0.2, request_timeout_s=2
    )
    await found.start()
    try:
        yield found
    finally:
        await found.stop()


def toggle(node_id: int = 7) -> MatterAction:
    return MatterAction(
        kind=ActionKind.COMMAND,
        node_id=node_id,
        endpoint_id=1,
        cluster="OnOff",
        cluster_id=6,
        name="Toggle",
    )


async def test_commands_go_out_as_the_controller_takes_them(
    standin: StandIn, adapter: MatterAdapter
) -> None:
    await adapter.wait_connected(5)
    assert [n.node_id for n in adapter.nodes()] == [7]
    unlock = MatterAction(
        kind=ActionKind.COMMAND,
        node_id=7,
        endpoint_id=1,
        cluster="DoorLock",
        cluster_id=257,
        name="UnlockDoor",
        payload={"PINCode": "1234"},
        timed=True,
    )
    assert await adapter.execute(unlock) is None
    sent = standin.received[-1]
    assert sent["command"] == "device_command"
    assert sent["args"] == {
        "node_id": 7,
        "endpoint_id": 1,
        "cluster_id": 257,
        "command_name": "UnlockDoor",
        "payload": {"PINCode": "MTIzNA=="},
        "response_type": None,
        "timed_request_timeout_ms": 10_000,
        "interaction_timeout_ms": None,
    }
    write = MatterAction(
        kind=ActionKind.WRITE,
        node_id=7,
        endpoint_id=1,
        cluster="OnOff",
        cluster_id=6,
        name="OnTime",
        value=5,
        attribute_ids=(16385,),
    )
    await adapter.execute(write)
    assert standin.received[-1]["args"] == {"node_id": 7, "attribute_path": "1/6/16385", "value": 5}
    # A payload the catalogue rejects never leaves the bridge.
    before = len(standin.received)
    bad = MatterAction(
        kind=ActionKind.COMMAND,
        node_id=7,
        endpoint_id=1,
        cluster="OnOff",
        cluster_id=6,
        name="Toggle",
        payload={"x": 1},
    )
    with pytest.raises(InvalidParamsError, match="unknown field"):
        await adapter.execute(bad)
    assert len(standin.received) == before


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (3, DeviceUnavailableError),
        (4, DeviceUnavailableError),
        (5, DeviceUnavailableError),
        (8, InvalidParamsError),
        (9, InvalidParamsError),
        (0, ToolFailedError),
        (42, ToolFailedError),
        ("3", ToolFailedError),
        (True, ToolFailedError),
        (None, ToolFailedError),
    ],
)
async def test_controller_errors_are_typed(
    standin: StandIn, adapter: MatterAdapter, code: Any, error: type[Exception]
) -> None:
    standin.answer = lambda doc: [
        {"message_id": doc["message_id"], "error_code": code, "details": "no such luck"}
    ]
    await adapter.wait_connected(5)
    with pytest.raises(error, match="no such luck"):
        await adapter.execute(toggle())
    with pytest.raises(ControllerCommandError) as err:
        await adapter.send_command("get_node", timeout_s=2, node_id=7)
    assert err.value.command == "get_node"


async def test_a_dropped_connection_fails_waiting_requests_at_once(
    standin: StandIn, adapter: MatterAdapter
) -> None:
    standin.answer = lambda doc: ["close"]
    await adapter.wait_connected(5)
    started = asyncio.get_running_loop().time()
    with pytest.raises(ControllerUnavailableError):
        await adapter.execute(toggle())
    assert asyncio.get_running_loop().time() - started < 1.5  # not the 2 s request timeout
    # It reconnects and works again.
    standin.answer = None
    for _ in range(100):
        if adapter.connected:
            break
        await asyncio.sleep(0.05)
    assert await adapter.execute(toggle()) is None
    assert adapter.connect_count == 2


async def test_silence_is_a_timeout_and_late_or_stray_answers_are_dropped(
    standin: StandIn, adapter: MatterAdapter
) -> None:
    late: list[str] = []
    standin.answer = lambda doc: late.append(doc["message_id"]) or []
    await adapter.wait_connected(5)
    with pytest.raises(DeviceUnavailableError, match="did not answer within 2 s"):
        await adapter.execute(toggle())
    await standin.push(
        {"message_id": late[0], "result": "too late"},
        {"message_id": "nobody-asked", "result": 1},
        {"message_id": None, "error_code": 1},
    )
    standin.answer = None
    assert await adapter.execute(toggle()) is None
    assert adapter.connect_count == 1


async def test_hostile_events_leave_the_mirror_sane(
    standin: StandIn, adapter: MatterAdapter
) -> None:
    events: list[AdapterEvent] = []
    adapter.subscribe(events.append)
    await adapter.wait_connected(5)
    await standin.push(
        {"event": "attribute_updated", "data": [7, "1/6/0", True]},
        {"event": "attribute_updated", "data": "nonsense"},
        {"event": "attribute_updated", "data": [7, 6, True]},
        {"event": "attribute_updated", "data": [99, "1/6/0", True]},  # unknown node
        {"event": "attribute_updated"},
        {"event": "node_added", "data": {"node_id": -1, "attributes": {}}},
        {"event": "node_added", "data": {"node_id": 8, "attributes": "x"}},
        {"event": "node_added", "data": [1, 2]},
        {"event": "node_removed", "data": "7"},
        {"event": "node_removed", "data": True},
        {"event": "who_knows", "data": {"x": 1}},
        {"event": 5},
        [1, 2, 3],
        "null",
        {
            "event": "node_added",
            "data": {
                "node_id": 9,
                "available": True,
                "attributes": {"1/6/0": True, "not/a/path": 1},
            },
        },
    )
    for _ in range(100):
        if adapter.node(9) is not None:
            break
        await asyncio.sleep(0.02)
    assert [n.node_id for n in adapter.nodes()] == [7, 9]
    assert adapter.node(7).attributes["1/6/0"] is True  # type: ignore[union-attr]
    assert adapter.node(9).attributes == {"1/6/0": True}  # type: ignore[union-attr]
    kinds = [e.kind for e in events]
    assert kinds.count(AdapterEventKind.ATTRIBUTE_UPDATED) == 1
    assert kinds.count(AdapterEventKind.NODE_ADDED) == 1
    assert AdapterEventKind.NODE_REMOVED not in kinds
    assert adapter.connect_count == 1
    assert adapter.connected


@pytest.mark.parametrize(
    "frame", ["{not json", b"\x00\xff", '{"event": "node_added", "data": ' * 50]
)
async def test_a_frame_that_is_not_json_reconnects(
    standin: StandIn, adapter: MatterAdapter, frame: Any
) -> None:
    await adapter.wait_connected(5)
    await standin.push(frame)
    for _ in range(100):
        if adapter.connect_count == 2 and adapter.connected:
            break
        await asyncio.sleep(0.05)
    assert adapter.connect_count == 2
    assert await adapter.execute(toggle()) is None


@pytest.mark.parametrize(
    "greeting",
    [
        {**GREETING, "schema_version": CLIENT_SCHEMA_VERSION - 1},
        {**GREETING, "min_supported_schema_version": CLIENT_SCHEMA_VERSION + 1},
        {"hello": "world"},
        [1, 2],
    ],
)
async def test_an_incompatible_or_strange_greeting_never_connects(
    standin: StandIn, adapter: MatterAdapter, greeting: Any
) -> None:
    standin.greeting = greeting
    with pytest.raises(ControllerUnavailableError):
        await adapter.wait_connected(0.6)
    assert len(adapter.retry_delays) >= 2  # it keeps trying, backing off
    assert not any(r.get("command") == "start_listening" for r in standin.received)


async def test_malformed_nodes_in_the_snapshot_are_skipped(standin: StandIn) -> None:
    standin.nodes = [
        LIGHT,
        {"node_id": "x"},
        None,
        {"node_id": 3, "attributes": []},
        {"node_id": 4, "attributes": {"0/40/5": "Hall"}},
    ]
    adapter = MatterAdapter(standin.url)
    await adapter.start()
    try:
        await adapter.wait_connected(5)
        assert [n.node_id for n in adapter.nodes()] == [4, 7]
    finally:
        await adapter.stop()


async def test_reports_right_behind_the_snapshot_are_applied(standin: StandIn) -> None:
    """A report the controller sends in the same burst as the node dump is not lost."""
    standin.after_snapshot = [
        {"event": "attribute_updated", "data": [7, "1/6/0", True]},
        {"event": "attribute_updated", "data": [7, "0/40/5", "Hall"]},
    ]
    adapter = MatterAdapter(standin.url)
    await adapter.start()
    try:
        await adapter.wait_connected(5)
        for _ in range(100):
            node = adapter.node(7)
            if node is not None and node.attributes.get("0/40/5") == "Hall":
                break
            await asyncio.sleep(0.02)
        assert adapter.node(7).attributes == {"1/6/0": True, "0/40/5": "Hall"}  # type: ignore[union-attr]
    finally:
        await adapter.stop()
