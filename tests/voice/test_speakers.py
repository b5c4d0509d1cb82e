"""A speaker by voice, on a real controller: mute, unmute, its volume, louder and quieter.

Home Assistant's recorded Matter speaker (its OnOff is its mute, its LevelControl its
volume) and an on/off light share the kitchen, imported as test nodes into the real
python-matter-server. Each sentence must make exactly its calls: by the speaker's name,
by "the speaker" or "the music" in a room, in five languages; "louder" reads the
speaker's volume first and steps from it. A light is never muted, and no volume
sentence ever reaches it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

SPEAKER, LIGHT = "mock_speaker", "node-1-onoff"
controller, home = home_fixtures("voice_speakers", (SPEAKER, LIGHT))


async def say(home: Home, text: str, lang: str = "en") -> Any:
    await home.patch_device(SPEAKER, {"name": "Kitchen Speaker", "room": "Kitchen"})
    await home.patch_device(LIGHT, {"name": "Kitchen Light", "room": "Kitchen"})
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token("device:control:*", "device:read:*"))
    return await engine.handle(text, lang, token=token, area=None)


def made(reply: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(str(c["tool"]).removeprefix("matter:"), dict(c["params"])) for c in reply.calls]


MUTE = [("kitchen_speaker_mute", {})]
UNMUTE = [("kitchen_speaker_unmute", {})]


def volume(percent: int) -> list[tuple[str, dict[str, Any]]]:
    return [("kitchen_speaker_volume", {"percent": percent})]


@pytest.mark.parametrize(
    ("lang", "text", "calls"),
    [
        ("en", "mute the kitchen speaker", MUTE),
        ("en", "mute the speaker", MUTE),  # the home's only speaker
        ("en", "mute the music in the kitchen", MUTE),
        ("en", "mute the speakers in the kitchen", MUTE),
        ("en", "turn off the sound on the kitchen speaker", MUTE),
        ("en", "unmute the kitchen speaker", UNMUTE),
        ("en", "unmute the speaker", UNMUTE),
        ("en", "set the kitchen speaker volume to 30 percent", volume(30)),
        ("en", "set the volume of the kitchen speaker to 30%", volume(30)),
        ("en", "set the kitchen volume to 40", volume(40)),
        ("de", "schalte den Kitchen Speaker stumm", MUTE),
        ("de", "mach den Lautsprecher in der Kitchen stumm", MUTE),
        ("de", "stell die Lautstärke vom Kitchen Speaker auf 25 Prozent", volume(25)),
        ("fr", "mets le Kitchen Speaker en sourdine", MUTE),
        ("fr", "coupe le son du Kitchen Speaker", MUTE),
        ("fr", "remets le son du Kitchen Speaker", UNMUTE),
        ("fr", "règle le volume à 30 pour cent dans la Kitchen", volume(30)),
        ("es", "silencia el Kitchen Speaker", MUTE),
        ("es", "pon el volumen del Kitchen Speaker al 20 por ciento", volume(20)),
        ("nl", "demp de Kitchen Speaker", MUTE),
        ("nl", "zet het geluid van de Kitchen Speaker aan", UNMUTE),
        ("nl", "haal de Kitchen Speaker van stil", UNMUTE),
        ("nl", "zet het volume van de Kitchen Speaker op 35 procent", volume(35)),
    ],
)
async def test_a_speaker_is_muted_and_set_as_said(
    home: Home, lang: str, text: str, calls: list[Any]
) -> None:
    reply = await say(home, text, lang)
    assert (reply.handled, made(reply)) == (True, calls), reply.speech


@pytest.mark.parametrize(
    ("lang", "text", "up"),
    [
        ("en", "turn the volume up on the kitchen speaker", True),
        ("en", "turn up the kitchen speaker", True),
        ("en", "louder in the kitchen", True),
        ("en", "make the kitchen speaker quieter", False),
        ("en", "turn the volume down by 20 percent in the kitchen", False),
        ("de", "mach den Kitchen Speaker lauter", True),
        ("fr", "monte le son du Kitchen Speaker", True),
        ("es", "sube el volumen del Kitchen Speaker", True),
        ("nl", "zet de Kitchen Speaker harder", True),
        ("nl", "zet de Kitchen Speaker zachter", False),
    ],
)
async def test_louder_and_quieter_step_from_the_volume_read_first(
    home: Home, lang: str, text: str, up: bool
) -> None:
    # The recording's level is its MinLevel: volume 0 %. Up is a step of 10 (or the
    # step said); down stays at 0, never below.
    reply = await say(home, text, lang)
    assert made(reply) == volume(10 if up else 0), reply.speech  # (the read is not a call made)
    assert reply.handled is True


@pytest.mark.parametrize(
    ("lang", "text", "calls"),
    [
        ("en", "silence the kitchen speaker", MUTE),
        ("en", "turn up the volume of the kitchen speaker by 20 percent", volume(20)),
        ("de", "mach den Kitchen Speaker um 20 Prozent lauter", volume(20)),
        ("fr", "monte le son du Kitchen Speaker de 20 pour cent", volume(20)),
        ("es", "sube el volumen del Kitchen Speaker un 20 por ciento", volume(20)),
        ("nl", "zet de Kitchen Speaker 20 procent harder", volume(20)),
    ],
)
async def test_a_step_said_is_the_step_taken(
    home: Home, lang: str, text: str, calls: list[Any]
) -> None:
    reply = await say(home, text, lang)  # a step of 20 from the 0 % read
    assert (reply.handled, made(reply)) == (True, calls), reply.speech


async def test_a_light_is_never_muted_nor_given_a_volume(home: Home) -> None:
    for text in (
        "mute the kitchen light",
        "set the volume of the kitchen light to 30 percent",
        "make the kitchen light louder",
    ):
        reply = await say(home, text)
        assert (reply.handled, reply.calls) == (False, ()), text
    # "uit stil" is out of silence: it never mutes
    reply = await say(home, "zet de Kitchen Speaker uit stil", "nl")
    assert MUTE[0] not in made(reply), reply.speech
    reply = await say(home, "mute the kitchen speaker")
    assert reply.speech == "Muted Kitchen Speaker."
    reply = await say(home, "stell die Lautstärke vom Kitchen Speaker auf 30 Prozent", "de")
    assert reply.speech == "Die Lautstärke von Kitchen Speaker steht auf 30 Prozent."
    # a speaker has no on/off of its own (its OnOff is its mute): nothing is switched
    reply = await say(home, "turn off the kitchen speaker")
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, Kitchen Speaker can't do that."


@pytest.mark.parametrize(
    ("lang", "text", "calls"),
    [
        # said alone, nobody's room known: the home's only speaker (it is in the kitchen)
        ("en", "mute", MUTE),
        ("en", "unmute", UNMUTE),
        ("en", "mute the music", MUTE),
        ("en", "set the volume to 30", volume(30)),
        ("en", "turn the volume up", volume(10)),
        ("en", "louder", volume(10)),
        ("en", "make it louder please", volume(10)),
        ("en", "quieter please", volume(0)),
        ("de", "lauter", volume(10)),
        ("de", "leiser bitte", volume(0)),
        ("de", "mach die Musik lauter", volume(10)),
        ("de", "Lautstärke auf 30", volume(30)),
        ("fr", "coupe le son", MUTE),
        ("fr", "plus fort", volume(10)),
        ("fr", "mets le son moins fort", volume(0)),
        ("es", "silencia", MUTE),
        ("es", "silencia la música", MUTE),
        ("es", "más alto", volume(10)),
        ("es", "pon la música más bajo", volume(0)),
        ("nl", "harder", volume(10)),
        ("nl", "zet de muziek zachter", volume(0)),
        ("nl", "zet het geluid uit", MUTE),
        ("en", "volume 40", volume(40)),
        ("en", "set the speaker to 40 percent", volume(40)),
        ("en", "can you make the music a bit quieter", volume(0)),
        ("en", "it's too loud", volume(0)),
        ("en", "the music is too quiet", volume(10)),
        ("en", "silence the music", MUTE),
        ("fr", "coupe la musique", MUTE),
    ],
)
async def test_said_alone_a_sound_sentence_finds_the_homes_only_speaker(
    home: Home, lang: str, text: str, calls: list[Any]
) -> None:
    reply = await say(home, text, lang)
    assert (reply.handled, made(reply)) == (True, calls), reply.speech


async def test_said_alone_nothing_is_guessed(home: Home) -> None:
    # a bare direction could be the blinds as well as the music: never acted on
    for lang, text in (("de", "hoch"), ("de", "runter"), ("en", "up"), ("en", "down")):
        reply = await say(home, text, lang)
        assert (reply.handled, reply.calls) == (False, ()), (text, reply.speech)
    # a speaker in no room: "mute" cannot tell where, and asks
    await say(home, "mute the kitchen speaker")  # (names both devices first)
    await home.patch_device(SPEAKER, {"room": None})
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token("device:control:*", "device:read:*"))
    reply = await engine.handle("mute", "en", token=token, area=None)
    assert (reply.handled, reply.calls) == (False, ()), reply.speech
    assert reply.speech == "Sorry, which room do you mean? I don't know where you are."
    # a caller who may see only the light: no speaker for it, and none is muted
    await home.patch_device(SPEAKER, {"room": "Kitchen"})
    light = home.ids[LIGHT]
    narrow = home.service.invocation.verifier.verify(
        home.token(f"device:control:{light}", f"device:read:{light}")
    )
    reply = await engine.handle("mute", "en", token=narrow, area=None)
    assert (reply.handled, reply.calls) == (False, ()), reply.speech


@pytest.mark.parametrize(
    ("lang", "text", "speech"),
    [
        ("en", "what's the volume of the kitchen speaker", "Kitchen Speaker is muted."),
        ("en", "how loud is the kitchen speaker", "Kitchen Speaker is muted."),
        ("en", "is the kitchen speaker muted", "Kitchen Speaker is muted."),
        ("de", "wie laut ist der Kitchen Speaker", "Kitchen Speaker ist stummgeschaltet."),
        ("de", "ist der Kitchen Speaker stumm", "Kitchen Speaker ist stummgeschaltet."),
        ("fr", "quel est le volume du Kitchen Speaker", "Kitchen Speaker est en sourdine."),
        ("fr", "le Kitchen Speaker est-il en sourdine", "Kitchen Speaker est en sourdine."),
        ("es", "cuál es el volumen del Kitchen Speaker", "Kitchen Speaker está silenciado."),
        ("nl", "hoe hard staat de Kitchen Speaker", "Kitchen Speaker staat op stil."),
        ("nl", "staat de Kitchen Speaker op stil", "Kitchen Speaker staat op stil."),
    ],
)
async def test_a_speakers_volume_and_mute_are_answered_from_its_state(
    home: Home, lang: str, text: str, speech: str
) -> None:
    # The recording's OnOff is off: the speaker is muted (its volume is answered when
    # it is not: tests/voice/test_speaker_fabric.py on a real speaker).
    reply = await say(home, text, lang)
    assert (reply.handled, made(reply), reply.speech) == (
        True,
        [("kitchen_speaker_state", {})],
        speech,
    )
    reply = await say(home, "how loud is the kitchen light")  # a light has no volume
    assert (reply.handled, reply.calls) == (False, ())
