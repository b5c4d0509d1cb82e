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
from typing import Any

import pytest

from bridge.config import FloorConfig, VoiceConfig
from tests.support.home import Home
from tests.voice.fabric_home import (
    Numbering,
    device_state,
    device_tool,
    fabric_fixtures,
    slug_of,
    spoken,
    state_until,
)

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


# The module's controller and devices, once; a bridge of each test's own on them.
NUMBERS = Numbering(name="voice-speech", port=6500, passcode=20203501, discriminator=0xEB0)
commissioned, home = fabric_fixtures(HOME, NUMBERS, FLOORS)


async def test_a_floor_command_switches_that_floors_lights_only(home: Home) -> None:
    bedroom, kitchen = slug_of(home, "Bedroom Light"), slug_of(home, "Kitchen Lamp")
    await device_tool(home, f"{bedroom}_on")
    await device_tool(home, f"{kitchen}_on")
    await state_until(home, bedroom, "on", True)
    await state_until(home, kitchen, "on", True)
    reply = await spoken(home, "turn off the lights upstairs")
    assert (reply.handled, reply.speech) == (True, "Turned off the lights on First Floor.")
    assert [c["tool"] for c in reply.calls] == ["matter:room_bedroom_lights_off"]
    await state_until(home, bedroom, "on", False)
    assert (await device_state(home, kitchen))["on"] is True  # downstairs untouched
    # the same in German, by the level's everyday word
    reply = await spoken(home, "schalte das Licht unten aus", "de")
    assert reply.speech == "Das Licht im Ground Floor ist ausgeschaltet."
    await state_until(home, kitchen, "on", False)


async def test_everything_off_upstairs_leaves_downstairs_alone(home: Home) -> None:
    bedroom, kitchen = slug_of(home, "Bedroom Light"), slug_of(home, "Kitchen Lamp")
    shade = slug_of(home, "Garage Shade")
    await device_tool(home, f"{bedroom}_on")
    await device_tool(home, f"{kitchen}_on")
    await state_until(home, bedroom, "on", True)
    await state_until(home, kitchen, "on", True)
    shade_before = await device_state(home, shade)
    reply = await spoken(home, "turn everything off upstairs")
    assert (reply.handled, reply.speech) == (
        True,
        "Turned off every light and switch in First Floor.",
    )
    assert [c["tool"] for c in reply.calls] == ["matter:room_bedroom_lights_off"]
    await state_until(home, bedroom, "on", False)
    assert (await device_state(home, kitchen))["on"] is True  # downstairs untouched
    # downstairs: its light only - never the shade or the garage door beside it
    reply = await spoken(home, "apaga todo abajo", "es")
    assert [c["tool"] for c in reply.calls] == ["matter:room_kitchen_lights_off"]
    await state_until(home, kitchen, "on", False)
    assert await device_state(home, shade) == shade_before


async def test_a_relative_change_reads_the_light_and_steps_from_there(home: Home) -> None:
    kitchen = slug_of(home, "Kitchen Lamp")
    await device_tool(home, f"{kitchen}_brightness", {"percent": 50})
    await state_until(home, kitchen, "brightness_percent", 50)
    reply = await spoken(home, "dim the kitchen a bit")  # "a bit": 10 points
    assert (reply.handled, reply.speech) == (True, "Set Kitchen Lamp to 40 percent.")
    await state_until(home, kitchen, "brightness_percent", 40)
    reply = await spoken(home, "make it brighter", area="Kitchen")  # 20 points
    assert reply.speech == "Set Kitchen Lamp to 60 percent."
    await state_until(home, kitchen, "brightness_percent", 60)


async def test_a_warmer_hall_raises_the_thermostats_setpoint_by_a_degree(home: Home) -> None:
    hall = slug_of(home, "Hall Thermostat")
    await device_tool(home, f"{hall}_set_temperature", {"celsius": 20})
    await state_until(home, hall, "heating_setpoint", 20)
    reply = await spoken(home, "make it warmer in the hall")
    assert (reply.handled, reply.speech) == (True, "Turned Hall Thermostat up by 1 degree.")
    await state_until(home, hall, "heating_setpoint", 21)
    reply = await spoken(home, "dreh die Heizung im Hall um 2 Grad runter", "de")
    assert reply.speech == "Hall Thermostat ist um 2 Grad niedriger gestellt."
    await state_until(home, hall, "heating_setpoint", 19)


async def test_a_rooms_colour_reaches_its_colour_light(home: Home) -> None:
    bedroom = slug_of(home, "Bedroom Light")
    await device_tool(home, f"{bedroom}_on")  # a light that is off ignores colour commands
    await state_until(home, bedroom, "on", True)
    reply = await spoken(home, "make the bedroom blue")
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
            while not blue(state := await device_state(home, bedroom)):
                await asyncio.sleep(0.1)
    except TimeoutError:
        pytest.fail(f"the bedroom light did not turn blue: {state}")
    # "chambre" is no alias of the Bedroom, but the home's only bedroom is heard by its
    # kind's words in every language (bridge.voice.room_words); a word of no kind is not
    reply = await spoken(home, "mets la chambre en rouge", "fr")
    assert [(c["tool"], c["params"]) for c in reply.calls] == [
        ("matter:room_bedroom_lights_color", {"color": "red"})
    ], reply.speech
    reply = await spoken(home, "mets la bibliothèque en rouge", "fr")
    assert (reply.handled, reply.calls) == (False, ())


async def test_state_questions_read_the_devices_of_a_floor(home: Home) -> None:
    bedroom = slug_of(home, "Bedroom Light")
    await device_tool(home, f"{bedroom}_off")
    await state_until(home, bedroom, "on", False)
    reply = await spoken(home, "is anything on upstairs?")
    assert (reply.handled, reply.speech) == (True, "Nothing is on in First Floor.")
    await device_tool(home, f"{bedroom}_on")
    await state_until(home, bedroom, "on", True)
    reply = await spoken(home, "is anything on upstairs?")
    assert reply.speech == "Bedroom Light is on."
    measured = (await device_state(home, slug_of(home, "Hall Thermostat")))["temperature"]
    reply = await spoken(home, "what's the temperature downstairs")
    assert reply.speech == f"It is {round(measured, 1):g} degrees in Hall."


async def test_a_floor_s_humidity_is_each_of_its_rooms_reading(home: Home) -> None:
    kitchen = (await device_state(home, slug_of(home, "Kitchen Hygrometer")))["humidity_percent"]
    hall = (await device_state(home, slug_of(home, "Hall Hygrometer")))["humidity_percent"]
    both = (
        f"The humidity in Kitchen is {round(kitchen)} percent. "
        f"The humidity in Hall is {round(hall)} percent."
    )
    for said in (
        "what's the humidity downstairs",
        "how humid is it on the ground floor",
        "what is the humidity like downstairs",
    ):
        reply = await spoken(home, said)
        assert (reply.handled, reply.speech) == (True, both), said
        assert [c["tool"] for c in reply.calls] == [
            f"matter:{slug_of(home, 'Kitchen Hygrometer')}_state",
            f"matter:{slug_of(home, 'Hall Hygrometer')}_state",
        ]
    reply = await spoken(home, "wie feucht ist es unten", "de")
    assert reply.speech == (
        f"Die Luftfeuchtigkeit in Kitchen beträgt {round(kitchen)} Prozent. "
        f"Die Luftfeuchtigkeit in Hall beträgt {round(hall)} Prozent."
    )
    # a floor without one: said so, nothing read
    reply = await spoken(home, "how humid is it upstairs")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, there is no humidity sensor on First Floor that I can control."
    # a room of the floor said: that room's alone
    reply = await spoken(home, "is it humid in the hall")
    assert reply.speech == f"The humidity in Hall is {round(hall)} percent."
    # the floor by its ordinal in German ("im ersten Stock": the floor above the ground)
    reply = await spoken(home, "wie feucht ist es im ersten Stock", "de")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == (
        "Im First Floor gibt es kein Gerät der Art Feuchtigkeitssensor, das ich steuern kann."
    )


async def test_open_the_garage_never_moves_the_shade_beside_it(home: Home) -> None:
    shade, garage = slug_of(home, "Garage Shade"), slug_of(home, "Garage Door")
    await device_tool(home, f"{shade}_close")
    await state_until(home, shade, "percent_open", 0)
    for text, lang in [
        ("open the garage", "en"),
        ("open the garage door", "en"),
        ("öffne das Garagentor", "de"),
        ("abre la puerta del garaje", "es"),
    ]:
        reply = await spoken(home, text, lang)
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
    assert (await device_state(home, shade))["percent_open"] == 0
    reply = await spoken(home, "open the shade in the garage")
    assert reply.speech == "Opened Garage Shade."
    await state_until(home, shade, "percent_open", 100)
