"""Attribute reports through MatterToolSync: a report no tool depends on leaves the registry alone.

Each recorded dump is imported into a real python-matter-server (a controller of this
module's own) and followed by a ``MatterToolSync``. Test nodes never report changes, so
every report is handed to the adapter exactly where the controller client delivers one
(``MatterAdapter._on_attribute``: a stand-in for a device's radio). For every scalar
attribute of the node, a changed value is reported, then the original value again; after
each report:

- the bridge's cached value is the reported one and ``device.state`` is published once
  (for a device's endpoint);
- after a changed value the report path absorbed (no rebuild), regenerating the node
  from scratch changes nothing in the registry: what it skipped was irrelevant;
- the registry was touched (a ``registry.changed`` event) only when the report changed a
  tool, and never for the attributes lights, thermostats and sensors report all day.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from bridge.events import EventBus
from bridge.matter.sync.registry import MatterToolSync
from bridge.tools.registry import ToolRegistry
from tests.matter.dumps import DUMP_FILES, DUMP_IDS
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.matter import connected_sync
from tests.support.matter import import_node as import_one

pytestmark = pytest.mark.controller

# (dump stem, path) of reports a home sends all day; none may touch the registry.
EVERYDAY = {
    ("node-1-onoff", "1/6/0"),  # OnOff
    ("node-2-dimmable", "1/8/0"),  # CurrentLevel
    ("node-3-color", "1/768/7"),  # ColorTemperatureMireds
    ("node-4-thermostat", "1/513/0"),  # LocalTemperature
    ("eve_weather_sensor", "1/1026/0"),  # a temperature MeasuredValue
    ("eve_weather_sensor", "2/1029/0"),  # a humidity MeasuredValue
    ("eve_contact_sensor", "1/69/0"),  # BooleanState StateValue
}


@pytest.fixture(scope="module")
def reports_controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "reports") as ctl:
        yield ctl


class Watch:
    """A bridge on the real controller, with every registry change and event counted."""

    def __init__(self, bridge: MatterToolSync, registry: ToolRegistry, events: EventBus) -> None:
        self.bridge = bridge
        self.registry = registry
        self.changes: list[tuple[str, str]] = []
        self.states: list[dict[str, Any]] = []
        registry.subscribe(lambda action, entry: self.changes.append((action, entry.identity)))
        self._events = events

    def snapshot(self) -> dict[str, tuple[Any, bool]]:
        return {e.identity: (e.definition, e.available) for e in self.registry.list()}


@pytest.fixture
async def watch(reports_controller: ThreadedController) -> AsyncIterator[Watch]:
    async with connected_sync(reports_controller) as (_adapter, registry, events, bridge):
        yield Watch(bridge, registry, events)


def changed(value: Any) -> Any:
    """Return a different value of the same JSON type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return f"{value}x"


async def import_node(watch: Watch, doc: dict[str, Any]) -> int:
    return await import_one(watch.bridge.adapter, doc)


def node_devices(bridge: MatterToolSync, node_id: int) -> dict[str, Any]:
    """Return the node's current device objects by id (a rebuild makes new ones)."""
    return {d.id: d for d in bridge.devices() if d.node_id == node_id}


@pytest.mark.parametrize("dump", DUMP_FILES, ids=DUMP_IDS)
async def test_a_report_touches_the_registry_only_when_a_tool_changes(
    watch: Watch, dump: Any
) -> None:
    node_id = await import_node(watch, json.loads(dump.read_text()))
    bridge, adapter = watch.bridge, watch.bridge.adapter
    node = adapter.node(node_id)
    assert node is not None
    sub = watch._events.subscribe("device.state")
    scalars = sorted((p, v) for p, v in node.attributes.items() if isinstance(v, bool | int | str))
    touched: set[str] = set()
    for path, original in scalars:
        for value in (changed(original), original):
            before = watch.snapshot()
            models = node_devices(bridge, node_id)
            watch.changes.clear()
            adapter._on_attribute(node_id, path, value)
            endpoint, cluster, attribute = (int(x) for x in path.split("/"))
            device = node_devices(bridge, node_id).get(f"{node_id}-{endpoint}")
            if device is not None:
                assert device.clusters[cluster][attribute] == value, path
                event = sub.queue.get_nowait()
                assert event.data == {
                    "device_id": device.id,
                    "name": device.name,
                    "path": path,
                    "value": value,
                }
            assert sub.queue.empty(), path
            after_report = watch.snapshot()
            reported_changes = list(watch.changes)
            absorbed = all(d is models.get(i) for i, d in node_devices(bridge, node_id).items())
            if absorbed and value != original:
                # The report was absorbed without a rebuild. Rebuild the node from
                # scratch: nothing the report path skipped may differ.
                watch.changes.clear()
                bridge.apply_node(node)
                assert watch.changes == [], (path, value)
                assert watch.snapshot() == after_report, (path, value)
            if reported_changes:
                touched.add(path)
                assert after_report != before, (path, reported_changes)
            else:
                assert after_report == before, path
    everyday = {p for stem, p in EVERYDAY if stem == dump.stem}
    assert everyday <= dict(scalars).keys()
    assert not everyday & touched
    watch._events.unsubscribe(sub)


async def test_a_report_that_changes_a_tool_still_updates_it(watch: Watch) -> None:
    dimmable = next(p for p in DUMP_FILES if p.stem == "node-2-dimmable")
    node_id = await import_node(watch, json.loads(dimmable.read_text()))
    bridge, adapter = watch.bridge, watch.bridge.adapter
    slug = next(d.slug for d in bridge.devices() if d.node_id == node_id)
    brightness = f"matter:{slug}_brightness@1.0.0"
    assert watch.registry.get(brightness) is not None
    node = adapter.node(node_id)
    assert node is not None
    # LevelControl's AcceptedCommandList without MoveToLevelWithOnOff (4): no brightness.
    accepted = [c for c in node.attributes["1/8/65529"] if c != 4]
    watch.changes.clear()
    adapter._on_attribute(node_id, "1/8/65529", accepted)
    assert watch.registry.get(brightness) is None
    assert ("removed", brightness) in watch.changes
    # The node label names the device; its slug persists, so its tools keep their names
    # and are updated in place with the new name in their descriptions.
    watch.changes.clear()
    adapter._on_attribute(node_id, "0/40/5", "Reading Lamp")
    state = watch.registry.get(f"matter:{slug}_state@1.0.0")
    assert state is not None
    assert state.definition.description.startswith("Read the current state of Reading Lamp")
    assert ("updated", f"matter:{slug}_state@1.0.0") in watch.changes
