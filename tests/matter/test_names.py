"""Slugs and tool names stay the same across restarts (real SQLite file, reopened)."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

from bridge.matter import (
    Device,
    DeviceNameStore,
    MatterToolGenerator,
    NodeData,
    UserNames,
    build_devices,
    load_cluster_maps,
)
from bridge.storage import Database
from tests.matter.dumps import DUMP_IDS, load_dump

MAPS = load_cluster_maps()


def nodes_from(dumps: list[tuple[str, int]]) -> list[NodeData]:
    """Return nodes of the given dumps, each renumbered to the given node id."""
    out = []
    for name, node_id in dumps:
        doc = copy.deepcopy(load_dump(name))
        doc["node_id"] = node_id
        out.append(NodeData.from_json(doc))
    return out


async def start_bridge(db_path: Path, nodes: list[NodeData]) -> tuple[list[Device], list[str]]:
    """Do what MatterToolSync does at start: load names, build devices, persist new slugs."""
    db = Database(db_path)
    try:
        store = DeviceNameStore(db)
        names = await store.load()
        devices = build_devices(nodes, names)
        new = {d.id: d.slug for d in devices if names.get(d.id, UserNames()).slug is None}
        await store.save_slugs(new)
        tools = MatterToolGenerator(MAPS, node_id="node-a").generate(devices)
        return devices, sorted(t.definition.identity for t in tools)
    finally:
        db.close()


# Every dump once, plus three more copies of the on/off light: four devices that would
# all like the slug "mock_onoff_light".
FLEET = [(name, 100 + i) for i, name in enumerate(DUMP_IDS)] + [
    ("ha-core/mock_onoff_light", 500),
    ("ha-core/mock_onoff_light", 7),
    ("ha-core/mock_onoff_light", 300),
]


def slugs(devices: list[Device]) -> dict[str, str]:
    return {d.id: d.slug for d in devices}


async def test_slugs_and_tool_names_survive_a_restart_in_any_order(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    first_devices, first_tools = await start_bridge(db_path, nodes_from(FLEET))
    first = slugs(first_devices)
    # Clashes are resolved in device-id order (node 7 < 113 < 300 < 500), not input order.
    light = DUMP_IDS.index("ha-core/mock_onoff_light")
    assert {k: v for k, v in first.items() if v.startswith("mock_onoff_light")} == {
        "7-1": "mock_onoff_light",
        f"{100 + light}-1": "mock_onoff_light_2",
        "300-1": "mock_onoff_light_3",
        "500-1": "mock_onoff_light_4",
    }
    assert len(set(first.values())) == len(first)
    assert "matter:mock_onoff_light_4_toggle@1.0.0" in first_tools

    rng = random.Random(4)
    for _ in range(3):
        shuffled = nodes_from(FLEET)
        rng.shuffle(shuffled)
        devices, tools = await start_bridge(db_path, shuffled)
        assert slugs(devices) == first
        assert tools == first_tools


async def test_clashes_resolve_the_same_without_stored_slugs(tmp_path: Path) -> None:
    a, tools_a = await start_bridge(tmp_path / "a.db", nodes_from(FLEET))
    b, tools_b = await start_bridge(tmp_path / "b.db", list(reversed(nodes_from(FLEET))))
    assert slugs(a) == slugs(b)
    assert tools_a == tools_b


async def test_a_device_keeps_its_slug_when_others_come_and_go(tmp_path: Path) -> None:
    db_path = tmp_path / "state.db"
    lights: list[tuple[str, int]] = [("ha-core/mock_onoff_light", n) for n in (20, 30)]
    first, _ = await start_bridge(db_path, nodes_from(lights))
    assert slugs(first) == {"20-1": "mock_onoff_light", "30-1": "mock_onoff_light_2"}
    # Node 20 is gone and a new light with a lower id arrives: node 30 keeps "_2", the
    # newcomer does not take a stored slug.
    second, tools = await start_bridge(
        db_path, nodes_from([("ha-core/mock_onoff_light", 10), ("ha-core/mock_onoff_light", 30)])
    )
    assert slugs(second) == {"10-1": "mock_onoff_light_3", "30-1": "mock_onoff_light_2"}
    assert "matter:mock_onoff_light_2_on@1.0.0" in tools
    # Node 20 returns: its stored slug is still its own.
    third, _ = await start_bridge(
        db_path,
        nodes_from(
            [
                ("ha-core/mock_onoff_light", 30),
                ("ha-core/mock_onoff_light", 20),
                ("ha-core/mock_onoff_light", 10),
            ]
        ),
    )
    assert slugs(third) == {
        "10-1": "mock_onoff_light_3",
        "20-1": "mock_onoff_light",
        "30-1": "mock_onoff_light_2",
    }


async def test_a_rename_survives_a_restart_and_frees_nothing_it_should_not(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "state.db"
    lights: list[tuple[str, int]] = [("ha-core/mock_onoff_light", n) for n in (20, 30)]
    await start_bridge(db_path, nodes_from(lights))
    db = Database(db_path)
    try:
        await DeviceNameStore(db).rename("30-1", "Hall Lamp", room="Hall", slug="light_hall_lamp")
    finally:
        db.close()
    devices, tools = await start_bridge(db_path, list(reversed(nodes_from(lights))))
    by_id: dict[str, Any] = {d.id: (d.name, d.room, d.slug) for d in devices}
    assert by_id == {
        "20-1": ("Mock OnOff Light", None, "mock_onoff_light"),
        "30-1": ("Hall Lamp", "Hall", "light_hall_lamp"),
    }
    assert "matter:light_hall_lamp_on@1.0.0" in tools
