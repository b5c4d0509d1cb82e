"""``PATCH /v1/devices/{device}`` renames live, and ``devices rename`` finds the running bridge.

A real ``BridgeService`` (SQLite state, HTTP API on 127.0.0.1) talks to the real
python-matter-server in the fabric namespace, which holds a test node imported from a
recorded dump; the rename goes over HTTP with signed tokens, and the tools, the
``registry.changed`` events and the stored names are checked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.cli.devices import API_FILE_NAME, running_bridge_url
from bridge.cli.main import main
from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.matter import DeviceNameStore
from bridge.service import API_FILE_NAME as SERVICE_API_FILE_NAME
from bridge.service import BridgeService
from bridge.storage import Database
from tests.matter.dumps import DUMP_FILES
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.matter import import_test_nodes

pytestmark = pytest.mark.controller


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "rename") as ctl:
        yield ctl


class Running:
    def __init__(self, service: BridgeService, url: str, key: NodeKey, node_id: int) -> None:
        self.service = service
        self.url = url
        self.key = key
        self.node_id = node_id  # the test node imported for this test

    def device(self) -> dict[str, Any]:
        assert self.service.matter is not None
        (device,) = [d for d in self.service.matter.devices() if d["node_id"] == self.node_id]
        return device

    def token(self, *permissions: str) -> str:
        return issue_token(
            self.key, agent_id="rename-tests", permissions=list(permissions), ttl_s=600
        )


@pytest.fixture
async def bridge(controller: ThreadedController, tmp_path: Path) -> AsyncIterator[Running]:
    config = BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(host="127.0.0.1", port=0),
        matter=MatterConfig(controller_url=controller.url, controller_key_file=controller.key_file),
    )
    service = BridgeService(config)
    await service.start()
    try:
        port = await service.start_api("127.0.0.1", 0)
        assert service.matter is not None
        adapter = service.matter.bridge.adapter
        known = {n.node_id for n in adapter.nodes()}
        dump = next(json.loads(p.read_text()) for p in DUMP_FILES if p.stem == "node-1-onoff")
        await import_test_nodes(adapter, [dump])
        async with asyncio.timeout(10):
            while not {d.node_id for d in service.matter.bridge.devices()} - known:
                await asyncio.sleep(0.05)
        (node_id,) = {d.node_id for d in service.matter.bridge.devices()} - known
        key = NodeKey.load_or_create(config.state_dir / KEY_FILE_NAME)
        yield Running(service, f"http://127.0.0.1:{port}", key, node_id)
    finally:
        await service.stop()


async def patch(url: str, token: str, body: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.patch(url, json=body, headers=headers) as resp,
    ):
        return resp.status, await resp.json()


def drain(sub: Any) -> list[tuple[str, str]]:
    out = []
    while not sub.queue.empty():
        event = sub.queue.get_nowait()
        out.append((event.data["action"], event.data["identity"]))
    return out


async def test_patch_renames_live_and_persists(bridge: Running) -> None:
    device = bridge.device()
    dev_id, slug = device["id"], device["slug"]
    old = device["tools"]
    assert old == [f"{slug}_off", f"{slug}_on", f"{slug}_state", f"{slug}_toggle"]
    url = f"{bridge.url}/v1/devices/{slug}"
    manage = bridge.token(f"device:manage:{dev_id}")

    status, body = await patch(url, bridge.token("device:control:*"), {"name": "Porch Light"})
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert body["error"]["details"] == {"required": f"device:manage:{dev_id}"}
    for bad, field in (
        ({"name": "Porch", "colour": "red"}, "fields"),
        ({}, None),
        ({"name": "  "}, "field"),
        ({"room": 7}, "field"),
        ({"name": "x" * 65}, "field"),
    ):
        status, body = await patch(url, manage, bad)
        assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), bad
        if field is not None:
            assert field in body["error"]["details"], bad
    status, body = await patch(f"{bridge.url}/v1/devices/nobody", manage, {"name": "X"})
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND")

    sub = bridge.service.events.subscribe("registry.changed")
    status, body = await patch(url, manage, {"name": "Porch Light", "room": "Porch"})
    assert status == 200, body
    new = [t.replace(slug, "porch_light") for t in old]
    assert (body["device"]["name"], body["device"]["room"], body["device"]["slug"]) == (
        "Porch Light",
        "Porch",
        "porch_light",
    )
    assert (body["device"]["tools"], body["added_tools"], body["removed_tools"]) == (new, new, old)
    changes = drain(sub)
    assert sorted(i for a, i in changes if a == "removed") == [f"matter:{t}@1.0.0" for t in old]
    # The room gets its room tools too (on/off, and brightness, which switches this light).
    room_tools = ["room_porch_lights_brightness", "room_porch_lights_off", "room_porch_lights_on"]
    assert sorted(i for a, i in changes if a == "added") == [
        f"matter:{t}@1.0.0" for t in sorted([*new, *room_tools])
    ]
    registry = bridge.service.registry
    assert registry.get(f"matter:{slug}_on@1.0.0") is None
    on = registry.get("matter:porch_light_on@1.0.0")
    assert on is not None
    assert on.definition.description == "Turn on Porch Light (Porch)."
    assert on.handler is not None
    from bridge.tools.context import CallContext

    result = await on.handler({}, CallContext())
    assert result["sent"][0]["command"] == "On"

    # A room change alone keeps the name and the tool names; "" removes the room.
    status, body = await patch(f"{bridge.url}/v1/devices/{dev_id}", manage, {"room": None})
    assert status == 200, body
    assert (body["device"]["name"], body["device"]["room"], body["added_tools"]) == (
        "Porch Light",
        None,
        [],
    )
    stored = await DeviceNameStore(bridge.service.db).load()
    assert (stored[dev_id].name, stored[dev_id].room) == ("Porch Light", None)
    bridge.service.events.unsubscribe(sub)


async def test_cli_rename_uses_the_running_bridge_then_the_database(
    bridge: Running, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    state_dir = bridge.service.state_dir
    assert API_FILE_NAME == SERVICE_API_FILE_NAME
    assert running_bridge_url(state_dir) == bridge.url
    device = bridge.device()
    dev_id, slug = device["id"], device["slug"]
    monkeypatch.setenv("ATMOSPHERE_BRIDGE_TOKEN", bridge.token("device:manage:*"))
    args = [
        "devices",
        "--state-dir",
        str(state_dir),
        "rename",
        slug,
        "Desk Light",
        "--room",
        "Office",
    ]
    assert await asyncio.to_thread(main, args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f'device {dev_id} is now "Desk Light" in Office (live on {bridge.url})'
    assert out[1:] == [
        f"  - {slug}_off",
        f"  - {slug}_on",
        f"  - {slug}_state",
        f"  - {slug}_toggle",
        "  + desk_light_off",
        "  + desk_light_on",
        "  + desk_light_state",
        "  + desk_light_toggle",
    ]
    assert bridge.service.registry.get("matter:desk_light_on@1.0.0") is not None
    # A bad token is the bridge's answer, not a silent database write.
    monkeypatch.setenv("ATMOSPHERE_BRIDGE_TOKEN", bridge.token("device:read:*"))
    assert await asyncio.to_thread(main, [*args[:4], "desk_light", "Nope"]) == 1
    assert "error [PERMISSION_DENIED]" in capsys.readouterr().err

    await bridge.service.stop_api()
    assert not (state_dir / API_FILE_NAME).exists()
    assert running_bridge_url(state_dir) is None
    args = ["devices", "--state-dir", str(state_dir), "rename", dev_id, "Hall Light"]
    assert await asyncio.to_thread(main, args) == 0
    assert capsys.readouterr().out.splitlines() == [
        f'device {dev_id} is now "Hall Light"',
        f"no running bridge found for {state_dir}: stored in {state_dir / 'bridge.db'}; "
        "the new tool names appear when the bridge starts",
    ]
    db = Database(state_dir / "bridge.db")
    try:
        stored = await DeviceNameStore(db).load()
    finally:
        db.close()
    assert (stored[dev_id].name, stored[dev_id].room, stored[dev_id].slug) == (
        "Hall Light",
        "Office",
        None,
    )
