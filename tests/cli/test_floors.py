"""``atmosphere-bridge floors ...`` against a running bridge (the furnished voice test home)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bridge.cli.main import main
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.home import Home, start_home
from tests.voice.sentence_set import DUMPS, VOICE, furnish

pytestmark = pytest.mark.controller


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "cli-floors") as ctl:
        yield ctl


@pytest.fixture
async def home(controller: ThreadedController, tmp_path: Path) -> AsyncIterator[Home]:
    async with start_home(
        controller.url, tmp_path / "state", DUMPS, controller.key_file, VOICE
    ) as running:
        await furnish(running)
        yield running


async def test_floors_cli_lists_adds_moves_changes_and_deletes(
    home: Home, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATMOSPHERE_BRIDGE_TOKEN", home.token("device:manage:*", "device:read:*"))

    async def run(*args: str) -> int:
        return await asyncio.to_thread(main, ["floors", *args, "--url", home.url])

    assert await run("list") == 0
    assert capsys.readouterr().out.splitlines() == [
        "First Floor (first_floor, level 1): Schlafzimmer, Slaapkamer, Bathroom; also called "
        "erster Stock, premier étage, primera planta, eerste verdieping",
        "Ground Floor (ground_floor, level 0): Kitchen, Living Room, Hall, Salon, Terraza",
    ]
    assert await run("add", "Basement", "--level", "-1", "--alias", "Keller") == 0
    assert capsys.readouterr().out == "floor Basement (basement, level -1): no rooms\n"
    assert await run("room", "Terraza", "keller") == 0
    assert capsys.readouterr().out == "room Terraza (terraza) is on Basement\n"
    assert await run("change", "basement", "--name", "Cellar", "--no-aliases") == 0
    assert capsys.readouterr().out == "floor Cellar (cellar, level -1): Terraza\n"
    assert await run("room", "hall", "--none") == 0
    assert capsys.readouterr().out == "room Hall (hall) is on no floor\n"
    assert await run("list") == 0
    assert capsys.readouterr().out.splitlines() == [
        "First Floor (first_floor, level 1): Schlafzimmer, Slaapkamer, Bathroom; also called "
        "erster Stock, premier étage, primera planta, eerste verdieping",
        "Ground Floor (ground_floor, level 0): Kitchen, Living Room, Salon",
        "Cellar (cellar, level -1): Terraza",
        "on no floor: Hall",
    ]
    assert await run("delete", "Cellar") == 0
    assert capsys.readouterr().out == "deleted floor Cellar\n"

    # Refusals are the API's errors, shown without a traceback; nothing changes.
    for bad, code in (
        (("room", "hall"), "INVALID_PARAMS"),
        (("room", "hall", "Ground Floor", "--none"), "INVALID_PARAMS"),
        (("room", "attic", "Ground Floor"), "NOT_FOUND"),
        (("room", "hall", "attic"), "NOT_FOUND"),
        (("add", "ground floor"), "CONFLICT"),
        (("add", "Loft", "--level", "99"), "INVALID_PARAMS"),
        (("change", "first_floor"), "INVALID_PARAMS"),
        (("delete", "attic"), "NOT_FOUND"),
    ):
        assert await run(*bad) == 1, bad
        err = capsys.readouterr().err
        assert f"error [{code}]" in err, (bad, err)
        assert "Traceback" not in err
    assert home.service.matter is not None
    assert [(f.name, f.rooms) for f in home.service.matter.floor_list()] == [
        ("Ground Floor", ("kitchen", "living_room", "salon")),
        ("First Floor", ("schlafzimmer", "slaapkamer", "bathroom")),
    ]
