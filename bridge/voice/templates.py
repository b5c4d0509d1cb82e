"""The sentence templates spoken commands are matched with: Home Assistant's, plus ours.

``load_templates(language)`` returns Home Assistant's ``home-assistant-intents`` document
for the language with every intent whose sentences are closed phrases (wildcard intents
such as "add {item} to my list" or "play {anything}" are left out: they would swallow
sentences and the bridge does none of them). Sentences about media, vacuums, timers and
the like are still recognised, so the answer says the bridge cannot do *that* instead of
guessing something else.

Details: docs/modules.md, ``bridge.voice.templates``.
"""

from __future__ import annotations

import copy
from typing import Any

from home_assistant_intents import get_intents

# Intents whose sentences end in a free-text wildcard; nothing the bridge can serve.
WILDCARD_INTENTS = frozenset(
    {"HassBroadcast", "HassListAddItem", "HassListCompleteItem", "HassListRemoveItem",
     "HassShoppingListAddItem", "HassShoppingListCompleteItem", "HassMediaSearchAndPlay",
     "HassStartTimer", "HassCancelTimer", "HassIncreaseTimer", "HassDecreaseTimer",
     "HassPauseTimer", "HassUnpauseTimer", "HassTimerStatus", "HassCancelAllTimers"}
)  # fmt: skip
# Our own intent for stopping a moving cover (Home Assistant's templates have none here).
STOP_INTENT = "AtmosphereStopCover"

_PCT = "{brightness}[([ ]%)| percent]"
_ALL_LIGHTS = {"metadata": {"slot_combination": "domain_all"}, "slots": {"domain": "light"}}
_HUMIDITY = {"slots": {"domain": "sensor", "device_class": "humidity"}}
_COVER = {"slots": {"domain": "cover"}}
_LOCK = {"slots": {"domain": "lock"}}
# "turn everything off": every light and switch (never a lock, cover or thermostat)
_EVERYTHING = {"metadata": {"slot_combination": "everything"}, "slots": {"domain": "light"}}

# intent -> list of (sentences, extra data keys) per language.
EXTRA: dict[str, dict[str, list[tuple[list[str], dict[str, Any]]]]] = {
    "en": {
        "HassTurnOn": [(["<turn> on <all> <light> [<everywhere>]",
                         "<turn> <all> <light> on [<everywhere>]",
                         "<turn> on [<the>] <light> <everywhere>"], _ALL_LIGHTS),
                       (["lock [the] {area} lock[s]"], _LOCK)],
        "HassLightSet": [
            ([f"dim [the] {{name}} to {_PCT}"], {}),
            ([f"dim [the] {{area}} [<light>] to {_PCT}",
              f"dim [the] <light> in [the] {{area}} to {_PCT}",
              f"set [the] {{area}} <light> to {_PCT}",
              "set [the] {area} <light> to {color}"], {"slots": {"domain": "light"}}),
        ],
        "HassClimateSetTemperature": [
            (["set [the] heating in [the] {area} to {temperature} [degrees]"], {}),
        ],
        "HassClimateGetTemperature": [(["what is [the] {name} set to"], {})],
        # room + kind: "lock the entry lock" (the lock(s) of a room said aloud)
        "HassTurnOff": [(["unlock [the] {area} lock[s]"], _LOCK),
                        (["(turn|switch) (off everything|everything off)"], _EVERYTHING)],
        "HassGetState": [
            (["(<what_is>|how high is) [the] [current] humidity <in> [<the>] {area}",
              "how humid is it <in> [<the>] {area}",
              "(<what_is>|how high is) [the] [current] humidity (of|on|from) [<the>] {name}"],
             _HUMIDITY),
            (["(<what_is>|how high is) [the] [current] humidity [<here>]",
              "how humid is it [<here>]"],
             {**_HUMIDITY, "requires_context": {"area": {"slot": True}}}),
        ],
        STOP_INTENT: [
            (["(stop|halt) [<the>] {name}"], {}),
            (["(stop|halt) [<the>] {cover_classes:device_class} <in> [<the>] {area}",
              "(stop|halt) [<the>] {area} {cover_classes:device_class}"], _COVER),
            (["(stop|halt) [<the>] {cover_classes:device_class} [<here>]"],
             {**_COVER, "requires_context": {"area": {"slot": True}}}),
        ],
    },
    "de": {
        "HassTurnOn": [(["(<schalten>|<machen>) <alle_lichter_ueberall> (an|ein)",
                         "<alle_lichter_ueberall> (an|ein)[schalten]"], _ALL_LIGHTS)],
        "HassTurnOff": [(["(schalte|mach) alles aus"], _EVERYTHING)],
        "HassLightSet": [
            (["(stelle|setze) [das|den|die] {name} auf {brightness}[([ ]%)| Prozent]",
              "mach [das|den|die] {name} {color}"], {}),
            (["(stelle|setze) das Licht (im|in der) {area} auf {brightness}[([ ]%)| Prozent]",
              "dimme [das Licht ]<area> auf {brightness}[([ ]%)| Prozent]"],
             {"slots": {"domain": "light"}}),
        ],
        "HassClimateSetTemperature": [
            (["(stelle|setze) [das|den|die] {name} auf {temperature} [Grad]"], {}),
        ],
        "HassGetState": [
            (["wie (hoch|feucht) ist (die [Luft]feuchtigkeit|es) <area>",
              "wie (hoch|viel) ist die [Luft]feuchtigkeit (von|vom|des|der) {name}"], _HUMIDITY),
            (["wie (hoch|feucht) ist (die [Luft]feuchtigkeit|es)[ <hier>]"],
             {**_HUMIDITY, "requires_context": {"area": {"slot": True}}}),
        ],
        STOP_INTENT: [
            (["(stoppe|stopp|halte) [<artikel_bestimmt> ]{name}[ an]"], {}),
            (["(stoppe|stopp|halte) [<artikel_bestimmt> ]{cover_classes:device_class} <area>[ an]"],
             _COVER),
        ],
    },
    "fr": {
        "HassTurnOn": [(["<allume> <tous> [<le>]<lumiere> [<partout>]"], _ALL_LIGHTS)],
        "HassTurnOff": [(["<eteins> <tous> [<le>]<lumiere>"], _ALL_LIGHTS),
                        (["éteins tout"], _EVERYTHING)],
    },
    "es": {
        "HassTurnOn": [(["<enciende> <todos> <luces> [<todas_partes>]"], _ALL_LIGHTS)],
        "HassTurnOff": [(["apaga todo"], _EVERYTHING)],
    },
    "nl": {
        "HassTurnOn": [(["[<change>] <all> <light> aan", "<all> <light> aan[ ](zetten|doen)"],
                        _ALL_LIGHTS)],
        "HassTurnOff": [(["[<change>] <all> <light> uit", "<all> <light> uit[ ](zetten|doen)"],
                         _ALL_LIGHTS),
                        (["(zet|doe) alles uit"], _EVERYTHING)],
    },
}


def _colour_temperature_twins(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return a colour-temperature twin of every colour sentence group (see module doc)."""
    twins = []
    for entry in data:
        sentences = [s for s in entry.get("sentences", []) if "{color}" in s]
        if not sentences:
            continue
        twin = copy.deepcopy(entry)
        twin["sentences"] = [
            s.replace("{color}", "{color_temperature_names:temperature}") for s in sentences
        ]
        combo = str((twin.get("metadata") or {}).get("slot_combination", ""))
        twin.setdefault("metadata", {})["slot_combination"] = combo.replace("color", "temperature")
        twins.append(twin)
    return twins


def load_templates(language: str) -> dict[str, Any] | None:
    """Return the intents document for ``language`` (``None`` when there is none)."""
    doc = get_intents(language)
    if doc is None:
        return None
    intents = {k: v for k, v in doc["intents"].items() if k not in WILDCARD_INTENTS}
    for intent, groups in EXTRA.get(language, {}).items():
        target = intents.setdefault(intent, {"data": []})
        for sentences, extra in groups:
            target["data"].append({"sentences": list(sentences), **copy.deepcopy(extra)})
    light_set = intents.get("HassLightSet")
    if light_set is not None:
        light_set["data"].extend(_colour_temperature_twins(light_set["data"]))
    doc["intents"] = intents
    return doc
