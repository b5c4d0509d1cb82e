"""Thermostats and lights asked what they are set to, on a real controller.

The sentence home's two recorded thermostats (imported as test nodes into the real
python-matter-server): the hall's heats and cools, the bedroom's also has auto. "What
is the hall thermostat set to" reads its state and says the set-point it works to (not
the room's temperature); in auto, both set-points; a mode the thermostat lacks does
nothing and the answer lists the modes it has; "toggle" reaches a light's Toggle; "what
colour is the sofa lamp" names the colour its state shows, in five languages.
"""

from __future__ import annotations

from typing import Any

import pytest

from bridge.voice.colours import colour_name, colour_said
from bridge.voice.responses import say
from tests.support.home import Home

pytestmark = pytest.mark.controller

ALL = ("device:control:*", "device:read:*")


async def _state(home: Home, tool: str) -> dict[str, Any]:
    status, body = await home.request(
        "POST", "/v1/invoke", home.token(*ALL), {"tool": f"matter:{tool}", "params": {}}
    )
    assert status == 200, body
    result: dict[str, Any] = body["result"]
    return result


async def _say(home: Home, text: str, lang: str = "en", area: str | None = None) -> Any:
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token(*ALL))
    return await engine.handle(text, lang, token=token, area=area)


def _spoken(value: float, lang: str = "en") -> str:
    text = f"{value:g}"
    return text.replace(".", ",") if lang in ("de", "fr", "es", "nl") else text


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("what's the hall thermostat set to", "en"),
        ("what is the heating set to in the hall", "en"),
        ("auf wie viel Grad ist das Flurthermostat eingestellt", "de"),
        ("à combien est réglé le thermostat du couloir", "fr"),
        ("a qué temperatura está programado el termostato del pasillo", "es"),
        ("op hoeveel graden staat de gangthermostaat", "nl"),
    ],
)
async def test_the_set_point_is_said_not_the_room_temperature(
    home: Home, text: str, lang: str
) -> None:
    state = await _state(home, "hall_thermostat_state")
    assert state["mode"] == "heat", state
    assert state["heating_setpoint"] != state["temperature"], state  # the two told apart
    reply = await _say(home, text, lang)
    assert [c["tool"] for c in reply.calls] == ["matter:hall_thermostat_state"], reply
    assert _spoken(state["heating_setpoint"], lang) in reply.speech, (reply.speech, state)
    assert _spoken(state["temperature"], lang) not in reply.speech, (reply.speech, state)


async def test_a_thermostat_in_auto_says_both_set_points(home: Home) -> None:
    state = await _state(home, "bedroom_thermostat_state")
    assert state["mode"] == "auto", state
    reply = await _say(home, "what's the bedroom thermostat set to")
    assert reply.handled, reply
    assert reply.speech == (
        f"Bedroom Thermostat heats to {_spoken(state['heating_setpoint'])} and cools from "
        f"{_spoken(state['cooling_setpoint'])} degrees."
    )


async def test_a_mode_is_set_by_its_name_and_only_if_the_thermostat_has_it(home: Home) -> None:
    reply = await _say(home, "put the hall thermostat in cooling mode")
    assert [(c["tool"], c["params"]) for c in reply.calls] == [
        ("matter:hall_thermostat_set_mode", {"mode": "cool"})
    ]
    assert reply.speech == "Set Hall Thermostat to cool."
    reply = await _say(home, "stell das Flurthermostat auf Kühlen", "de")
    assert reply.speech == "Hall Thermostat ist auf Kühlen gestellt."
    # the hall's has no auto: nothing is done, and its own modes are named
    reply = await _say(home, "set the hall thermostat to auto")
    assert reply.calls == ()
    assert reply.speech == "Sorry, Hall Thermostat has no mode auto; it has off, heat or cool."
    reply = await _say(home, "set the hall thermostat to heat")  # as it was
    assert reply.handled, reply


async def test_toggle_reaches_the_toggle_command(home: Home) -> None:
    reply = await _say(home, "toggle the porch light")
    assert [c["tool"] for c in reply.calls] == ["matter:porch_light_toggle"], reply
    assert reply.speech == "Toggled Porch Light."
    # never a lock or a thermostat: nothing is done
    for text in ("toggle the front door", "toggle the hall thermostat"):
        reply = await _say(home, text)
        assert reply.calls == (), (text, reply)


@pytest.mark.parametrize(
    ("text", "lang", "said"),
    [
        ("what colour is the sofa lamp", "en", "Sofa Lamp is {}."),
        ("welche Farbe hat die Stehlampe", "de", "Sofa Lamp leuchtet {}."),
        ("de quelle couleur est le lampadaire", "fr", "Sofa Lamp est en {}."),
        ("qué color tiene la lámpara de pie", "es", "Sofa Lamp está en {}."),
        ("welke kleur heeft de staande lamp", "nl", "Sofa Lamp brandt {}."),
    ],
)
async def test_a_lights_colour_is_named_from_its_state(
    home: Home, text: str, lang: str, said: str
) -> None:
    state = await _state(home, "light_sofa_lamp_state")
    colour = colour_name(state)
    assert state["on"] is True, state
    assert colour is not None, state
    reply = await _say(home, text, lang)
    assert [c["tool"] for c in reply.calls] == ["matter:light_sofa_lamp_state"], reply
    assert reply.speech == said.format(colour_said(lang, colour))


async def test_a_light_without_colour_or_off_says_only_that(home: Home) -> None:
    state = await _state(home, "kitchen_light_state")
    reply = await _say(home, "what color is the kitchen light")
    assert reply.speech == f"Kitchen Light is {'on' if state['on'] else 'off'}.", (reply, state)
    reply = await _say(home, "what color is the front door")  # a lock: never asked so
    assert reply.calls == ()


async def test_every_light_but_one_device_or_room(home: Home) -> None:
    every = await _say(home, "turn off all the lights")
    rooms = sorted(c["tool"] for c in every.calls)
    assert "matter:room_kitchen_lights_off" in rooms
    assert "matter:room_terraza_lights_off" in rooms
    # the porch light is the terraza's only light: its room's call goes
    reply = await _say(home, "turn off all the lights except the porch light")
    assert sorted(c["tool"] for c in reply.calls) == [
        t for t in rooms if t != "matter:room_terraza_lights_off"
    ]
    assert reply.speech == "Turned off all the lights. Left Porch Light as it was."
    # the ceiling light shares the kitchen with the kitchen light: that one on its own
    reply = await _say(home, "turn off all the lights except the ceiling light")
    assert sorted(c["tool"] for c in reply.calls) == sorted(
        ["matter:kitchen_light_off", *(t for t in rooms if t != "matter:room_kitchen_lights_off")]
    )
    # a room: its calls go
    reply = await _say(home, "turn off everything except the kitchen")
    assert "matter:room_kitchen_lights_off" not in [c["tool"] for c in reply.calls]
    assert reply.speech.endswith("Left Kitchen as it was.")
    # in German too
    reply = await _say(home, "schalte alle Lichter aus außer dem Verandalicht", "de")
    assert "matter:room_terraza_lights_off" not in [c["tool"] for c in reply.calls]
    assert reply.speech.endswith("Porch Light bleibt, wie es war.")


async def test_everything_but_several_never_borrows_the_verb_for_the_spared(home: Home) -> None:
    """ "… except A and B": B is spared too, never switched off by a borrowed verb."""
    reply = await _say(home, "turn off all the lights except the porch light and the sofa lamp")
    tools = [c["tool"] for c in reply.calls]
    assert "matter:light_sofa_lamp_off" not in tools, reply
    assert "matter:room_living_room_lights_off" not in tools, reply
    assert "matter:room_terraza_lights_off" not in tools, reply
    assert reply.speech.endswith("Left Porch Light and Sofa Lamp as they were.")
    # a part with a verb of its own still runs after the sparing part
    reply = await _say(home, "turn off everything except the kitchen and lock the front door")
    tools = [c["tool"] for c in reply.calls]
    assert tools[-1] == "matter:lock_front_door_lock"
    assert "matter:room_kitchen_lights_off" not in tools
    # a list item that is no name the caller may see: nothing at all is done
    reply = await _say(home, "turn off all the lights except the porch light and the moon")
    assert reply.calls == (), reply


async def test_a_command_for_later_does_nothing_and_says_so(home: Home) -> None:
    """ "Turn off the porch light in 10 minutes": nothing now, and the answer says why.

    Before, these answered "I heard Porch Light but not what to do" (or only "I didn't
    understand"), which sent the speaker looking for other words.
    """
    for lang, text in (
        ("en", "turn off the ceiling light in 10 minutes"),
        ("en", "turn on the porch light for half an hour"),
        ("en", "turn on the kitchen light at 7 pm"),
        ("en", "lock the front door tonight"),
        ("en", "set the hall thermostat to 22 until 10 pm"),
        ("en", "turn off all the lights in 5 minutes"),
        ("de", "schalte das Verandalicht in 10 Minuten aus"),
        ("de", "mach die Stehlampe für eine Stunde an"),
        ("fr", "éteins la lumière du porche dans 10 minutes"),
        ("es", "apaga la luz del porche en 10 minutos"),
        ("nl", "doe de verandalamp over 10 minuten uit"),
    ):
        reply = await _say(home, text, lang)
        assert (reply.handled, reply.calls, reply.speech) == (False, (), say(lang, "later")), text
    # a sentence without a time said is answered as before
    reply = await _say(home, "turn off the porch light gently")
    assert reply.speech != say("en", "later")
    # said now, the same command runs
    reply = await _say(home, "turn off the ceiling light")
    assert reply.handled
    assert len(reply.calls) == 1
