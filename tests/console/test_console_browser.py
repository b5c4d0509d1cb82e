"""The web console in a real headless Chromium against the real bridge and Matter fabric.

One bridge (real python-matter-server, real matter.js light), one browser for the
module: sign in with a one-time link → commission the light in the page and watch each
stage → switch it and see the device's own report → press its button → approve a
dangerous call an agent asked over MCP and deny another → share the light into a second
controller on another fabric → a narrow token sees nothing more → phone layout, labels
and keyboard. Each test takes what it needs from fixtures that make it so when it is not
(``signed_in``: an administrator's session; ``light_added``: the light commissioned,
over the API if the page test has not run) and reads the light's state instead of
assuming it, so any order or selection runs. Screenshots land in tests/output/console/.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bridge.auth.tokens import issue_token
from bridge.cli.console import make_link
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from bridge.tools.definition import Confirmation, ToolDefinition
from tests.console.browser import PHONE, UNLABELLED_JS, chromium, screenshot, wait_for
from tests.support.fabric import Fabric, ThreadedBridge

pytestmark = [pytest.mark.fabric, pytest.mark.browser]

ALL_STAGES = ["discovering", "pase", "attestation", "operational", "interview", "tools_ready"]
LIGHT = "1-1"  # node 1, endpoint 1: the first device this module's controller commissions


class Console:
    """The module's bridge, light and browser."""

    def __init__(self, bridge: ThreadedBridge, light: VirtualDevice, driver: Any) -> None:
        self.bridge = bridge
        self.light = light
        self.driver = driver

    def go(self, page: str) -> None:
        self.driver.get(f"{self.bridge.url}/console/{page}")

    def css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, selector))

    def key(self, perms: list[str], agent: str) -> str:
        runtime = self.bridge.service.invocation
        return issue_token(runtime.key, agent_id=agent, permissions=perms, ttl_s=600)


@pytest.fixture(scope="module")
def console(fabric: Fabric) -> Iterator[Console]:
    light = fabric.device(DeviceKind.ONOFF)
    bridge = ThreadedBridge(fabric, "console")
    bridge.start()
    try:
        with chromium() as driver:
            yield Console(bridge, light, driver)
    finally:
        bridge.stop()


def _sign_in(c: Console) -> None:
    """Sign the browser in as the administrator ``console:tester`` unless it already is."""
    c.go("home")
    with contextlib.suppress(Exception):
        if (
            c.driver.current_url.endswith("/console/home")
            and wait_for(lambda: c.css(".who").text, 5, "who") == "console:tester"
        ):
            return
    c.driver.get(make_link(c.bridge.config.state_dir, c.bridge.url, label="tester"))
    c.css("#use-link").click()
    wait_for(lambda: c.driver.current_url.endswith("/console/home"), what="home after sign-in")


@pytest.fixture
def signed_in(console: Console) -> Console:
    """The console, signed in as the administrator."""
    _sign_in(console)
    return console


def _has_light(c: Console) -> bool:
    req = urllib.request.Request(
        f"{c.bridge.url}/v1/devices", headers={"Authorization": f"Bearer {c.bridge.token}"}
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        return any(d["id"] == LIGHT for d in json.loads(res.read())["devices"])


@pytest.fixture
def light_added(signed_in: Console) -> Console:
    """The console, with the light commissioned as "Living Room Light" in "Living Room"."""
    c = signed_in
    if not _has_light(c):
        assert c.light.pairing is not None
        req = urllib.request.Request(
            f"{c.bridge.url}/v1/devices/commission",
            method="POST",
            data=json.dumps(
                {"code": c.light.pairing.manual, "name": "Living Room Light", "room": "Living Room"}
            ).encode(),
            headers={
                "Authorization": f"Bearer {c.bridge.token}",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(req, timeout=300) as res:
            assert json.loads(res.read())["stages"] == ALL_STAGES
    return c


def _shown_state(c: Console) -> str:
    """Open the home page and return the light's state as shown ("On" or "Off")."""
    c.go("home")
    return str(
        wait_for(
            lambda: _state_text(c) if _state_text(c) in ("On", "Off") else None,
            what="the light's state",
        )
    )


def _state_text(c: Console) -> str:
    return str(c.css(f'[data-device="{LIGHT}"] [data-role="state"]').text)


def _agent_call(
    c: Console, token: str, tool: str, params: dict[str, Any], out: list[Any]
) -> threading.Thread:
    def run() -> None:
        req = urllib.request.Request(
            f"{c.bridge.url}/v1/invoke",
            method="POST",
            data=json.dumps({"tool": tool, "params": params}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                out.append((res.status, json.loads(res.read())))
        except urllib.error.HTTPError as err:
            out.append((err.code, json.loads(err.read())))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_sign_in_with_a_one_time_link(console: Console) -> None:
    c = console
    c.driver.delete_all_cookies()
    c.driver.get(c.bridge.url + "/")
    wait_for(lambda: c.driver.current_url.endswith("/console/signin"), what="sign-in page")
    screenshot(c.driver, "signin-desktop")
    link = make_link(c.bridge.config.state_dir, c.bridge.url, label="tester")
    c.driver.get(link)
    c.css("#use-link").click()
    wait_for(lambda: c.driver.current_url.endswith("/console/home"), what="home after sign-in")
    cookie = c.driver.get_cookie("atm_session")
    assert cookie is not None
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    # Each link is its own subject: the label, then 12 hex digits of the code's SHA-256.
    code = link.split("code=", 1)[1]
    expected = "console:tester:" + hashlib.sha256(code.encode()).hexdigest()[:12]
    assert c.css(".who").text == expected
    # The page's script cannot read the session cookie.
    assert "atm_session" not in c.driver.execute_script("return document.cookie")
    # The same link does not sign in a second time.
    c.driver.get(link)
    c.css("#use-link").click()
    wait_for(
        lambda: "used already or has expired" in c.css("[role=alert]").text,
        what="used link refused",
    )
    c.go("home")
    # Each link is its own subject: the label, then 12 hex digits of the code's SHA-256.
    code = link.split("code=", 1)[1]
    expected = "console:tester:" + hashlib.sha256(code.encode()).hexdigest()[:12]
    assert c.css(".who").text == expected  # the first session still stands


def test_commission_in_the_page_shows_each_stage(signed_in: Console) -> None:
    c = signed_in
    if _has_light(c):
        pytest.fail("the light was commissioned before this test (run it first, or alone)")
    c.go("devices")
    code = wait_for(lambda: c.css("#code"), what="code field")
    assert c.light.pairing is not None
    manual = c.light.pairing.manual
    typo = manual[:-1] + str((int(manual[-1]) + 1) % 10)
    code.send_keys(typo)
    assert c.css("#code-check").text == "The check digit does not match: a digit is mistyped."
    assert c.css("#commission button[type=submit]").get_attribute("disabled") is not None
    code.clear()
    code.send_keys(manual)
    assert c.css("#code-check").text == "Code is valid."
    c.css("#new-name").send_keys("Living Room Light")
    c.css("#new-room").send_keys("Living Room")
    c.css("#commission button[type=submit]").click()
    wait_for(lambda: c.all('#stages li[data-stage="tools_ready"]'), 240, "tools_ready")
    stages = [li.get_attribute("data-stage") for li in c.all("#stages li")]
    assert stages == ALL_STAGES
    wait_for(lambda: c.all(f'form[data-device="{LIGHT}"]'), what="the new device listed")
    assert c.css(f"#edit-{LIGHT}-name").get_attribute("value") == "Living Room Light"
    assert c.css(f"#edit-{LIGHT}-room").get_attribute("value") == "Living Room"
    screenshot(c.driver, "devices-desktop")


def test_switch_the_light_and_see_the_devices_own_report(light_added: Console) -> None:
    c = light_added
    was_on = _shown_state(c) == "On"
    assert c.css("#room-Living-Room").text == "Living Room"
    toggle = c.css(f'[data-device="{LIGHT}"] [data-role="toggle"]')
    assert toggle.get_attribute("aria-pressed") == str(was_on).lower()
    mark = c.light.mark()
    toggle.click()
    # The device itself reports the change; the page follows that report.
    c.light.wait_state("onOff", "onOff", not was_on, since=mark)
    wait_for(lambda: _state_text(c) == ("Off" if was_on else "On"), 5, "the device's report")
    assert toggle.get_attribute("aria-pressed") == str(not was_on).lower()
    assert c.css("#status").text == "Switch Living Room Light: done"
    screenshot(c.driver, "home-desktop")


def test_pressing_the_devices_button_changes_the_page(light_added: Console) -> None:
    c = light_added
    was_on = _shown_state(c) == "On"
    mark = c.light.mark()
    c.light.press()
    change = c.light.wait_state("onOff", "onOff", not was_on, since=mark, local=True)
    assert change.local is True
    wait_for(lambda: _state_text(c) == ("Off" if was_on else "On"), 5, "page shows the press")
    assert (
        c.css(f'[data-device="{LIGHT}"] [data-role="toggle"]').get_attribute("aria-pressed")
        == str(not was_on).lower()
    )


def test_approve_one_dangerous_call_and_deny_another(signed_in: Console) -> None:
    c = signed_in
    opened: list[dict[str, Any]] = []

    async def unlock(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
        opened.append(params)
        return {"door": params["door"], "unlocked": True}

    params_schema = {
        "type": "object",
        "required": ["door", "pin_code"],
        "additionalProperties": False,
        "properties": {"door": {"type": "string"}, "pin_code": {"type": "string"}},
    }
    definition = ToolDefinition(
        name="front_door_unlock",
        namespace="test",
        description="Unlock a door",
        parameters=params_schema,
        dangerous=True,
        confirmation=Confirmation(mode="always", message="Unlock the {door} door?", timeout_s=60),
    )
    c.bridge.call(_register(c.bridge, definition, unlock))
    agent = c.key(["*"], "kitchen-agent")
    c.go("approvals")
    wait_for(lambda: c.css("#pending").text == "Nothing is waiting for you.", what="empty")
    results: list[Any] = []
    # The agent asks over MCP: the first call answers CONFIRMATION_REQUIRED at once.
    args = {"door": "front", "pin_code": "4711"}
    first = asyncio.run(_mcp_call(c.bridge.url, agent, "test__front_door_unlock", args))
    assert first.is_error is True
    assert first.structured_content["error"]["code"] == "CONFIRMATION_REQUIRED"
    approval_id = first.structured_content["error"]["details"]["approval_id"]
    item = wait_for(lambda: c.css("#pending li.approval"), what="the pending approval")
    assert item.get_attribute("data-approval") == approval_id
    text = item.text
    assert 'Unlock the "front" door?' in text  # the parameter quoted apart
    assert "kitchen-agent asks to run test:front_door_unlock@1.0.0" in text
    assert "4711" not in text
    assert "0 of 1 approvals" in text
    assert " s left" in text
    screenshot(c.driver, "approvals-pending-desktop")
    c.css("#pending button.approve").click()
    wait_for(lambda: opened, 30, "the approved call run")
    assert opened == [{"door": "front", "pin_code": "4711"}]
    # Asking again collects the approved call's result.
    done = asyncio.run(_mcp_call(c.bridge.url, agent, "test__front_door_unlock", args))
    assert done.is_error is False
    assert json.loads(done.content[0].text) == {"door": "front", "unlocked": True}

    # A second request, over HTTP this time (it waits for the decision), is denied.
    call = _agent_call(c, agent, "front_door_unlock", {"door": "back", "pin_code": "0000"}, results)
    wait_for(lambda: 'Unlock the "back" door?' in c.css("#pending").text, what="second approval")
    c.css("#pending button.deny").click()
    call.join(30)
    status, body = results[0]
    assert status == 403
    assert body["status"] == "error"
    assert body["error"]["code"] == "CONFIRMATION_DENIED"
    assert len(opened) == 1
    wait_for(lambda: len(c.all("#history tbody tr")) == 2, what="history of two")
    outcomes = sorted(td.text for td in c.all("#history td.status"))
    assert outcomes == ["approved", "denied"]


async def _mcp_call(url: str, token: str, tool: str, args: dict[str, Any]) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), cache=None) as client,
    ):
        return await client.call_tool(tool, args)


async def _register(bridge: ThreadedBridge, definition: ToolDefinition, handler: Any) -> None:
    bridge.service.registry.register(definition, handler)


def test_share_the_light_and_add_it_to_a_second_fabric(
    light_added: Console, fabric: Fabric
) -> None:
    c = light_added
    # The API route refuses bad bodies and tokens without the device's manage right.
    guest = c.key([f"device:control:{LIGHT}"], "guest")
    for body, token, status, code in (
        ({"window_s": 5}, c.bridge.token, 400, "INVALID_PARAMS"),
        ({"window_s": True}, c.bridge.token, 400, "INVALID_PARAMS"),
        ({"other": 1}, c.bridge.token, 400, "INVALID_PARAMS"),
        ([1], c.bridge.token, 400, "INVALID_PARAMS"),
        ({}, guest, 403, "PERMISSION_DENIED"),
    ):
        req = urllib.request.Request(
            f"{c.bridge.url}/v1/devices/{LIGHT}/share",
            method="POST",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30)
        assert refused.value.code == status, body
        assert json.loads(refused.value.read())["error"]["code"] == code
    c.go("devices")
    share = wait_for(lambda: c.css(f'form[data-device="{LIGHT}"] button.share'), what="Share")
    assert share.get_attribute("aria-label") == "Share Living Room Light with another app"
    share.click()
    manual = wait_for(
        lambda: c.css(f'form[data-device="{LIGHT}"] .manual-code').text, 60, "the pairing code"
    )
    qr_text = c.css(f'form[data-device="{LIGHT}"] .qr-text').text
    assert re.fullmatch(r"\d{11}", manual), manual
    assert re.fullmatch(r"MT:[0-9A-Z.-]{19,}", qr_text), qr_text
    img = c.css(f'form[data-device="{LIGHT}"] img.qr')
    wait_for(
        lambda: c.driver.execute_script("return arguments[0].naturalWidth", img) > 0,
        what="the QR image loaded",
    )
    assert img.get_attribute("alt") == f"QR code {qr_text}"
    screenshot(c.driver, "devices-share-desktop")
    # Another ecosystem: a second controller on its own fabric commissions the light
    # with the code the page shows; the first bridge keeps it.
    second = ThreadedBridge(fabric, "console-second")
    second.start()
    try:
        req = urllib.request.Request(
            f"{second.url}/v1/devices/commission",
            method="POST",
            data=json.dumps({"code": manual, "name": "Shared Light"}).encode(),
            headers={"Authorization": f"Bearer {second.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=300) as res:
            answer = json.loads(res.read())
        assert answer["stages"] == ALL_STAGES
        assert answer["name"] == "Shared Light"
        assert "shared_light_toggle" in answer["tools"]
    finally:
        second.stop()
    # Still on the first bridge: switching it in the page changes the device itself,
    # and the page follows the device's own report.
    want_on = _shown_state(c) == "Off"
    mark = c.light.mark()
    c.css(f'[data-device="{LIGHT}"] [data-role="toggle"]').click()
    c.light.wait_state("onOff", "onOff", want_on, since=mark)
    wait_for(lambda: _state_text(c) == ("On" if want_on else "Off"), 30, "the device's report")


def test_phone_layout_labels_and_keyboard(light_added: Console) -> None:
    c = light_added
    for page in ("home", "approvals", "devices", "tokens", "mesh", "audit", "health"):
        c.go(page)
        wait_for(lambda: "Loading" not in c.css("#content").text, what=f"{page} loaded")
        assert c.driver.execute_script(UNLABELLED_JS) == [], page
        screenshot(c.driver, f"{page}-desktop")
    c.driver.set_window_size(*PHONE)
    try:
        for page in ("home", "approvals", "devices", "tokens", "mesh", "audit", "health"):
            c.go(page)
            wait_for(lambda: "Loading" not in c.css("#content").text, what=f"{page} loaded")
            width = c.driver.execute_script("return document.documentElement.scrollWidth")
            assert width <= PHONE[0], (page, width)
            screenshot(c.driver, f"{page}-phone")
        # Keyboard only: Tab to the light's switch and press Enter.
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        c.go("home")
        wait_for(lambda: _state_text(c) in ("On", "Off"), what="home loaded")
        before = _state_text(c)
        for _ in range(40):
            ActionChains(c.driver).send_keys(Keys.TAB).perform()
            if c.driver.execute_script("return document.activeElement.dataset.role") == "toggle":
                break
        else:
            pytest.fail("the light's switch is not reachable with Tab")
        ActionChains(c.driver).send_keys(Keys.ENTER).perform()
        after = "Off" if before == "On" else "On"
        wait_for(lambda: _state_text(c) == after, 10, "switched by keyboard")
    finally:
        c.driver.set_window_size(1280, 900)


def test_a_narrow_token_sees_nothing_more(signed_in: Console) -> None:
    c = signed_in
    c.css("nav .signout button").click()
    wait_for(lambda: c.driver.current_url.endswith("/console/signin"), what="signed out")
    assert c.driver.get_cookie("atm_session") is None
    c.go("home")
    wait_for(lambda: c.driver.current_url.endswith("/console/signin"), what="home needs sign-in")
    narrow = c.key([f"device:control:{LIGHT}"], "guest")
    c.css("#token").send_keys(narrow)
    c.css("form.card button[type=submit]").click()
    wait_for(lambda: c.driver.current_url.endswith("/console/home"), what="guest home")
    wait_for(lambda: c.all("[role=alert]"), what="home refused")
    assert c.css("[role=alert]").text == ("Cannot load this page: this needs 'device:read:devices'")
    c.go("approvals")
    wait_for(lambda: c.all("[role=alert]"), what="approvals refused")
    assert c.css("[role=alert]").text == "Cannot load this page: this needs 'admin:approve'"
    assert "kitchen-agent" not in c.driver.page_source
    screenshot(c.driver, "narrow-token-approvals")
