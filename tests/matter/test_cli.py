"""The offline ``generate`` command and ``devices rename`` against a real SQLite file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bridge.cli.main import main
from bridge.matter import DeviceNameStore
from bridge.storage import Database
from tests.matter.dumps import NODES_DIR


def test_generate_json(capsys: pytest.CaptureFixture[str]) -> None:
    dump = NODES_DIR / "matterjs-commissioned" / "node-2-dimmable.json"
    assert main(["generate", "--node-dump", str(dump), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [d["slug"] for d in out["devices"]] == ["light_test_dimmable"]
    assert [t["definition"]["name"] for t in out["tools"]] == [
        "light_test_dimmable_brightness", "light_test_dimmable_on", "light_test_dimmable_off",
        "light_test_dimmable_toggle", "light_test_dimmable_state", "control_matter_device"]
    assert out["tools"][0]["definition"]["metadata"]["matter"] == {
        "node_id": 2, "endpoint_id": 1, "cluster": "LevelControl",
        "command": "MoveToLevelWithOnOff"}


def test_generate_text_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = NODES_DIR / "ha-core" / "mock_door_lock.json"
    assert main(["generate", "--node-dump", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "matter:mock_door_lock_unlock(pin_code) -> DoorLock.UnlockDoor  [dangerous]" in out
    assert out.rstrip().endswith("1 device(s), 7 tool(s)")
    bad = tmp_path / "bad.json"
    bad.write_text("{\"node_id\": \"x\"}")
    assert main(["generate", "--node-dump", str(bad)]) == 1
    assert "error [INVALID_PARAMS]" in capsys.readouterr().err
    assert main(["generate", "--node-dump", str(dump), str(dump)]) == 1
    assert "error [CONFLICT]: " in capsys.readouterr().err


def test_devices_rename_by_id_and_slug(tmp_path: Path) -> None:
    assert main(["devices", "--state-dir", str(tmp_path), "rename", "3-1", "Living Room Lamp",
                 "--room", "living room"]) == 0
    db = Database(tmp_path / "bridge.db")
    store = DeviceNameStore(db)
    names = asyncio.run(store.load())
    assert names["3-1"].name == "Living Room Lamp"
    assert names["3-1"].room == "living room"
    asyncio.run(store.save_slugs({"3-1": "living_room_lamp", "4-1": "test_thermostat"}))
    db.close()
    assert main(["devices", "--state-dir", str(tmp_path), "rename", "test_thermostat",
                 "Hall Thermostat"]) == 0
    db = Database(tmp_path / "bridge.db")
    names = asyncio.run(DeviceNameStore(db).load())
    db.close()
    assert names["4-1"].name == "Hall Thermostat"
    assert names["4-1"].slug is None  # re-derived from the new name by the bridge
    assert names["3-1"].slug == "living_room_lamp"
    assert main(["devices", "--state-dir", str(tmp_path), "rename", "nobody", "X"]) == 1
