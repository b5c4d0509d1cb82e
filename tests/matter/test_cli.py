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
        "light_test_dimmable_brightness",
        "light_test_dimmable_on",
        "light_test_dimmable_off",
        "light_test_dimmable_toggle",
        "light_test_dimmable_state",
        "control_matter_device",
    ]
    assert out["tools"][0]["definition"]["metadata"]["matter"] == {
        "node_id": 2,
        "endpoint_id": 1,
        "cluster": "LevelControl",
        "command": "MoveToLevelWithOnOff",
    }


def test_generate_text_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = NODES_DIR / "ha-core" / "mock_door_lock.json"
    assert main(["generate", "--node-dump", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "matter:mock_door_lock_unlock(pin_code) -> DoorLock.UnlockDoor  [dangerous]" in out
    # lock, unlock, state and the generic tool: no on/off from the lock's OnOff cluster.
    assert out.rstrip().endswith("1 device(s), 4 tool(s)")
    # Its OnOff is listed, not silently dropped: a Door Lock is not controlled through it.
    assert (
        "            not a control of its device type: OnOff "
        "(commands: matter:control_matter_device)\n"
    ) in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"node_id": "x"}')
    assert main(["generate", "--node-dump", str(bad)]) == 1
    assert "error [INVALID_PARAMS]" in capsys.readouterr().err
    assert main(["generate", "--node-dump", str(dump), str(dump)]) == 1
    assert "error [CONFLICT]: " in capsys.readouterr().err


def test_generate_refuses_an_old_format_dump_with_a_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An old recording (Descriptor structs keyed by name) used to give 0 devices, silently."""
    old = NODES_DIR / "pending" / "old-format" / "ha-core-light-sensor.json"
    assert main(["generate", "--node-dump", str(old)]) == 1
    err = capsys.readouterr().err
    assert "error [INVALID_PARAMS]" in err
    assert "refused: an old-format recording: 0/29/0 keys its device types by field name" in err


def test_generate_refuses_a_dump_without_device_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"node_id": 5, "attributes": {"1/6/0": True}}))
    assert main(["generate", "--node-dump", str(bare)]) == 1
    assert "no endpoint has a Descriptor device type list" in capsys.readouterr().err


def test_generate_lists_what_has_no_friendly_tool(capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown is not silent: clusters no map covers are named, with where to reach them."""
    dump = NODES_DIR / "ha-core" / "silabs_dishwasher.json"
    assert main(["generate", "--node-dump", str(dump)]) == 0
    out = capsys.readouterr().out
    # DishwasherAlarm (0x005D) has commands (Reset, ModifyEnabledAlarms) and no map.
    assert (
        '      54-1  dishwasher  "Dishwasher"  (dishwasher)\n'
        "            no friendly tool for: DishwasherAlarm "
        "(commands: matter:control_matter_device)\n"
    ) in out
    assert main(["generate", "--json", "--node-dump", str(dump)]) == 0
    doc = json.loads(capsys.readouterr().out)
    first = doc["devices"][0]
    assert first["device_type_info"] == [{"id": 117, "name": "Dishwasher", "known": True}]
    assert first["unmapped_clusters"] == [{"id": 93, "name": "DishwasherAlarm", "commands": True}]
    assert first["withheld_clusters"] == []


def test_devices_rename_by_id_and_slug(tmp_path: Path) -> None:
    assert (
        main(
            [
                "devices",
                "--state-dir",
                str(tmp_path),
                "rename",
                "3-1",
                "Living Room Lamp",
                "--room",
                "living room",
            ]
        )
        == 0
    )
    db = Database(tmp_path / "bridge.db")
    store = DeviceNameStore(db)
    names = asyncio.run(store.load())
    assert names["3-1"].name == "Living Room Lamp"
    assert names["3-1"].room == "living room"
    asyncio.run(store.save_slugs({"3-1": "living_room_lamp", "4-1": "test_thermostat"}))
    db.close()
    assert (
        main(
            [
                "devices",
                "--state-dir",
                str(tmp_path),
                "rename",
                "test_thermostat",
                "Hall Thermostat",
            ]
        )
        == 0
    )
    db = Database(tmp_path / "bridge.db")
    names = asyncio.run(DeviceNameStore(db).load())
    db.close()
    assert names["4-1"].name == "Hall Thermostat"
    assert names["4-1"].slug is None  # re-derived from the new name by the bridge
    assert names["3-1"].slug == "living_room_lamp"
    assert main(["devices", "--state-dir", str(tmp_path), "rename", "nobody", "X"]) == 1
