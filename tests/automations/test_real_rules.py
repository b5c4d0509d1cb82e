"""Automations on the real controller with matter.js devices, managed over the HTTP API.

One python-matter-server of this module commissions a Generic Switch, two on/off
lights, a leak detector, a water valve and a door lock (matter.js, in the fabric
namespace); each test starts a fresh bridge service on that controller. Every effect is
confirmed by the device's own report (``wait_state``), every run by its audit row.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from bridge.demo.virtual_devices import VirtualDevice
from tests.support.fabric import (
    Fabric,
    ThreadedController,
    running_controller,
    start_and_commission,
)
from tests.support.home import Home, start_home

pytestmark = pytest.mark.fabric


class Kind(StrEnum):
    """``--kind`` names of devices/virtual_device.mjs and devices/kinds/."""

    BUTTON = "button"
    LIGHT = "onoff"
    LIGHT2 = "onoff2"
    LEAK = "leak"
    VALVE = "water-valve"
    LOCK = "door-lock"


SCRIPT_KIND = {Kind.LIGHT2: Kind.LIGHT}  # a second on/off light


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "automations") as ctl:
        yield ctl


@pytest.fixture(scope="module")
def devices(
    fabric: Fabric, controller: ThreadedController
) -> dict[Kind, tuple[VirtualDevice, int]]:
    """Each kind started and commissioned once by the module's controller."""
    started: dict[Kind, VirtualDevice] = {}
    for i, kind in enumerate(Kind):
        dev = VirtualDevice(
            kind=SCRIPT_KIND.get(kind, kind),  # type: ignore[arg-type]
            state_dir=fabric.base_dir / f"automations-{kind.name.lower()}",
            port=6400 + i,
            passcode=20203401 + i,
            discriminator=0xD40 + i,  # distinct from every other test's device (QR: 12 bits)
            label=f"Rules {kind.name.lower()}",
            netns=fabric.namespace,
        )
        fabric.devices.append(dev)  # stopped with the fabric
        started[kind] = dev
    nodes = start_and_commission(controller, list(started.values()))
    return {kind: (dev, node) for (kind, dev), node in zip(started.items(), nodes, strict=True)}


@pytest.fixture
async def home(
    controller: ThreadedController, tmp_path: Path, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> AsyncIterator[Home]:
    async with start_home(controller.url, tmp_path / "state", [], controller.key_file) as running:
        bridge = running.service.matter.bridge
        wanted = {f"{node}-1" for _dev, node in devices.values()}
        async with asyncio.timeout(30):
            while not wanted <= {d.id for d in bridge.devices()}:
                await asyncio.sleep(0.05)
        yield running


def did(devices: dict[Kind, tuple[VirtualDevice, int]], kind: Kind) -> str:
    return f"{devices[kind][1]}-1"


def tool(home: Home, capability: str, device_id: str) -> str:
    found = home.service.matter.bridge.tool_for(capability, device_id=device_id)
    assert found is not None, (capability, device_id)
    return str(found.identity)


ADMIN = ("*",)


async def set_light(home: Home, dev: VirtualDevice, device_id: str, on: bool) -> None:
    """Put a light in a known state through the API and wait for its own report."""
    node = home.service.matter.bridge.adapter.node(int(device_id.split("-")[0]))
    if node is not None and node.attributes.get("1/6/0") is on:
        return
    mark = dev.mark()
    status, answer = await home.invoke(
        tool(home, "on" if on else "off", device_id), {}, home.token(*ADMIN)
    )
    assert status == 200, answer
    await asyncio.to_thread(dev.wait_state, "onOff", "onOff", on, since=mark, timeout_s=15)


async def create(home: Home, token: str, doc: dict[str, Any]) -> tuple[int, Any]:
    return await home.request("POST", "/v1/automations", token, doc)


async def runs(home: Home, rule_id: str, count: int, timeout_s: float = 15) -> list[dict[str, Any]]:
    """Wait until the rule has ``count`` audit rows; return them, oldest first."""
    audit = home.service.invocation.audit
    async with asyncio.timeout(timeout_s):
        while True:
            await audit.flush()
            rows = [e.to_json() for e in audit.query_sync(tool=f"automation:{rule_id}")]
            if len(rows) >= count:
                return list(reversed(rows))
            await asyncio.sleep(0.05)


async def test_a_button_press_switches_a_light(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    button, light = did(devices, Kind.BUTTON), did(devices, Kind.LIGHT)
    light_dev = devices[Kind.LIGHT][0]
    await set_light(home, light_dev, light, on=False)
    status, rule = await create(
        home,
        home.token(*ADMIN),
        {
            "id": "hall",
            "trigger": {
                "type": "device_event",
                "device_id": button,
                "event": "switch.initial_press",
            },
            "actions": [{"type": "call", "tool": tool(home, "toggle", light)}],
        },
    )
    assert status == 201, rule
    assert rule["status"] == "active"
    assert rule["agent_id"] == "automation:hall"
    mark = light_dev.mark()
    pressed = time.monotonic()
    await asyncio.to_thread(devices[Kind.BUTTON][0].press)
    change = await asyncio.to_thread(
        light_dev.wait_state, "onOff", "onOff", True, since=mark, timeout_s=15
    )
    latency = change.at - pressed
    print(f"button press -> light on (device's own report): {latency:.3f} s")
    (row,) = await runs(home, "hall", 1)
    assert row["agent_id"] == "automation:hall"
    assert row["decision"] == "allowed"
    assert row["outcome"] == "completed"
    assert row["details"]["trigger"]["type"] == "device_event"
    assert row["details"]["trigger"]["device_id"] == button
    assert row["details"]["trigger"]["event"] == "switch.initial_press"
    assert [a["ok"] for a in row["details"]["actions"]] == [True]
    # The action's own call is audited under the rule's agent, in the run's trace.
    await home.service.invocation.audit.flush()
    calls = home.service.invocation.audit.query_sync(agent_id="automation:hall")
    assert {e.tool for e in calls} == {"automation:hall", tool(home, "toggle", light)}
    # The issue asks for 1 s; 2 s is headroom for the loaded 2-core CI machine.
    assert latency < 2.0, latency


async def test_a_leak_report_closes_the_valve(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    leak, valve = did(devices, Kind.LEAK), did(devices, Kind.VALVE)
    leak_dev, valve_dev = devices[Kind.LEAK][0], devices[Kind.VALVE][0]
    generic = next(
        t.definition.identity
        for t in home.service.registry.list()
        if t.definition.name == "control_matter_device"
    )
    mark = valve_dev.mark()
    status, answer = await home.invoke(
        generic,
        {
            "device_id": valve,
            "cluster": "ValveConfigurationAndControl",
            "command": "Open",
            "payload": {},
        },
        home.token(*ADMIN),
    )
    assert status == 200, answer
    await asyncio.to_thread(
        valve_dev.wait_state,
        "valveConfigurationAndControl",
        "currentState",
        1,
        since=mark,
        timeout_s=15,
    )
    # BooleanState.StateValue (1/69/0) true = water detected (Matter 1.4, 1.7.6.1).
    status, rule = await create(
        home,
        home.token(*ADMIN),
        {
            "id": "leak-closes-valve",
            "trigger": {"type": "state", "device_id": leak, "path": "1/69/0", "equals": True},
            "actions": [
                {
                    "type": "call",
                    "tool": generic,
                    "params": {
                        "device_id": valve,
                        "cluster": "ValveConfigurationAndControl",
                        "command": "Close",
                        "payload": {},
                    },
                }
            ],
        },
    )
    assert status == 201, rule
    mark = valve_dev.mark()
    await asyncio.to_thread(leak_dev.press)  # SIGUSR1: the leak starts
    await asyncio.to_thread(
        valve_dev.wait_state,
        "valveConfigurationAndControl",
        "currentState",
        0,
        since=mark,
        timeout_s=15,
    )
    (row,) = await runs(home, "leak-closes-valve", 1)
    assert row["details"]["trigger"]["value"] is True
    assert row["outcome"] == "completed"
    await asyncio.to_thread(leak_dev.press)  # dry again, for the next test


async def test_a_time_rule_fires_at_a_frozen_clock(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    light = did(devices, Kind.LIGHT)
    light_dev = devices[Kind.LIGHT][0]
    await set_light(home, light_dev, light, on=False)
    runner = home.service.automations
    # The day Europe/Berlin springs forward: 07:30 CEST is 05:30 UTC.
    frozen = [datetime(2026, 3, 29, 5, 29, 59, tzinfo=UTC).timestamp()]
    runner.clock = lambda: frozen[0]
    runner.tick_s = 0.05
    status, rule = await create(
        home,
        home.token(*ADMIN),
        {
            "id": "morning",
            "trigger": {"type": "time", "at": "07:30", "timezone": "Europe/Berlin"},
            "actions": [{"type": "call", "tool": tool(home, "on", light)}],
        },
    )
    assert status == 201, rule
    await asyncio.sleep(1.5)  # many ticks at 05:29:59: nothing fires
    await home.service.invocation.audit.flush()
    assert home.service.invocation.audit.query_sync(tool="automation:morning") == []
    mark = light_dev.mark()
    frozen[0] = datetime(2026, 3, 29, 5, 30, 0, 500_000, tzinfo=UTC).timestamp()
    await asyncio.to_thread(light_dev.wait_state, "onOff", "onOff", True, since=mark, timeout_s=15)
    (row,) = await runs(home, "morning", 1)
    assert (
        row["details"]["trigger"]["scheduled"]
        == datetime(2026, 3, 29, 5, 30, tzinfo=UTC).timestamp()
    )
    # Still 05:30:00.5 an hour of ticks later: it fired once, not again.
    await asyncio.sleep(0.5)
    assert len(await runs(home, "morning", 1)) == 1


async def test_a_rule_that_retriggers_itself_stops(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    light = did(devices, Kind.LIGHT2)
    light_dev = devices[Kind.LIGHT2][0]
    await set_light(home, light_dev, light, on=False)
    status, rule = await create(
        home,
        home.token(*ADMIN),
        {
            "id": "flicker",
            # Any change of the light's OnOff toggles it: its own action is its next trigger.
            "trigger": {"type": "state", "device_id": light, "path": "1/6/0"},
            "actions": [{"type": "call", "tool": tool(home, "toggle", light)}],
        },
    )
    assert status == 201, rule
    async with home.service.events.subscription("automation.stopped") as sub:
        await set_light(home, light_dev, light, on=True)  # the first, outside trigger
        stopped = await asyncio.wait_for(sub.get(), 30)
    assert stopped.data["rule"] == "flicker"
    assert stopped.data["reason"] == (
        "cycle: its own actions triggered it again (3 in a row, last trigger state)"
    )
    status, shown = await home.request("GET", "/v1/automations/flicker", home.token(*ADMIN))
    assert status == 200
    assert shown["status"] == "stopped"
    decisions = [r["decision"] for r in shown["runs"]]
    assert decisions[0] == "cycle_stopped"
    # Stopped means stopped: an outside change no longer runs it.
    count = len(await runs(home, "flicker", 1))
    node = home.service.matter.bridge.adapter.node(devices[Kind.LIGHT2][1])
    assert node is not None
    await set_light(home, light_dev, light, on=not node.attributes["1/6/0"])
    await asyncio.sleep(1.0)
    assert len(await runs(home, "flicker", 1)) == count


async def test_two_rules_switching_each_others_light_stop(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    first, second = did(devices, Kind.LIGHT), did(devices, Kind.LIGHT2)
    await set_light(home, devices[Kind.LIGHT][0], first, on=False)
    await set_light(home, devices[Kind.LIGHT2][0], second, on=False)
    # The bridge holds both lights off before the rules exist: a report still on its way
    # would otherwise be a rule's first trigger.
    adapter = home.service.matter.bridge.adapter
    async with asyncio.timeout(15):
        while any(
            adapter.node(devices[k][1]).attributes.get("1/6/0") is not False
            for k in (Kind.LIGHT, Kind.LIGHT2)
        ):
            await asyncio.sleep(0.05)
    admin = home.token(*ADMIN)
    # A change of one light toggles the other: each rule's action is the other's trigger.
    for rule_id, watched, acted in (("follow-a", first, second), ("follow-b", second, first)):
        status, rule = await create(
            home,
            admin,
            {
                "id": rule_id,
                "trigger": {"type": "state", "device_id": watched, "path": "1/6/0"},
                "actions": [{"type": "call", "tool": tool(home, "toggle", acted)}],
            },
        )
        assert status == 201, rule
    async with home.service.events.subscription("automation.stopped") as sub:
        await set_light(home, devices[Kind.LIGHT][0], first, on=True)  # the outside trigger
        try:
            stopped = await asyncio.wait_for(sub.get(), 60)
        except TimeoutError:
            for r in ("follow-a", "follow-b"):  # what each run saw, for the failure's report
                live = home.service.automations._rules[r]
                print(r, "busy" if live.busy else "idle", live.stored.status)
                for row in await runs(home, r, 0):
                    print(r, row["ts"], row["decision"], row["details"])
            raise
    # follow-a ran on the person's change (1), follow-b on follow-a's (2), follow-a on
    # follow-b's (3, a re-trigger through it) ... the third re-trigger in a row stops one.
    assert stopped.data["rule"] in ("follow-a", "follow-b")
    other = "follow-b" if stopped.data["rule"] == "follow-a" else "follow-a"
    assert stopped.data["reason"] == (
        f"cycle: its own actions triggered it again through rule "
        f"{other} (3 in a row, last trigger state)"
    )
    status, shown = await home.request("GET", f"/v1/automations/{stopped.data['rule']}", admin)
    assert shown["status"] == "stopped"
    # Stopped, the loop is broken: the lights settle and neither rule runs again.
    await asyncio.sleep(2.0)
    counts = [len(await runs(home, r, 1)) for r in ("follow-a", "follow-b")]
    await asyncio.sleep(2.0)
    assert [len(await runs(home, r, 1)) for r in ("follow-a", "follow-b")] == counts
    for rule_id in ("follow-a", "follow-b"):
        status, _ = await home.request("DELETE", f"/v1/automations/{rule_id}", admin)
        assert status == 200


async def test_a_narrow_agents_rule_cannot_act_beyond_it(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    button, light, other = (did(devices, k) for k in (Kind.BUTTON, Kind.LIGHT, Kind.LIGHT2))
    narrow = home.token(
        "automations:create",
        f"device:control:{light}",
        f"device:read:{light}",
        f"device:read:{button}",
        agent_id="narrow-agent",
    )
    trigger = {"type": "device_event", "device_id": button, "event": "switch.initial_press"}
    # Acting on a light the agent may not control: refused when the rule is made.
    status, answer = await create(
        home,
        narrow,
        {
            "id": "beyond",
            "trigger": trigger,
            "actions": [{"type": "call", "tool": tool(home, "on", other)}],
        },
    )
    assert status == 403, answer
    assert answer["error"]["code"] == "PERMISSION_DENIED"
    # Asking for a wider token than its own: refused.
    status, answer = await create(
        home,
        narrow,
        {
            "id": "wider",
            "trigger": trigger,
            "permissions": ["device:control:*"],
            "actions": [{"type": "call", "tool": tool(home, "on", light)}],
        },
    )
    assert status == 403, answer
    # Without the permission to create rules: refused.
    status, answer = await create(
        home,
        home.token(f"device:control:{light}"),
        {
            "id": "no-right",
            "trigger": trigger,
            "actions": [{"type": "call", "tool": tool(home, "on", light)}],
        },
    )
    assert status == 403, answer
    # Within its permissions: made, with a token of exactly those (no automations:*).
    status, rule = await create(
        home,
        narrow,
        {
            "id": "within",
            "trigger": trigger,
            "actions": [{"type": "call", "tool": tool(home, "on", light)}],
        },
    )
    assert status == 201, rule
    assert rule["token_permissions"] == [
        f"device:control:{light}",
        f"device:read:{light}",
        f"device:read:{button}",
    ]
    assert not any(p.startswith("automations:") for p in rule["token_permissions"])
    # Another agent does not see it; its creator does.
    status, listed = await home.request(
        "GET", "/v1/automations", home.token("automations:create", agent_id="someone")
    )
    assert status == 200
    assert listed["rules"] == []
    status, listed = await home.request("GET", "/v1/automations", narrow)
    assert [r["id"] for r in listed["rules"]] == ["within"]


async def test_revoking_the_creators_token_stops_its_rule_on_the_device(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    button, light = did(devices, Kind.BUTTON), did(devices, Kind.LIGHT)
    light_dev = devices[Kind.LIGHT][0]
    await set_light(home, light_dev, light, on=False)
    # The creator's token is in the node's ledger (issued as POST /v1/tokens would).
    invocation = home.service.invocation
    creator, entry = invocation.issue(
        agent_id="narrow-agent",
        ttl_s=600,
        permissions=[
            "automations:create",
            f"device:control:{light}",
            f"device:read:{light}",
            f"device:read:{button}",
        ],
    )
    status, rule = await create(
        home,
        creator,
        {
            "id": "press-on",
            "trigger": {
                "type": "device_event",
                "device_id": button,
                "event": "switch.initial_press",
            },
            "actions": [{"type": "call", "tool": tool(home, "toggle", light)}],
        },
    )
    assert status == 201, rule
    assert rule["creator_token_id"] == entry["id"]
    mark = light_dev.mark()
    await asyncio.to_thread(devices[Kind.BUTTON][0].press)
    await asyncio.to_thread(light_dev.wait_state, "onOff", "onOff", True, since=mark, timeout_s=15)
    (row,) = await runs(home, "press-on", 1)
    assert row["outcome"] == "completed"

    async with home.service.events.subscription("automation.stopped") as sub:
        status, answer = await home.request(
            "DELETE", f"/v1/tokens/{entry['id']}", home.token(*ADMIN)
        )
        assert status == 200, answer
        stopped = await asyncio.wait_for(sub.get(), 10)
    assert stopped.data["reason"] == f"its creator's token {entry['id']} is revoked"
    # The button again: the light stays on, and no run is recorded past the revocation.
    await asyncio.to_thread(devices[Kind.BUTTON][0].press)
    await asyncio.sleep(3.0)  # a press reaches a rule in < 1 s (docs/automations.md)
    node = home.service.matter.bridge.adapter.node(devices[Kind.LIGHT][1])
    assert node is not None
    assert node.attributes["1/6/0"] is True
    assert [r["decision"] for r in await runs(home, "press-on", 2)] == ["allowed", "revoked"]


async def test_a_lock_rule_waits_for_approval(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    button, lock = did(devices, Kind.BUTTON), did(devices, Kind.LOCK)
    lock_dev = devices[Kind.LOCK][0]
    creator = home.token("automations:create", "device:*", agent_id="lock-agent")
    status, rule = await create(
        home,
        creator,
        {
            "id": "lock-on-press",
            "trigger": {
                "type": "device_event",
                "device_id": button,
                "event": "switch.initial_press",
            },
            "actions": [{"type": "call", "tool": tool(home, "lock", lock)}],
        },
    )
    assert status == 201, rule
    assert rule["status"] == "awaiting_approval"
    assert rule["approval_id"]
    # While it waits, a press does nothing (no run, no audit row).
    await asyncio.to_thread(devices[Kind.BUTTON][0].press)
    await asyncio.sleep(2.0)
    await home.service.invocation.audit.flush()
    assert home.service.invocation.audit.query_sync(tool="automation:lock-on-press") == []
    person = home.token("admin:approve", agent_id="a-person")
    status, pending = await home.request("GET", "/v1/approvals?status=pending", person)
    assert status == 200, pending
    ours = [a for a in pending["approvals"] if a["id"] == rule["approval_id"]]
    assert len(ours) == 1
    assert "lock-on-press" in ours[0]["message"]
    status, decided = await home.request(
        "POST", f"/v1/approvals/{rule['approval_id']}", person, {"decision": "approve"}
    )
    assert status == 200, decided
    async with asyncio.timeout(10):
        while (await home.request("GET", "/v1/automations/lock-on-press", creator))[1][
            "status"
        ] != "active":
            await asyncio.sleep(0.05)
    # Unlocked by hand at the lock (SIGUSR1), then the button's rule locks it.
    mark = lock_dev.mark()
    await asyncio.to_thread(lock_dev.press)
    await asyncio.to_thread(
        lock_dev.wait_state, "doorLock", "lockState", 2, since=mark, timeout_s=15
    )
    mark = lock_dev.mark()
    await asyncio.to_thread(devices[Kind.BUTTON][0].press)
    # DoorLock.LockState 1 = Locked (Matter 1.4, 5.2.6.2).
    await asyncio.to_thread(
        lock_dev.wait_state, "doorLock", "lockState", 1, since=mark, timeout_s=15
    )
    (row,) = await runs(home, "lock-on-press", 1)
    assert row["outcome"] == "completed"


@pytest.mark.browser
async def test_the_home_page_shows_which_devices_a_rule_touches(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    from bridge.cli.console import make_link
    from tests.console.browser import chromium, wait_for

    button, light = did(devices, Kind.BUTTON), did(devices, Kind.LIGHT)
    status, rule = await create(
        home,
        home.token(*ADMIN),
        {
            "id": "porch",
            "name": "Porch light",
            "trigger": {"type": "device_event", "device_id": button, "event": "switch.long_press"},
            "actions": [{"type": "call", "tool": tool(home, "on", light)}],
        },
    )
    assert status == 201, rule
    assert rule["devices"] == sorted([button, light])

    def look() -> dict[str, str]:
        from selenium.webdriver.common.by import By

        with chromium() as driver:
            driver.get(make_link(home.service.state_dir, home.url, label="owner"))
            driver.find_element(By.CSS_SELECTOR, "#use-link").click()
            wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
            wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "p.rules-of"), what="marks")
            return {
                card.get_attribute("data-device"): card.find_element(
                    By.CSS_SELECTOR, "p.rules-of"
                ).text
                for card in driver.find_elements(By.CSS_SELECTOR, "article.device")
                if card.find_elements(By.CSS_SELECTOR, "p.rules-of")
            }

    marks = await asyncio.to_thread(look)
    assert marks == {button: "Rules: Porch light", light: "Rules: Porch light"}
