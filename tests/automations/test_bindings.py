"""Matter bindings on the real controller with matter.js devices, managed over the HTTP API.

One python-matter-server of this module commissions a matter.js On/Off Light Switch
(device type 0x0103: a Binding server and an OnOff client), an on/off light and a
second on/off light labelled "Garage door" (a guarded target). Each test starts a fresh
bridge service on that controller. What a binding is, is read from the devices
themselves: the switch's Binding attribute and the light's access control list, read
fresh from each device (``read_attribute``), and the switch's own report that matter.js
resolved the binding to the light. That the switch then works alone is the light's own
report after a press on the switch, with no rule loaded and no call made by the bridge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
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

# Matter Core § 9.10.4 AccessControlEntryStruct (tags 1 privilege, 2 authMode, 3 subjects,
# 4 targets, 254 fabricIndex) and § 9.6.5 TargetStruct (1 node, 2 group, 3 endpoint,
# 4 cluster, 254 fabricIndex); Privilege 3 Operate, 5 Administer; AuthMode 2 CASE;
# OnOff is cluster 0x0006.
OPERATE, ADMINISTER, CASE, ONOFF = 3, 5, 2, 6


class Kind(StrEnum):
    """``--kind`` names of devices/virtual_device.mjs and devices/kinds/."""

    SWITCH = "light-switch"
    LIGHT = "onoff"
    GARAGE = "garage"


SCRIPT_KIND = {Kind.GARAGE: Kind.LIGHT}
LABEL = {Kind.SWITCH: "Hall switch", Kind.LIGHT: "Hall lamp", Kind.GARAGE: "Garage door"}


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "bindings") as ctl:
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
            state_dir=fabric.base_dir / f"bindings-{kind.name.lower()}",
            port=6800 + i,  # 6700-6709: test_room_events_fabric.py
            passcode=20203701 + i,
            discriminator=0xF60 + i,  # distinct from every other test's device (QR: 12 bits)
            label=LABEL[kind],
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
        lights = {did(devices, Kind.LIGHT), did(devices, Kind.GARAGE)}
        async with asyncio.timeout(30):
            while not lights <= {d.id for d in bridge.devices()} or (
                bridge.adapter.node(devices[Kind.SWITCH][1]) is None
            ):
                await asyncio.sleep(0.05)
        yield running


def did(devices: dict[Kind, tuple[VirtualDevice, int]], kind: Kind) -> str:
    return f"{devices[kind][1]}-1"


async def read(home: Home, node_id: int, path: str) -> Any:
    """Read one attribute from the device itself (not the controller's copy)."""
    values = await home.service.matter.bridge.adapter.read(node_id, [path], 20.0)
    return values[path]


async def test_a_bound_switch_toggles_the_light_with_no_rule(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    switch_dev, switch_node = devices[Kind.SWITCH]
    light_dev, light_node = devices[Kind.LIGHT]
    switch, light = did(devices, Kind.SWITCH), did(devices, Kind.LIGHT)
    admin = home.token("*", agent_id="installer")
    # Before: nothing bound, the light's ACL holds only the controller's Administer entry.
    assert await read(home, switch_node, "1/30/0") == []
    acl_before = await read(home, light_node, "0/31/0")
    assert [(e["1"], e["2"]) for e in acl_before] == [(ADMINISTER, CASE)]
    fabric_index = acl_before[0]["254"]

    mark = switch_dev.mark()
    status, made = await home.request(
        "POST", "/v1/automations/bindings", admin, {"switch": switch, "light": light}
    )
    assert status == 201, made
    assert made == {"switch": switch, "light": light, "cluster": "on_off", "status": "active"}
    # Written on the devices: the switch's Binding attribute and the light's grant.
    assert await read(home, switch_node, "1/30/0") == [
        {"1": light_node, "3": 1, "4": ONOFF, "254": fabric_index}
    ]
    acl = await read(home, light_node, "0/31/0")
    assert acl[0] == acl_before[0]  # the controller keeps its access
    assert acl[1:] == [
        {
            "1": OPERATE,
            "2": CASE,
            "3": [switch_node],
            "4": [{"0": ONOFF, "1": 1, "2": None}],
            "254": fabric_index,
        }
    ]
    # matter.js resolved the entry to the light (its CASE session to it is up).
    await asyncio.to_thread(
        switch_dev.wait_state,
        "binding",
        "established",
        {"node": light_node, "endpoint": 1},
        since=mark,
        timeout_s=30,
    )
    status, listed = await home.request("GET", "/v1/automations/bindings", admin)
    assert status == 200, listed
    assert listed == {
        "bindings": [{"switch": switch, "light": light, "cluster": "on_off", "status": "active"}]
    }

    # A press on the switch toggles the light: the light's own report, and the bridge
    # sent nothing to it (no rule exists; its adapter's sent log stays as it was).
    adapter = home.service.matter.bridge.adapter
    sent_before = len(adapter.sent)
    start = bool(await read(home, light_node, "1/6/0"))
    for expected in (not start, start):
        mark = light_dev.mark()
        pressed = time.monotonic()
        await asyncio.to_thread(switch_dev.press)
        change = await asyncio.to_thread(
            light_dev.wait_state, "onOff", "onOff", expected, since=mark, timeout_s=15, local=False
        )
        print(f"switch press -> bound light's own report: {change.at - pressed:.3f} s")
    assert len(adapter.sent) == sent_before
    assert home.service.automations is not None
    assert home.service.automations.rules(home.token("*")) == []

    await home.service.invocation.audit.flush()
    rows = home.service.invocation.audit.query_sync(tool="binding:create")
    assert [(r.agent_id, r.decision, r.outcome, r.details) for r in rows] == [
        ("installer", "allowed", "completed", {"switch": switch, "light": light})
    ]

    # Removed: the switch's list is empty again, the grant is gone, the switch let go.
    mark = switch_dev.mark()
    status, gone = await home.request("DELETE", f"/v1/automations/bindings/{switch}/{light}", admin)
    assert status == 200, gone
    assert await read(home, switch_node, "1/30/0") == []
    assert await read(home, light_node, "0/31/0") == acl_before
    await asyncio.to_thread(
        switch_dev.wait_state,
        "binding",
        "removed",
        {"node": light_node, "endpoint": 1},
        since=mark,
        timeout_s=15,
    )
    # A press now reaches no light: the switch reports it toggled none.
    mark = switch_dev.mark()
    await asyncio.to_thread(switch_dev.press)
    await asyncio.to_thread(
        switch_dev.wait_state, "onOffClient", "toggled", 0, since=mark, timeout_s=15
    )
    status, listed = await home.request("GET", "/v1/automations/bindings", admin)
    assert listed == {"bindings": []}
    await home.service.invocation.audit.flush()
    rows = home.service.invocation.audit.query_sync(tool="binding:delete")
    assert [(r.agent_id, r.decision, r.outcome) for r in rows] == [
        ("installer", "allowed", "completed")
    ]


async def test_binding_needs_control_of_both_devices_and_the_automation_permission(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    switch_node = devices[Kind.SWITCH][1]
    switch, light = did(devices, Kind.SWITCH), did(devices, Kind.LIGHT)
    pair = {"switch": switch, "light": light}
    only_switch = home.token("automations:create", f"device:control:{switch}", "device:read:*")
    status, answer = await home.request("POST", "/v1/automations/bindings", only_switch, pair)
    assert status == 403, answer
    assert answer["error"]["code"] == "PERMISSION_DENIED"
    assert answer["error"]["details"]["required"] == f"device:control:{light}"
    no_rules = home.token("device:*")
    status, answer = await home.request("POST", "/v1/automations/bindings", no_rules, pair)
    assert status == 403, answer
    assert answer["error"]["code"] == "PERMISSION_DENIED"
    # A light cannot be bound as a switch: it has no Binding cluster.
    admin = home.token("*")
    status, answer = await home.request(
        "POST", "/v1/automations/bindings", admin, {"switch": light, "light": switch}
    )
    assert status == 400, answer
    assert answer["error"]["code"] == "INVALID_PARAMS"
    # The same through the tools (MCP, /v1/invoke): refused the same way, nothing listed.
    status, answer = await home.invoke("automations:bind_switch", pair, only_switch)
    assert status == 403, answer
    assert answer["error"]["code"] == "PERMISSION_DENIED"
    assert answer["error"]["details"]["required"] == f"device:control:{light}"
    status, answer = await home.invoke("automations:list_bindings", {}, admin)
    assert status == 200, answer
    assert answer["result"] == {"bindings": []}
    # Nothing was written on the switch.
    assert await read(home, switch_node, "1/30/0") == []


async def test_a_binding_to_a_garage_door_waits_for_a_person(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    switch_dev, switch_node = devices[Kind.SWITCH]
    garage_dev, garage_node = devices[Kind.GARAGE]
    switch, garage = did(devices, Kind.SWITCH), did(devices, Kind.GARAGE)
    agent = home.token("automations:create", "device:*", agent_id="an-agent")
    status, made = await home.request(
        "POST", "/v1/automations/bindings", agent, {"switch": switch, "light": garage}
    )
    assert status == 202, made
    assert made["status"] == "awaiting_approval"
    # Waiting: nothing is on the devices yet.
    assert await read(home, switch_node, "1/30/0") == []
    acl_before = await read(home, garage_node, "0/31/0")
    assert [(e["1"], e["2"]) for e in acl_before] == [(ADMINISTER, CASE)]
    fabric_index = acl_before[0]["254"]
    person = home.token("admin:approve", agent_id="a-person")
    status, pending = await home.request("GET", "/v1/approvals?status=pending", person)
    ours = [a for a in pending["approvals"] if a["id"] == made["approval_id"]]
    assert len(ours) == 1
    assert switch in ours[0]["message"]
    assert garage in ours[0]["message"]
    mark = switch_dev.mark()
    status, decided = await home.request(
        "POST", f"/v1/approvals/{made['approval_id']}", person, {"decision": "approve"}
    )
    assert status == 200, decided
    await asyncio.to_thread(
        switch_dev.wait_state,
        "binding",
        "established",
        {"node": garage_node, "endpoint": 1},
        since=mark,
        timeout_s=30,
    )
    assert await read(home, switch_node, "1/30/0") == [
        {"1": garage_node, "3": 1, "4": ONOFF, "254": fabric_index}
    ]
    start = bool(await read(home, garage_node, "1/6/0"))
    mark = garage_dev.mark()
    await asyncio.to_thread(switch_dev.press)
    await asyncio.to_thread(
        garage_dev.wait_state, "onOff", "onOff", not start, since=mark, timeout_s=15
    )
    await home.service.invocation.audit.flush()
    rows = home.service.invocation.audit.query_sync(tool="binding:create")
    assert [(r.agent_id, r.decision, r.outcome) for r in reversed(rows)] == [
        ("an-agent", "awaiting_approval", "completed"),
        ("an-agent", "allowed", "completed"),
    ]
    status, gone = await home.request(
        "DELETE", f"/v1/automations/bindings/{switch}/{garage}", agent
    )
    assert status == 200, gone
    assert await read(home, switch_node, "1/30/0") == []
    assert await read(home, garage_node, "0/31/0") == acl_before


@pytest.mark.browser
async def test_the_rules_page_shows_a_binding_beside_the_rules_and_unbinds_it(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]]
) -> None:
    from bridge.cli.console import make_link
    from tests.console.browser import chromium, wait_for

    switch_node = devices[Kind.SWITCH][1]
    switch, light = did(devices, Kind.SWITCH), did(devices, Kind.LIGHT)
    admin = home.token("*")
    status, made = await home.request(
        "POST", "/v1/automations/bindings", admin, {"switch": switch, "light": light}
    )
    assert status == 201, made

    def look_and_unbind() -> list[str]:
        from selenium.webdriver.common.by import By

        with chromium() as driver:
            driver.get(make_link(home.service.state_dir, home.url, label="owner"))
            driver.find_element(By.CSS_SELECTOR, "#use-link").click()
            wait_for(lambda: driver.current_url.endswith("/console/home"), what="signed in")
            driver.get(f"{home.url}/console/rules")
            cards = wait_for(
                lambda: driver.find_elements(By.CSS_SELECTOR, "li.binding"), what="bindings"
            )
            texts = [c.text for c in cards]
            cards[0].find_element(By.CSS_SELECTOR, "button.unbind").click()
            # Two writes and two read-backs on the devices: time for a loaded CI machine;
            # a refusal would be in the page's status line, named in the failure.
            try:
                wait_for(
                    lambda: not driver.find_elements(By.CSS_SELECTOR, "li.binding"),
                    timeout_s=60,
                    what="unbound",
                )
            except pytest.fail.Exception:
                said = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#status")]
                pytest.fail(f"still bound after 60 s; the page said {said}")
            return texts

    texts = await asyncio.to_thread(look_and_unbind)
    assert texts == [
        f"Hall switch ({switch}) switches Hall lamp ({light}) directly\nactive\nUnbind"
    ]
    # The click removed it from the device itself.
    assert await read(home, switch_node, "1/30/0") == []


async def test_the_cli_binds_lists_and_unbinds(
    home: Home, devices: dict[Kind, tuple[VirtualDevice, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    from bridge.cli.main import main

    switch_node, light_node = devices[Kind.SWITCH][1], devices[Kind.LIGHT][1]
    switch, light = did(devices, Kind.SWITCH), did(devices, Kind.LIGHT)
    api = ("--url", home.url, "--token", home.token("*", agent_id="cli-user"))

    def cli(*argv: str) -> int:
        return main(list(argv))

    assert await asyncio.to_thread(cli, "automations", "bind", switch, light, *api) == 0
    assert capsys.readouterr().out == f"{switch} -> {light}: active\n"
    assert await read(home, switch_node, "1/30/0") == [
        {
            "1": light_node,
            "3": 1,
            "4": ONOFF,
            "254": (await read(home, light_node, "0/31/0"))[0]["254"],
        }
    ]
    assert await asyncio.to_thread(cli, "automations", "bindings", *api) == 0
    assert capsys.readouterr().out == f"{switch} -> {light}  active\n"
    assert await asyncio.to_thread(cli, "automations", "unbind", switch, light, *api) == 0
    assert capsys.readouterr().out == f"{switch} -> {light}: removed\n"
    assert await read(home, switch_node, "1/30/0") == []
    assert await asyncio.to_thread(cli, "automations", "bindings", *api) == 0
    assert capsys.readouterr().out == "no bindings\n"
