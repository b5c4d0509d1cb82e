"""What a sentence is about decides what it may do: every device kind, the whole home,
the speaker's room and honest answers, in English and German, on the real controller."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from typing import Any

import pytest

from bridge.tools.definition import Confirmation
from bridge.voice.responses import RESPONSES
from tests.support.home import Home
from tests.voice.sentence_set import evaluate, load_sentences

pytestmark = pytest.mark.controller

ROOMS = ["kitchen", "living_room", "salon", "schlafzimmer", "terraza"]


def engine_of(home: Home) -> Any:
    engine = home.service.intents
    assert engine is not None
    return engine


def token_of(home: Home, *permissions: str) -> Any:
    assert home.service.invocation is not None
    return home.service.invocation.verifier.verify(home.token(*permissions))


async def ask(
    home: Home, text: str, lang: str, token: Any, area: str | None = None
) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    reply = await engine_of(home).handle(text, lang, token=token, area=area)
    calls = [(str(c["tool"]).removeprefix("matter:"), c["params"]) for c in reply.calls]
    return calls, reply.speech


@pytest.fixture
def control(home: Home) -> Any:
    return token_of(home, "device:control:*", "device:read:*")


async def test_a_sentence_about_another_kind_does_nothing_and_says_so(
    home: Home, control: Any
) -> None:
    cases = [
        (
            "en",
            "turn on the fan in the kitchen",
            "Sorry, there is no fan in Kitchen that I can control.",
        ),
        (
            "en",
            "close the curtains in the living room",
            "Sorry, there is no curtain in Living Room that I can control.",
        ),
        ("en", "pause the music in the kitchen", "Sorry, I can't do that in this home."),
        ("en", "set the porch light to blue", "Sorry, Porch Light can't do that."),
        (
            "de",
            "öffne die Vorhänge im Wohnzimmer",
            "In Living Room gibt es kein Gerät der Art Vorhang, das ich steuern kann.",
        ),
        (
            "de",
            "schließe das Garagentor im Flur",
            "In Hall gibt es kein Gerät der Art Garagentor, das ich steuern kann.",
        ),
    ]
    for lang, text, speech in cases:
        assert await ask(home, text, lang, control) == ([], speech), text
    # The fan has FanControl tools since issue 29: on is its mode High (no On in its
    # FanModeSequence), never a light's or a switch's tool.
    assert await ask(home, "schalte den Deckenventilator ein", "de", control) == (
        [("ceiling_fan_set_fan_mode", {"mode": "high"})],
        "Ceiling Fan ist eingeschaltet.",
    )


async def test_all_the_lights_go_through_each_room_tool_with_each_permission(
    home: Home, control: Any
) -> None:
    every_room = [(f"room_{room}_lights_off", {}) for room in ROOMS]
    assert await ask(home, "turn off all the lights", "en", control) == (
        every_room,
        "Turned off all the lights.",
    )
    assert await ask(home, "schalte alle Lichter an", "de", control) == (
        [(f"room_{room}_lights_on", {}) for room in ROOMS],
        "Alle Lichter sind eingeschaltet.",
    )
    # A token for the kitchen's lights only: "all the lights" are those it may see; the
    # other rooms are neither called nor named.
    kitchen = token_of(
        home,
        f"device:control:{home.ids['node-1-onoff']}",
        f"device:control:{home.ids['node-2-dimmable']}",
    )
    reply = await engine_of(home).handle("turn off all the lights", "en", token=kitchen)
    assert [(c["tool"], c["ok"]) for c in reply.calls] == [("matter:room_kitchen_lights_off", True)]
    assert reply.speech == "Turned off all the lights."


async def test_sentences_without_a_place_act_in_the_speakers_room(home: Home) -> None:
    token = home.token("device:control:*")

    async def say(body: dict[str, Any]) -> tuple[int, Any]:
        return await home.request("POST", "/v1/intents/handle", token, body)

    status, body = await say({"text": "turn on the lights", "area": "Kitchen"})
    assert (status, body["calls"][0]["tool"], body["speech"]) == (
        200,
        "matter:room_kitchen_lights_on",
        "Turned on the lights in Kitchen.",
    )
    status, body = await say(
        {"text": "schalte das Licht aus", "language": "de", "area": "Wohnzimmer"}
    )  # a room alias
    assert (status, body["calls"][0]["tool"], body["speech"]) == (
        200,
        "matter:room_living_room_lights_off",
        "Das Licht in Living Room ist ausgeschaltet.",
    )
    status, body = await say({"text": "what's the temperature in here", "area": "hall"})
    assert [c["tool"] for c in body["calls"]] == ["matter:hall_thermostat_state"]
    for text, lang, area, speech in (
        (
            "turn on the lights",
            "en",
            None,
            "Sorry, which room do you mean? I don't know where you are.",
        ),
        (
            "turn on the lights",
            "en",
            "Attic",
            "Sorry, which room do you mean? I don't know where you are.",
        ),
        (
            "schalte das Licht ein",
            "de",
            None,
            "Welchen Raum meinst du? Ich weiß nicht, wo du bist.",
        ),
        (
            "close the blinds",
            "en",
            "Kitchen",
            "Sorry, there is no blind in Kitchen that I can control.",
        ),
    ):
        request = {"text": text, "language": lang, **({"area": area} if area else {})}
        status, body = await say(request)
        assert (status, body["handled"], body["calls"], body["speech"]) == (
            200,
            False,
            [],
            speech,
        ), request
    for bad in (
        {"text": "turn on the lights", "area": 5},
        {"text": "x", "area": ""},
        {"text": "x", "area": "a" * 65},
    ):
        status, body = await say(bad)
        assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS"), bad


async def test_every_kind_with_tools_has_sentences(home: Home, control: Any) -> None:
    cases = [
        # colour temperature
        (
            "en",
            "set the sofa lamp to warm white",
            [("light_sofa_lamp_color_temperature", {"kelvin": 2700})],
            "Set Sofa Lamp to 2700 kelvin.",
        ),
        (
            "de",
            "stelle die Stehlampe auf Warmweiß",
            [("light_sofa_lamp_color_temperature", {"kelvin": 2700})],
            "Sofa Lamp ist auf 2700 Kelvin gestellt.",
        ),
        # locks
        ("en", "lock the front door", [("lock_front_door_lock", {})], "Locked Front Door."),
        (
            "de",
            "sperre die Haustür ab",
            [("lock_front_door_lock", {})],
            "Front Door ist abgeschlossen.",
        ),
        # covers
        (
            "en",
            "open the living room blind",
            [("living_room_blind_open", {})],
            "Opened Living Room Blind.",
        ),
        (
            "de",
            "schließe das Rollo",
            [("living_room_blind_close", {})],
            "Living Room Blind ist geschlossen.",
        ),
        (
            "en",
            "stop the blind in the living room",
            [("living_room_blind_stop", {})],
            "Stopped Living Room Blind.",
        ),
        (
            "de",
            "stoppe das Rollo",
            [("living_room_blind_stop", {})],
            "Living Room Blind ist angehalten.",
        ),
        (
            "en",
            "set the living room blind to 30%",
            [("living_room_blind_set_position", {"percent_open": 30})],
            "Set Living Room Blind to 30 percent open.",
        ),
        # sensors and states: the answer reads the recorded device's state
        (
            "en",
            "is the back door open",
            [("contact_sensor_back_door_state", {})],
            "Back Door is open.",
        ),
        (
            "de",
            "ist die Hintertür offen",
            [("contact_sensor_back_door_state", {})],
            "Back Door ist offen.",
        ),
        (
            "en",
            "what's the humidity in the bathroom",
            [("humidity_sensor_bathroom_hygrometer_state", {})],
            "The humidity in Bathroom is 81 percent.",
        ),
        (
            "de",
            "wie hoch ist die Luftfeuchtigkeit im Badezimmer",
            [("humidity_sensor_bathroom_hygrometer_state", {})],
            "Die Luftfeuchtigkeit in Bathroom beträgt 81 Prozent.",
        ),
        (
            "en",
            "what is the temperature in the bathroom",
            [("temperature_sensor_bathroom_thermometer_state", {})],
            "It is 16 degrees in Bathroom.",
        ),
        (
            "de",
            "wie warm ist es im Badezimmer",
            [("temperature_sensor_bathroom_thermometer_state", {})],
            "In Bathroom sind es 16 Grad.",
        ),
        # a unit asked for: the answer in it, named, in this metric home
        (
            "en",
            "what is the temperature in the bathroom in fahrenheit",
            [("temperature_sensor_bathroom_thermometer_state", {})],
            "It is 60.9 degrees Fahrenheit in Bathroom.",
        ),
        (
            "de",
            "wie warm ist es im Badezimmer in Fahrenheit",
            [("temperature_sensor_bathroom_thermometer_state", {})],
            "In Bathroom sind es 60,9 Grad Fahrenheit.",
        ),
        (
            "fr",
            "quelle température fait-il dans la salle de bain en degrés Fahrenheit",
            [("temperature_sensor_bathroom_thermometer_state", {})],
            "Il fait 60,9 degrés Fahrenheit dans Bathroom.",
        ),
        # the home's own unit asked for: the answer as ever, the unit not named
        (
            "en",
            "what is the temperature in the bathroom in celsius",
            [("temperature_sensor_bathroom_thermometer_state", {})],
            "It is 16 degrees in Bathroom.",
        ),
        ("en", "is the kitchen light on", [("kitchen_light_state", {})], "Kitchen Light is off."),
        ("de", "ist die Küchenlampe an", [("kitchen_light_state", {})], "Kitchen Light ist aus."),
        (
            "en",
            "is the front door locked",
            [("lock_front_door_state", {})],
            "Front Door is not locked.",
        ),
        # rooms as targets of brightness and colour; "the <room> light" is its only light
        (
            "en",
            "dim the kitchen to 10 percent",
            [("room_kitchen_lights_brightness", {"percent": 10})],
            "Set the lights in Kitchen to 10 percent.",
        ),
        (
            "de",
            "dimme das Licht im Wohnzimmer auf 30 Prozent",
            [("room_living_room_lights_brightness", {"percent": 30})],
            "Das Licht in Living Room ist auf 30 Prozent gestellt.",
        ),
        (
            "en",
            "set the living room to red",
            [("room_living_room_lights_color", {"color": "red"})],
            "Set the lights in Living Room to red.",
        ),
        (
            "en",
            "turn off the living room light",
            [("light_sofa_lamp_off", {})],
            "Turned off Sofa Lamp.",
        ),
        (
            "de",
            "schalte das Terraza Licht aus",
            [("porch_light_off", {})],
            "Porch Light ist ausgeschaltet.",
        ),
        (
            "en",
            "turn on the kitchen lamp",
            [],
            "Which one do you mean: Kitchen Light (Kitchen) or Ceiling Light (Kitchen)?",
        ),
    ]
    for lang, text, calls, speech in cases:
        assert await ask(home, text, lang, control) == (calls, speech), text


async def test_unlocking_waits_for_a_person(home: Home, control: Any) -> None:
    approver = home.token("admin:approve", agent_id="a-person")
    for text, lang, speech in (
        (
            "unlock the front door",
            "en",
            "Unlocking Front Door needs a person's approval; I have asked for it.",
        ),
        (
            "schließe die Haustür auf",
            "de",
            "Das Aufschließen von Front Door muss ein Mensch freigeben; ich habe darum gebeten.",
        ),
    ):
        reply = await engine_of(home).handle(text, lang, token=control)
        assert (reply.handled, reply.speech) == (True, speech)
        assert reply.calls == (
            {
                "tool": "matter:lock_front_door_unlock",
                "params": {},
                "ok": None,
                "pending": "approval",
            },
        )
        async with asyncio.timeout(10):
            while True:
                status, body = await home.request("GET", "/v1/approvals?status=pending", approver)
                assert status == 200, body
                if body["count"]:
                    break
                await asyncio.sleep(0.05)
        (approval,) = body["approvals"]
        assert approval["tool"].split("@")[0] == "matter:lock_front_door_unlock"
        status, body = await home.request(
            "POST", f"/v1/approvals/{approval['id']}", approver, {"decision": "deny"}
        )
        assert (status, body["status"]) == (200, "denied")
        async with asyncio.timeout(10):
            while engine_of(home)._pending:  # the call ends once a person said no
                await asyncio.sleep(0.05)


async def test_a_confirmation_when_its_condition_holds_is_the_invokers_to_decide(
    home: Home, control: Any
) -> None:
    """A tool whose confirmation is ``mode: when`` waits for a person only when its
    condition holds: voice asks the invoker instead of guessing from the definition
    (which once ignored ``when`` and blocked the sentence on an approval never asked)."""
    registry = home.service.registry
    entry = registry.resolve("matter:light_sofa_lamp_brightness")
    held = replace(
        entry.definition,
        confirmation=Confirmation(
            mode="when",
            when={"properties": {"percent": {"minimum": 90}}, "required": ["percent"]},
            timeout_s=30.0,
        ),
    )
    registry.replace(held, entry.handler)
    approver = home.token("admin:approve", agent_id="a-person")
    try:
        async with asyncio.timeout(20):
            assert await ask(home, "set the sofa lamp to 20 percent", "en", control) == (
                [("light_sofa_lamp_brightness", {"percent": 20})],
                "Set Sofa Lamp to 20 percent.",
            )
            reply = await engine_of(home).handle(
                "set the sofa lamp to 95 percent", "en", token=control
            )
        assert (reply.handled, reply.speech) == (
            True,
            "A person must approve that for Sofa Lamp; I have asked for it.",
        )
        assert reply.calls == (
            {
                "tool": "matter:light_sofa_lamp_brightness",
                "params": {"percent": 95},
                "ok": None,
                "pending": "approval",
            },
        )
        status, body = await home.request("GET", "/v1/approvals?status=pending", approver)
        assert (status, [a["params"] for a in body["approvals"]]) == (200, [{"percent": 95}])
        status, body = await home.request(
            "POST", f"/v1/approvals/{body['approvals'][0]['id']}", approver, {"decision": "deny"}
        )
        assert (status, body["status"]) == (200, "denied")
        async with asyncio.timeout(10):
            while engine_of(home)._pending:  # the call ends once a person said no
                await asyncio.sleep(0.05)
    finally:
        registry.replace(entry.definition, entry.handler)


async def test_an_unlock_no_person_is_asked_for_says_what_happened(home: Home) -> None:
    approver = home.token("admin:approve", agent_id="a-person")
    # A token that may read the lock but not open it: no approval is asked for, and the
    # answer says so instead of "I have asked for it".
    reader = token_of(home, "device:read:*")
    reply = await engine_of(home).handle("unlock the front door", "en", token=reader)
    assert (reply.handled, reply.speech) == (
        False,
        "Sorry, you are not allowed to do that with Front Door.",
    )
    assert [c["error"]["code"] for c in reply.calls] == ["TOOL_NOT_FOUND"]
    # A token that may not see the lock at all hears what an unknown name gets: the
    # lock is not named.
    lamp = next(
        d.id
        for d in home.service.matter.bridge.devices()  # type: ignore[union-attr]
        if d.name == "Sofa Lamp"
    )
    stranger = token_of(home, f"device:control:{lamp}")
    reply = await engine_of(home).handle("unlock the front door", "en", token=stranger)
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, I didn't understand that."
    assert "Front Door" not in reply.speech
    status, body = await home.request("GET", "/v1/approvals?status=pending", approver)
    assert (status, body["count"]) == (200, 0)


async def test_honest_answers(home: Home, control: Any) -> None:
    cases = [
        (
            "en",
            "set the hall thermostat to 1 degree",
            [],
            "Sorry, 1 is out of range for Hall Thermostat; it takes 7 to 32.",
        ),
        (
            "de",
            "stelle das Flurthermostat auf 40 Grad",
            [],
            "40 liegt außerhalb des Bereichs von Hall Thermostat: möglich sind 7 bis 32.",
        ),
        (
            "en",
            "set the temperature in the hall to 3 degrees",
            [],
            "Sorry, 3 is out of range for Hall; it takes 7 to 32.",
        ),
        (
            "en",
            "turn off the hall thermostat",
            [("hall_thermostat_set_mode", {"mode": "off"})],
            "Turned off Hall Thermostat.",
        ),
        (
            "de",
            "schalte das Flurthermostat aus",
            [("hall_thermostat_set_mode", {"mode": "off"})],
            "Hall Thermostat ist ausgeschaltet.",
        ),
        (
            "en",
            "turn on the hall thermostat",
            [],
            "Sorry, I can't just turn on Hall Thermostat; tell me a temperature instead.",
        ),
        (
            "de",
            "schalte das Flurthermostat ein",
            [],
            "Hall Thermostat kann ich nicht einfach einschalten; sag mir eine Temperatur.",
        ),
        # a name said exactly is never offered back as "did you mean"
        (
            "en",
            "do something nice with the kitchen",
            [],
            "Sorry, I heard Kitchen but not what to do.",
        ),
        (
            "de",
            "bitte die Stehlampe",
            [],
            "Ich habe Stehlampe gehört, aber nicht, was ich tun soll.",
        ),
    ]
    for lang, text, calls, speech in cases:
        assert await ask(home, text, lang, control) == (calls, speech), text


def assert_no_placeholder(speeches: list[tuple[str, str]]) -> None:
    """Check every answer: no stand-alone "?" (a missing name), no braces, no None."""
    for lang, speech in speeches:
        assert speech.strip(), lang
        body = speech.rstrip().removesuffix("?").rstrip()  # a question's own mark
        assert not re.search(r"(^|\s)\?(\s|$)|[{}]|\bNone\b", body), (lang, speech)


# Words of the English answers that no other language's answer may hold (device and room
# names of the test home are English, so only the answers' own words are listed).
_ENGLISH = re.compile(
    r"\b(Turned|Set|Opened|Closed|Locked|Dimmed|Made|percent|degrees?"
    r"|the lights|is (on|off|open|closed|locked)|are (on|off)|Nothing|"
    r"which room|did not|can't|blue|red|green|purple|warm white)\b"
)


# Words the English answers share with a language's own ("De tuinkraan is open.").
_SHARED = {"nl": re.compile(r"\bis open\b")}


def assert_not_english(speeches: list[tuple[str, str]]) -> None:
    """Check that no answer in de/fr/es/nl holds a word of the English answers."""
    leaks = [
        (lang, speech)
        for lang, speech in speeches
        if lang != "en"
        and _ENGLISH.search(shared.sub("", speech) if (shared := _SHARED.get(lang)) else speech)
    ]
    assert leaks == []


async def test_no_answer_holds_a_placeholder(home: Home) -> None:
    # test_sentences checks every answer to both sets with a controlling token; here the
    # answers to a token that may only read (denials) in all five languages.
    reader = token_of(home, "device:read:*")
    outcomes = await evaluate(home, load_sentences("heldout"), reader)
    speeches = [(o.sentence.language, o.speech) for o in outcomes]
    assert len({lang for lang, _ in speeches}) == 5
    assert_no_placeholder(speeches)
    assert "Sorry, you are not allowed to do that with Front Door." in {s for _, s in speeches}


def test_every_language_has_every_answer() -> None:
    keys = set(RESPONSES["en"])
    assert {lang: set(table) for lang, table in RESPONSES.items()} == {
        lang: keys for lang in RESPONSES
    }
