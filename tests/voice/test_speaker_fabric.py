"""Speakers by voice on real matter.js speakers: mute, volume, louder - read back.

Two matter.js Speakers (device type 0x0022: OnOff is the mute, LevelControl the volume)
in two rooms and a dimmable light beside one of them, commissioned by a
python-matter-server of this module's own. Every sentence must change exactly the
speaker it means, read back from the speaker's own report through its state tool;
"louder" steps from the volume the speaker reports, and a sentence that could be either
speaker asks instead of guessing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.home import Home
from tests.voice.fabric_home import (
    Numbering,
    device_tool,
    fabric_fixtures,
    slug_of,
    spoken,
    state_until,
)

pytestmark = pytest.mark.fabric

# (kind, name, room) in commissioning order
HOME: list[tuple[str, str, str]] = [
    ("speaker", "Lounge Speaker", "Lounge"),
    ("speaker", "Kitchen Speaker", "Kitchen"),
    ("dimmable", "Kitchen Lamp", "Kitchen"),
]


NUMBERS = Numbering(name="voice-speakers", port=6560, passcode=20203601, discriminator=0xED0)
commissioned, home = fabric_fixtures(HOME, NUMBERS)


def _tools(reply: Any) -> list[str]:
    return [str(c["tool"]).removeprefix("matter:") for c in reply.calls]


async def test_a_speaker_is_muted_and_unmuted_by_name_and_by_room(home: Home) -> None:
    lounge, kitchen = slug_of(home, "Lounge Speaker"), slug_of(home, "Kitchen Speaker")
    await device_tool(home, f"{lounge}_unmute")
    await device_tool(home, f"{kitchen}_unmute")
    await state_until(home, lounge, "muted", False)
    await state_until(home, kitchen, "muted", False)
    reply = await spoken(home, "mute the lounge speaker")
    assert (reply.handled, reply.speech) == (True, "Muted Lounge Speaker.")
    await state_until(home, lounge, "muted", True)
    assert (await device_tool(home, f"{kitchen}_state"))["muted"] is False  # the other untouched
    reply = await spoken(home, "is the lounge speaker muted")
    assert reply.speech == "Lounge Speaker is muted."
    reply = await spoken(home, "schalte den Kitchen Speaker stumm", "de")
    assert _tools(reply) == [f"{kitchen}_mute"]
    await state_until(home, kitchen, "muted", True)
    reply = await spoken(home, "unmute", area="Kitchen")  # the speaker's room
    assert _tools(reply) == [f"{kitchen}_unmute"]
    await state_until(home, kitchen, "muted", False)
    assert (await device_tool(home, f"{lounge}_state"))["muted"] is True


async def test_the_volume_is_set_and_stepped_from_what_the_speaker_reports(home: Home) -> None:
    lounge = slug_of(home, "Lounge Speaker")
    reply = await spoken(home, "set the volume of the lounge speaker to 30 percent")
    assert (reply.handled, reply.speech) == (
        True,
        "Set the volume of Lounge Speaker to 30 percent.",
    )
    await state_until(home, lounge, "volume_percent", 30)
    await device_tool(home, f"{lounge}_unmute")
    await state_until(home, lounge, "muted", False)
    reply = await spoken(home, "how loud is the lounge speaker")  # its own report
    assert reply.speech == "Lounge Speaker is at 30 percent volume."
    reply = await spoken(home, "wie laut ist der Lounge Speaker", "de")
    assert reply.speech == "Die Lautstärke von Lounge Speaker steht auf 30 Prozent."
    reply = await spoken(home, "louder", area="Lounge")  # read 30, a step of 10
    assert reply.speech == "Set the volume of Lounge Speaker to 40 percent."
    await state_until(home, lounge, "volume_percent", 40)
    reply = await spoken(home, "baisse le son du Lounge Speaker", "fr")
    assert reply.speech == "Le volume de Lounge Speaker est à 30 pour cent."
    await state_until(home, lounge, "volume_percent", 30)
    reply = await spoken(home, "turn up the volume of the lounge speaker by 50 percent")
    assert reply.speech == "Set the volume of Lounge Speaker to 80 percent."
    await state_until(home, lounge, "volume_percent", 80)
    reply = await spoken(home, "turn the volume down on the lounge speaker by 25%")
    assert reply.speech == "Set the volume of Lounge Speaker to 55 percent."
    await state_until(home, lounge, "volume_percent", 55)
    reply = await spoken(home, "increase the lounge speaker volume by 90%")  # never past 100
    assert reply.speech == "Set the volume of Lounge Speaker to 100 percent."
    await state_until(home, lounge, "volume_percent", 100)


async def test_with_two_speakers_a_bare_sentence_asks_and_a_light_is_never_a_speaker(
    home: Home,
) -> None:
    lounge, kitchen = slug_of(home, "Lounge Speaker"), slug_of(home, "Kitchen Speaker")
    lamp = slug_of(home, "Kitchen Lamp")
    before = {s: await device_tool(home, f"{s}_state") for s in (lounge, kitchen, lamp)}
    for text, lang in (("mute", "en"), ("louder", "en"), ("lauter", "de"), ("silencia", "es")):
        reply = await spoken(home, text, lang)  # two rooms with a speaker, nobody's room known
        assert (reply.handled, reply.calls) == (False, ()), (text, reply.speech)
    reply = await spoken(home, "make the kitchen lamp louder")
    assert (reply.handled, reply.calls) == (False, ())
    await asyncio.sleep(0.5)  # anything sent would have been reported by now
    after = {s: await device_tool(home, f"{s}_state") for s in (lounge, kitchen, lamp)}
    for s in after:
        for field in ("muted", "volume_percent", "on", "brightness_percent"):
            assert after[s].get(field) == before[s].get(field), (s, field)
