"""The console's home page controls the newer kinds, in a real headless Chromium.

One bridge (real python-matter-server) with matter.js devices of issue 29's kinds — a
fan, a robot vacuum with rooms, a water valve, a garage door, a plug with energy
metering, a leak sensor and a laundry washer — commissioned with names and rooms. The
administrator signs in with a one-time link and uses each card's controls (fan mode and
speed, clean a room / pause / dock, valve open / close, the garage door through a
person's approval as a lock is, the washer's cycle and start); each change is checked
twice: the device's own report (its STATE lines), then the page showing what the device
reported. The plug's and the leak sensor's own buttons change readings the page follows.
Phone width and labels for every control are checked too. Expected values come from the
Matter specification and the device scripts (devices/kinds/).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bridge.auth.tokens import issue_token
from bridge.cli.console import make_link
from bridge.demo.virtual_devices import DeviceKind
from tests.console.browser import PHONE, UNLABELLED_JS, chromium, screenshot, wait_for
from tests.support.fabric import Fabric
from tests.support.kinds_home import KindsHome, Member, kinds_home

pytestmark = [pytest.mark.fabric, pytest.mark.browser]

FAN, VACUUM, VALVE, GARAGE, PLUG, LEAK, WASHER = (
    "Bedroom Fan",
    "Robot Vacuum",
    "Garden Valve",
    "Garage Door",
    "Desk Plug",
    "Sink Leak Sensor",
    "Washer",
)
MEMBERS = (
    Member(DeviceKind.FAN, FAN, "Bedroom"),
    Member(DeviceKind.ROBOT_VACUUM, VACUUM, "Hall"),
    Member(DeviceKind.WATER_VALVE, VALVE, "Garden"),
    Member(DeviceKind.GARAGE_DOOR, GARAGE, "Garage"),
    Member(DeviceKind.ENERGY_PLUG, PLUG, "Office"),
    Member(DeviceKind.LEAK, LEAK, "Kitchen"),
    Member(DeviceKind.LAUNDRY_WASHER, WASHER, "Utility"),
)


class Page:
    """The module's home of devices and the signed-in browser."""

    def __init__(self, home: KindsHome, driver: Any) -> None:
        self.home = home
        self.driver = driver

    def css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def card(self, name: str) -> str:
        return f'[data-device="{self.home.ids[name]}"]'

    def reading(self, name: str, field: str) -> str:
        return str(self.css(f'{self.card(name)} dd[data-field="{field}"]').text)

    def shows(self, name: str, field: str, text: str, what: str = "") -> None:
        """Wait until the card of ``name`` reads ``text`` for ``field``."""
        try:
            wait_for(lambda: self.reading(name, field) == text, 20, what)
        except BaseException:
            shown = self.reading(name, field)
            reported = [(c.attribute, c.value) for c in self.home.devices[name].changes()[-8:]]
            pytest.fail(f"{name} shows {field} = {shown!r}, not {text!r}; reported {reported}")

    def click(self, name: str, action: str) -> None:
        self.css(f'{self.card(name)} button[data-action="{action}"]').click()

    def choose(self, selector: str, value: str) -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.css(selector)).select_by_value(value)

    def open_home(self) -> None:
        self.driver.get(f"{self.home.bridge.url}/console/home")
        wait_for(lambda: self.driver.execute_script("return document.body.dataset.live") == "yes")
        wait_for(lambda: self.css(self.card(WASHER)), what="cards drawn")


@pytest.fixture(scope="module")
def page(fabric: Fabric) -> Iterator[Page]:
    # Ports, passcodes and full discriminators no other test module uses.
    with (
        kinds_home(
            fabric, "console-kinds", MEMBERS, port=6750, passcode=20206201, discriminator=0xF30
        ) as home,
        chromium() as driver,
    ):
        p = Page(home, driver)
        driver.get(make_link(home.bridge.config.state_dir, home.bridge.url, label="kinds"))
        p.css("#use-link").click()
        wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
        yield p


def reports(home: KindsHome, name: str, since: int, *change: Any) -> None:
    home.devices[name].wait_state(*change, since=since, timeout_s=20)


def test_fan_mode_and_speed(page: Page) -> None:
    page.open_home()
    fan = page.home.devices[FAN]
    card = page.card(FAN)
    assert page.reading(FAN, "fan_mode") == "off"  # FanMode 0 in the script
    mark = fan.mark()
    page.choose(f"{card} select[data-role=set_fan_mode]", "high")
    reports(page.home, FAN, mark, "fanControl", "fanMode", 3)  # FanModeEnum High
    page.shows(FAN, "fan_mode", "high")
    page.shows(FAN, "fan_speed_percent", "100 %")  # the fan's own PercentCurrent at High
    mark = fan.mark()
    slider = page.css(f"{card} input[data-role=fan-speed]")
    assert page.css(f'label[for="{slider.get_attribute("id")}"]').text == "Fan speed %"
    # 33 %: speed step 1 of the fan's 3 (SpeedMax), which the virtual fan keeps; another
    # percent moves to its step's percent a moment later (40 % ends at 33 %).
    page.driver.execute_script(
        "arguments[0].value = 33; arguments[0].dispatchEvent(new Event('change'));", slider
    )
    reports(page.home, FAN, mark, "fanControl", "percentCurrent", 33)
    page.shows(FAN, "fan_speed_percent", "33 %")
    page.shows(FAN, "fan_step", "1")
    assert page.css("#status").text == f"Fan speed of {FAN}: done"


def test_vacuum_cleans_a_room_pauses_and_docks(page: Page) -> None:
    page.open_home()
    card = page.card(VACUUM)
    assert page.reading(VACUUM, "status") == "docked"
    mark = page.home.devices[VACUUM].mark()
    page.choose(f"{card} select[data-role=area]", "Kitchen")
    page.click(VACUUM, "clean_areas")
    reports(page.home, VACUUM, mark, "serviceArea", "selectedAreas", [1])  # Kitchen: area 1
    reports(page.home, VACUUM, mark, "rvcOperationalState", "operationalState", 1)  # Running
    reports(page.home, VACUUM, mark, "serviceArea", "currentArea", 1)
    page.shows(VACUUM, "status", "running")
    page.shows(VACUUM, "selected_areas", "Kitchen")
    page.shows(VACUUM, "current_area", "Kitchen")
    for action, state, words in (("pause", 2, "paused"), ("return_to_base", 66, "docked")):
        mark = page.home.devices[VACUUM].mark()
        page.click(VACUUM, action)
        reports(page.home, VACUUM, mark, "rvcOperationalState", "operationalState", state)
        page.shows(VACUUM, "status", words)


def test_valve_opens_and_closes(page: Page) -> None:
    page.open_home()
    for action, state, words in (("open", 1, "open"), ("close", 0, "closed")):
        mark = page.home.devices[VALVE].mark()
        page.click(VALVE, action)
        reports(page.home, VALVE, mark, "valveConfigurationAndControl", "currentState", state)
        page.shows(VALVE, "valve", words)


def test_garage_door_opens_after_a_persons_approval(page: Page) -> None:
    page.open_home()
    door = page.home.devices[GARAGE]
    assert page.reading(GARAGE, "closure") == "closed"
    mark = door.mark()
    page.click(GARAGE, "open")
    wait_for(lambda: "waiting for a person's approval" in page.css("#status").text, what="waiting")
    # Nobody approves their own call: a second person does, over the API.
    key = page.home.bridge.service.invocation.key
    approver = issue_token(key, agent_id="a-person", permissions=["admin:approve"], ttl_s=600)
    pending = wait_for(
        lambda: page.home.request("GET", "/v1/approvals?status=pending", token=approver)[
            "approvals"
        ],
        what="the pending approval",
    )
    assert door.mark() == mark  # nothing moved yet
    assert pending[0]["tool"].startswith("matter:closure_garage_door_open")
    page.home.request(
        "POST", f"/v1/approvals/{pending[0]['id']}", {"decision": "approve"}, token=approver
    )
    # ClosureControl OverallCurrentState position 1 = FullyOpened.
    reports(
        page.home,
        GARAGE,
        mark,
        "closureControl",
        "overallCurrentState",
        {"position": 1, "secureState": False},
    )
    page.shows(GARAGE, "closure", "open")
    wait_for(lambda: page.css("#status").text == f"Open {GARAGE}: done", what="call answered")


def test_washer_cycle_and_start(page: Page) -> None:
    page.open_home()
    card = page.card(WASHER)
    mark = page.home.devices[WASHER].mark()
    page.choose(f"{card} select[data-role=set_cycle]", "Wool")
    reports(page.home, WASHER, mark, "laundryWasherMode", "currentMode", 1)  # Wool: mode 1
    page.shows(WASHER, "cycle", "Wool")
    mark = page.home.devices[WASHER].mark()
    page.click(WASHER, "start")
    reports(page.home, WASHER, mark, "operationalState", "operationalState", 1)  # Running
    page.shows(WASHER, "status", "running")
    page.shows(WASHER, "minutes_left", "90 min")  # CountdownTime 5400 s in its script


def test_energy_and_leak_readings_follow_the_devices(page: Page) -> None:
    page.open_home()
    # The plug script's 120000 mW and 1000000 mWh; the leak sensor starts dry.
    assert (page.reading(PLUG, "power_w"), page.reading(PLUG, "energy_kwh")) == (
        "120 W",
        "1 kWh",
    )
    assert page.reading(LEAK, "leak") == "dry"
    # Their own buttons: 10 W and 1 Wh more; a leak starts.
    for name, change in (
        (PLUG, ("electricalPowerMeasurement", "activePower", 130_000)),
        (LEAK, ("booleanState", "stateValue", True)),
    ):
        dev = page.home.devices[name]
        mark = dev.mark()
        dev.press()
        dev.wait_state(*change, since=mark, timeout_s=20, local=True)
    page.shows(PLUG, "power_w", "130 W")
    page.shows(PLUG, "energy_kwh", "1.001 kWh")
    page.shows(LEAK, "leak", "LEAK")


def test_phone_width_and_labels(page: Page) -> None:
    page.open_home()
    assert page.driver.execute_script(UNLABELLED_JS) == []
    screenshot(page.driver, "home-kinds-desktop")
    page.driver.set_window_size(*PHONE)
    try:
        page.open_home()
        width = page.driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= PHONE[0], width
        # Every card's controls stay inside the card on a phone.
        overflow = page.driver.execute_script(
            "return [...document.querySelectorAll('article.device')].filter("
            "(c) => c.scrollWidth > c.clientWidth).map((c) => c.id)"
        )
        assert overflow == []
        screenshot(page.driver, "home-kinds-phone")
    finally:
        with contextlib.suppress(Exception):
            page.driver.set_window_size(1280, 900)
    assert threading.current_thread() is threading.main_thread()
