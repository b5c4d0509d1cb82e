"""Issue 30's everyday speech end to end on matter.js devices: floors, relative changes,
a room's colour, state questions, a garage door beside a shade, and the home's floors
from the configuration.

Real devices (a colour light upstairs; a dimmable light, a thermostat, a Matter 1.5
garage door and a roller shade downstairs), commissioned by a python-matter-server of
this module's own, a bridge on it with ``voice.floors``; each spoken sentence must
change exactly the device it names, read back from the device's own report through its
state tool, and say so.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.config import FloorConfig, VoiceConfig
from tests.support.fabric import Fabric
from tests.support.home import Home, start_home
from tests.voice.fabric_home import Numbering, commissioned_home

pytestmark = pytest.mark.fabric

# (virtual device kind, device name, room), commissioned in this order.
HOME: list[tuple[str, str, str]] = [
    ("color", "Bedroom Light", "Bedroom"),
    ("dimmable", "Kitchen Lamp", "Kitchen"),
    ("thermostat", "Hall Thermostat", "Hall"),
    ("garage-door", "Garage Door", "Garage"),
    ("roller-shade", "Garage Shade", "Garage"),
    ("humidity", "Kitchen Hygrometer", "Kitchen"),
    ("humidity", "Hall Hygrometer", "Hall"),
]
FLOORS = VoiceConfig(
    floors=(
        FloorConfig(name="First Floor", level=1, rooms=("Bedroom",)),
        FloorConfig(name="Ground Floor", level=0, rooms=("Kitchen", "Hall", "Garage")),
    )
)


@pytest.fixture(scope="module")
def commissioned(fabric: Fabric) -> Iterator[tuple[str, str, list[int]]]:
    """The module's controller URL and the node id of each HOME entry, in order."""
    numbers = Numbering(name="voice-speech", port=6500, passcode=20203501, discriminator=0xEB0)
    with commissioned_home(fabric, [kind for kind, _, _ in HOME], numbers) as home:
        yield home


@pytest.fixture
async def home(commissioned: tuple[str, str, list[int]], tmp_path: Path) -> AsyncIterator[Home]:
    url, key_file, nodes = commissioned
    async with start_home(url, tmp_path / "state", [], key_file, FLOORS) as running:
        assert running.service.matter is not None
        bridge = running.service.matter.bridge
        async with asyncio.timeout(30):
            while not set(nodes) <= {d.node_id for d in bridge.devices()}:
                await asyncio.sleep(0.05)
        for i, (node, (_, name, room)) in enumerate(zip(nodes, HOME, strict=True)):
            running.ids[str(i)] = next(d.id for d in bridge.devices() if d.node_id == node)
            await running.patch_device(str(i), {"name": name, "room": room})
        yield running


def _token(home: Home) -> Any:
    assert home.service.invocation is not None
    return home.service.invocation.verifier.verify(home.token("device:control:*", "device:read:*"))


async def _say(home: Home, text: str, lang: str = "en", area: str | None = None) -> Any:
    engine = home.service.intents
    assert engine is not None
    return await engine.handle(text, lang, token=_token(home), area=area)


async def _tool(home: Home, tool: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    status, body = await home.invoke(
        f"matter:{tool}", params or {}, home.token("device:control:*", "device:read:*")
    )
    assert status == 200, body
    result: dict[str, Any] = body["result"]
    return result


async def _state(home: Home, slug: str) -> dict[str, Any]:
    """Return a device's state as its state tool reads it, once its report has arrived."""
    return await _tool(home, f"{slug}_state")


async def _until(home: Home, slug: str, field: str, wanted: Any) -> dict[str, Any]:
    """Return the device's state once ``field`` reads ``wanted`` (its own report)."""
    state: dict[str, Any] = {}
    async with asyncio.timeout(20):
        while (state := await _state(home, slug)).get(field) != wanted:
            await asyncio.sleep(0.1)
    return state


def _slug(home: Home, name: str) -> str:
    assert home.service.matter is not None
    return next(d.slug for d in home.service.matter.bridge.devices() if d.name == name)


async def test_a_floor_command_switches_that_floors_lights_only(home: Home) -> None:
    bedroom, kitchen = _slug(home, "Bedroom Light"), _slug(home, "Kitchen Lamp")
    await _tool(home, f"{bedroom}_on")
    await _tool(home, f"{kitchen}_on")
    await _until(home, bedroom, "on", True)
    await _until(home, kitchen, "on", True)
    reply = await _say(home, "turn off the lights upstairs")
    assert (reply.handled, reply.speech) == (True, "Turned off the lights on First Floor.")
    assert [c["tool"] for c in reply.calls] == ["matter:room_bedroom_lights_off"]
    await _until(home, bedroom, "on", False)
    assert (await _state(home, kitchen))["on"] is True  # downstairs untouched
    # the same in German, by the level's everyday word
    reply = await _say(home, "schalte das Licht unten aus", "de")
    assert reply.speech == "Das Licht im Ground Floor ist ausgeschaltet."
    await _until(home, kitchen, "on", False)


async def test_everything_off_upstairs_leaves_downstairs_alone(home: Home) -> None:
    bedroom, kitchen = _slug(home, "Bedroom Light"), _slug(home, "Kitchen Lamp")
    shade = _slug(home, "Garage Shade")
    await _tool(home, f"{bedroom}_on")
    await _tool(home, f"{kitchen}_on")
    await _until(home, bedroom, "on", True)
    await _until(home, kitchen, "on", True)
    shade_before = await _state(home, shade)
    reply = await _say(home, "turn everything off upstairs")
    assert (reply.handled, reply.speech) == (
        True,
        "Turned off every light and switch in First Floor.",
    )
    assert [c["tool"] for c in reply.calls] == ["matter:room_bedroom_lights_off"]
    await _until(home, bedroom, "on", False)
    assert (await _state(home, kitchen))["on"] is True  # downstairs untouched
    # downstairs: its light only - never the shade or the garage door beside it
    reply = await _say(home, "apaga todo abajo", "es")
    assert [c["tool"] for c in reply.calls] == ["matter:room_kitchen_lights_off"]
    await _until(home, kitchen, "on", False)
    assert await _state(home, shade) == shade_before


async def test_a_relative_change_reads_the_light_and_steps_from_there(home: Home) -> None:
    kitchen = _slug(home, "Kitchen Lamp")
    await _tool(home, f"{kitchen}_brightness", {"percent": 50})
    await _until(home, kitchen, "brightness_percent", 50)
    reply = await _say(home, "dim the kitchen a bit")  # "a bit": 10 points
    assert (reply.handled, reply.speech) == (True, "Set Kitchen Lamp to 40 percent.")
    await _until(home, kitchen, "brightness_percent", 40)
    reply = await _say(home, "make it brighter", area="Kitchen")  # 20 points
    assert reply.speech == "Set Kitchen Lamp to 60 percent."
    await _until(home, kitchen, "brightness_percent", 60)


async def test_a_warmer_hall_raises_the_thermostats_setpoint_by_a_degree(home: Home) -> None:
    hall = _slug(home, "Hall Thermostat")
    await _tool(home, f"{hall}_set_temperature", {"celsius": 20})
    await _until(home, hall, "heating_setpoint", 20)
    reply = await _say(home, "make it warmer in the hall")
    assert (reply.handled, reply.speech) == (True, "Turned Hall Thermostat up by 1 degree.")
    await _until(home, hall, "heating_setpoint", 21)
    reply = await _say(home, "dreh die Heizung im Hall um 2 Grad runter", "de")
    assert reply.speech == "Hall Thermostat ist um 2 Grad niedriger gestellt."
    await _until(home, hall, "heating_setpoint", 19)


async def test_a_rooms_colour_reaches_its_colour_light(home: Home) -> None:
    bedroom = _slug(home, "Bedroom Light")
    await _tool(home, f"{bedroom}_on")  # a light that is off ignores colour commands
    await _until(home, bedroom, "on", True)
    reply = await _say(home, "make the bedroom blue")
    assert (reply.handled, reply.speech) == (True, "Set the lights in Bedroom to blue.")

    # CSS blue: hue 240 degrees at full saturation (Matter keeps hue in 254 steps), or on
    # an XY light the sRGB blue primary x 0.15, y 0.06 (IEC 61966-2-1).
    def blue(state: dict[str, Any]) -> bool:
        hue = (state.get("color") or {}).get("hue", -99)
        xy = state.get("color_xy") or {}
        return abs(hue - 240) <= 2 or (
            abs(xy.get("x", -1) - 0.15) <= 0.005 and abs(xy.get("y", -1) - 0.06) <= 0.005
        )

    state: dict[str, Any] = {}
    try:
        async with asyncio.timeout(20):
            while not blue(state := await _state(home, bedroom)):
                await asyncio.sleep(0.1)
    except TimeoutError:
        pytest.fail(f"the bedroom light did not turn blue: {state}")
    reply = await _say(home, "mets la chambre en rouge", "fr")  # no such room alias: nothing
    assert (reply.handled, reply.calls) == (False, ())


async def test_state_questions_read_the_devices_of_a_floor(home: Home) -> None:
    bedroom = _slug(home, "Bedroom Light")
    await _tool(home, f"{bedroom}_off")
    await _until(home, bedroom, "on", False)
    reply = await _say(home, "is anything on upstairs?")
    assert (reply.handled, reply.speech) == (True, "Nothing is on in First Floor.")
    await _tool(home, f"{bedroom}_on")
    await _until(home, bedroom, "on", True)
    reply = await _say(home, "is anything on upstairs?")
    assert reply.speech == "Bedroom Light is on."
    measured = (await _state(home, _slug(home, "Hall Thermostat")))["temperature"]
    reply = await _say(home, "what's the temperature downstairs")
    assert reply.speech == f"It is {round(measured, 1):g} degrees in Hall."


async def test_a_floor_s_humidity_is_each_of_its_rooms_reading(home: Home) -> None:
    kitchen = (await _state(home, _slug(home, "Kitchen Hygrometer")))["humidity_percent"]
    hall = (await _state(home, _slug(home, "Hall Hygrometer")))["humidity_percent"]
    both = (
        f"The humidity in Kitchen is {round(kitchen)} percent. "
        f"The humidity in Hall is {round(hall)} percent."
    )
    for said in (
        "what's the humidity downstairs",
        "how humid is it on the ground floor",
        "what is the humidity like downstairs",
    ):
        reply = await _say(home, said)
        assert (reply.handled, reply.speech) == (True, both), said
        assert [c["tool"] for c in reply.calls] == [
            f"matter:{_slug(home, 'Kitchen Hygrometer')}_state",
            f"matter:{_slug(home, 'Hall Hygrometer')}_state",
        ]
    reply = await _say(home, "wie feucht ist es unten", "de")
    assert reply.speech == (
        f"Die Luftfeuchtigkeit in Kitchen beträgt {round(kitchen)} Prozent. "
        f"Die Luftfeuchtigkeit in Hall beträgt {round(hall)} Prozent."
    )
    # a floor without one: said so, nothing read
    reply = await _say(home, "how humid is it upstairs")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, there is no humidity sensor on First Floor that I can control."
    # a room of the floor said: that room's alone
    reply = await _say(home, "is it humid in the hall")
    assert reply.speech == f"The humidity in Hall is {round(hall)} percent."
    # the floor by its ordinal in German ("im ersten Stock": the floor above the ground)
    reply = await _say(home, "wie feucht ist es im ersten Stock", "de")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == (
        "Im First Floor gibt es kein Gerät der Art Feuchtigkeitssensor, das ich steuern kann."
    )


async def test_open_the_garage_never_moves_the_shade_beside_it(home: Home) -> None:
    shade, garage = _slug(home, "Garage Shade"), _slug(home, "Garage Door")
    await _tool(home, f"{shade}_close")
    await _until(home, shade, "percent_open", 0)
    for text, lang in [
        ("open the garage", "en"),
        ("open the garage door", "en"),
        ("öffne das Garagentor", "de"),
        ("abre la puerta del garaje", "es"),
    ]:
        reply = await _say(home, text, lang)
        # Only the garage door itself may be acted on (it has no tools yet: nothing is).
        assert all(str(c["tool"]).startswith(f"matter:{garage}_") for c in reply.calls), reply
        assert (
            reply.speech
            in (
                "Sorry, Garage Door can't do that.",
                "Das kann Garage Door leider nicht.",
                "Lo siento, Garage Door no puede hacer eso.",
            )
            or reply.calls
        )
    await asyncio.sleep(0.5)  # a wrong command would have started the shade by now
    assert (await _state(home, shade))["percent_open"] == 0
    reply = await _say(home, "open the shade in the garage")
    assert reply.speech == "Opened Garage Shade."
    await _until(home, shade, "percent_open", 100)
