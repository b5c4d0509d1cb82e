"""The console's rules page in Debian's headless Chromium: list, why a run did not act, disable.

A real service (no Matter) on loopback; two rules triggered by ``core:get_data`` calls:
one whose time window never holds (its run "did not act: outside the time window"), one
that acts. The page shows both with their last runs; its Disable button disables a rule,
confirmed through the API. A third rule, on anna's arrival, is made by a ledger token
that is then revoked: the page says it is revoked and why, with no Enable button.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.cli.console import make_link
from bridge.config import ApiConfig, AutomationsConfig, BridgeConfig, MatterConfig
from bridge.invocation.messages import ToolRequest
from bridge.service import BridgeService
from tests.console.browser import chromium, screenshot, wait_for
from tests.support.ports import free_port

pytestmark = pytest.mark.browser
T = TypeVar("T")


class Served:
    """One service on a background event loop."""

    def __init__(self, tmp: Path) -> None:
        port = free_port()
        self.config = BridgeConfig(
            state_dir=tmp / "state",
            api=ApiConfig(host="127.0.0.1", port=port),
            matter=replace(MatterConfig(), enabled=False),
            automations=AutomationsConfig(people=("anna",)),
        )
        self.url = f"http://127.0.0.1:{port}"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.service = BridgeService(self.config, enable_matter=False)
        self.call(self.service.start())
        self.call(self.service.start_api())

    def call(self, coro: Coroutine[Any, Any, T], timeout_s: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout_s)

    def stop(self) -> None:
        try:
            self.call(self.service.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


RULES = [
    {
        "id": "never",
        "name": "Never at night",
        "trigger": {"type": "tool_call", "tool": "core:get_data"},
        # An empty window (after == before): the condition never holds.
        "conditions": [
            {
                "type": "time_window",
                "after": "03:00",
                "before": "03:00",
                "timezone": "Europe/Berlin",
            }
        ],
        "actions": [
            {"type": "call", "tool": "core:store_data", "params": {"key": "never", "value": 1}}
        ],
    },
    {
        "id": "always",
        "name": "Always note reads",
        "trigger": {"type": "tool_call", "tool": "core:get_data"},
        "actions": [
            {"type": "call", "tool": "core:store_data", "params": {"key": "always", "value": 1}}
        ],
    },
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    running = Served(tmp_path_factory.mktemp("console-rules"))
    try:
        yield running
    finally:
        running.stop()


async def _setup(service: BridgeService) -> None:
    assert service.automations is not None
    assert service.invocation is not None
    key = NodeKey.load_or_create(service.state_dir / KEY_FILE_NAME)
    raw = issue_token(key, agent_id="rule-maker", permissions=["*"], ttl_s=600)
    me = service.invocation.verifier.verify(raw)
    for rule in RULES:
        await service.automations.create(me, rule)
    await service.invocation.invoker.invoke(
        ToolRequest(tool="core:get_data", params={"key": "k"}), token=me
    )
    async with asyncio.timeout(10):
        while (
            len(service.invocation.audit.query_sync(tool="automation:never")) < 1
            or len(service.invocation.audit.query_sync(tool="automation:always")) < 1
        ):
            await service.invocation.audit.flush()
            await asyncio.sleep(0.05)


def test_rules_page_lists_runs_and_disables(served: Served) -> None:
    from selenium.webdriver.common.by import By

    served.call(_setup(served.service))
    with chromium() as driver:
        driver.get(make_link(served.config.state_dir, served.url, label="owner"))
        driver.find_element(By.CSS_SELECTOR, "#use-link").click()
        wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
        driver.get(f"{served.url}/console/rules")
        cards = wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "li.rule"), what="rules")
        assert [c.get_attribute("data-rule") for c in cards] == ["always", "never"]
        never = driver.find_element(By.CSS_SELECTOR, 'li.rule[data-rule="never"]')
        assert never.find_element(By.CSS_SELECTOR, ".runs li").text.endswith(
            "did not act: outside the time window"
        )
        always = driver.find_element(By.CSS_SELECTOR, 'li.rule[data-rule="always"]')
        assert always.find_element(By.CSS_SELECTOR, ".runs li").text.endswith(": acted")
        assert always.find_element(By.CSS_SELECTOR, ".state").text == "active"
        always.find_element(By.CSS_SELECTOR, "button.toggle").click()
        wait_for(
            lambda: (
                driver.find_element(By.CSS_SELECTOR, 'li.rule[data-rule="always"] .state').text
                == "disabled"
            ),
            what="disabled on the page",
        )
        screenshot(driver, "rules")
    assert served.service.automations is not None
    stored = served.service.automations._rules["always"].stored
    assert stored.rule.enabled is False


async def _revoked(service: BridgeService) -> str:
    assert service.automations is not None
    assert service.invocation is not None
    raw, entry = service.invocation.issue(
        agent_id="phone-agent",
        ttl_s=600,
        permissions=["automations:create", "presence:read:anna", "storage:*"],
    )
    await service.automations.create(
        service.invocation.verifier.verify(raw),
        {
            "id": "arrival",
            "name": "Welcome anna",
            "trigger": {"type": "presence", "person": "anna", "home": True},
            "actions": [
                {
                    "type": "call",
                    "tool": "core:store_data",
                    "params": {"key": "welcome", "value": 1},
                }
            ],
        },
    )
    service.invocation.revoke(entry["id"])
    return str(entry["id"])


def test_a_revoked_rule_says_why_and_cannot_be_enabled(served: Served) -> None:
    from selenium.webdriver.common.by import By

    token_id = served.call(_revoked(served.service))
    with chromium() as driver:
        driver.get(make_link(served.config.state_dir, served.url, label="owner"))
        driver.find_element(By.CSS_SELECTOR, "#use-link").click()
        wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
        driver.get(f"{served.url}/console/rules")
        card = wait_for(
            lambda: driver.find_elements(By.CSS_SELECTOR, 'li.rule[data-rule="arrival"]'),
            what="the rule",
        )[0]
        assert "When anna arrives" in card.text
        assert card.find_element(By.CSS_SELECTOR, ".state").text == (
            f"revoked — its creator's token {token_id} is revoked"
        )
        assert card.find_elements(By.CSS_SELECTOR, "button.toggle") == []
        assert card.find_element(By.CSS_SELECTOR, ".runs li").text.endswith("did not act: revoked")
        screenshot(driver, "rules-revoked")
