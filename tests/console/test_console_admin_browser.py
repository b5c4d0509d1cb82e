"""The console's agents, mesh and health pages in a real headless Chromium.

Two real bridges (Matter off, mesh on loopback with static peers, no mDNS) run in a
background loop; B trusts A by configuration, A trusts nobody. A person signed in to A
with a one-time link: issues a token with a preset and sees it once with its QR code,
uses it over HTTP, revokes it in the page and sees it refused; trusts B in the mesh page
and gets B's tool, untrusts it and loses it; reads the doctor's checks and the versions
on the health page. Phone and desktop screenshots of each page; every control labelled.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bridge.auth.keys import NodeKey
from bridge.cli.console import make_link
from bridge.mesh.node_id import node_id_for
from bridge.service import BridgeService
from tests.console.browser import PHONE, UNLABELLED_JS, chromium, screenshot, wait_for
from tests.support.mesh_pair import ECHO, register_echo_where, two_node_configs

T = TypeVar("T")
pytestmark = pytest.mark.browser


class Pair:
    """Bridges A and B served by one background event loop."""

    def __init__(self, tmp: Path) -> None:
        a, b = two_node_configs(tmp, mutual=False, name_prefix="bridge-", gossip_interval_s=0.2)
        self.configs = {"a": a, "b": b}
        self.ids = {
            n: node_id_for(NodeKey.load_or_create(tmp / n / "node.key").public_key_b64)
            for n in self.configs
        }
        self.url = f"http://127.0.0.1:{a.api.port}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.a = self._call(self._make("a"))
        self.b = self._call(self._make("b"))

    async def _make(self, name: str) -> BridgeService:
        return BridgeService(self.configs[name], enable_matter=False)

    def _call(self, coro: Coroutine[Any, Any, T], timeout_s: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    def start(self) -> None:
        register_echo_where(self.b)
        for service in (self.b, self.a):
            self._call(service.start())
            self._call(service.start_api())

    def stop(self) -> None:
        try:
            for service in (self.a, self.b):
                self._call(service.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    def a_has(self, identity: str) -> bool:
        return any(entry.identity == identity for entry in self.a.registry.list())


def _get(url: str, token: str) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


class Page:
    def __init__(self, pair: Pair, driver: Any) -> None:
        self.pair = pair
        self.driver = driver

    def go(self, page: str) -> None:
        self.driver.get(f"{self.pair.url}/console/{page}")
        wait_for(lambda: "Loading" not in self.css("#content").text, what=f"{page} loaded")

    def css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, selector))

    def accept(self) -> None:
        wait_for(lambda: self.driver.switch_to.alert, 5, "confirmation dialog").accept()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    pair = Pair(tmp_path_factory.mktemp("console-admin"))
    pair.start()
    try:
        with chromium() as driver:
            link = make_link(pair.configs["a"].state_dir, pair.url, label="owner")
            driver.get(link)
            p = Page(pair, driver)
            p.css("#use-link").click()
            wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
            yield p
    finally:
        pair.stop()


def test_issue_a_token_see_it_once_use_it_revoke_it_and_see_it_refused(page: Page) -> None:
    p = page
    p.go("tokens")
    p.css("#t-agent").send_keys("kitchen-speaker")
    from selenium.webdriver.support.ui import Select

    Select(p.css("#t-preset")).select_by_value("voice")
    p.css("#t-issue").click()
    wait_for(lambda: p.css("#t-token").get_attribute("value"), what="the new token shown")
    token = p.css("#t-token").get_attribute("value")
    qr = p.css("#t-qr")
    assert qr.get_attribute("src").startswith("data:image/svg+xml;base64,")
    wait_for(lambda: qr.size["width"] > 100, what="QR drawn")
    screenshot(p.driver, "tokens-issued-desktop")
    # The token works for what its preset allows.
    status, body = _get(f"{p.pair.url}/v1/tools", token)
    assert status == 200, body
    # The list shows it (no secret), and after a reload the token itself is gone.
    row = wait_for(
        lambda: [r for r in p.all("#tokens tbody tr") if "kitchen-speaker" in r.text], what="listed"
    )[0]
    assert "device:control:* device:read:*" in row.text
    # The secret is in the page once, in the shown-once field, and nowhere in the list.
    assert token not in p.css("#tokens").get_attribute("outerHTML")
    assert p.driver.page_source.count(token) == 1
    assert p.css("#t-token").get_attribute("value") == token
    p.go("tokens")
    assert token not in p.driver.page_source
    row = next(r for r in p.all("#tokens tbody tr") if "kitchen-speaker" in r.text)
    row.find_element("css selector", "button.revoke").click()
    p.accept()
    wait_for(
        lambda: any(
            "revoked" in r.text for r in p.all("#tokens tbody tr") if "kitchen-speaker" in r.text
        ),
        what="revoked in the list",
    )
    status, body = _get(f"{p.pair.url}/v1/tools", token)
    assert status == 401, body
    assert body["error"]["details"]["reason"] == "revoked"


def test_trust_a_peer_in_the_page_then_untrust_it(page: Page) -> None:
    p = page
    b_id = p.pair.ids["b"]
    p.go("mesh")
    row = wait_for(
        lambda: [r for r in p.all("#peers tbody tr") if r.get_attribute("data-node") == b_id],
        what="peer B listed",
    )[0]
    assert not p.pair.a_has(ECHO)
    row.find_element("css selector", "button.trust").click()
    p.accept()
    wait_for(lambda: p.pair.a_has(ECHO), 10, "B's tool arrives on A")
    p.go("mesh")
    row = wait_for(
        lambda: [
            r
            for r in p.all("#peers tbody tr")
            if r.get_attribute("data-node") == b_id
            and r.find_elements("css selector", "button.untrust")
        ],
        10,
        "B trusted in the page",
    )[0]
    assert row.find_element("css selector", ".trusted").text == "yes"
    screenshot(p.driver, "mesh-trusted-desktop")
    row.find_element("css selector", "button.untrust").click()
    wait_for(lambda: not p.pair.a_has(ECHO), 5, "B's tool leaves A")


def test_health_shows_the_doctors_checks_and_versions(page: Page) -> None:
    p = page
    p.go("health")
    checks = wait_for(lambda: p.all("#checks tbody tr"), what="checks listed")
    names = {c.get_attribute("data-check") for c in checks}
    assert {"controller", "clock"} <= names, names
    statuses = {c.find_element("css selector", ".check-status").text for c in checks}
    assert statuses <= {"✓ ok", "! warn", "✗ fail"}, statuses
    assert p.css('[data-version="bridge"]').text not in ("", "—")
    assert p.css('[data-version="python"]').text.count(".") == 2
    screenshot(p.driver, "health-desktop")


def test_new_pages_on_a_phone_and_labelled(page: Page) -> None:
    p = page
    for name in ("tokens", "mesh", "health"):
        p.go(name)
        assert p.driver.execute_script(UNLABELLED_JS) == [], name
    p.driver.set_window_size(*PHONE)
    try:
        for name in ("tokens", "mesh", "health"):
            p.go(name)
            width = p.driver.execute_script("return document.documentElement.scrollWidth")
            assert width <= PHONE[0], (name, width)
            screenshot(p.driver, f"{name}-phone")
    finally:
        p.driver.set_window_size(1280, 900)


def test_a_session_without_rights_sees_no_tokens(page: Page) -> None:
    p = page
    runtime = p.pair.a.invocation
    assert runtime is not None
    from bridge.auth.tokens import issue_token

    narrow = issue_token(runtime.key, agent_id="guest", permissions=["device:read:*"], ttl_s=600)
    p.css("nav .signout button").click()
    wait_for(lambda: p.driver.current_url.endswith("/console/signin"), what="signed out")
    p.css("#token").send_keys(narrow)
    p.css("form.card button[type=submit]").click()
    wait_for(lambda: p.driver.current_url.endswith("/console/home"), what="guest home")
    p.go("tokens")
    assert p.css("#tokens-denied").text.startswith("Your session may not manage tokens")
    assert "kitchen-speaker" not in p.driver.page_source
    p.go("health")
    assert "admin:health" in p.css("[role=alert]").text
