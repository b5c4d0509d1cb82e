"""Spoken commands for issue 29's kinds, end to end on matter.js devices.

Real devices of devices/kinds/ (a fan, an air purifier, a robot vacuum with its own
rooms, a water valve, a plug with energy metering, a dishwasher, a laundry washer, an
air-quality monitor, an illuminance sensor, a leak sensor, an EV charger, a water
heater), commissioned by a
python-matter-server of this module's own, a bridge on it. The sentences of
tests/voice/sentences/kinds*.yaml must make exactly their calls (never a wrong one), and
a spoken command for each kind's primary function must change the device itself, as its
own report says (the script's STATE lines), or read the value the script publishes.
Expected values come from the Matter specification and the device scripts' documented
initial values, never from the bridge's code.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.demo.virtual_devices import VirtualDevice
from tests.support.fabric import Fabric
from tests.support.home import Home, start_home
from tests.voice.fabric_home import Numbering, commissioned_home
from tests.voice.sentence_set import evaluate, load_sentences
from tests.voice.test_subjects import assert_no_placeholder, assert_not_english

pytestmark = pytest.mark.fabric

# (devices/kinds name, device name, room, aliases), commissioned in this order.
HOME: list[tuple[str, str, str, list[str]]] = [
    (
        "fan",
        "Bedroom Fan",
        "Bedroom",
        [
            "Schlafzimmerventilator",
            "ventilateur de la chambre",
            "ventilador del dormitorio",
            "slaapkamerventilator",
        ],
    ),
    (
        "air-purifier",
        "Air Purifier",
        "Living Room",
        ["Luftreiniger", "purificateur d'air", "purificador de aire", "luchtreiniger"],
    ),
    (
        "robot-vacuum",
        "Robot Vacuum",
        "Hall",
        ["Saugroboter", "robot aspirateur", "robot aspirador", "robotstofzuiger"],
    ),
    (
        "water-valve",
        "Garden Valve",
        "Garden",
        ["Gartenventil", "vanne du jardin", "válvula del jardín", "tuinkraan"],
    ),
    (
        "energy-plug",
        "Desk Plug",
        "Office",
        ["Schreibtischsteckdose", "prise du bureau", "enchufe del escritorio", "bureaustekker"],
    ),
    (
        "dishwasher",
        "Dishwasher",
        "Kitchen",
        ["Spülmaschine", "lave-vaisselle", "lavavajillas", "vaatwasser"],
    ),
    (
        "laundry-washer",
        "Laundry Washer",
        "Laundry",
        ["Waschmaschine", "machine à laver", "lavadora", "wasmachine"],
    ),
    (
        "air-quality",
        "Air Monitor",
        "Office",
        ["Luftmonitor", "moniteur d'air", "monitor de aire", "luchtmonitor"],
    ),
    (
        "illuminance",
        "Light Sensor",
        "Living Room",
        ["Lichtsensor", "capteur de lumière", "sensor de luz"],
    ),
    (
        "leak",
        "Leak Sensor",
        "Kitchen",
        ["Wassermelder", "détecteur de fuite", "sensor de fugas", "lekmelder"],
    ),
    (
        "ev-charger",
        "Driveway Charger",
        "Garage",
        ["Wallbox", "borne de recharge", "cargador del coche", "laadpaal"],
    ),
    (
        "water-heater",
        "Water Heater",
        "Utility Room",
        ["Warmwasserbereiter", "chauffe-eau", "calentador de agua", "boiler"],
    ),
    (
        "chime",
        "Front Door Chime",
        "Hall",
        ["Haustürgong", "carillon de l'entrée", "carillón de la entrada", "voordeurgong"],
    ),
]
ROOM_ALIASES = {
    "Kitchen": ["Küche", "cuisine", "cocina", "keuken"],
    "Living Room": ["Wohnzimmer", "salon", "sala de estar", "woonkamer"],
    "Bedroom": ["Schlafzimmer", "chambre", "dormitorio", "slaapkamer"],
    "Office": ["Büro", "bureau", "oficina", "kantoor"],
    "Garden": ["Garten", "jardin", "jardín", "tuin"],
    "Hall": ["Flur", "couloir", "pasillo", "gang"],
    "Laundry": ["Waschküche", "buanderie", "lavadero", "washok"],
    "Garage": ["Garage", "garage", "garaje", "garage"],
    "Utility Room": ["Hauswirtschaftsraum", "cellier", "cuarto de servicio", "bijkeuken"],
}
NUMBERS = Numbering(name="voice-kinds", port=6900, passcode=20206001, discriminator=0xF10)
# Sentences not understood yet, pinned by set, language and text (see test_sentences.py).
KNOWN_MISSES: dict[str, set[tuple[str, str]]] = {
    "kinds": set(),
    "kinds_heldout": set(),
    "kinds7_heldout": set(),
    "kinds11": set(),
    "kinds15": set(),
    "kinds16": set(),
    "kinds16_heldout": set(),
    "kinds17": set(),
    "kinds17_heldout": set(),
    # the eighteenth session's (a garden's water said as water, sprinklers or irrigation,
    # with its room, in every language; held-out set written after the engine change,
    # before its first run: 10/11, 0 wrong)
    "kinds18": set(),
    "kinds18_heldout": set(),
}
# Answers that name the device's own modes (the script's LaundryWasherMode labels).
UNKNOWN_DELICATE = (
    "Sorry, Laundry Washer has no mode delicate; it has Cottons, Wool, Heavy duty or Whites."
)
NO_MICROWAVE = "Sorry, there is no microwave here that I can control."


@pytest.fixture(scope="module")
def commissioned(fabric: Fabric) -> Iterator[tuple[str, str, list[int], list[VirtualDevice]]]:
    """The module's controller URL, key file, node ids and devices, in HOME's order."""
    with commissioned_home(fabric, [kind for kind, *_ in HOME], NUMBERS) as (url, key, nodes):
        labels = [f"{NUMBERS.name} {kind} {i}" for i, (kind, *_) in enumerate(HOME)]
        devices = [next(d for d in fabric.devices if d.label == label) for label in labels]
        yield url, key, nodes, devices


@pytest.fixture
async def home(
    commissioned: tuple[str, str, list[int], list[VirtualDevice]], tmp_path: Path
) -> AsyncIterator[Home]:
    url, key_file, nodes, _ = commissioned
    async with start_home(url, tmp_path / "state", [], key_file) as running:
        assert running.service.matter is not None
        bridge = running.service.matter.bridge
        async with asyncio.timeout(30):
            while not set(nodes) <= {d.node_id for d in bridge.devices()}:
                await asyncio.sleep(0.05)
        for i, (node, (_, name, room, aliases)) in enumerate(zip(nodes, HOME, strict=True)):
            running.ids[str(i)] = next(d.id for d in bridge.devices() if d.node_id == node)
            await running.patch_device(str(i), {"name": name, "room": room, "aliases": aliases})
        for room, aliases in ROOM_ALIASES.items():
            status, answer = await running.request(
                "PATCH", f"/v1/rooms/{room}", running.token("device:manage:*"), {"aliases": aliases}
            )
            assert status == 200, answer
        yield running


def device(
    commissioned: tuple[str, str, list[int], list[VirtualDevice]], kind: str
) -> VirtualDevice:
    return commissioned[3][[k for k, *_ in HOME].index(kind)]


def _token(home: Home) -> Any:
    assert home.service.invocation is not None
    return home.service.invocation.verifier.verify(home.token("device:control:*", "device:read:*"))


async def say(home: Home, text: str, lang: str = "en", area: str | None = None) -> Any:
    engine = home.service.intents
    assert engine is not None
    return await engine.handle(text, lang, token=_token(home), area=area)


async def reports(
    dev: VirtualDevice, since: int, behavior: str, attribute: str, value: Any
) -> None:
    await asyncio.to_thread(dev.wait_state, behavior, attribute, value, since=since, timeout_s=20)


async def fan_read_back(home: Home, percent: int) -> None:
    """Wait until the bridge reads the bedroom fan's speed as ``percent``."""
    token = home.token("device:read:*")
    async with asyncio.timeout(20):
        while True:
            status, body = await home.invoke("matter:bedroom_fan_state", {}, token)
            assert status == 200, body
            if body["result"].get("fan_speed_percent") == percent:
                return
            await asyncio.sleep(0.1)


def print_score(which: str, outcomes: list[Any]) -> None:
    """Print exact / wrong / not acted per language (as bench/intents.py does per set)."""
    for lang in [*dict.fromkeys(o.sentence.language for o in outcomes), "all"]:
        chosen = [o for o in outcomes if lang in ("all", o.sentence.language)]
        exact = sum(o.exact for o in chosen)
        wrong = sum(o.wrong_action for o in chosen)
        idle = sum(1 for o in chosen if not o.calls and o.sentence.calls)
        print(f"{which} {lang}: {exact}/{len(chosen)} exact, {wrong} wrong, {idle} not acted")
    for o in outcomes:
        if not o.exact:
            what = "WRONG" if o.wrong_action else "not acted"
            print(f"  {what} [{o.sentence.language}] {o.sentence.text!r} -> {o.calls} {o.speech!r}")


@pytest.mark.parametrize("which", list(KNOWN_MISSES))  # every kinds set, each pinned
async def test_every_kind_sentence_makes_exactly_its_calls(home: Home, which: str) -> None:
    outcomes = await evaluate(home, load_sentences(which), _token(home))
    print_score(which, outcomes)
    wrong = [(o.sentence.language, o.sentence.text, o.calls) for o in outcomes if o.wrong_action]
    assert wrong == []
    missed = [o for o in outcomes if not o.exact]
    assert all(o.calls == [] and o.speech for o in missed)
    missed_keys = {(o.sentence.language, o.sentence.text) for o in missed}
    new = sorted(
        (k, o.speech)
        for o in missed
        if (k := (o.sentence.language, o.sentence.text)) not in KNOWN_MISSES[which]
    )
    assert new == [], f"{which}: sentences that do not work: {new}"
    assert sorted(KNOWN_MISSES[which] - missed_keys) == [], f"{which}: unpin these"
    assert_no_placeholder([(o.sentence.language, o.speech) for o in outcomes])
    assert_not_english([(o.sentence.language, o.speech) for o in outcomes])


async def test_a_fan_follows_its_speed_faster_and_off_as_it_reports(
    home: Home, commissioned: Any
) -> None:
    fan = device(commissioned, "fan")
    # On first, whatever the sets left (a fan that reads FanMode Off is at 0 % to the
    # planner: run alone, "faster" would then start it at 25 %)
    await settle(home, fan, "turn on the bedroom fan", "fanControl", "fanMode", 3)
    mark = fan.mark()
    reply = await say(home, "set the bedroom fan to 33%")
    assert (reply.handled, reply.speech) == (True, "Set Bedroom Fan to 33 percent speed.")
    # PercentCurrent follows (FanControl 4.4.6.4); 33 % is the fan's own step 1 of 3
    await reports(fan, mark, "fanControl", "percentCurrent", 33)
    mark = fan.mark()
    # the speed read back (33) stepped by 25 points: the write the fan reports
    reply = await say(home, "make the bedroom fan faster")
    assert (reply.handled, reply.speech) == (True, "Set Bedroom Fan to 58 percent speed.")
    await reports(fan, mark, "fanControl", "percentSetting", 58)
    await reports(fan, mark, "fanControl", "percentCurrent", 58)
    # 58 % is speed 2 of 3, whose own percentage (67) the fan then takes: PercentCurrent
    # 58 is only a step on the way. Wait for 67 on the fan and in the bridge's read-back
    # (a "slower" said at 58 is 33 %: one CI run said it there).
    await reports(fan, mark, "fanControl", "percentCurrent", 67)
    await fan_read_back(home, 67)
    # "the fan", said in the bedroom: that room's fan (it asked which room before)
    mark = fan.mark()
    reply = await say(home, "make the fan slower", area="Bedroom")
    # the speed it runs at read back (PercentCurrent 67: speed 2 of 3), less 25 points
    assert (reply.handled, reply.speech) == (True, "Set Bedroom Fan to 42 percent speed.")
    await reports(fan, mark, "fanControl", "percentSetting", 42)
    # 42 % is speed 1 of 3: the fan takes that speed's 33 %. Nobody said where now: the
    # home's only fan (the air purifier is a fan to the templates too, but not "the
    # fan"; this asked which room before), from the 33 it runs at
    await reports(fan, mark, "fanControl", "percentCurrent", 33)
    await fan_read_back(home, 33)
    mark = fan.mark()
    reply = await say(home, "make the fan faster")
    assert (reply.handled, reply.speech) == (True, "Set Bedroom Fan to 58 percent speed.")
    await reports(fan, mark, "fanControl", "percentSetting", 58)
    mark = fan.mark()
    reply = await say(home, "schalte den Ventilator im Schlafzimmer aus", "de")
    assert (reply.handled, reply.calls[0]["params"]) == (True, {"mode": "off"})
    await reports(fan, mark, "fanControl", "fanMode", 0)  # FanMode Off = 0
    mark = fan.mark()
    reply = await say(home, "turn on the fan", area="Bedroom")
    assert reply.calls[0]["params"] == {"mode": "high"}  # its sequence 2 has no On
    await reports(fan, mark, "fanControl", "fanMode", 3)  # High = 3
    # a mode by its everyday word, in the speaker's language
    mark = fan.mark()
    reply = await say(home, "stell den Ventilator auf niedrig", "de", area="Bedroom")
    assert (reply.handled, reply.speech) == (True, "Bedroom Fan ist auf niedrig gestellt.")
    await reports(fan, mark, "fanControl", "fanMode", 1)  # Low = 1


def last_reported(dev: VirtualDevice, behavior: str, attribute: str) -> Any:
    """Return the value the device reported last for an attribute (None: never)."""
    seen = [c.value for c in dev.changes() if (c.cluster, c.attribute) == (behavior, attribute)]
    return seen[-1] if seen else None


async def test_the_robot_cleans_a_room_by_its_own_name_pauses_and_docks(
    home: Home, commissioned: Any
) -> None:
    robot = device(commissioned, "robot-vacuum")
    mark = robot.mark()
    # Whatever the sets left it doing: "stop" is its run mode Idle, and then it is docked
    # (the script follows its run mode; a GoHome leaves the run mode as it was).
    reply = await say(home, "stop the robot vacuum")
    assert (reply.handled, reply.speech) == (True, "Stopped Robot Vacuum.")
    if last_reported(robot, "rvcRunMode", "currentMode") not in (None, 0):
        await reports(robot, mark, "rvcRunMode", "currentMode", 0)  # Idle
    mark = robot.mark()
    reply = await say(home, "clean the kitchen")
    assert (reply.handled, reply.speech) == (True, "Robot Vacuum is cleaning Kitchen.")
    await reports(robot, mark, "rvcOperationalState", "operationalState", 1)  # Running
    mark = robot.mark()
    reply = await say(home, "sauge das Schlafzimmer", "de")
    assert (reply.handled, reply.speech) == (True, "Robot Vacuum reinigt Bedroom.")
    # the robot's areas Kitchen, Living room, Bedroom are 1, 2, 3 (the script's ROOMS)
    await reports(robot, mark, "serviceArea", "selectedAreas", [3])
    mark = robot.mark()
    reply = await say(home, "pause the robot vacuum")
    assert reply.speech == "Paused Robot Vacuum."
    await reports(robot, mark, "rvcOperationalState", "operationalState", 2)  # Paused
    # asked what it is doing: its OperationalState, read back after the command
    reply = await say(home, "what is the robot vacuum doing")
    assert (reply.handled, reply.speech) == (True, "Robot Vacuum is paused.")
    mark = robot.mark()
    reply = await say(home, "renvoie le robot aspirateur à sa base", "fr")
    assert reply.speech == "Robot Vacuum retourne à sa base."
    await reports(robot, mark, "rvcOperationalState", "operationalState", 66)  # Docked
    reply = await say(home, "was macht der Saugroboter gerade", "de")
    assert (reply.handled, reply.speech) == (True, "Robot Vacuum steht in der Ladestation.")
    reply = await say(home, "vacuum the garden")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, Robot Vacuum doesn't know Garden."


async def test_the_valve_opens_and_closes_as_it_reports(home: Home, commissioned: Any) -> None:
    valve = device(commissioned, "water-valve")
    await say(home, "close the garden valve")
    mark = valve.mark()
    reply = await say(home, "open the garden valve")
    assert (reply.handled, reply.speech) == (True, "Opened Garden Valve.")
    # ValveConfigurationAndControl CurrentState: Closed 0, Open 1 (spec 4.6.5.4)
    await reports(valve, mark, "valveConfigurationAndControl", "currentState", 1)
    mark = valve.mark()
    reply = await say(home, "doe de tuinkraan dicht", "nl")
    assert reply.handled
    await reports(valve, mark, "valveConfigurationAndControl", "currentState", 0)
    async with asyncio.timeout(20):  # asked, it answers from the valve's own report
        while (reply := await say(home, "is the garden valve open")).speech != (
            "Garden Valve is closed."
        ):
            assert reply.speech == "Garden Valve is open.", reply.speech
            await asyncio.sleep(0.2)


async def test_appliances_start_when_told(home: Home, commissioned: Any) -> None:
    for kind, stop, start, lang in (
        ("dishwasher", "stop the dishwasher", "start the dishwasher", "en"),
        ("laundry-washer", "stoppe die Waschmaschine", "starte die Waschmaschine", "de"),
    ):
        appliance = device(commissioned, kind)
        await say(home, stop, lang)
        mark = appliance.mark()
        reply = await say(home, start, lang)
        assert reply.handled, reply
        # OperationalState Running = 1 (Matter 1.4 application clusters 1.14.4.2)
        await reports(appliance, mark, "operationalState", "operationalState", 1)
    # Started again while it runs: the dishwasher answers CommandInvalidInState, and the
    # answer says it cannot, not that it did not respond (it did).
    reply = await say(home, "start the dishwasher")
    assert (reply.handled, reply.speech) == (False, "Sorry, Dishwasher can't do that right now.")
    reply = await say(home, "starte die Spülmaschine", "de")
    assert reply.speech == "Dishwasher kann das gerade nicht."


async def test_a_chime_rings_when_told_in_every_language(home: Home, commissioned: Any) -> None:
    """Its own name or its kind word; the chime's own report says it played its sound."""
    chime = device(commissioned, "chime")
    for text, lang, said in (
        ("ring the front door chime", "en", "Played Front Door Chime."),
        ("läute den Gong", "de", "Front Door Chime läutet."),
        ("fais sonner le carillon de l'entrée", "fr", "Front Door Chime a sonné."),
        ("haz sonar el carillón", "es", "He hecho sonar Front Door Chime."),
        ("laat de voordeurgong klinken", "nl", "Front Door Chime heeft geklonken."),
    ):
        mark = chime.mark()
        reply = await say(home, text, lang)
        assert (reply.handled, reply.speech) == (True, said), (text, reply)
        # PlayChimeSound plays the selected sound: SelectedChime 1 (the script's Westminster)
        await reports(chime, mark, "chime", "played", 1)
    # Ringing something that is no chime does nothing and says so.
    reply = await say(home, "ring the dishwasher")
    assert (reply.handled, reply.calls) == (False, ())


async def test_questions_are_answered_from_the_devices_values(
    home: Home, commissioned: Any
) -> None:
    # The scripts' values: 120 W and 1 kWh on the plug; CO2 612 ppm, AirQuality 2 (Fair)
    # on the monitor; illuminance MeasuredValue 20001 = 10^((20001-1)/10000) = 100 lx.
    expected = [
        ("how much power is the desk plug using", "en", "Desk Plug is using 120 watts."),
        ("how much energy has the desk plug used", "en", "Desk Plug has used 1 kilowatt hours."),
        ("what is the co2 level in the office", "en", "The CO2 level in Office is 612 ppm."),
        ("how is the air quality in the office", "en", "The air quality in Office is fair."),
        (
            "hoe is de luchtkwaliteit in het kantoor",
            "nl",
            "De luchtkwaliteit in Office is redelijk.",
        ),
        ("how bright is it in the living room", "en", "It is 100 lux in Living Room."),
        ("is there a leak in the kitchen", "en", "Leak Sensor detects no leak."),
    ]
    for text, lang, speech in expected:
        reply = await say(home, text, lang)
        assert (reply.handled, reply.speech) == (True, speech), text
    reply = await say(home, "what is the co2 level in the bedroom")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, there is no CO2 sensor in Bedroom that I can control."
    leak = device(commissioned, "leak")
    mark = leak.mark()
    leak.press()  # the script's own button: BooleanState StateValue true (a leak)
    await asyncio.to_thread(
        leak.wait_state, "booleanState", "stateValue", True, since=mark, timeout_s=20
    )
    async with asyncio.timeout(20):  # until the controller's report reaches the bridge
        while (reply := await say(home, "hay una fuga en la cocina", "es")).speech != (
            "¡Leak Sensor detecta una fuga!"
        ):
            assert reply.speech == "Leak Sensor no detecta ninguna fuga.", reply.speech
            await asyncio.sleep(0.2)
    mark = leak.mark()
    leak.press()
    await asyncio.to_thread(
        leak.wait_state, "booleanState", "stateValue", False, since=mark, timeout_s=20
    )
    plug = device(commissioned, "energy-plug")
    mark = plug.mark()
    reply = await say(home, "turn off the desk plug")
    assert reply.speech == "Turned off Desk Plug."
    await reports(plug, mark, "onOff", "onOff", False)


async def test_everything_on_never_starts_a_plug_and_everything_off_stops_it(
    home: Home, commissioned: Any
) -> None:
    """ "Everything off" is a room's lights and switches; "everything on" its lights only.

    The office holds the desk plug and no light: what a plug powers is not known to be
    safe to start, so "turn everything on" there does nothing and says there is no
    light, and the plug, reading off, stays off.
    """
    plug = device(commissioned, "energy-plug")
    token = home.token("device:control:*", "device:read:*")

    async def plug_on() -> bool:
        status, body = await home.invoke("matter:desk_plug_state", {}, token)
        assert status == 200, body
        return bool(body["result"]["on"])

    reply = await say(home, "turn on the desk plug")
    assert reply.speech == "Turned on Desk Plug."
    async with asyncio.timeout(20):  # on, as the plug itself reports (whatever it was)
        while not await plug_on():
            await asyncio.sleep(0.1)
    mark = plug.mark()
    reply = await say(home, "turn everything off in the office")
    assert reply.handled, reply
    assert [c["tool"] for c in reply.calls] == ["matter:desk_plug_off"]
    await reports(plug, mark, "onOff", "onOff", False)
    for text, lang in (
        ("turn everything on in the office", "en"),
        ("schalte alles im Büro ein", "de"),
        ("turn everything on", "en"),  # this home has no light at all
    ):
        reply = await say(home, text, lang)
        assert (reply.handled, reply.calls) == (False, ()), (text, reply)
    await asyncio.sleep(1)  # room for a wrong command's report to arrive
    assert await plug_on() is False
    assert last_reported(plug, "onOff", "onOff") is False


async def settle(
    home: Home, dev: VirtualDevice, text: str, behavior: str, attribute: str, value: Any
) -> None:
    """Say ``text`` and wait until the device is at ``value`` (the sets leave it anywhere)."""
    mark = dev.mark()
    reply = await say(home, text)
    assert reply.handled, reply
    if last_reported(dev, behavior, attribute) not in (None, value):
        await reports(dev, mark, behavior, attribute, value)


async def test_cycles_and_clean_modes_follow_the_devices_own_names(
    home: Home, commissioned: Any
) -> None:
    washer = device(commissioned, "laundry-washer")
    await say(home, "stop the laundry washer")
    # None reported yet is the script's initial mode, Cottons 0
    await settle(home, washer, "set the washer to cottons", "laundryWasherMode", "currentMode", 0)
    mark = washer.mark()
    reply = await say(home, "run the washing machine on wool")
    assert (reply.handled, reply.speech) == (True, "Started Laundry Washer on Wool.")
    assert [c["params"] for c in reply.calls] == [{"mode": "Wool"}, {}]
    # the script's LaundryWasherMode: Cottons 0, Wool 1, Heavy duty 2, Whites 3
    await reports(washer, mark, "laundryWasherMode", "currentMode", 1)
    await reports(washer, mark, "operationalState", "operationalState", 1)  # Running
    await say(home, "stop the laundry washer")
    mark = washer.mark()
    reply = await say(home, "stelle die Waschmaschine auf Heavy duty", "de")
    assert (reply.handled, reply.speech) == (True, "Laundry Washer ist auf Heavy duty gestellt.")
    await reports(washer, mark, "laundryWasherMode", "currentMode", 2)
    reply = await say(home, "run the washer on delicate")  # not one of its own names
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == UNKNOWN_DELICATE
    robot = device(commissioned, "robot-vacuum")
    # the script's initial clean mode is Vacuum 1
    await settle(home, robot, "set the robot to vacuum", "rvcCleanMode", "currentMode", 1)
    mark = robot.mark()
    reply = await say(home, "set the robot vacuum to mop")
    assert (reply.handled, reply.speech) == (True, "Set Robot Vacuum to Mop.")
    await reports(robot, mark, "rvcCleanMode", "currentMode", 2)  # Vacuum 1, Mop 2
    mark = robot.mark()
    reply = await say(home, "zet de robotstofzuiger op vacuum and mop", "nl")
    assert reply.handled, reply
    await reports(robot, mark, "rvcCleanMode", "currentMode", 3)  # Vacuum and mop 3
    await say(home, "stop the robot vacuum")
    dishwasher = device(commissioned, "dishwasher")
    await say(home, "stop the dishwasher")
    await settle(home, dishwasher, "set the dishwasher to eco", "dishwasherMode", "currentMode", 0)
    mark = dishwasher.mark()
    reply = await say(home, "lance le lave-vaisselle en mode intensive", "fr")
    assert (reply.handled, reply.speech) == (True, "Dishwasher a démarré en mode Intensive.")
    # DishwasherMode: Eco 0, Intensive 1, Quick 2
    await reports(dishwasher, mark, "dishwasherMode", "currentMode", 1)
    await reports(dishwasher, mark, "operationalState", "operationalState", 1)


async def test_the_charger_charges_and_the_water_heater_boosts_when_told(
    home: Home, commissioned: Any
) -> None:
    charger = device(commissioned, "ev-charger")
    await say(home, "stop the charger")
    mark = charger.mark()
    reply = await say(home, "start charging the car")
    assert (reply.handled, reply.speech) == (True, "Driveway Charger is charging the car.")
    # EnergyEVSE SupplyState: Disabled 0, ChargingEnabled 1 (Matter 1.4 9.3.7.3)
    await reports(charger, mark, "energyEvse", "supplyState", 1)
    mark = charger.mark()
    reply = await say(home, "deja de cargar el coche", "es")
    assert (reply.handled, reply.speech) == (True, "Driveway Charger ha dejado de cargar.")
    await reports(charger, mark, "energyEvse", "supplyState", 0)
    heater = device(commissioned, "water-heater")
    mark = heater.mark()
    reply = await say(home, "boost the hot water for 30 minutes")
    assert (reply.handled, reply.speech) == (True, "Boosting Water Heater for 30 minutes.")
    assert reply.calls[0]["params"] == {"minutes": 30}
    # WaterHeaterManagement BoostState: Inactive 0, Active 1 (Matter 1.4 9.5.5.2)
    await reports(heater, mark, "waterHeaterManagement", "boostState", 1)
    mark = heater.mark()
    reply = await say(home, "annuleer de boost", "nl")
    assert (reply.handled, reply.speech) == (True, "De boost van Water Heater is geannuleerd.")
    await reports(heater, mark, "waterHeaterManagement", "boostState", 0)
    # a water heater is switched and set as a thermostat of its own
    mark = heater.mark()
    reply = await say(home, "turn off the water heater")
    assert (reply.handled, reply.speech) == (True, "Turned off Water Heater.")
    await reports(heater, mark, "thermostat", "systemMode", 0)  # SystemMode Off
    reply = await say(home, "stell den Warmwasserbereiter auf 60 Grad", "de")
    assert (reply.handled, reply.speech) == (True, "Water Heater ist auf 60 Grad gestellt.")
    await reports(heater, mark, "thermostat", "occupiedHeatingSetpoint", 6000)
    reply = await say(home, "doe de boiler aan", "nl")
    assert (reply.handled, reply.speech) == (True, "Water Heater staat aan.")
    await reports(heater, mark, "thermostat", "systemMode", 4)  # SystemMode Heat
    reply = await say(home, "set the water heater to 90 degrees")  # it takes 30-65 °C
    assert (reply.handled, reply.calls) == (False, ())
    reply = await say(home, "how hot is the water heater")
    assert reply.speech.startswith("The water in Water Heater is "), reply.speech
    # kinds the home does not have, and a kind that cannot boost: nothing is done
    for text, speech in (
        ("set the oven to bake", "Sorry, there is no oven here that I can control."),
        ("start the microwave for 2 minutes", NO_MICROWAVE),
        ("boost the dishwasher for 30 minutes", "Sorry, Dishwasher can't do that."),
    ):
        reply = await say(home, text)
        assert (reply.handled, reply.calls, reply.speech) == (False, (), speech), text
