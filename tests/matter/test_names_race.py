"""Devices added and renamed in quick succession: every slug handed out is stored, once.

The slugs a device gets are written to SQLite in the background; a rename frees a slug
that the next new device takes at once. The stored slugs must end equal to the ones in
use (no ``UNIQUE constraint failed: matter_device_names.slug``, no stale slug kept).
Real bridge service, real controller, real SQLite.
"""

from __future__ import annotations

import asyncio
import copy

import pytest

from tests.matter.dumps import load_dump
from tests.support.home import Home, home_fixtures
from tests.support.matter import import_test_nodes, names_saved

pytestmark = pytest.mark.controller

controller, home = home_fixtures("names_race", ["mock_onoff_light"])


async def test_devices_added_and_renamed_in_quick_succession(home: Home) -> None:
    assert home.service.matter is not None
    bridge = home.service.matter.bridge
    assert bridge.names is not None
    failures: list[object] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, ctx: failures.append(ctx))
    doc = load_dump("ha-core/mock_onoff_light")
    added: list[str] = []
    for i in range(12):
        known = {d.id for d in bridge.devices()}
        await import_test_nodes(bridge.adapter, [copy.deepcopy(doc)])  # added: the freed slug
        async with asyncio.timeout(10):
            while not (fresh := {d.id for d in bridge.devices()} - known):
                await asyncio.sleep(0)
        (device_id,) = fresh
        added.append(device_id)
        await bridge.rename(device_id, f"Lamp {i}", room="Attic")  # renamed at once
    await names_saved(bridge)
    stored = await bridge.names.load()
    devices = bridge.devices()
    assert {d.id: stored[d.id].slug for d in devices} == {d.id: d.slug for d in devices}
    assert len({d.slug for d in devices}) == len(devices)
    by_id = {d.id: d for d in devices}
    assert [by_id[i].slug for i in added] == [f"light_lamp_{i}" for i in range(12)]
    assert failures == []
