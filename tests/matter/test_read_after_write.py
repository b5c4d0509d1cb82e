"""A read right after a write shows the write: one live state for every reader.

One bridge (managed controller in the fabric namespace, HTTP API on 127.0.0.1) and six
fresh matter.js devices: a dimmer, a colour light, a thermostat, a roller shade, a dimmer
with a high-end trim (it says MaxLevel 254 but never goes above level 200) and a shade
that takes four seconds end to end. Each command is followed at once — no wait, no
retry — by a read, 200 times over HTTP (``POST /v1/compact/...`` and ``home_state``, the
per-device ``_state`` tool) and 200 times over MCP (the SDK's client on
``/mcp/compact``), across on/off, brightness, colour temperature, heating set-point and
cover position; spoken questions after spoken commands; ``/v1/events`` carries each
command's value once. Where the device stores something else than asked (the trim) the
read shows what the device holds; while a shade travels or a light fades, its state says
so (``moving``, a target, the current value). With nobody reading, a call reads nothing
back from the device.

Expected values are written out: a percentage maps to a level and back (1 + 253 p/100,
rounded), kelvin to whole mireds and back, °C to 0.01 °C.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.auth import bearer
from tests.support.fabric import Fabric, ThreadedBridge

pytestmark = pytest.mark.fabric

DIMMER, LAMP, THERMOSTAT, SHADE = "Kitchen Dimmer", "Reading Lamp", "Hall Thermostat", "Study Shade"
TRIMMED, SLOW = "Porch Dimmer", "Garage Shade"
DEVICES: dict[str, tuple[DeviceKind, tuple[str, ...]]] = {
    DIMMER: (DeviceKind.DIMMABLE, ()),
    LAMP: (DeviceKind.COLOR, ()),
    THERMOSTAT: (DeviceKind.THERMOSTAT, ()),
    SHADE: (DeviceKind.COVER, ()),
    TRIMMED: (DeviceKind.DIMMABLE, ("--level-trim", "200")),
    SLOW: (DeviceKind.COVER, ("--travel-s", "4")),
}
ROUNDS = 200


@dataclass(frozen=True)
class Step:
    """One command through a compact tool and what the device's state shows after it."""

    device: str
    tool: str  # compact tool: lights, climate, covers
    args: dict[str, Any]
    expect: dict[str, Any]


# Each device's values change from one step to its next, so a stale read cannot pass.
# brightness: 10 → level 26 → 10 %; 35 → 90 → 35 %; 80 → 203 → 80 %; 55 → 140 → 55 %.
# kelvin: 2500 → 400 mireds → 2500; 4000 → 250 → 4000; 5000 → 200 → 5000;
#         3125 → 320 → 3125.
# shade: percent open p → lift 100ths (100 - p) * 100 → p.
CYCLE = [
    Step(DIMMER, "lights", {"action": "on"}, {"on": True}),
    # A colour light that is off ignores colour commands (its Options say so).
    Step(LAMP, "lights", {"action": "on"}, {"on": True}),
    Step(
        LAMP,
        "lights",
        {"action": "color_temperature", "kelvin": 2500},
        {"color_temperature_kelvin": 2500, "color_mode": "color_temperature"},
    ),
    Step(
        THERMOSTAT,
        "climate",
        {"action": "set_temperature", "celsius": 18.5},
        {"heating_setpoint": 18.5},
    ),
    Step(SHADE, "covers", {"action": "position", "percent_open": 25}, {"percent_open": 25.0}),
    Step(
        DIMMER,
        "lights",
        {"action": "brightness", "percent": 10},
        {"on": True, "brightness_percent": 10},
    ),
    Step(
        LAMP,
        "lights",
        {"action": "color_temperature", "kelvin": 4000},
        {"color_temperature_kelvin": 4000},
    ),
    Step(
        THERMOSTAT,
        "climate",
        {"action": "set_temperature", "celsius": 21.25},
        {"heating_setpoint": 21.25},
    ),
    Step(SHADE, "covers", {"action": "position", "percent_open": 60}, {"percent_open": 60.0}),
    Step(DIMMER, "lights", {"action": "off"}, {"on": False}),
    Step(
        DIMMER,
        "lights",
        {"action": "brightness", "percent": 35},
        {"on": True, "brightness_percent": 35},
    ),
    Step(
        LAMP,
        "lights",
        {"action": "color_temperature", "kelvin": 5000},
        {"color_temperature_kelvin": 5000},
    ),
    Step(
        THERMOSTAT,
        "climate",
        {"action": "set_temperature", "celsius": 22.5},
        {"heating_setpoint": 22.5},
    ),
    Step(SHADE, "covers", {"action": "position", "percent_open": 100}, {"percent_open": 100.0}),
    Step(
        DIMMER,
        "lights",
        {"action": "brightness", "percent": 80},
        {"on": True, "brightness_percent": 80},
    ),
    Step(DIMMER, "lights", {"action": "off"}, {"on": False, "brightness_percent": 80}),
    Step(
        LAMP,
        "lights",
        {"action": "color_temperature", "kelvin": 3125},
        {"color_temperature_kelvin": 3125},
    ),
    Step(
        THERMOSTAT,
        "climate",
        {"action": "set_temperature", "celsius": 19.0},
        {"heating_setpoint": 19.0},
    ),
    Step(SHADE, "covers", {"action": "position", "percent_open": 0}, {"percent_open": 0.0}),
    Step(
        DIMMER,
        "lights",
        {"action": "brightness", "percent": 55},
        {"on": True, "brightness_percent": 55},
    ),
]


class Home:
    """The module's bridge and devices, with the device ids by name."""

    def __init__(self, bridge: ThreadedBridge, devices: dict[str, VirtualDevice]) -> None:
        self.bridge = bridge
        self.devices = devices
        self.ids: dict[str, str] = {}  # name -> device id
        self.tools: dict[str, list[str]] = {}  # name -> its per-device tools


@pytest.fixture(scope="module")
def home(fabric: Fabric) -> Iterator[Home]:
    devices = {
        name: fabric.device(kind, options=options) for name, (kind, options) in DEVICES.items()
    }
    bridge = ThreadedBridge(fabric, "readback")
    bridge.start()
    try:
        yield Home(bridge, devices)
    finally:
        bridge.stop()


@pytest.fixture
async def http(home: Home) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {home.bridge.token}"}
    async with aiohttp.ClientSession(
        headers=headers, timeout=aiohttp.ClientTimeout(total=60)
    ) as session:
        yield session


async def post(http: aiohttp.ClientSession, home: Home, path: str, body: Any) -> Any:
    async with http.post(f"{home.bridge.url}{path}", json=body) as resp:
        answer = await resp.json()
        assert resp.status in (200, 201), answer
        return answer


async def compact(http: aiohttp.ClientSession, home: Home, tool: str, args: Any) -> Any:
    answer = await post(http, home, f"/v1/compact/{tool}", args)
    if tool == "home_state":
        return answer
    assert answer["status"] == "success", answer
    return answer["result"]


def tool(home: Home, device: str, suffix: str) -> str:
    (found,) = [t for t in home.tools[device] if t.endswith(suffix)]
    return found


def entry(state: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [d for d in state["devices"] if d["name"] == name]
    return dict(found)


def shows(state: dict[str, Any], expect: dict[str, Any]) -> bool:
    return all(state.get(k) == v for k, v in expect.items())


async def test_commission_the_six_devices(home: Home, http: aiohttp.ClientSession) -> None:
    for name, dev in home.devices.items():
        assert dev.pairing is not None
        result = await post(
            http, home, "/v1/devices/commission", {"code": dev.pairing.manual, "name": name}
        )
        assert result["stages"][-1] == "tools_ready", result
        home.ids[name] = f"{result['node_id']}-1"
        home.tools[name] = result["tools"]
    state = await compact(http, home, "home_state", {})
    assert sorted(d["name"] for d in state["devices"]) == sorted(DEVICES)
    # Where the tests start from (the scripts' initial state): the shades fully open.
    assert entry(state, SHADE)["percent_open"] == 100.0
    assert "moving" not in entry(state, SHADE)


async def test_http_every_read_right_after_a_command_shows_it(
    home: Home, http: aiohttp.ClientSession
) -> None:
    wrong: list[tuple[int, str, Any, Any]] = []
    for number, step in zip(range(ROUNDS), itertools.cycle(CYCLE), strict=False):
        await compact(http, home, step.tool, {"target": step.device, **step.args})
        state = entry(await compact(http, home, "home_state", {}), step.device)
        if not shows(state, step.expect):
            wrong.append((number, "home_state", step.expect, state))
        if number % 4 == 0:  # the per-device tool too (it reads the device itself)
            own = await post(
                http, home, "/v1/invoke", {"tool": tool(home, step.device, "_state"), "params": {}}
            )
            if not shows(own["result"], step.expect):
                wrong.append((number, "device state tool", step.expect, own["result"]))
    readers = sorted({reader for _n, reader, _e, _s in wrong})
    assert wrong == [], (readers, len(wrong), wrong[:8])


async def test_mcp_every_read_right_after_a_command_shows_it(home: Home) -> None:
    wrong: list[tuple[int, dict[str, Any], Any]] = []
    async with (
        create_mcp_http_client(headers=bearer(home.bridge.token)) as client_http,
        Client(
            streamable_http_client(f"{home.bridge.url}/mcp/compact", http_client=client_http),
            cache=None,
        ) as client,
    ):
        for number, step in zip(range(ROUNDS), itertools.cycle(CYCLE), strict=False):
            done = await client.call_tool(
                f"home__{step.tool}", {"target": step.device, **step.args}
            )
            assert done.is_error is False, done
            read = await client.call_tool("home__home_state", {})
            assert read.is_error is False, read
            state = entry(json.loads(read.content[0].text), step.device)
            if not shows(state, step.expect):
                wrong.append((number, step.expect, state))
    assert wrong == [], wrong[:8]


async def test_spoken_question_after_a_spoken_command(
    home: Home, http: aiohttp.ClientSession
) -> None:
    answers: list[tuple[str, str]] = []
    for number in range(20):
        word = "on" if number % 2 == 0 else "off"
        said = await post(
            http, home, "/v1/intents/handle", {"text": f"turn {word} the kitchen dimmer"}
        )
        assert said["handled"] is True, said
        asked = await post(http, home, "/v1/intents/handle", {"text": "is the kitchen dimmer on"})
        answers.append((word, asked["speech"]))
        percent = (20, 70)[number % 2]
        said = await post(
            http, home, "/v1/intents/handle", {"text": f"set the study shade to {percent}%"}
        )
        assert said["handled"] is True, said
        asked = await post(http, home, "/v1/intents/handle", {"text": "is the study shade open"})
        answers.append((str(percent), asked["speech"]))
    assert answers == [
        (
            w,
            {
                "on": "Kitchen Dimmer is on.",
                "off": "Kitchen Dimmer is off.",
                "20": "Study Shade is 20 percent open.",
                "70": "Study Shade is 70 percent open.",
            }[w],
        )
        for w, _ in answers
    ]


async def test_events_carry_each_commanded_value_once(
    home: Home, http: aiohttp.ClientSession
) -> None:
    levels = {10: 26, 35: 90, 80: 203, 55: 140}  # percent → CurrentLevel, as above
    ws = await http.ws_connect(
        f"{home.bridge.url.replace('http', 'ws')}/v1/events?types=device.state"
    )
    path = "1/8/0"  # CurrentLevel of the dimmer's light endpoint
    commanded = [10, 35, 80, 55] * 5
    for percent in commanded:
        await compact(
            http, home, "lights", {"target": DIMMER, "action": "brightness", "percent": percent}
        )
    # The commands came faster than the device's reports (their floor is a second):
    # each value was published when its command answered, the reports only confirm.
    seen: list[int] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(3):
            while True:
                msg = await ws.receive()
                data = json.loads(msg.data)["data"]
                if data["device_id"] == home.ids[DIMMER] and data["path"] == path:
                    seen.append(data["value"])
    await ws.close()
    assert seen == [levels[p] for p in commanded]


async def test_a_device_that_stores_another_value_is_believed(
    home: Home, http: aiohttp.ClientSession
) -> None:
    dev = home.devices[TRIMMED]
    mark = dev.mark()
    result = await compact(
        http, home, "lights", {"target": TRIMMED, "action": "brightness", "percent": 100}
    )
    # Asked for level 254 (100 %); the trim stops it at 200: (200 - 1) * 100 / 253 → 79 %.
    assert result["sent"][0]["payload"]["level"] == 254
    assert entry(await compact(http, home, "home_state", {}), TRIMMED)["brightness_percent"] == 79
    await asyncio.to_thread(dev.wait_state, "levelControl", "currentLevel", 200, since=mark)
    # Below the trim it does what it is told: 50 % → level 128 → 50 %; the device's own
    # state tool agrees.
    await compact(http, home, "lights", {"target": TRIMMED, "action": "brightness", "percent": 50})
    assert entry(await compact(http, home, "home_state", {}), TRIMMED)["brightness_percent"] == 50
    await compact(http, home, "lights", {"target": TRIMMED, "action": "brightness", "percent": 100})
    own = await post(
        http, home, "/v1/invoke", {"tool": tool(home, TRIMMED, "_state"), "params": {}}
    )
    assert own["result"]["brightness_percent"] == 79
    assert entry(await compact(http, home, "home_state", {}), TRIMMED)["brightness_percent"] == 79


async def test_a_travelling_shade_says_it_is_moving(
    home: Home, http: aiohttp.ClientSession
) -> None:
    await compact(http, home, "covers", {"target": SLOW, "action": "position", "percent_open": 0})
    # Four seconds end to end: right after the command it has barely started.
    state = entry(await compact(http, home, "home_state", {}), SLOW)
    assert state.get("moving") is True, state
    assert state["target_percent_open"] == 0.0
    assert 0.0 < state["percent_open"] <= 100.0
    # When it arrives its report says so: stopped, at the target, no target shown.
    async with asyncio.timeout(30):
        while True:
            state = entry(await compact(http, home, "home_state", {}), SLOW)
            if "moving" not in state:
                break
            await asyncio.sleep(0.2)
    assert state["percent_open"] == 0.0
    assert "target_percent_open" not in state


async def test_a_fading_light_says_it_is_moving(home: Home, http: aiohttp.ClientSession) -> None:
    await compact(http, home, "lights", {"target": DIMMER, "action": "brightness", "percent": 10})
    answer = await post(
        http,
        home,
        "/v1/invoke",
        {
            "tool": tool(home, DIMMER, "_brightness"),
            "params": {"percent": 90, "transition_seconds": 4},
        },
    )
    assert answer["status"] == "success", answer
    # A four-second fade from 10 %: right after the command it is under way, not there.
    state = entry(await compact(http, home, "home_state", {}), DIMMER)
    assert state.get("moving") is True, state
    assert 10 <= state["brightness_percent"] < 90
    async with asyncio.timeout(30):
        while "moving" in state:
            await asyncio.sleep(0.2)
            state = entry(await compact(http, home, "home_state", {}), DIMMER)
    assert state["brightness_percent"] == 90


async def test_nobody_reads_no_device_read(home: Home, http: aiohttp.ClientSession) -> None:
    assert home.bridge.service.matter is not None
    adapter = home.bridge.service.matter.bridge.adapter
    before = adapter.reads
    for percent in (20, 40, 60, 80, 30):
        await compact(
            http, home, "lights", {"target": DIMMER, "action": "brightness", "percent": percent}
        )
    # Nobody asked and nobody watches: the calls read nothing back (the report updates
    # the cache a moment later).
    assert adapter.reads == before
    # A reader pays one read of the device the calls changed, once.
    state = entry(await compact(http, home, "home_state", {}), DIMMER)
    assert state["brightness_percent"] == 30
    assert adapter.reads == before + 1
    await compact(http, home, "home_state", {})
    assert adapter.reads == before + 1
