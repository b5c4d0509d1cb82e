"""Tool names every agent client accepts, whatever people call their devices and rooms.

Every MCP name (and every tool name) of every recorded dump, with long, non-Latin and
symbol-only device and room names, matches ``^[A-Za-z0-9_-]{1,64}$``, is unique, and is
the same on a second generation and after a restart (slugs persisted, names reloaded).
"""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path

import pytest

from bridge.matter import (
    DeviceNameStore,
    NodeData,
    UserNames,
    build_devices,
    load_cluster_maps,
    slugify,
)
from bridge.matter.home.rooms import room_slug
from bridge.matter.tools.generator import MatterToolGenerator, ToolKind
from bridge.mcp.tool_names import key_in, mcp_name
from bridge.storage import Database
from bridge.tools.naming import fit_name
from tests.matter.dumps import DUMP_IDS, load_dump
from tests.matter.test_generator import EXPECTED

MAPS = load_cluster_maps()
CLIENT = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# What people call things: long, other scripts, symbols only, mixed.
NAMES = [
    "Die unglaublich lange Stehlampe neben dem großen Esstisch im Wohnzimmer",
    "Люстра в гостиной над диваном у большого окна на втором этаже дома",  # noqa: RUF001
    "客厅的大吊灯",
    "ランプ",
    "مصباح غرفة المعيشة الكبير",
    "Λάμπα σαλονιού",
    "💡🛋️",
    "x" * 64,
    "Küche Decke",
]
ROOMS = [
    "Wohnzimmer und Esszimmer im Erdgeschoss des alten Hauses am Waldrand",
    "Гостиная",
    "客厅",
    "🛋️",
    "Küche",
    "y" * 64,
]


def home(names: dict[str, UserNames] | None = None) -> tuple[list[str], list[UserNames]]:
    """Return every MCP name of one home holding every dump once, and the devices' names."""
    nodes = []
    for index, name in enumerate(DUMP_IDS):
        doc = copy.deepcopy(load_dump(name))
        doc["node_id"] = 100 + index
        nodes.append(NodeData.from_json(doc))
    plain = build_devices(nodes)
    given = (
        names
        if names is not None
        else {
            d.id: UserNames(name=NAMES[i % len(NAMES)], room=ROOMS[i % len(ROOMS)])
            for i, d in enumerate(plain)
        }
    )
    devices = build_devices(nodes, given)
    tools = MatterToolGenerator(MAPS, node_id="n").generate(devices)
    out = [mcp_name(t.definition.namespace, t.definition.name) for t in tools]
    assert None not in out
    kept = [UserNames(name=given[d.id].name, room=given[d.id].room, slug=d.slug) for d in devices]
    return [n for n in out if n is not None], kept


def test_every_name_of_a_home_with_any_names_is_accepted_unique_and_stable() -> None:
    first, kept = home()
    # The per-dump tools of test_generator.EXPECTED (194 since the eleventh session's
    # speaker), the two shared ones and the room tools: 28, as NAMES and ROOMS are dealt
    # round the devices in order (rooms of lights, covers, fans, valves, thermostats; the
    # speaker, which makes no room tool, moved the later dumps to other rooms).
    per_device = sum(len(v) for tools, _shared in EXPECTED.values() for v in tools.values())
    rooms = [n for n in first if n.startswith("matter__room_")]
    assert (per_device, len(rooms), len(first)) == (194, 28, per_device + 2 + len(rooms))
    for name in first:
        assert CLIENT.fullmatch(name), name
    assert len(set(first)) == len(first)
    second, again = home()
    assert (second, again) == (first, kept)
    # Room tools exist for the non-Latin and symbol-only rooms too.
    # (Which kinds land in which room follows the dumps' order: lights in 客厅, 🛋️ and
    # Гостиная, a thermostat in 🛋️.)
    assert "matter__room_gostinaya_lights_on" in first
    assert "matter__room_keting_lights_on" in first
    assert "matter__room_couch_lights_on" in first
    assert "matter__room_couch_temperature" in first
    for room in (
        "matter__room_wohnzimmer_und_esszimmer_im_erdg_944f33_temperature",
        "matter__room_yyyyyyyyyyyyyyyyyyyyyyyyyy_69e9cf_lights_brightness",
    ):
        assert room in first
        assert len(room) == 64


async def test_restart_keeps_every_name(tmp_path: Path) -> None:
    ids = _device_ids()
    # Names a person can store (PATCH /v1/devices takes 1-64 characters).
    names = [n for n in NAMES if len(n) <= 64]
    rooms = [r for r in ROOMS if len(r) <= 64]
    # Every third device was given a slug of its own, which no name would produce.
    given = {
        d: UserNames(
            name=names[i % len(names)],
            room=rooms[i % len(rooms)],
            slug=f"kept_{i}" if i % 3 == 0 else None,
        )
        for i, d in enumerate(ids)
    }
    first, kept = home(given)
    assert [k.slug for k in kept][:4:3] == ["kept_0", "kept_3"]
    # What people called each device, and the slugs handed out, go to the bridge's
    # SQLite database as the running bridge stores them ...
    db = Database(tmp_path / "bridge.db")
    store = DeviceNameStore(db)
    for device_id, names in zip(ids, kept, strict=True):
        await store.rename(device_id, names.name, room=names.room, slug=given[device_id].slug)
    await store.save_slugs({d: n.slug for d, n in zip(ids, kept, strict=True) if n.slug})
    db.close()
    # ... and the restarted bridge has only that file: a new handle, nothing carried over.
    db = Database(tmp_path / "bridge.db")
    try:
        loaded = await DeviceNameStore(db).load()
    finally:
        db.close()
    assert sorted(loaded) == sorted(ids)
    again, again_kept = home(loaded)
    assert (again, again_kept) == (first, kept)


def _device_ids() -> list[str]:
    nodes = []
    for index, name in enumerate(DUMP_IDS):
        doc = copy.deepcopy(load_dump(name))
        doc["node_id"] = 100 + index
        nodes.append(NodeData.from_json(doc))
    return [d.id for d in build_devices(nodes)]


# Dumps that make no tool, and why (every other dump must make some).
# Every dump makes tools since issue 29: the KNX bridge's only bridged endpoint, an
# electrical sensor, is an energy meter now.
NO_TOOLS: dict[str, str] = {}


@pytest.mark.parametrize("name", DUMP_IDS)
def test_each_dump_with_a_long_non_latin_name_fits(name: str) -> None:
    devices = build_devices([NodeData.from_json(load_dump(name))])
    given = {d.id: UserNames(name=NAMES[1], room=ROOMS[0]) for d in devices}
    devices = build_devices([NodeData.from_json(load_dump(name))], given)
    tools = MatterToolGenerator(MAPS).generate(devices)
    if name in NO_TOOLS:
        assert (devices, tools) == ([], []), NO_TOOLS[name]
        return
    assert tools, f"{name} makes no tool"
    names = [mcp_name(t.definition.namespace, t.definition.name) for t in tools]
    assert all(n is not None and CLIENT.fullmatch(n) for n in names), names
    assert len(set(names)) == len(names)
    for tool in tools:
        if tool.kind is ToolKind.ACTION or tool.kind is ToolKind.STATE:
            # The human name stays in the description; the tool name is found back.
            assert NAMES[1] in tool.definition.description
            key = tool.definition.key
            found = key_in(str(mcp_name("matter", tool.definition.name)), [key, "matter:x"])
            assert found == key


def test_names_that_fit_are_kept_and_long_ones_keep_their_action() -> None:
    assert fit_name("light_kitchen", "on", 56) == "light_kitchen_on"
    head = "light_" + "a" * 40
    fitted = fit_name(head, "adjust_temperature", 56)
    # The cut head keeps the first 6 hex digits of the SHA-256 of the whole head.
    assert hashlib.sha256(head.encode()).hexdigest()[:6] == "e0ff4b"
    assert fitted == "light_" + "a" * 24 + "_e0ff4b_adjust_temperature"
    assert len(fitted) == 56
    assert fit_name(head + "b", "adjust_temperature", 56) != fitted


def test_slugs_transliterate_other_scripts() -> None:
    assert slugify("Küche") == "kuche"
    assert slugify("Кухня") == "kukhnya"
    assert slugify("客厅") == "keting"
    assert slugify("Λάμπα") == "lampa"
    assert room_slug("🛋️") == "couch"
    assert room_slug("\u200b") == "r_f4e48e"  # SHA-256 of the zero-width space, 6 hex digits
    assert room_slug("   ") == ""
