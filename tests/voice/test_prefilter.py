"""The template pre-filter leaves out only templates that cannot match.

Every sentence of every sentence set (and a few more) is matched by hassil twice, with
all of Home Assistant's and our templates and with only those the pre-filter keeps,
in a home of the sentence set's names, rooms and floors: the results must be the same,
in the same order, and the pre-filter must really leave templates out.
"""

from __future__ import annotations

from typing import Any

import pytest
from hassil import Intents, recognize_all
from hassil.errors import MissingListError
from hassil.expression import TextChunk
from hassil.intents import SlotList, TextSlotList, TextSlotValue

from bridge.voice.intents import SUPPORTED_INTENTS
from bridge.voice.prefilter import TemplateIndex
from bridge.voice.templates import load_templates
from tests.voice.sentence_set import (
    FLOORS,
    HOME,
    MULTI_LANGUAGE_SETS,
    ROOM_ALIASES,
    load_sentences,
)

# The kind of each device of the sentence home, as its names' context says it.
DOMAINS = {
    "node-1-onoff": "light",
    "node-2-dimmable": "light",
    "node-3-color": "light",
    "node-4-thermostat": "climate",
    "mock_dimmable_light": "light",
    "color_temperature_light": "light",
    "mock_onoff_light": "light",
    "mock_thermostat": "climate",
    "mock_door_lock": "lock",
    "mock_window_covering_full": "cover",
    "mock_fan": "fan",
    "eve_contact_sensor": "binary_sensor",
    "eve_weather_sensor": "sensor",
    "eve_weather_sensor#2": "sensor",
}
LEVEL_WORDS = ["upstairs", "downstairs", "oben", "unten", "en haut", "arriba", "boven"]
EXTRA = [
    "play music in the kitchen",
    "start the vacuum",
    "set a timer for 5 minutes",
    "what is the weather like",
    "turn on the tv in the living room",
    "set the kitchen light to fifty percent",
    "stelle die Deckenlampe auf warmweiß",
    "schalte die Küchenlampe-ein",
]


def _slot_lists() -> dict[str, SlotList]:
    names = [
        TextSlotValue(TextChunk(label), label.casefold(), {"domain": DOMAINS[stem]})
        for stem, (name, _, aliases) in HOME.items()
        for label in dict.fromkeys([name, *aliases])
    ]
    rooms = {room for _, room, _ in HOME.values()}
    areas = [
        TextSlotValue(TextChunk(label), room)
        for room in sorted(rooms)
        for label in [room, *ROOM_ALIASES.get(room, [])]
    ]
    floors = [
        TextSlotValue(TextChunk(label), floor.name)
        for floor in FLOORS
        for label in [floor.name, *floor.aliases]
    ] + [TextSlotValue(TextChunk(word), "level") for word in LEVEL_WORDS]
    return {
        "name": TextSlotList(name="name", values=names),
        "area": TextSlotList(name="area", values=areas),
        "floor": TextSlotList(name="floor", values=floors),
    }


def _results(text: str, intents: Intents, lists: dict[str, SlotList], lang: str) -> list[Any]:
    while True:
        try:
            found = list(recognize_all(text, intents, slot_lists=lists, language=lang))
            break
        except MissingListError as err:  # as the engine does: a list it has no values for
            name = str(err).rsplit("{", 1)[-1].rstrip("}")
            lists[name] = TextSlotList(name=name, values=[])
    return [
        (
            r.intent.name,
            sorted((k, repr(v.value), v.text, v.text_span) for k, v in r.entities.items()),
            repr(r.intent_data.metadata if r.intent_data else None),
            r.text_chunks_matched,
        )
        for r in found
    ]


def _sentences(lang: str) -> list[str]:
    said = {
        s.text
        for which in ("dev", *MULTI_LANGUAGE_SETS)
        for s in load_sentences(which)
        if s.language == lang
    }
    return sorted(said | (set(EXTRA) if lang in ("en", "de") else set()))


@pytest.mark.parametrize("lang", ["en", "de", "fr", "es", "nl"])
def test_the_kept_templates_match_exactly_what_all_templates_match(lang: str) -> None:
    doc = load_templates(lang)
    assert doc is not None
    served = {k: v for k, v in doc["intents"].items() if k in SUPPORTED_INTENTS}
    others = {k: v for k, v in doc["intents"].items() if k not in SUPPORTED_INTENTS}
    total = kept = matched = 0
    for part in (served, others):
        full = Intents.from_dict({**doc, "intents": part})
        index = TemplateIndex(Intents.from_dict({**doc, "intents": part}))
        for text in _sentences(lang):
            lists = _slot_lists()
            narrowed = index.narrowed(text, lists)
            expected = _results(text, full, dict(lists), lang)
            assert _results(text, narrowed, dict(lists), lang) == expected, text
            matched += bool(expected)
            total += sum(len(d.sentences) for i in full.intents.values() for d in i.data)
            kept += sum(len(d.sentences) for i in narrowed.intents.values() for d in i.data)
    assert matched > 20  # the sentences do match something
    assert kept < total / 2  # and most templates are left out before hassil looks


def test_a_light_keeps_no_cover_or_colour_template() -> None:
    doc = load_templates("en")
    assert doc is not None
    served = {k: v for k, v in doc["intents"].items() if k in SUPPORTED_INTENTS}
    index = TemplateIndex(Intents.from_dict({**doc, "intents": served}))
    narrowed = index.narrowed("turn on the kitchen light", _slot_lists())
    kept = [s.text for i in narrowed.intents.values() for d in i.data for s in d.sentences]
    assert [t for t in kept if "{name}" in t]
    assert not [t for t in kept if "{color}" in t]  # no colour said
    assert not [t for t in kept if "{cover_classes" in t]  # no blind, curtain ... said
    assert not [t for t in kept if "{floor}" in t]  # no floor said
    # the same sentence with a colour keeps the colour templates
    coloured = index.narrowed("turn the kitchen light red", _slot_lists())
    assert [
        s.text
        for i in coloured.intents.values()
        for d in i.data
        for s in d.sentences
        if "{color}" in s.text
    ]
