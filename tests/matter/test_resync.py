"""A full re-sync after a reconnect: the same tools as a sync, built without stalling calls.

In-process, on every recorded node dump replicated into a home of ~600 devices: the
adapter's node mirror is filled directly (no controller: what is tested is what the
bridge does with a snapshot it already holds).
"""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bridge.events import EventBus
from bridge.matter import NodeData, build_devices
from bridge.matter.controller.adapter import AdapterEvent, AdapterEventKind, MatterAdapter
from bridge.matter.sync.registry import RESYNC_SLICE_S, MatterToolSync
from bridge.tools.registry import ToolRegistry
from tests.matter.dumps import DUMP_FILES
from tests.support.matter import resyncing


def _home(devices_wanted: int) -> list[NodeData]:
    dumps = [json.loads(p.read_text()) for p in DUMP_FILES]
    nodes: list[NodeData] = []
    count = 0
    while count < devices_wanted:
        for doc in dumps:
            node = NodeData.from_json({**copy.deepcopy(doc), "node_id": 1000 + len(nodes)})
            n = len(build_devices([node]))
            if n == 0:
                continue
            nodes.append(node)
            count += n
            if count >= devices_wanted:
                break
    return nodes


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    # A re-sync freezes what it built (gc.freeze), here the whole test process's
    # objects with it: give them back to the collector for the tests that follow.
    yield
    gc.unfreeze()


@pytest.fixture(scope="module")
def home() -> list[NodeData]:
    return _home(600)


def _bridge(nodes: list[NodeData]) -> tuple[MatterAdapter, MatterToolSync, ToolRegistry]:
    adapter = MatterAdapter("ws://127.0.0.1:9/ws")  # never connected: nodes set below
    events = EventBus()
    registry = ToolRegistry(events)
    bridge = MatterToolSync(adapter=adapter, registry=registry, events=events)
    adapter.subscribe(bridge._on_event)
    for node in nodes:
        fresh = NodeData.from_json(
            {
                "node_id": node.node_id,
                "available": True,
                "attributes": copy.deepcopy(node.attributes),
            }
        )
        adapter._nodes[fresh.node_id] = fresh
    return adapter, bridge, registry


def _definitions(registry: ToolRegistry) -> dict[str, Any]:
    return {
        e.definition.identity: (e.definition.to_json(), e.available)
        for e in registry.list(namespace="matter")
    } | {
        e.definition.identity: (e.definition.to_json(), e.available)
        for e in registry.list(namespace="core")
    }


async def test_a_resync_gives_exactly_the_tools_a_sync_gives(home: list[NodeData]) -> None:
    _, synced, reg_a = _bridge(home)
    synced.sync()
    _, resynced, reg_b = _bridge(home)
    await resynced.resync()
    expected = _definitions(reg_a)
    assert len(expected) > 1500
    assert _definitions(reg_b) == expected
    assert gc.get_freeze_count() > 0  # what it built is out of the cyclic collector
    # Done again over the tools it made, nothing changes.
    await resynced.resync()
    assert _definitions(reg_b) == expected


async def test_a_resync_lets_other_work_run_and_keeps_the_old_tools_meanwhile(
    home: list[NodeData],
) -> None:
    adapter, bridge, registry = _bridge(home)
    bridge.sync()
    before = _definitions(registry)
    some_tool = sorted(before)[len(before) // 2]
    ticks: list[float] = []
    seen_during: list[bool] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.perf_counter())
            # Calls resolve the tools the bridge had until the new ones land.
            seen_during.append(registry.get(some_tool) is not None)
            await asyncio.sleep(0)

    # Which tick the loop was at whenever the re-sync built one device's tools.
    at_tick: list[int] = []
    real = bridge.generator.device_tools

    def noting(device: Any) -> Any:
        at_tick.append(len(ticks))
        return real(device)

    bridge.generator.device_tools = noting  # type: ignore[method-assign]
    # The reconnect path: connect_count > 1 makes CONNECTED start a background re-sync.
    adapter.connect_count = 2
    running = asyncio.create_task(ticker())
    adapter._emit(AdapterEvent(kind=AdapterEventKind.CONNECTED))
    assert resyncing(bridge)
    task = bridge._resync
    assert task is not None
    started = time.perf_counter()
    await task
    took = time.perf_counter() - started
    running.cancel()
    assert not resyncing(bridge)
    during = [t for t in ticks if t <= started + took]
    # The loop ran other work all along: many times, not once before and once after.
    assert len(during) >= 10, (len(during), took)
    # ... and during the generation too (the model is built in a thread before it): the
    # device tools were built in several slices with other work between them.
    assert len(at_tick) > 500
    assert at_tick[-1] - at_tick[0] >= 3, at_tick[::50]
    assert all(seen_during)
    assert _definitions(registry) == before


async def test_reports_during_a_resync_are_in_the_result(home: list[NodeData]) -> None:
    adapter, bridge, registry = _bridge(home)
    bridge.sync()
    node_id = home[3].node_id
    label_path = "0/40/5"
    task = bridge.start_resync()
    assert task is not None
    await asyncio.sleep(0)  # the re-sync has copied the nodes and is building
    # A report that rebuilds its node (the node label names the device) and one the
    # model absorbs, both after the copy was taken.
    adapter._on_attribute(node_id, label_path, "Renamed During Resync")
    await task
    after = _definitions(registry)
    bridge.sync()  # from scratch, from the adapter's latest mirror
    assert _definitions(registry) == after
    names = [d.name for d in bridge.devices() if d.node_id == node_id]
    assert names
    assert any("Renamed During Resync" in n for n in names)


async def test_a_sync_supersedes_a_resync_under_way(home: list[NodeData]) -> None:
    adapter, bridge, registry = _bridge(home)
    bridge.sync()
    task = bridge.start_resync()
    assert task is not None
    await asyncio.sleep(0)
    gone = home[0].node_id
    adapter._nodes.pop(gone)
    adapter._emit(AdapterEvent(kind=AdapterEventKind.NODE_REMOVED, node_id=gone))
    await asyncio.wait([task])
    assert task.cancelled()
    assert not resyncing(bridge)
    assert all(d.node_id != gone for d in bridge.devices())
    after = _definitions(registry)
    bridge.sync()
    assert _definitions(registry) == after


async def test_a_disconnect_ends_a_resync_and_marks_tools_unavailable(
    home: list[NodeData],
) -> None:
    adapter, bridge, registry = _bridge(home[:40])
    bridge.sync()
    task = bridge.start_resync()
    assert task is not None
    await asyncio.sleep(0)
    adapter._emit(AdapterEvent(kind=AdapterEventKind.DISCONNECTED))
    await asyncio.wait([task])
    assert task.cancelled()
    assert all(not e.available for e in registry.list(namespace="matter"))


async def test_stop_ends_a_resync(home: list[NodeData]) -> None:
    _, bridge, registry = _bridge(home[:40])
    bridge.sync()
    task = bridge.start_resync()
    assert task is not None
    await bridge.stop()
    assert task.done()
    assert registry.list(namespace="matter") == []


def test_the_slice_is_short() -> None:
    # Other work waits at most about one slice (plus one device's tools) for a re-sync.
    assert 0 < RESYNC_SLICE_S <= 0.01


async def test_a_failed_resync_is_logged_and_keeps_the_tools(
    home: list[NodeData], caplog: pytest.LogCaptureFixture
) -> None:
    _, bridge, registry = _bridge(home[:40])
    bridge.sync()
    before = _definitions(registry)
    real = bridge.generator.device_tools
    calls = 0

    def failing(device: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 5:
            raise ValueError("odd node data")
        return real(device)

    bridge.generator.device_tools = failing  # type: ignore[method-assign]
    with caplog.at_level("ERROR", logger="bridge.matter.sync.resync"):
        await bridge.resync()
    assert not resyncing(bridge)
    assert bridge._dirty is None
    assert _definitions(registry) == before
    failures = [r for r in caplog.records if "re-sync" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].exc_info is not None
    assert isinstance(failures[0].exc_info[1], ValueError)
    # The next one, with the generator mended, works.
    bridge.generator.device_tools = real  # type: ignore[method-assign]
    await bridge.resync()
    assert _definitions(registry) == before
