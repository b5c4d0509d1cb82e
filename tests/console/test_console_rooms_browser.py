"""The console's rooms page in a real headless Chromium: floors, and moving a room.

A real bridge on a real controller holding the furnished voice test home (floors seeded
by ``voice.floors``) runs in a background loop. An administrator signed in with a
one-time link sees the floors (highest first) with their rooms, moves the Kitchen
upstairs with its select, and speech then hears it there; adds a floor with the form
and deletes it. Every control is labelled; a desktop and a phone screenshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bridge.cli.console import make_link
from tests.console.browser import PHONE, UNLABELLED_JS, chromium, screenshot, wait_for
from tests.support.fabric import Fabric, running_controller
from tests.support.home import Home, start_home
from tests.voice.sentence_set import DUMPS, VOICE, furnish

T = TypeVar("T")
pytestmark = [pytest.mark.controller, pytest.mark.browser]


class Running:
    """The furnished home served by a background event loop."""

    def __init__(self, url: str, key_file: str | None, state: Path) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stack = contextlib.AsyncExitStack()
        self.state = state
        self.home: Home = self.call(self._start(url, key_file))

    async def _start(self, url: str, key_file: str | None) -> Home:
        home = await self._stack.enter_async_context(
            start_home(url, self.state, DUMPS, key_file, VOICE)
        )
        await furnish(home)
        return home

    def call(self, coro: Coroutine[Any, Any, T], timeout_s: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    def close(self) -> None:
        try:
            self.call(self._stack.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


@pytest.fixture(scope="module")
def running(fabric: Fabric, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    with running_controller(fabric, "console-rooms") as ctl:
        r = Running(ctl.url, ctl.key_file, tmp_path_factory.mktemp("console-rooms") / "state")
        try:
            yield r
        finally:
            r.close()


def floors_shown(driver: Any) -> list[tuple[str, list[str]]]:
    """Return each floor section's heading and its rooms' headings, top to bottom."""
    return [
        (
            section.find_element("css selector", "h2").text,
            [h.text for h in section.find_elements("css selector", "li h3")],
        )
        for section in driver.find_elements("css selector", "section.floor")
    ]


def test_the_rooms_page_shows_floors_and_moves_a_room(running: Running) -> None:
    home = running.home
    with chromium() as driver:
        driver.get(make_link(running.state, home.url, label="owner"))
        driver.find_element("css selector", "#use-link").click()
        wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
        driver.get(f"{home.url}/console/rooms")
        wait_for(lambda: driver.find_elements("css selector", "section.floor"), what="floors")
        assert floors_shown(driver) == [
            ("First Floor level 1", ["Schlafzimmer", "Slaapkamer", "Bathroom"]),
            ("Ground Floor level 0", ["Kitchen", "Living Room", "Hall", "Salon", "Terraza"]),
        ]
        assert driver.execute_script(UNLABELLED_JS) == []
        screenshot(driver, "rooms-desktop")

        from selenium.webdriver.support.ui import Select

        Select(driver.find_element("css selector", "#floor-of-kitchen")).select_by_visible_text(
            "First Floor"
        )
        driver.find_element("css selector", '[aria-label="Move Kitchen"]').click()
        wait_for(
            lambda: (
                driver.find_element("css selector", "#status").text
                == "Moved Kitchen to First Floor"
            ),
            what="moved",
        )
        wait_for(
            lambda: (
                floors_shown(driver)
                == [
                    ("First Floor level 1", ["Schlafzimmer", "Slaapkamer", "Bathroom", "Kitchen"]),
                    ("Ground Floor level 0", ["Living Room", "Hall", "Salon", "Terraza"]),
                ]
            ),
            what="the Kitchen upstairs",
        )
        # The same model answers the API and speech.
        status, body = running.call(
            home.request(
                "POST",
                "/v1/intents/handle",
                home.token("device:control:*"),
                {"text": "turn off the lights upstairs"},
            )
        )
        assert status == 200, body
        assert sorted(c["tool"] for c in body["calls"]) == [
            "matter:room_kitchen_lights_off",
            "matter:room_schlafzimmer_lights_off",
        ], body

        # A floor added with the form, then deleted with its button.
        driver.find_element("css selector", "#fl-name").send_keys("Loft")
        level = driver.find_element("css selector", "#fl-level")
        level.clear()
        level.send_keys("2")
        driver.find_element("css selector", "#fl-aliases").send_keys("attic, Dachboden")
        driver.find_element("css selector", "#fl-add").click()
        wait_for(lambda: floors_shown(driver)[0] == ("Loft level 2", []), what="the Loft")
        assert (
            driver.find_element("css selector", '[data-floor="loft"] .aliases').text
            == "Also called attic, Dachboden"
        )
        driver.set_window_size(*PHONE)
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= PHONE[0], width
        screenshot(driver, "rooms-phone")
        driver.find_element("css selector", '[aria-label="Delete the floor Loft"]').click()
        wait_for(lambda: driver.switch_to.alert, 5, "confirmation dialog").accept()
        wait_for(
            lambda: (
                [f for f, _ in floors_shown(driver)]
                == ["First Floor level 1", "Ground Floor level 0"]
            ),
            what="the Loft gone",
        )
        # "No floor" takes the Kitchen off every floor: it is listed on none.
        Select(driver.find_element("css selector", "#floor-of-kitchen")).select_by_visible_text(
            "No floor"
        )
        driver.find_element("css selector", '[aria-label="Move Kitchen"]').click()
        wait_for(
            lambda: floors_shown(driver)[-1] == ("On no floor", ["Kitchen"]),
            what="the Kitchen on no floor",
        )
        assert driver.find_element("css selector", "#status").text == "Kitchen is on no floor now"
    assert home.service.matter is not None
    assert [f.name for f in home.service.matter.floor_list()] == ["Ground Floor", "First Floor"]
