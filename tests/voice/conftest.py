"""The furnished test home on a controller of each test module's own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.home import Home, start_home
from tests.voice.sentence_set import DUMPS, VOICE, furnish


@pytest.fixture(scope="module")
def controller(fabric: Fabric, request: pytest.FixtureRequest) -> Iterator[ThreadedController]:
    with running_controller(fabric, request.module.__name__.rsplit(".", 1)[-1]) as ctl:
        yield ctl


@pytest.fixture
async def home(controller: ThreadedController, tmp_path: Path) -> AsyncIterator[Home]:
    async with start_home(
        controller.url, tmp_path / "state", DUMPS, controller.key_file, VOICE
    ) as running:
        await furnish(running)
        yield running
