"""Covers by kind, room + name and plural names, end to end on matter.js devices.

Real devices of devices/kinds/closures.mjs (two draperies, a roller shade, an awning, a
Matter 1.5 garage door, a door lock), commissioned by a python-matter-server of this
module's own, a bridge on it; spoken sentences of tests/voice/sentences/covers*.yaml
must make exactly their calls, and a curtain sentence must move the drapery itself
(its WindowCovering target position, read back from the device's own report).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fabric import Fabric
from tests.support.home import Home
from tests.voice.fabric_home import Numbering, commissioned_home, named_home
from tests.voice.sentence_set import evaluate, load_sentences

pytestmark = pytest.mark.fabric

# (devices/kinds name, device name, room), commissioned in this order.
HOME: list[tuple[str, str, str]] = [
    ("drapery", "Smart Curtain", "Living Room"),
    ("drapery", "Smart Curtain", "Bedroom"),
    ("roller-shade", "Window Shade", "Living Room"),
    ("awning", "Patio Awning", "Patio"),
    ("garage-door", "Garage Door", "Garage"),
    ("door-lock", "Front Lock", "Entry"),
]
ROOM_ALIASES = {
    "Living Room": ["Wohnzimmer", "salon", "sala de estar", "woonkamer"],
    "Bedroom": ["Schlafzimmer", "chambre", "dormitorio", "slaapkamer"],
    "Patio": ["Terrasse", "terrasse", "terraza", "terras"],
}
# Sentences not understood yet, pinned by set, language and text (see test_sentences.py).
KNOWN_MISSES: dict[str, set[tuple[str, str]]] = {
    "covers": set(),
    "covers_heldout": set(),
    "covers7_heldout": set(),
    "covers15": set(),
    "covers16": set(),
    "covers17": set(),
    # "salón" is no alias of the living room here (its Spanish one is "sala de estar"):
    # pinned in the seventeenth session, heard since the eighteenth (a lone living room
    # is heard by its kind's words in every language, bridge.voice.room_words)
    "covers17_heldout": set(),
    # the eighteenth session's (an awning let down, rolled out or in in every language, a
    # cover put down with its room after it, "every blind in the house", the garage said
    # for its door; held-out set written after the engine change, before its first run:
    # 13/14, 0 wrong)
    "covers18": set(),
    "covers18_heldout": set(),
}


@pytest.fixture(scope="module")
def commissioned(fabric: Fabric) -> Iterator[tuple[str, str, list[int]]]:
    """The module's controller URL and the node id of each HOME entry, in order."""
    numbers = Numbering(name="voice-covers", port=6170, passcode=20203201, discriminator=0xE90)
    with commissioned_home(fabric, [kind for kind, _, _ in HOME], numbers) as home:
        yield home


@pytest.fixture
async def home(commissioned: tuple[str, str, list[int]], tmp_path: Path) -> AsyncIterator[Home]:
    async with named_home(commissioned, HOME, tmp_path / "state") as running:
        for room, aliases in ROOM_ALIASES.items():
            status, answer = await running.request(
                "PATCH", f"/v1/rooms/{room}", running.token("device:manage:*"), {"aliases": aliases}
            )
            assert status == 200, answer
        yield running


def _token(home: Home) -> Any:
    assert home.service.invocation is not None
    return home.service.invocation.verifier.verify(home.token("device:control:*", "device:read:*"))


@pytest.mark.parametrize("which", list(KNOWN_MISSES))  # every covers set, each pinned
async def test_every_cover_sentence_makes_exactly_its_calls(home: Home, which: str) -> None:
    outcomes = await evaluate(home, load_sentences(which), _token(home))
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


async def test_a_curtain_sentence_moves_the_drapery_and_says_so(home: Home) -> None:
    engine = home.service.intents
    assert engine is not None
    reply = await engine.handle("set the living room curtains to 30%", "en", token=_token(home))
    assert (reply.handled, reply.speech) == (True, "Set Smart Curtain to 30 percent open.")
    status, state = await home.invoke(
        "matter:blind_smart_curtain_state", {}, home.token("device:read:*")
    )
    assert status == 200, state
    # 30 % open = 70 % closed: WindowCovering target lift 7000 in 100ths (spec 5.3.5.12)
    assert state["result"]["percent_open"] == 30, state
    reply = await engine.handle("open the curtains in the patio", "en", token=_token(home))
    assert (reply.handled, reply.calls) == (False, ())
    assert reply.speech == "Sorry, there is no curtain in Patio that I can control."


async def test_a_garage_doors_state_is_read_from_its_closure(home: Home) -> None:
    """ "Is the garage open": the Matter 1.5 closure's own position, in any language.

    Before, a closure's state read as unknown ("I can't tell the state of Garage Door"),
    and the Dutch question, asked by kind word, named nothing ("de toestand van  ").
    """
    engine = home.service.intents
    assert engine is not None
    status, state = await home.invoke(
        "matter:closure_garage_door_state", {}, home.token("device:read:*")
    )
    assert status == 200, state
    closure = state["result"]["closure"]  # "closed" unless a test opened it
    said = "closed" if closure == "closed" else "open"
    for text, lang, speech in (
        ("is the garage door open", "en", f"Garage Door is {said}."),
        ("is the garage open", "en", f"Garage Door is {said}."),
        (
            "staat de garagedeur open",
            "nl",
            f"Garage Door is {'dicht' if said == 'closed' else 'open'}.",
        ),
    ):
        reply = await engine.handle(text, lang, token=_token(home))
        assert (reply.handled, reply.speech) == (True, speech), text


async def test_a_cover_opened_a_bit_moves_from_where_it_is(home: Home) -> None:
    """ "Open the window shade a bit": its own position read back, moved by a step.

    Before, "open ... a bit" and "close ... a little" were not understood at all. The
    step is 20 points of opening, or the percentage said; never past fully open or shut.
    """
    engine = home.service.intents
    assert engine is not None
    reader = home.token("device:read:*")

    async def said(text: str, lang: str = "en") -> tuple[Any, int]:
        reply = await engine.handle(text, lang, token=_token(home))
        assert reply.handled, (text, reply.speech)
        status, state = await home.invoke("matter:blind_window_shade_state", {}, reader)
        assert status == 200, state
        return reply, state["result"]["percent_open"]

    reply, now = await said("set the window shade to 40%")
    assert now == 40
    for text, lang, expected in (
        ("open the window shade a bit", "en", 60),
        ("raise the window shade a little more", "en", 80),
        ("open the window shade by 30 percent", "en", 100),  # never past fully open
        ("close the window shade a touch", "en", 80),
        ("baja la window shade un poco", "es", 60),
    ):
        reply, now = await said(text, lang)
        assert [(c["tool"], c["params"]) for c in reply.calls] == [
            ("matter:blind_window_shade_set_position", {"percent_open": expected})
        ], text
        assert now == expected, text
    assert reply.speech == "He abierto Window Shade al 60 por ciento."
