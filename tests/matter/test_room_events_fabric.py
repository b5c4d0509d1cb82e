"""Room tools of fans and coverings, waiting for a device event, and a closure panel, end to end.

One bridge (its managed controller in the fabric namespace, HTTP API on 127.0.0.1) and seven
matter.js devices: two fans, a drapery, a roller shade and a water valve in the Lounge, a
button, and a Matter 1.5 closure panel (ClosureDimension). Each is commissioned through
``POST /v1/devices/commission`` with its name and room; every call goes over HTTP (or the
call socket) with signed tokens, so the real pipeline checks each member's permission and
the real controller sends each command. Every effect is confirmed by the device's own
report (its STATE lines). Expected values come from the Matter specification and the
device scripts' initial values, never from the bridge's code.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
import yarl

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.matter.test_virtual_kinds import SPECS
from tests.support.device_host import device_host
from tests.support.fabric import Fabric, ThreadedBridge

pytestmark = pytest.mark.fabric

# label -> (kind, the name it is commissioned with, its room)
DEVICES: dict[str, tuple[DeviceKind, str, str | None]] = {
    "fan": (DeviceKind.FAN, "Lounge Fan", "Lounge"),
    "ceiling_fan": (DeviceKind.FAN, "Lounge Ceiling Fan", "Lounge"),
    "curtains": (DeviceKind.DRAPERY, "Lounge Curtains", "Lounge"),
    "shade": (DeviceKind.ROLLER_SHADE, "Lounge Shade", "Lounge"),
    "button": (DeviceKind.BUTTON, "Hall Button", None),
    "panel": (DeviceKind.CLOSURE_PANEL, "Study Panel", "Study"),
    "valve": (DeviceKind.WATER_VALVE, "Lounge Valve", "Lounge"),
}


class Home:
    """The module's bridge, its devices and each device's id."""

    def __init__(self, bridge: ThreadedBridge, devices: dict[str, VirtualDevice]) -> None:
        self.bridge = bridge
        self.devices = devices
        self.ids: dict[str, str] = {}
        self.tools: dict[str, list[str]] = {}
        self.key = NodeKey.load_or_create(bridge.state_dir / KEY_FILE_NAME)

    def token(self, *permissions: str, agent: str = "room-events") -> str:
        return issue_token(self.key, agent_id=agent, permissions=list(permissions), ttl_s=900)

    def held(self, token: str) -> int:
        """Return the calls ``token`` has in flight on the bridge."""
        invoker = self.bridge.service.invocation.invoker
        return int(invoker.in_flight.held(invoker.verifier.verify(token).id))


@pytest.fixture(scope="module")
def home(fabric: Fabric) -> Iterator[Home]:
    with device_host(fabric, "room-events-host") as host:
        devices: dict[str, VirtualDevice] = {}
        for i, (label, (kind, _name, _room)) in enumerate(DEVICES.items()):
            devices[label] = host.device(
                kind,
                id=f"room-events-{label}",
                port=6700 + i,  # no other module's devices use 6700-6709
                passcode=20204101 + i,
                discriminator=0xDA0 + i,  # distinct from every other test's device (QR: 12 bits)
                label=f"RE {label}",
            )
        host.start_all(host.devices.values())
        bridge = ThreadedBridge(fabric, "room-events")
        bridge.start()
        try:
            yield Home(bridge, devices)
        finally:
            bridge.stop()


async def request(
    home: Home, token: str, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {token}"},
            timeout=aiohttp.ClientTimeout(total=180),
        ) as session,
        session.request(method, f"{home.bridge.url}{path}", json=body) as resp,
    ):
        return resp.status, await resp.json()


async def invoke(home: Home, tool: str, token: str | None = None, **params: Any) -> Any:
    status, body = await request(
        home, token or home.bridge.token, "POST", "/v1/invoke", {"tool": tool, "params": params}
    )
    assert (status, body.get("status")) == (200, "success"), body
    return body["result"]


async def reports(
    dev: VirtualDevice, since: int, behavior: str, attribute: str, value: Any
) -> None:
    await asyncio.to_thread(dev.wait_state, behavior, attribute, value, since=since, timeout_s=20)


@pytest.fixture(scope="module")
def commissioned(home: Home) -> Home:
    async def run() -> None:
        for label, (_kind, name, room) in DEVICES.items():
            dev = home.devices[label]
            assert dev.pairing is not None
            body: dict[str, Any] = {"code": dev.pairing.qr, "name": name}
            if room is not None:
                body["room"] = room
            status, answer = await request(
                home, home.bridge.token, "POST", "/v1/devices/commission", body
            )
            assert status == 201, (label, answer)
            home.ids[label] = f"{answer['node_id']}-1"
            home.tools[label] = sorted(answer["tools"])

    asyncio.run(run())
    return home


# -- room tools -------------------------------------------------------------------------


async def test_the_lounge_gets_fan_and_cover_room_tools(commissioned: Home) -> None:
    home = commissioned
    status, listing = await request(home, home.bridge.token, "GET", "/v1/tools?tag=room")
    assert status == 200
    names = sorted(t["identity"].split("@")[0] for t in listing["tools"])
    assert names == [
        "matter:room_lounge_covers_close",
        "matter:room_lounge_covers_open",
        "matter:room_lounge_covers_position",
        "matter:room_lounge_fans_off",
        "matter:room_lounge_fans_on",
        "matter:room_lounge_fans_speed",
        "matter:room_lounge_valves_close",
        "matter:room_lounge_valves_open",
    ]
    # The closure panel carries what test_virtual_kinds' SPECS says (Closure Panel 0x0231,
    # ClosureDimension with Positioning, fully closed), as the controller read it.
    matter = home.bridge.service.matter
    assert matter is not None
    node = matter.bridge.adapter.node(int(home.ids["panel"].split("-")[0]))
    assert node is not None
    spec = SPECS[DeviceKind.CLOSURE_PANEL]
    assert sorted(entry["0"] for entry in node.attributes["1/29/0"]) == list(spec.device_types)
    assert set(spec.clusters) <= set(node.attributes["1/29/1"])
    assert {path: node.attributes.get(path) for path in spec.attributes} == spec.attributes
    # The closure panel's own tools (Matter 1.5 ClosureDimension, Positioning).
    assert home.tools["panel"] == [
        "closure_panel_study_panel_close",
        "closure_panel_study_panel_open",
        "closure_panel_study_panel_set_position",
        "closure_panel_study_panel_state",
    ]


async def test_every_fan_of_the_room_follows_one_call(commissioned: Home) -> None:
    home = commissioned
    fans = [home.devices["fan"], home.devices["ceiling_fan"]]
    marks = [f.mark() for f in fans]
    result = await invoke(home, "matter:room_lounge_fans_on")
    assert (result["succeeded"], result["failed"]) == (2, 0), result
    # No OnOff on a matter.js fan: on is FanMode High (3), which every sequence offers;
    # the fans follow with PercentCurrent 100.
    assert [d["note"] for d in result["devices"]] == ["no on/off: set to high"] * 2
    for fan, mark in zip(fans, marks, strict=True):
        await reports(fan, mark, "fanControl", "fanMode", 3)
        await reports(fan, mark, "fanControl", "percentCurrent", 100)
    marks = [f.mark() for f in fans]
    await invoke(home, "matter:room_lounge_fans_off")
    for fan, mark in zip(fans, marks, strict=True):
        await reports(fan, mark, "fanControl", "fanMode", 0)  # FanModeEnum Off
        await reports(fan, mark, "fanControl", "percentCurrent", 0)
    marks = [f.mark() for f in fans]
    result = await invoke(home, "matter:room_lounge_fans_speed", percent=40)
    assert (result["succeeded"], result["failed"]) == (2, 0), result
    # FanControl PercentSetting (attribute 2) = 40; the fans follow with PercentCurrent.
    for fan, mark in zip(fans, marks, strict=True):
        await reports(fan, mark, "fanControl", "percentCurrent", 40)


async def test_covers_of_one_type_or_all_of_them(commissioned: Home) -> None:
    home = commissioned
    curtains, shade = home.devices["curtains"], home.devices["shade"]
    mark = curtains.mark()
    shade_mark = shade.mark()
    # Only the curtains (WindowCovering Type 4 = Drapery); 10000 = fully closed.
    result = await invoke(home, "matter:room_lounge_covers_close", covering_type="drapery")
    await reports(curtains, mark, "windowCovering", "currentPositionLiftPercent100ths", 10000)
    by_id = {d["device_id"]: d for d in result["devices"]}
    assert by_id[home.ids["shade"]]["note"] == "not a drapery: left as it is"
    assert by_id[home.ids["shade"]]["skipped"] is True
    shade_state = await invoke(home, "blind_lounge_shade_state")
    assert shade_state["percent_open"] == 100  # still fully open, as the script started it
    assert shade.changes()[shade_mark:] == []  # the shade's script reported no move
    # Then both to 30 % open: GoToLiftPercentage 7000 (100ths of closed).
    marks = (curtains.mark(), shade.mark())
    result = await invoke(home, "matter:room_lounge_covers_position", percent_open=30)
    assert (result["succeeded"], result["failed"]) == (2, 0), result
    for dev, mark in zip((curtains, shade), marks, strict=True):
        await reports(dev, mark, "windowCovering", "currentPositionLiftPercent100ths", 7000)


async def test_the_rooms_valves_open_and_close(commissioned: Home) -> None:
    home = commissioned
    valve = home.devices["valve"]
    mark = valve.mark()
    result = await invoke(home, "matter:room_lounge_valves_open")
    assert (result["succeeded"], result["failed"]) == (1, 0), result
    # ValveConfigurationAndControl CurrentState: 1 Open, 0 Closed (spec 4.6.6.4).
    await reports(valve, mark, "valveConfigurationAndControl", "currentState", 1)
    mark = valve.mark()
    await invoke(home, "matter:room_lounge_valves_close")
    await reports(valve, mark, "valveConfigurationAndControl", "currentState", 0)


async def test_the_compact_profile_reaches_the_rooms_fans_covers_and_valves(
    commissioned: Home,
) -> None:
    # "all the lounge's fans to 60 %", "open the lounge's blinds to 50 %", "close the
    # lounge's valves": one compact call each, by the room's name, through its room tool.
    home = commissioned
    fans = [home.devices["fan"], home.devices["ceiling_fan"]]
    marks = [f.mark() for f in fans]
    status, body = await request(
        home,
        home.bridge.token,
        "POST",
        "/v1/compact/fans",
        {"target": "Lounge", "action": "speed", "percent": 60},
    )
    assert (status, body["tool"].split("@")[0]) == (200, "matter:room_lounge_fans_speed"), body
    for fan, mark in zip(fans, marks, strict=True):
        await reports(fan, mark, "fanControl", "percentCurrent", 60)
    covers = (home.devices["curtains"], home.devices["shade"])
    marks = [c.mark() for c in covers]
    status, body = await request(
        home,
        home.bridge.token,
        "POST",
        "/v1/compact/covers",
        {"target": "lounge", "action": "position", "percent_open": 50},
    )
    assert (status, body["tool"].split("@")[0]) == (200, "matter:room_lounge_covers_position")
    for dev, mark in zip(covers, marks, strict=True):
        # GoToLiftPercentage: 50 % open is 5000 hundredths of closed.
        await reports(dev, mark, "windowCovering", "currentPositionLiftPercent100ths", 5000)
    valve = home.devices["valve"]
    mark = valve.mark()
    status, body = await request(
        home,
        home.bridge.token,
        "POST",
        "/v1/compact/valves",
        {"target": "Lounge", "action": "open"},
    )
    assert (status, body["tool"].split("@")[0]) == (200, "matter:room_lounge_valves_open")
    await reports(valve, mark, "valveConfigurationAndControl", "currentState", 1)
    # A room's valves take no "close again after minutes": refused, never dropped unsaid.
    status, body = await request(
        home,
        home.bridge.token,
        "POST",
        "/v1/compact/valves",
        {"target": "Lounge", "action": "close", "minutes": 5},
    )
    assert (status, body["error"]["code"], body["error"]["details"]["fields"]) == (
        400,
        "INVALID_PARAMS",
        ["minutes"],
    )


async def test_a_room_tool_needs_control_of_every_member(commissioned: Home) -> None:
    home = commissioned
    one_fan = home.token(f"device:control:{home.ids['fan']}", agent="one-fan")
    status, body = await request(
        home, one_fan, "POST", "/v1/invoke", {"tool": "matter:room_lounge_fans_off", "params": {}}
    )
    # Listed and answered as a tool that does not exist (the lights' rule).
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    status, listing = await request(home, one_fan, "GET", "/v1/tools?tag=room")
    assert (status, listing["tools"]) == (200, [])
    both = home.token(
        f"device:control:{home.ids['fan']}", f"device:control:{home.ids['ceiling_fan']}"
    )
    status, listing = await request(home, both, "GET", "/v1/tools?tag=room")
    assert sorted(t["identity"].split("@")[0] for t in listing["tools"]) == [
        "matter:room_lounge_fans_off",
        "matter:room_lounge_fans_on",
        "matter:room_lounge_fans_speed",
    ]


# -- ClosureDimension -------------------------------------------------------------------


async def test_closure_panel_moves_to_a_position(commissioned: Home) -> None:
    home = commissioned
    panel = home.devices["panel"]
    node = int(home.ids["panel"].split("-")[0])
    mark = panel.mark()
    result = await invoke(home, "closure_panel_study_panel_set_position", percent_open=30)
    # SetTarget (ClosureDimension 5.5.8.1, a timed command) with Position 7000 = 70.00 %
    # of closed.
    assert result["sent"] == [
        {
            "kind": "command",
            "node_id": node,
            "endpoint_id": 1,
            "cluster": "ClosureDimension",
            "command": "SetTarget",
            "payload": {"position": 7000},
            "timed": True,
        }
    ]
    await reports(panel, mark, "closureDimension", "currentState", {"position": 7000})
    state = await invoke(home, "closure_panel_study_panel_state")
    assert state == {"percent_open": 30}
    mark = panel.mark()
    await invoke(home, "closure_panel_study_panel_open")
    await reports(panel, mark, "closureDimension", "currentState", {"position": 0})
    mark = panel.mark()
    await invoke(home, "closure_panel_study_panel_close")
    await reports(panel, mark, "closureDimension", "currentState", {"position": 10000})
    assert (await invoke(home, "closure_panel_study_panel_state")) == {"percent_open": 0}


# -- waiting for an event ---------------------------------------------------------------


async def _wait_call(home: Home, token: str, params: dict[str, Any]) -> tuple[int, Any, float]:
    status, body = await request(
        home, token, "POST", "/v1/invoke", {"tool": "core:wait_for_event", "params": params}
    )
    return status, body, time.monotonic()


async def _until_held(home: Home, token: str, count: int) -> None:
    """Wait until ``token`` has ``count`` calls in flight (its waits have started)."""
    async with asyncio.timeout(20):
        while home.held(token) < count:
            await asyncio.sleep(0.02)


async def test_a_press_reaches_a_waiting_call_within_a_second(commissioned: Home) -> None:
    home = commissioned
    button = home.ids["button"]
    token = home.token(f"device:read:{button}", agent="waits-for-button")
    first = asyncio.create_task(
        _wait_call(home, token, {"device_id": button, "events": ["press"], "timeout_seconds": 20})
    )
    done = asyncio.create_task(
        _wait_call(
            home, token, {"device_id": button, "events": ["multi_press"], "timeout_seconds": 20}
        )
    )
    await _until_held(home, token, 2)
    await asyncio.sleep(0.1)  # the handler subscribes right after the seat is taken
    pressed = time.monotonic()
    await asyncio.to_thread(home.devices["button"].press)  # SIGUSR1: one short press
    status, body, answered = await first
    assert status == 200, body
    result = body["result"]
    assert result["timed_out"] is False
    event = result["event"]
    # Switch InitialPress (spec 1.13.7.2): NewPosition 1.
    assert (event["device_id"], event["event"], event["fields"]) == (
        button,
        "switch.initial_press",
        {"position": 1},
    )
    assert event["matter"]["cluster_id"] == 59
    latency = answered - pressed
    print(f"press -> answer of core:wait_for_event: {latency:.3f} s")
    # The issue asks for 1 s (the first event leaves the device ~0.07 s after the press);
    # 2 s is headroom for the loaded 2-core machine.
    assert latency < 2.0, latency
    status, body, _ = await done
    # MultiPressComplete (1.13.7.7) with TotalNumberOfPressesCounted 1.
    assert (body["result"]["event"]["event"], body["result"]["event"]["fields"]) == (
        "switch.multi_press_complete",
        {"position": 1, "count": 1},
    )
    assert home.held(token) == 0


async def test_a_wait_whose_client_hangs_up_ends_at_once(commissioned: Home) -> None:
    """A waiting call whose HTTP client closed its connection gives its seat back.

    aiohttp runs a handler to its end after its client has gone, so a 50 s wait nobody
    would read held one of the token's calls in flight (and its subscription) for the
    whole 50 s; the bridge checks each second that the client is still there.
    """
    home = commissioned
    button = home.ids["button"]
    token = home.token(f"device:read:{button}", agent="hangs-up")
    url = yarl.URL(home.bridge.url)
    assert url.host is not None
    assert url.port is not None
    body = json.dumps(
        {
            "tool": "core:wait_for_event",
            "params": {"device_id": button, "timeout_seconds": 50},
        }
    ).encode()
    head = (
        f"POST /v1/invoke HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    service = home.bridge.service
    bus = service.events
    watching = len(bus._subs)
    _reader, writer = await asyncio.open_connection(url.host, url.port)
    writer.write(head + body)
    await writer.drain()
    await _until_held(home, token, 1)
    writer.close()
    await writer.wait_closed()
    hung_up = time.monotonic()
    async with asyncio.timeout(20):
        while home.held(token):
            await asyncio.sleep(0.05)
    gone_after = time.monotonic() - hung_up
    print(f"a hung-up wait gave its seat back after {gone_after:.2f} s")
    assert gone_after < 5.0, gone_after  # checked each second; it used to take 50 s
    assert len(bus._subs) <= watching
    # A client that stays runs its wait to the end, across the checks: it times out
    # as asked.
    status, answer, _ = await _wait_call(home, token, {"device_id": button, "timeout_seconds": 2.5})
    assert (status, answer["result"]["timed_out"]) == (200, True), answer


async def test_a_token_learns_nothing_of_a_device_it_may_not_read(commissioned: Home) -> None:
    home = commissioned
    button, fan = home.ids["button"], home.ids["fan"]
    fan_reader = home.token(f"device:read:{fan}", agent="reads-the-fan")
    # The button it may not read answers as a device that does not exist.
    hidden = await request(
        home,
        fan_reader,
        "POST",
        "/v1/invoke",
        {"tool": "core:wait_for_event", "params": {"device_id": button}},
    )
    unknown = await request(
        home,
        fan_reader,
        "POST",
        "/v1/invoke",
        {"tool": "core:wait_for_event", "params": {"device_id": "999-1"}},
    )
    assert hidden[0] == unknown[0] == 403
    assert json.dumps(hidden[1]["error"]).replace(button, "X") == json.dumps(
        unknown[1]["error"]
    ).replace("999-1", "X")
    # Waiting on its own fan while the button is pressed: the press is not its event.
    waiting = asyncio.create_task(
        _wait_call(home, fan_reader, {"device_id": fan, "timeout_seconds": 3})
    )
    await _until_held(home, fan_reader, 1)
    await asyncio.to_thread(home.devices["button"].press)
    status, body, _ = await waiting
    assert status == 200, body
    assert body["result"]["timed_out"] is True
    assert "event" not in body["result"]
    # A token that may read every device waits on a device that does not exist: unknown.
    status, body = await request(
        home,
        home.token("device:read:*", agent="reads-all"),
        "POST",
        "/v1/invoke",
        {"tool": "core:wait_for_event", "params": {"device_id": "999-1", "timeout_seconds": 1}},
    )
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND"), body


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"timeout_seconds": 61}, "timeout_seconds"),
        ({"timeout_seconds": -5}, "timeout_seconds"),
        ({"timeout_seconds": "ten"}, "timeout_seconds"),
        ({"timeout_seconds": math.inf}, None),
        ({"events": ["ring"]}, "events"),
        ({"events": []}, "events"),
        ({"events": ["press", "press"]}, "events"),
        ({"events": "press"}, "events"),
        ({"events": ["press"] * 17}, "events"),
        ({"device_id": "../1"}, "device_id"),
        ({"device_id": 5}, "device_id"),
        ({"device_id": "1-1" * 400}, "device_id"),
        ({"wait": True}, None),
    ],
)
async def test_hostile_waits_get_clear_errors(
    commissioned: Home, params: dict[str, Any], field: str | None
) -> None:
    home = commissioned
    button = home.ids["button"]
    token = home.token("device:read:*", agent="hostile")
    body_params = {"device_id": button, **params}
    text = json.dumps({"tool": "core:wait_for_event", "params": body_params})
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session,
        session.post(
            f"{home.bridge.url}/v1/invoke",
            data=text.replace("Infinity", "1e999"),
            headers={"Content-Type": "application/json"},
        ) as resp,
    ):
        status, body = resp.status, await resp.json()
    assert status == 400, body
    assert body["error"]["code"] in ("INVALID_PARAMS", "INVALID_REQUEST"), body
    if field is not None:
        assert field in json.dumps(body["error"]), body
    assert home.held(token) == 0


async def test_a_wait_whose_caller_leaves_is_cancelled_and_gives_its_seat_back(
    commissioned: Home,
) -> None:
    home = commissioned
    button = home.ids["button"]
    token = home.token(f"device:read:{button}", agent="leaves")
    bus = home.bridge.service.events
    subscriptions = len(bus._subs)
    async with (
        aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session,
        session.ws_connect(home.bridge.url.replace("http", "ws") + "/v1/calls/ws") as ws,
    ):
        await ws.send_str(
            json.dumps(
                {
                    "type": "tool_invoke",
                    "id": "w1",
                    "tool": "core:wait_for_event",
                    "params": {"device_id": button, "timeout_seconds": 60},
                }
            )
        )
        await _until_held(home, token, 1)
        async with asyncio.timeout(10):
            while len(bus._subs) <= subscriptions:
                await asyncio.sleep(0.02)
    # The socket closed: the call is cancelled, its subscription and seat given back.
    async with asyncio.timeout(10):
        while home.held(token) or len(bus._subs) > subscriptions:
            await asyncio.sleep(0.02)


async def test_waits_count_against_the_tokens_calls_in_flight(commissioned: Home) -> None:
    home = commissioned
    button = home.ids["button"]
    token = home.token(f"device:read:{button}", agent="many-waits")
    params = {"device_id": button, "events": ["long_press"], "timeout_seconds": 8}
    connector = aiohttp.TCPConnector(limit=80)
    async with aiohttp.ClientSession(
        connector=connector, headers={"Authorization": f"Bearer {token}"}
    ) as session:

        async def one() -> int:
            async with session.post(
                f"{home.bridge.url}/v1/invoke",
                json={"tool": "core:wait_for_event", "params": params},
            ) as resp:
                await resp.read()
                return resp.status

        waits = [asyncio.create_task(one()) for _ in range(64)]
        await _until_held(home, token, 64)
        # The 65th call at once is refused (64 per token, bridge.limits).
        assert await one() == 429
        # Another token still waits.
        other = home.token(f"device:read:{button}", agent="another")
        status, body = await request(
            home,
            other,
            "POST",
            "/v1/invoke",
            {"tool": "core:wait_for_event", "params": {**params, "timeout_seconds": 0.5}},
        )
        assert (status, body["result"]["timed_out"]) == (200, True)
        assert sorted(set(await asyncio.gather(*waits))) == [200]
    assert home.held(token) == 0
