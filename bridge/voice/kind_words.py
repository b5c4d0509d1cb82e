"""The spoken words of issue 29's kinds: fans, robot vacuums, appliances, energy, sensors.

One place for what the newer device kinds are called and asked (in the style of
``templates.EXTRA``): sentence templates added to Home Assistant's own (whose
``HassFanSetSpeed``, ``HassVacuumStart``, ``HassVacuumReturnToBase`` and
``HassVacuumCleanArea`` the bridge serves as they are), our two intents for what Home
Assistant's templates lack — running an appliance (``OPERATE_INTENT``: start, pause,
resume, stop a dishwasher, a washer or a robot; its cycle or clean mode by the device's
own name; an EV charger's charging, a water heater's boost, a microwave's cooking time)
and asking a measured value
(``MEASURE_INTENT``: power, energy, CO2, PM2.5, air quality, light level, leaks, minutes
left) — and the answers in five languages. The planner decides what they do.
"""

from __future__ import annotations

from typing import Any

# Our intents. Slots: ``action`` (start/pause/resume/stop; mode and mode_start with the
# free-text ``mode`` a device names its own modes by; boost and cook with ``minutes``;
# cancel_boost) for OPERATE_INTENT and
# ``measure`` (a key of MEASURES) for MEASURE_INTENT; targets {name}, {area} or a kind
# word (slots ``domain`` and ``device_class``).
OPERATE_INTENT = "AtmosphereOperate"
MEASURE_INTENT = "AtmosphereMeasure"
# templates.RELATIVE_INTENT (that module imports this one, so the name is spelt here):
# "make the fan faster" is a relative change of a fan's speed.
_RELATIVE = "AtmosphereRelative"
# Home Assistant's intents for the new kinds that the bridge serves.
HA_KIND_INTENTS = frozenset(
    {"HassFanSetSpeed", "HassVacuumStart", "HassVacuumReturnToBase", "HassVacuumCleanArea"}
)
KIND_INTENTS = HA_KIND_INTENTS | {OPERATE_INTENT, MEASURE_INTENT}

# measure -> the state fields that answer it (the cluster maps' state rows), the value
# first: "how long until the dishwasher is done" is answered from its status alone when
# it has no countdown.
MEASURES: dict[str, tuple[str, ...]] = {
    "power": ("power_w",),
    "energy": ("energy_kwh",),
    "carbon_dioxide": ("co2",),
    "pm25": ("pm25",),
    "aqi": ("air_quality",),
    "illuminance": ("illuminance_lux",),
    "leak": ("leak",),
    "minutes_left": ("minutes_left", "status"),
    "charging": ("charger_state",),  # an EV charger's state: charging, plugged in, ...
    "status": ("status",),  # an appliance's or robot's OperationalState: running, docked...
}
# Measures answered for the room they were asked about ("The CO2 level in Office …");
# the others name the device that measured ("Leak Sensor detects no leak.").
ROOM_MEASURES = frozenset({"carbon_dioxide", "pm25", "aqi", "illuminance"})
# Appliance kinds (our device kind -> the class a sentence names them by).
APPLIANCE_CLASSES: dict[str, str] = {
    "washer": "washer",
    "dryer": "dryer",
    "dishwasher": "dishwasher",
    "oven": "oven",
    "microwave": "microwave",
}


# What OPERATE_INTENT acts on (Home Assistant domains, subjects.KIND_DOMAINS).
OPERATED = ("vacuum", "appliance", "ev_charger", "water_heater", "chime")
_RUN = ("vacuum", "appliance")
_RUN_OR_CHARGE = (*_RUN, "ev_charger")
# Words around a mode's own name that are not part of it ("in eco mode", "im Programm
# Eco", "en mode eco"): dropped from the free text before it is matched to the device's.
MODE_FILLERS = frozenset(
    {
        "the", "mode", "cycle", "programme", "program", "setting",
        "der", "die", "das", "dem", "den", "modus", "programm",
        "le", "la", "l'", "el", "modo", "programa", "ciclo",
        "de", "het", "stand", "programma",
    }
)  # fmt: skip
# Free text: a device's own mode names are known only when it is asked.
# A fan's modes by their everyday words (FanControl FanMode; the set-mode tool's enum),
# one closed list for all languages, so "set the fan to 50 percent" never reads as one.
FAN_MODE_WORDS: dict[str, tuple[str, ...]] = {
    "low": ("low", "slow", "niedrig", "langsam", "basse", "faible", "lente", "baja",
            "lenta", "bajo", "laag", "langzaam", "lage stand"),
    "medium": ("medium", "mid", "mittel", "mittlere", "moyenne", "moyen", "media",
               "medio", "middel", "gemiddeld", "midden"),
    "high": ("high", "fast", "hoch", "schnell", "haute", "forte", "rapide", "alta",
             "alto", "rápida", "hoog", "snel", "hoge stand"),
    "auto": ("auto", "automatic", "automatisch", "automatik", "automatique",
             "automático", "automática"),
}  # fmt: skip
KIND_LISTS: dict[str, dict[str, Any]] = {
    "mode": {"wildcard": True},
    "fan_modes": {
        "values": [{"in": w, "out": mode} for mode, ws in FAN_MODE_WORDS.items() for w in ws]
    },
}
_MINUTES = "{timer_minutes:minutes}"


def _op(action: str, domains: tuple[str, ...] = _RUN) -> dict[str, Any]:
    """Return an OPERATE group's data keys: the action, for names of these domains."""
    return {"slots": {"action": action}, "requires_context": {"domain": list(domains)}}


def _kind(action: str, domain: str, device_class: str | None = None) -> dict[str, Any]:
    """Return an OPERATE group's data keys for a kind word ("start the dishwasher")."""
    slots: dict[str, Any] = {"action": action, "domain": domain}
    if device_class is not None:
        slots["device_class"] = device_class
    return {"slots": slots}


def _act(action: str) -> dict[str, Any]:
    """Return an OPERATE group's data keys for a device named of any kind (checked later)."""
    return {"slots": {"action": action}}


def _m(measure: str) -> dict[str, Any]:
    return {"slots": {"measure": measure}}


_CHIME = ("chime",)
_VACUUM = {"slots": {"domain": "vacuum"}}
_FAN_NAME = {"requires_context": {"domain": ["fan"]}}
_VACUUM_NAME = {"requires_context": {"domain": ["vacuum"]}}
_FASTER = {"slots": {"direction": "up", "what": "fan_speed", "domain": "fan"}}
_SLOWER = {"slots": {"direction": "down", "what": "fan_speed", "domain": "fan"}}
# The same, said with no room: the fan of the room the speaker is in (the sentences
# with a room need it said; without the speaker's room the engine asks which room).
_SPEAKERS_ROOM = {"requires_context": {"area": {"slot": True}}}
_FASTER_HERE = {**_FASTER, **_SPEAKERS_ROOM}
_SLOWER_HERE = {**_SLOWER, **_SPEAKERS_ROOM}
_FAN = {"slots": {"domain": "fan"}}
_FAN_HERE = {**_FAN, **_SPEAKERS_ROOM}


def _fan_modes(
    verb: str, name: str, fan: str, where: str, mode: str
) -> list[tuple[list[str], dict[str, Any]]]:
    """Return the three ways a fan's mode is said.

    By its name, "the fan" in a room said, "the fan" in the speaker's room (``mode``
    holds ``{fan_modes:fan_mode}``).
    """
    return [
        ([f"{verb} {name} {mode}"], _FAN_NAME),
        ([f"{verb} {fan} {where} {mode}"], _FAN),
        ([f"{verb} {fan} {mode}"], _FAN_HERE),
    ]


def _fan_steps(
    verb: str, name: str, fan: str, where: str, step: str
) -> list[tuple[list[str], dict[str, Any]]]:
    """Return the three ways a fan's speed step is said ("auf Stufe 2"; never a percent).

    As ``_fan_modes``; ``step`` holds ``{fan_speed:percentage}``.
    """
    steps = {"slots": {"speed_step": True}}
    return [
        ([f"{verb} {name} {step}"], {**steps, **_FAN_NAME}),
        ([f"{verb} {fan} {where} {step}"], {"slots": {"domain": "fan", "speed_step": True}}),
        (
            [f"{verb} {fan} {step}"],
            {"slots": {"domain": "fan", "speed_step": True}, **_SPEAKERS_ROOM},
        ),
    ]


_EN_VACUUM = "(vacuum|vacuum cleaner|robot vacuum|robot|hoover)"
_EN_IN = "(in|of|at) [the] {area}"
_DE_ART = "[(der|die|das|den|dem)]"
_DE_IN = "(im|in der|in dem|in|am) {area}"
_FR_ART = "[(le |la |l'|les )]"
_FR_IN = "(dans|du|de|au) [(le |la |l')]{area}"
_ES_ART = "[(el|la|los|las)]"
_ES_IN = "(en|de|del) [(el|la)] {area}"
_NL_ART = "[(de|het)]"
_NL_IN = "(in|op) [(de|het)] {area}"

KIND_TEMPLATES: dict[str, dict[str, list[tuple[list[str], dict[str, Any]]]]] = {
    "en": {
        OPERATE_INTENT: [
            # a chime plays its selected sound ("ring the front door chime")
            (["(play|ring|sound) [the] {name}"], _op("play", _CHIME)),
            (
                ["(play|ring|sound) [the] (chime|door chime|doorbell chime|doorbell|gong)"],
                _kind("play", "chime"),
            ),
            (["(start|run) [the] {name}"], _op("start", _RUN_OR_CHARGE)),
            (["pause [the] {name}"], _op("pause")),
            (["(resume|continue|unpause) [the] {name}"], _op("resume")),
            (["stop [the] {name}"], _op("stop", _RUN_OR_CHARGE)),
            (
                ["pause [the] " + _EN_VACUUM, "pause (vacuuming|hoovering)"],
                _kind("pause", "vacuum"),
            ),
            (["stop [the] " + _EN_VACUUM, "stop (vacuuming|hoovering)"], _kind("stop", "vacuum")),
            (
                [
                    "(resume|continue|unpause) [the] " + _EN_VACUUM,
                    "(resume|continue) (vacuuming|hoovering)",
                ],
                _kind("resume", "vacuum"),
            ),
            (
                ["(start|run) [the] dishwasher", "put [the] dishwasher on"],
                _kind("start", "appliance", "dishwasher"),
            ),
            (
                [
                    "(start|run) [the] (washing machine|washer|laundry)",
                    "put [the] (washing machine|washer|laundry|a wash) on",
                ],
                _kind("start", "appliance", "washer"),
            ),
            (
                ["(start|run) [the] (dryer|tumble dryer)", "put [the] (dryer|tumble dryer) on"],
                _kind("start", "appliance", "dryer"),
            ),
            # pause / resume / stop by kind word ("pause the washing machine")
            *(
                ([f"{verbs} [the] {words}"], _kind(action, "appliance", cls))
                for action, verbs in (
                    ("pause", "pause"),
                    ("resume", "(resume|continue|unpause)"),
                    ("stop", "stop"),
                )
                for words, cls in (
                    ("(washing machine|washer)", "washer"),
                    ("dishwasher", "dishwasher"),
                    ("(dryer|tumble dryer)", "dryer"),
                )
            ),
            # cycles and clean modes by the device's own names ("in eco mode", "on wool")
            (["(start|run) [the] {name} (on|in|with) {mode}"], _op("mode_start")),
            (
                ["(set|switch) [the] {name} to {mode}", "put [the] {name} (on|to) {mode}"],
                _op("mode"),
            ),
            (
                ["(start|run) [the] dishwasher (on|in|with) {mode}"],
                _kind("mode_start", "appliance", "dishwasher"),
            ),
            (["(set|switch) [the] dishwasher to {mode}"], _kind("mode", "appliance", "dishwasher")),
            (
                ["(start|run) [the] (washing machine|washer|laundry) (on|in|with) {mode}"],
                _kind("mode_start", "appliance", "washer"),
            ),
            (
                ["(set|switch) [the] (washing machine|washer) to {mode}"],
                _kind("mode", "appliance", "washer"),
            ),
            (
                ["(start|run) [the] (dryer|tumble dryer) (on|in|with) {mode}"],
                _kind("mode_start", "appliance", "dryer"),
            ),
            (["(set|switch) [the] oven to {mode}"], _kind("mode", "appliance", "oven")),
            (["(set|switch) [the] microwave to {mode}"], _kind("mode", "appliance", "microwave")),
            (
                ["vacuum (in|on) {mode}", f"(start|run) [the] {_EN_VACUUM} (in|on) {{mode}}"],
                _kind("mode_start", "vacuum"),
            ),
            ([f"(set|switch) [the] {_EN_VACUUM} to {{mode}}"], _kind("mode", "vacuum")),
            # an EV charger, a water heater's boost, a microwave's cooking time
            (
                [
                    "(start|begin) charging [[the] (car|ev|electric car)]",
                    "charge [the] (car|ev|electric car)",
                    "(start|turn on) [the] (charger|car charger|ev charger|wallbox)",
                ],
                _kind("start", "ev_charger"),
            ),
            (
                [
                    "stop charging [[the] (car|ev|electric car)]",
                    "(stop|turn off) [the] (charger|car charger|ev charger|wallbox)",
                ],
                _kind("stop", "ev_charger"),
            ),
            (
                [f"boost [the] (hot water|water heater|boiler) for {_MINUTES} minute[s]"],
                _kind("boost", "water_heater"),
            ),
            ([f"boost [the] {{name}} for {_MINUTES} minute[s]"], _act("boost")),
            (
                ["(cancel|stop) [the] [(hot water|water heater|boiler)] boost"],
                _kind("cancel_boost", "water_heater"),
            ),
            (["(cancel|stop) [the] boost (of|on) [the] {name}"], _act("cancel_boost")),
            (
                [f"(start|run) [the] microwave for {_MINUTES} minute[s]"],
                _kind("cook", "appliance", "microwave"),
            ),
            ([f"(start|run) [the] {{name}} for {_MINUTES} minute[s]"], _op("cook", ("appliance",))),
        ],
        "HassVacuumStart": [
            (
                [
                    "(start|run) [the] " + _EN_VACUUM,
                    "(start|begin) (vacuuming|hoovering|cleaning)",
                    "(vacuum|hoover) the (house|home|whole house|flat|apartment|floors)",
                ],
                _VACUUM,
            )
        ],
        "HassFanSetSpeed": [
            (
                ["(set|put|turn|switch) [the] {name} (to|on) {fan_modes:fan_mode} [(speed|mode)]"],
                _FAN_NAME,
            ),
            (
                [
                    "(set|put|turn|switch) [the] {name} (to|on|at) (full|max|maximum|top) "
                    "[(speed|power)]",
                    "(set|put|turn|switch) [the] {name} (to|on|at) [the] (highest|fastest|top) "
                    "speed",
                ],
                {"slots": {"percentage": 100}, **_FAN_NAME},
            ),
            (
                [
                    "(set|put|turn|switch) [the] fan[s] (to|on) {fan_modes:fan_mode} [(speed|mode)] "  # noqa: E501
                    + _EN_IN,
                    "(set|put|turn|switch) [the] {area} fan[s] (to|on) {fan_modes:fan_mode} "
                    "[(speed|mode)]",
                    "(set|put|turn|switch) [the] fan[s] "
                    + _EN_IN
                    + " (to|on) {fan_modes:fan_mode} "
                    "[(speed|mode)]",
                ],
                {"slots": {"domain": "fan"}},
            ),
            (
                ["(set|put|turn|switch) [the] fan[s] (to|on) {fan_modes:fan_mode} [(speed|mode)]"],
                _FAN_HERE,
            ),
            (
                [
                    "set [the] (fan|fans) speed [in here] to {fan_speed:percentage}[%| percent]",
                    # "turn the fan (up) to 60 percent": a percent said is the fan's speed
                    "(set|turn|put) [the] (fan|fans) [up|down] [in here] to "
                    "{fan_speed:percentage}(%| percent)",
                ],
                {"slots": {"domain": "fan"}, "requires_context": {"area": {"slot": True}}},
            ),
            (
                [
                    "set [the] {area} (fan|fans) speed to {fan_speed:percentage}[%| percent]",
                    "set [the] (fan|fans) speed " + _EN_IN + " to {fan_speed:percentage}"
                    "[%| percent]",
                    "(set|turn|put) [the] {area} (fan|fans) [up|down] to "
                    "{fan_speed:percentage}(%| percent)",
                    "(set|turn|put) [the] (fan|fans) [up|down] " + _EN_IN + " to "
                    "{fan_speed:percentage}(%| percent)",
                ],
                {"slots": {"domain": "fan"}},
            ),
            # "set the fan to speed 2": a speed step (never a percent)
            (
                ["(set|put|turn|switch) [the] {name} (to|on|at) speed {fan_speed:percentage}"],
                {"slots": {"speed_step": True}, **_FAN_NAME},
            ),
            (
                [
                    "(set|put|turn|switch) [the] (fan|fans) (to|on|at) speed "
                    "{fan_speed:percentage} " + _EN_IN,
                    "(set|put|turn|switch) [the] {area} (fan|fans) (to|on|at) speed "
                    "{fan_speed:percentage}",
                ],
                {"slots": {"domain": "fan", "speed_step": True}},
            ),
            (
                [
                    "(set|put|turn|switch) [the] (fan|fans) [in here] (to|on|at) speed "
                    "{fan_speed:percentage}"
                ],
                {"slots": {"domain": "fan", "speed_step": True}, **_SPEAKERS_ROOM},
            ),
        ],
        "HassVacuumReturnToBase": [
            (
                [
                    "(dock|park) [the] {name}",
                    "send [the] {name} (home|back [to (its|the) (dock|base|charger)])",
                    "(call|bring|take|get) [the] {name} (home|back [(home|to (its|the) (dock"
                    "|base|charger))])",
                ],
                _VACUUM_NAME,
            ),
            (
                [
                    f"(dock|park) [the] {_EN_VACUUM}",
                    f"send [the] {_EN_VACUUM} (home|back [to (its|the) (dock|base|charger)])",
                    f"(call|bring|take|get) [the] {_EN_VACUUM} (home|back [(home|to (its|the) "
                    "(dock|base|charger))])",
                ],
                _VACUUM,
            ),
        ],
        _RELATIVE: [
            (
                [
                    "(make|turn) [the] {name} faster",
                    "speed up [the] {name}",
                    "speed [the] {name} up",
                ],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [
                    "(make|turn) [the] {name} slower",
                    "slow down [the] {name}",
                    "slow [the] {name} down",
                ],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [
                    f"(make|turn) [the] fan[s] faster {_EN_IN}",
                    "(make|turn) [the] {area} fan[s] faster",
                    f"speed up [the] fan[s] {_EN_IN}",
                    f"speed [the] fan[s] up {_EN_IN}",
                    f"(turn|put) [the] fan[s] up {_EN_IN}",
                ],
                _FASTER,
            ),
            (
                [
                    f"(make|turn) [the] fan[s] slower {_EN_IN}",
                    "(make|turn) [the] {area} fan[s] slower",
                    f"slow down [the] fan[s] {_EN_IN}",
                    f"slow [the] fan[s] down {_EN_IN}",
                    f"(turn|put) [the] fan[s] down {_EN_IN}",
                ],
                _SLOWER,
            ),
            (
                [
                    "(make|turn) [the] fan[s] faster [in here]",
                    "speed up [the] fan[s] [in here]",
                    "speed [the] fan[s] up [in here]",
                    "(turn|put) [the] fan[s] up [in here]",
                ],
                _FASTER_HERE,
            ),
            (
                [
                    "(make|turn) [the] fan[s] slower [in here]",
                    "slow down [the] fan[s] [in here]",
                    "slow [the] fan[s] down [in here]",
                    "(turn|put) [the] fan[s] down [in here]",
                ],
                _SLOWER_HERE,
            ),
        ],
        MEASURE_INTENT: [
            (
                [
                    "how much (power|electricity|energy) (is|does) [the] {name} "
                    "(using|use|drawing|draw|consuming|consume) [(right now|now)]",
                    "(what is|what's) [the] (power|power usage|power consumption|power draw) "
                    "of [the] {name}",
                    "how many watts (is|does) [the] {name} (using|use|drawing|draw)",
                    "how much power is [the] (plug|socket|outlet) " + _EN_IN + " (using|drawing)",
                ],
                _m("power"),
            ),
            (
                [
                    "how much energy (has|did) [the] {name} (used|use|consumed|consume)",
                    "how many kilowatt hours (has|did) [the] {name} (used|use)",
                ],
                _m("energy"),
            ),
            (
                [
                    "(what is|what's) [the] (co2|carbon dioxide) [level] [" + _EN_IN + "]",
                    "how much (co2|carbon dioxide) is there [" + _EN_IN + "]",
                    "(what is|what's) the (co2|carbon dioxide) [level] of [the] {name}",
                ],
                _m("carbon_dioxide"),
            ),
            (
                [
                    "(what is|what's) [the] (pm2.5|pm 2.5|fine dust|particulate matter) [level] "
                    + f"[{_EN_IN}]"
                ],
                _m("pm25"),
            ),
            (
                [
                    "(how|what) is the air quality [" + _EN_IN + "]",
                    "how is the air [" + _EN_IN + "]",
                    "(what is|what's) the air quality [like] [" + _EN_IN + "]",
                    "is the air [quality] (ok|okay|good|fine|bad|clean) [" + _EN_IN + "]",
                ],
                _m("aqi"),
            ),
            (
                [
                    "how (bright|light|dark) is it " + _EN_IN,
                    "(what is|what's) the (illuminance|light level) [" + _EN_IN + "]",
                    "(what is|what's) the brightness " + _EN_IN,
                ],
                _m("illuminance"),
            ),
            (
                [
                    "is there [a] [water] leak [" + _EN_IN + "]",
                    "(is|are) there any [water] leak[s] [(anywhere|" + _EN_IN + ")]",
                    "any [water] leak[s] [(anywhere|" + _EN_IN + ")]",
                    "is (anything|something) leaking [" + _EN_IN + "]",
                    "(is|does) [the] {name} (detecting|detect) [a] [water] leak",
                ],
                _m("leak"),
            ),
            (
                [
                    "how long (until|before) [the] {name} is (done|finished|ready)",
                    "how (long|much time|many minutes) (is|are) left on [the] {name}",
                    "when will [the] {name} be (done|finished|ready)",
                    "is [the] {name} (done|finished|ready) [yet]",
                    "how much longer (on|for) [the] {name}",
                    "how much longer will [the] {name} (take|be|run)",
                    "has [the] {name} finished [yet]",
                ],
                _m("minutes_left"),
            ),
            (["is [the] {name} charging [[the] (car|ev)]"], _m("charging")),
            (
                [
                    "(what is|what's) [the] {name} doing [(now|right now)]",
                    "(what is|what's) the (status|state) of [the] {name}",
                    "is [the] {name} (running|cleaning|working|vacuuming|washing|drying|busy"
                    "|paused|stopped|docked|home|back)",
                    "is [the] {name} (at|on|back at|back on|in) (its|the) (base|dock|charger"
                    "|station)",
                ],
                _m("status"),
            ),
            (
                ["is [the] (car|ev|electric car) (charging|plugged in)"],
                {"slots": {"measure": "charging", "domain": "ev_charger"}},
            ),
            # by its kind word: "how long until the washing machine is done"
            *(
                (
                    [
                        f"how long (until|before) [the] {words} is (done|finished|ready)",
                        f"how (long|much time|many minutes) (is|are) left on [the] {words}",
                        f"when will [the] {words} be (done|finished|ready)",
                        f"is [the] {words} (done|finished|ready) [yet]",
                        f"how much longer (on|for) [the] {words}",
                        f"has [the] {words} finished [yet]",
                    ],
                    {
                        "slots": {
                            "measure": "minutes_left",
                            "domain": "appliance",
                            "device_class": cls,
                        }
                    },
                )
                for words, cls in (
                    ("(washing machine|washer|laundry)", "washer"),
                    ("dishwasher", "dishwasher"),
                    ("(dryer|tumble dryer)", "dryer"),
                )
            ),
            # "is the washing machine still running", "is the robot docked": its status
            *(
                (
                    [
                        f"is [the] {words} (running|on|going|busy|working|paused|stopped{more})",
                        f"(what is|what's) [the] {words} doing [(now|right now)]",
                    ],
                    {"slots": {"measure": "status", **slots}},
                )
                for words, more, slots in (
                    (
                        "(washing machine|washer)",
                        "|washing",
                        {"domain": "appliance", "device_class": "washer"},
                    ),
                    (
                        "dishwasher",
                        "|washing",
                        {"domain": "appliance", "device_class": "dishwasher"},
                    ),
                    (
                        "(dryer|tumble dryer)",
                        "|drying",
                        {"domain": "appliance", "device_class": "dryer"},
                    ),
                    (
                        _EN_VACUUM,
                        "|cleaning|vacuuming|hoovering|docked|charging|home|back [home]"
                        "|(at|on|back at|back on|in) (its|the) (base|dock|charger|station)",
                        {"domain": "vacuum"},
                    ),
                )
            ),
        ],
    },
    "de": {
        "HassFanSetSpeed": [
            *_fan_modes(
                "(stell|stelle|schalte|schalt|setz|setze)",
                f"{_DE_ART} {{name}}",
                "den Ventilator",
                _DE_IN,
                "auf [(Stufe|Modus) ]{fan_modes:fan_mode}[ (Stufe|Modus)]",
            ),
            *_fan_steps(
                "(stell|stelle|schalte|schalt|setz|setze|dreh|drehe)",
                f"{_DE_ART} {{name}}",
                "den Ventilator",
                _DE_IN,
                "auf (Stufe|Geschwindigkeit|Geschwindigkeitsstufe) {fan_speed:percentage}",
            ),
            (
                [
                    "(stell|stelle|setz|setze) den Ventilator auf {fan_speed:percentage}( %|%| Prozent)"  # noqa: E501
                ],
                _FAN_HERE,
            ),
        ],
        OPERATE_INTENT: [
            (
                [
                    f"(spiel|spiele|läute) {_DE_ART} {{name}} [ab]",
                    f"lass {_DE_ART} {{name}} (läuten|klingeln|ertönen)",
                ],
                _op("play", _CHIME),
            ),
            (
                [
                    f"(spiel|spiele|läute) {_DE_ART} (Gong|Türgong|Glocke) [ab]",
                    f"lass {_DE_ART} (Gong|Türgong|Glocke) (läuten|klingeln|ertönen)",
                ],
                _kind("play", "chime"),
            ),
            ([f"(starte|start) {_DE_ART} {{name}}"], _op("start", _RUN_OR_CHARGE)),
            (
                [f"(pausiere|unterbrich) {_DE_ART} {{name}}", f"halte {_DE_ART} {{name}} an"],
                _op("pause"),
            ),
            ([f"setze {_DE_ART} {{name}} fort"], _op("resume")),
            ([f"(stoppe|stopp) {_DE_ART} {{name}}"], _op("stop", _RUN_OR_CHARGE)),
            (
                ["(starte|start) [die] (Waschmaschine|Wäsche)"],
                _kind("start", "appliance", "washer"),
            ),
            (
                ["(starte|start) [die|den] (Spülmaschine|Geschirrspüler)"],
                _kind("start", "appliance", "dishwasher"),
            ),
            (
                ["(starte|start) [den] (Trockner|Wäschetrockner)"],
                _kind("start", "appliance", "dryer"),
            ),
            (
                [f"(starte|start) {_DE_ART} {{name}} (im|mit [dem]|auf) {{mode}}"],
                _op("mode_start"),
            ),
            ([f"(stelle|stell|schalte) {_DE_ART} {{name}} auf {{mode}}"], _op("mode")),
            (
                ["(starte|start) [die|den] (Spülmaschine|Geschirrspüler) (im|mit [dem]) {mode}"],
                _kind("mode_start", "appliance", "dishwasher"),
            ),
            (
                ["(stelle|stell) [die|den] (Spülmaschine|Geschirrspüler) auf {mode}"],
                _kind("mode", "appliance", "dishwasher"),
            ),
            (
                ["(stelle|stell) [die] Waschmaschine auf {mode}"],
                _kind("mode", "appliance", "washer"),
            ),
            (
                ["(stelle|stell) [den] (Backofen|Ofen) auf {mode}"],
                _kind("mode", "appliance", "oven"),
            ),
            (
                ["(stelle|stell) [die] Mikrowelle auf {mode}"],
                _kind("mode", "appliance", "microwave"),
            ),
            (
                ["(stelle|stell) [den] (Staubsauger|Saugroboter) auf {mode}"],
                _kind("mode", "vacuum"),
            ),
            (
                [
                    "lade [das] (Auto|Elektroauto|E-Auto)",
                    "(starte|beginne) das Laden [(des Autos|des Elektroautos)]",
                ],
                _kind("start", "ev_charger"),
            ),
            (
                [
                    "(beende|stoppe|stopp) das Laden [(des Autos|des Elektroautos)]",
                    "(hör|höre) auf[,] das [Elektro]auto zu laden",
                    "lade das [Elektro]auto nicht mehr",
                ],
                _kind("stop", "ev_charger"),
            ),
            (
                [
                    f"heize das (Warmwasser|Wasser) [für] {_MINUTES} Minute[n] [lang] auf",
                    f"booste [das] Warmwasser [für] {_MINUTES} Minute[n]",
                ],
                _kind("boost", "water_heater"),
            ),
            ([f"booste {_DE_ART} {{name}} [für] {_MINUTES} Minute[n]"], _act("boost")),
            (
                [
                    "(brich|breche) den [Warmwasser]boost ab",
                    "(beende|stoppe) den [Warmwasser]boost",
                ],
                _kind("cancel_boost", "water_heater"),
            ),
            (
                [f"(starte|start) [die] Mikrowelle für {_MINUTES} Minute[n]"],
                _kind("cook", "appliance", "microwave"),
            ),
        ],
        "HassVacuumStart": [(["(starte|start) [den] (Staubsauger|Saugroboter|Sauger)"], _VACUUM)],
        # "starte den Saugroboter in der Küche": that room cleaned
        "HassVacuumCleanArea": [
            (
                [f"(starte|start) {_DE_ART} {{name}} (im|in der|in dem|am) {{area}}"],
                {"requires_context": {"domain": ["vacuum"]}},
            )
        ],
        _RELATIVE: [
            (
                [
                    f"(mach|stelle|stell) {_DE_ART} {{name}} schneller",
                    f"{_DE_ART} {{name}} schneller",
                ],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [
                    f"(mach|stelle|stell) {_DE_ART} {{name}} langsamer",
                    f"{_DE_ART} {{name}} langsamer",
                ],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            ([f"[(mach|stelle|stell)] [den] Ventilator {_DE_IN} schneller"], _FASTER),
            ([f"[(mach|stelle|stell)] [den] Ventilator {_DE_IN} langsamer"], _SLOWER),
            (["(mach|stelle|stell) den Ventilator [hier] schneller"], _FASTER_HERE),
            (["(mach|stelle|stell) den Ventilator [hier] langsamer"], _SLOWER_HERE),
        ],
        MEASURE_INTENT: [
            (
                [
                    f"wie viel (Strom|Leistung|Watt) (verbraucht|zieht|braucht) {_DE_ART} "
                    "{name} [gerade]",
                    f"wie hoch ist der (Stromverbrauch|Verbrauch) {_DE_ART} {{name}}",
                ],
                _m("power"),
            ),
            (
                [f"wie viel (Energie|Strom) hat {_DE_ART} {{name}} [bisher] verbraucht"],
                _m("energy"),
            ),
            (
                [
                    "wie hoch ist der (CO2|CO2-Wert|CO2 Wert|CO2-Gehalt|CO2 Gehalt|"
                    f"Kohlendioxidgehalt) {_DE_IN}",
                    f"wie viel (CO2|Kohlendioxid) ist [{_DE_IN}]",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"wie hoch ist der Feinstaub[wert] {_DE_IN}"], _m("pm25")),
            (
                [f"wie ist die (Luftqualität|Luft) [{_DE_IN}]"],
                _m("aqi"),
            ),
            ([f"wie (hell|dunkel) ist es {_DE_IN}"], _m("illuminance")),
            (
                [
                    f"gibt es ein (Leck|Wasserleck) [{_DE_IN}]",
                    f"(ist|läuft) {_DE_IN} Wasser aus",
                    f"meldet {_DE_ART} {{name}} ein (Leck|Wasserleck)",
                ],
                _m("leak"),
            ),
            (
                [
                    f"wie lange (braucht|läuft) {_DE_ART} {{name}} noch",
                    f"wann ist {_DE_ART} {{name}} fertig",
                    f"ist {_DE_ART} {{name}} [schon] fertig",
                ],
                _m("minutes_left"),
            ),
            ([f"lädt {_DE_ART} {{name}} [(gerade|das Auto)]"], _m("charging")),
            (
                [
                    f"was macht {_DE_ART} {{name}} [gerade]",
                    f"läuft {_DE_ART} {{name}} [gerade]",
                    f"ist {_DE_ART} {{name}} [(noch|gerade)] am (Saugen|Laufen|Waschen|Trocknen"
                    "|Putzen|Arbeiten)",
                    f"(saugt|wäscht|trocknet|arbeitet|putzt) {_DE_ART} {{name}} [(noch|gerade)]",
                    f"ist {_DE_ART} {{name}} (in der|an der|auf der) Ladestation",
                ],
                _m("status"),
            ),
            (
                ["(lädt|wird) das [Elektro]auto [gerade] [geladen]"],
                {"slots": {"measure": "charging", "domain": "ev_charger"}},
            ),
        ],
    },
    "fr": {
        "HassVacuumReturnToBase": [
            (
                [
                    f"(renvoie|ramène|envoie|remets) {_FR_ART}{{name}} (à sa base|à la base|à sa station|à la station de charge)"  # noqa: E501
                ],
                _VACUUM_NAME,
            ),
            (
                [
                    "(renvoie|ramène|envoie|remets) [(l'|le )](aspirateur|robot|robot aspirateur) (à sa base|à la base|à sa station|à la station de charge)"  # noqa: E501
                ],
                _VACUUM,
            ),
        ],
        "HassFanSetSpeed": [
            *_fan_modes(
                "(mets|règle|passe)",
                f"{_FR_ART}{{name}}",
                "le ventilateur",
                _FR_IN,
                "(en|sur|à) [vitesse ]{fan_modes:fan_mode}",
            ),
            *_fan_steps(
                "(mets|règle|passe)",
                f"{_FR_ART}{{name}}",
                "le ventilateur",
                _FR_IN,
                "(en|sur|à) [la ](vitesse|position) {fan_speed:percentage}",
            ),
        ],
        OPERATE_INTENT: [
            (
                [f"(joue|sonne) {_FR_ART}{{name}}", f"fais sonner {_FR_ART}{{name}}"],
                _op("play", _CHIME),
            ),
            (
                [f"(joue|sonne) {_FR_ART}(carillon|gong)", f"fais sonner {_FR_ART}(carillon|gong)"],
                _kind("play", "chime"),
            ),
            ([f"(lance|démarre|mets en marche) {_FR_ART}{{name}}"], _op("start", _RUN_OR_CHARGE)),
            ([f"(mets|met) {_FR_ART}{{name}} en pause", f"pause {_FR_ART}{{name}}"], _op("pause")),
            ([f"(reprends|relance) {_FR_ART}{{name}}"], _op("resume")),
            ([f"(arrête|stoppe) {_FR_ART}{{name}}"], _op("stop", _RUN_OR_CHARGE)),
            (
                ["(lance|démarre) [le ]lave-vaisselle"],
                _kind("start", "appliance", "dishwasher"),
            ),
            (
                [
                    "(lance|démarre) [la ](machine à laver|lessive)",
                    "(lance|démarre) [le ]lave-linge",
                ],
                _kind("start", "appliance", "washer"),
            ),
            (["(lance|démarre) [le ]sèche-linge"], _kind("start", "appliance", "dryer")),
            (
                [f"(lance|démarre) {_FR_ART}{{name}} (en mode|sur [le programme]) {{mode}}"],
                _op("mode_start"),
            ),
            ([f"(mets|met|règle) {_FR_ART}{{name}} (en mode|sur) {{mode}}"], _op("mode")),
            (
                ["(lance|démarre) [le ]lave-vaisselle (en mode|sur [le programme]) {mode}"],
                _kind("mode_start", "appliance", "dishwasher"),
            ),
            (
                ["(mets|règle) [le ]four (en mode|sur) {mode}"],
                _kind("mode", "appliance", "oven"),
            ),
            (
                ["(mets|règle) [le ]micro-ondes (en mode|sur) {mode}"],
                _kind("mode", "appliance", "microwave"),
            ),
            (
                ["(mets|règle) l'aspirateur (en mode|sur) {mode}"],
                _kind("mode", "vacuum"),
            ),
            (
                [
                    "(charge|recharge) la voiture",
                    "(lance|démarre|commence) la recharge [de la voiture]",
                ],
                _kind("start", "ev_charger"),
            ),
            (
                ["arrête la recharge [de la voiture]", "arrête de [re]charger la voiture"],
                _kind("stop", "ev_charger"),
            ),
            (
                [f"(chauffe|booste) l'eau chaude pendant {_MINUTES} minute[s]"],
                _kind("boost", "water_heater"),
            ),
            ([f"booste {_FR_ART}{{name}} pendant {_MINUTES} minute[s]"], _act("boost")),
            (["(annule|arrête) le boost [de l'eau chaude]"], _kind("cancel_boost", "water_heater")),
            (
                [f"(lance|démarre) [le ]micro-ondes pendant {_MINUTES} minute[s]"],
                _kind("cook", "appliance", "microwave"),
            ),
        ],
        "HassVacuumStart": [(["(lance|démarre) [l'](aspirateur|robot aspirateur)"], _VACUUM)],
        _RELATIVE: [
            (
                [f"(accélère|augmente) {_FR_ART}{{name}}"],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [f"(ralentis|baisse) {_FR_ART}{{name}}"],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            ([f"(accélère|augmente) le ventilateur {_FR_IN}"], _FASTER),
            ([f"(ralentis|baisse) le ventilateur {_FR_IN}"], _SLOWER),
            (["(accélère|augmente) le ventilateur [ici]"], _FASTER_HERE),
            (["(ralentis|baisse) le ventilateur [ici]"], _SLOWER_HERE),
        ],
        MEASURE_INTENT: [
            (
                [
                    "quelle est la (puissance|consommation) (de|du|de la|des|de l') {name}",
                    f"combien (consomme|tire) {_FR_ART}{{name}} [en ce moment]",
                ],
                _m("power"),
            ),
            (
                [f"combien d'énergie {_FR_ART}{{name}} a[-t-il|-t-elle] consommé"],
                _m("energy"),
            ),
            (
                [
                    f"quel est le (taux|niveau) de (co2|dioxyde de carbone) [{_FR_IN}]",
                    f"combien de (co2|dioxyde de carbone) [y a-t-il] {_FR_IN}",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"quel est le (taux|niveau) de particules fines {_FR_IN}"], _m("pm25")),
            ([f"(quelle est|comment est) la qualité de l'air [{_FR_IN}]"], _m("aqi")),
            ([f"(quelle est la luminosité|il fait clair) {_FR_IN}"], _m("illuminance")),
            (
                [f"(y a-t-il|est-ce qu'il y a|il y a) une fuite [d'eau] [{_FR_IN}]"],
                _m("leak"),
            ),
            (
                [
                    "combien de temps reste-t-il (au|à la|à l') {name}",
                    f"quand {_FR_ART}{{name}} aura-t-il fini",
                    f"est-ce que {_FR_ART}{{name}} a (fini|terminé)",
                    f"{_FR_ART}{{name}} a-t-(il|elle) (fini|terminé)",
                    f"{_FR_ART}{{name}} est-(il|elle) (fini|terminé|prêt|prête)",
                ],
                _m("minutes_left"),
            ),
            ([f"est-ce que {_FR_ART}{{name}} (charge|recharge|est en charge)"], _m("charging")),
            (
                [f"(que fait|qu'est-ce que fait) {_FR_ART}{{name}} [en ce moment]"],
                _m("status"),
            ),
            (
                [
                    "est-ce que la voiture (charge|recharge|est en charge)",
                    "la voiture (charge-t-elle|est-elle en charge)",
                ],
                {"slots": {"measure": "charging", "domain": "ev_charger"}},
            ),
        ],
    },
    "es": {
        "HassVacuumReturnToBase": [
            (
                [f"(manda|envía|devuelve|lleva) {_ES_ART} {{name}} a (la base|su base|cargar)"],
                _VACUUM_NAME,
            ),
            (
                [
                    "(manda|envía|devuelve|lleva) [(el|la)] (aspiradora|robot|robot aspirador) a (la base|su base|cargar)"  # noqa: E501
                ],
                _VACUUM,
            ),
        ],
        "HassFanSetSpeed": [
            *_fan_modes(
                "(pon|ajusta)",
                f"{_ES_ART} {{name}}",
                "el ventilador",
                _ES_IN,
                "(en|a) [velocidad ]{fan_modes:fan_mode}",
            ),
            *_fan_steps(
                "(pon|ajusta|sube|baja)",
                f"{_ES_ART} {{name}}",
                "el ventilador",
                _ES_IN,
                "(en|a) [la ](velocidad|posición) {fan_speed:percentage}",
            ),
        ],
        OPERATE_INTENT: [
            (
                [f"(toca|suena) {_ES_ART} {{name}}", f"haz sonar {_ES_ART} {{name}}"],
                _op("play", _CHIME),
            ),
            (
                [
                    f"(toca|suena) {_ES_ART} (carillón|campanilla|gong)",
                    f"haz sonar {_ES_ART} (carillón|campanilla|gong)",
                ],
                _kind("play", "chime"),
            ),
            (
                [f"(pon en marcha|inicia|arranca|empieza) {_ES_ART} {{name}}"],
                _op("start", ("appliance", "ev_charger")),
            ),
            ([f"(pausa|pon en pausa) {_ES_ART} {{name}}"], _op("pause")),
            ([f"(reanuda|continúa) {_ES_ART} {{name}}"], _op("resume")),
            ([f"(para|detén) {_ES_ART} {{name}}"], _op("stop", _RUN_OR_CHARGE)),
            (
                ["(pon en marcha|inicia|arranca) [el] lavavajillas"],
                _kind("start", "appliance", "dishwasher"),
            ),
            (
                ["(pon en marcha|inicia|arranca) [la] lavadora"],
                _kind("start", "appliance", "washer"),
            ),
            (
                ["(pon en marcha|inicia|arranca) [la] secadora"],
                _kind("start", "appliance", "dryer"),
            ),
            (
                [
                    f"(pon en marcha|inicia|arranca) {_ES_ART} {{name}} "
                    "(en [el] modo|con [el] programa) {mode}"
                ],
                _op("mode_start"),
            ),
            ([f"pon {_ES_ART} {{name}} (en [el] modo|con [el] programa) {{mode}}"], _op("mode")),
            (
                ["pon [el] horno (en [el] modo|con [el] programa) {mode}"],
                _kind("mode", "appliance", "oven"),
            ),
            (
                ["pon [el] microondas (en [el] modo|con [el] programa) {mode}"],
                _kind("mode", "appliance", "microwave"),
            ),
            (
                [
                    "(empieza|comienza) a cargar el coche",
                    "(inicia|empieza) la carga [del coche]",
                    "carga el coche",
                ],
                _kind("start", "ev_charger"),
            ),
            (
                ["deja de cargar el coche", "(para|detén) la carga [del coche]"],
                _kind("stop", "ev_charger"),
            ),
            (
                [f"calienta el agua [caliente] (durante|por) {_MINUTES} minuto[s]"],
                _kind("boost", "water_heater"),
            ),
            (
                ["cancela el (boost|refuerzo) [del agua caliente]"],
                _kind("cancel_boost", "water_heater"),
            ),
            (
                [f"pon [el] microondas (durante|por) {_MINUTES} minuto[s]"],
                _kind("cook", "appliance", "microwave"),
            ),
        ],
        "HassVacuumStart": [
            (["(inicia|pon en marcha|arranca) [el|la] (aspiradora|robot aspirador)"], _VACUUM),
            ([f"(inicia|pon en marcha|arranca) {_ES_ART} {{name}}"], _VACUUM_NAME),
        ],
        # "pon el robot aspirador en la cocina": that room cleaned
        "HassVacuumCleanArea": [
            (
                [
                    f"(pon|inicia|pon en marcha|arranca) {_ES_ART} {{name}} (en el|en la|en"
                    "|del|de la) {area}"
                ],
                {"requires_context": {"domain": ["vacuum"]}},
            )
        ],
        _RELATIVE: [
            (
                [f"(acelera|sube) {_ES_ART} {{name}}"],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [f"(frena|baja) {_ES_ART} {{name}}"],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            ([f"(acelera|sube) el ventilador {_ES_IN}"], _FASTER),
            ([f"(frena|baja) el ventilador {_ES_IN}"], _SLOWER),
            (["(acelera|sube) el ventilador [aquí]"], _FASTER_HERE),
            (["(frena|baja) el ventilador [aquí]"], _SLOWER_HERE),
        ],
        MEASURE_INTENT: [
            (
                [
                    f"(cuánta|cuanta) (potencia|electricidad|energía) (consume|usa|gasta) "
                    f"{_ES_ART} {{name}} [ahora]",
                    f"(cuántos|cuantos) vatios (consume|usa) {_ES_ART} {{name}}",
                ],
                _m("power"),
            ),
            (
                [f"(cuánta|cuanta) energía ha (consumido|gastado) {_ES_ART} {{name}}"],
                _m("energy"),
            ),
            (
                [
                    f"(cuál|cual) es el nivel de (co2|dióxido de carbono) [{_ES_IN}]",
                    f"(cuánto|cuanto) (co2|dióxido de carbono) hay {_ES_IN}",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"(cuál|cual) es el nivel de partículas finas {_ES_IN}"], _m("pm25")),
            ([f"(cómo|como|cuál|cual) (es|está|esta) la calidad del aire [{_ES_IN}]"], _m("aqi")),
            ([f"(cuánta|cuanta) luz hay {_ES_IN}"], _m("illuminance")),
            ([f"hay (una|alguna) fuga [de agua] [{_ES_IN}]"], _m("leak")),
            (
                [
                    "(cuánto|cuanto) [tiempo] le queda (al|a la) {name}",
                    f"(cuánto|cuanto) falta para que termine {_ES_ART} {{name}}",
                    f"[ya] ha terminado {_ES_ART} {{name}}",
                ],
                _m("minutes_left"),
            ),
            ([f"[se] está cargando {_ES_ART} {{name}}"], _m("charging")),
            ([f"qué (está haciendo|hace) {_ES_ART} {{name}} [ahora]"], _m("status")),
            (
                ["[se] está cargando el coche", "el coche [se] está cargando"],
                {"slots": {"measure": "charging", "domain": "ev_charger"}},
            ),
        ],
    },
    "nl": {
        "HassVacuumReturnToBase": [
            (
                [
                    f"stuur {_NL_ART} {{name}} (terug naar [het] (basisstation|laadstation|dock)|naar [het] (basisstation|laadstation|dock)|terug)"  # noqa: E501
                ],
                _VACUUM_NAME,
            ),
            (
                [
                    "stuur de (stofzuiger|robotstofzuiger|robot) (terug naar [het] (basisstation|laadstation)|naar [het] (basisstation|laadstation)|terug)"  # noqa: E501
                ],
                _VACUUM,
            ),
        ],
        "HassFanSetSpeed": [
            *_fan_modes(
                "zet",
                f"{_NL_ART} {{name}}",
                "de ventilator",
                _NL_IN,
                "(op|in) [stand ]{fan_modes:fan_mode}",
            ),
            *_fan_steps(
                "(zet|draai)",
                f"{_NL_ART} {{name}}",
                "de ventilator",
                _NL_IN,
                "(op|naar) (stand|snelheid) {fan_speed:percentage}",
            ),
        ],
        OPERATE_INTENT: [
            (
                [
                    f"(speel|luid) {_NL_ART} {{name}} [af]",
                    f"laat {_NL_ART} {{name}} (klinken|rinkelen|afgaan)",
                ],
                _op("play", _CHIME),
            ),
            (
                [
                    f"(speel|luid) {_NL_ART} (gong|deurgong) [af]",
                    f"laat {_NL_ART} (gong|deurgong) (klinken|rinkelen|afgaan)",
                ],
                _kind("play", "chime"),
            ),
            ([f"start {_NL_ART} {{name}}"], _op("start", ("appliance", "ev_charger"))),
            (
                [f"pauzeer {_NL_ART} {{name}}", f"zet {_NL_ART} {{name}} op pauze"],
                _op("pause"),
            ),
            ([f"hervat {_NL_ART} {{name}}"], _op("resume")),
            ([f"stop {_NL_ART} {{name}}"], _op("stop", _RUN_OR_CHARGE)),
            (["start [de] (vaatwasser|vaatwasmachine)"], _kind("start", "appliance", "dishwasher")),
            (["start [de] wasmachine"], _kind("start", "appliance", "washer")),
            (["start [de] droger"], _kind("start", "appliance", "dryer")),
            (
                [f"start {_NL_ART} {{name}} (op|in|met) [(het programma|de stand)] {{mode}}"],
                _op("mode_start"),
            ),
            ([f"zet {_NL_ART} {{name}} op {{mode}}"], _op("mode")),
            (
                ["start [de] (vaatwasser|vaatwasmachine) (op|in|met) {mode}"],
                _kind("mode_start", "appliance", "dishwasher"),
            ),
            (["zet [de] oven op {mode}"], _kind("mode", "appliance", "oven")),
            (["zet [de] magnetron op {mode}"], _kind("mode", "appliance", "microwave")),
            (["zet [de] (stofzuiger|robotstofzuiger) op {mode}"], _kind("mode", "vacuum")),
            (
                ["laad de auto [op]", "start [met] (het laden|laden)"],
                _kind("start", "ev_charger"),
            ),
            (
                ["stop [met] (het laden|laden) [van de auto]"],
                _kind("stop", "ev_charger"),
            ),
            (
                [f"boost [het] (warme water|warm water|boiler) [voor] {_MINUTES} minuten"],
                _kind("boost", "water_heater"),
            ),
            ([f"boost {_NL_ART} {{name}} [voor] {_MINUTES} minuten"], _act("boost")),
            (["(annuleer|stop) de boost"], _kind("cancel_boost", "water_heater")),
            (
                [f"start [de] magnetron (voor|gedurende) {_MINUTES} minuten"],
                _kind("cook", "appliance", "microwave"),
            ),
        ],
        "HassVacuumStart": [(["start [de] (stofzuiger|robotstofzuiger)"], _VACUUM)],
        _RELATIVE: [
            (
                [f"zet {_NL_ART} {{name}} (sneller|harder)"],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [f"zet {_NL_ART} {{name}} (langzamer|zachter)"],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            ([f"zet de ventilator {_NL_IN} (sneller|harder)"], _FASTER),
            ([f"zet de ventilator {_NL_IN} (langzamer|zachter)"], _SLOWER),
            (["zet de ventilator [hier] (sneller|harder)"], _FASTER_HERE),
            (["zet de ventilator [hier] (langzamer|zachter)"], _SLOWER_HERE),
        ],
        MEASURE_INTENT: [
            (
                [
                    f"hoeveel (stroom|vermogen|watt) (verbruikt|gebruikt) {_NL_ART} {{name}} [nu]",
                    f"wat is het (stroomverbruik|verbruik) van {_NL_ART} {{name}}",
                ],
                _m("power"),
            ),
            (
                [f"hoeveel energie heeft {_NL_ART} {{name}} (verbruikt|gebruikt)"],
                _m("energy"),
            ),
            (
                [
                    f"wat is het (co2-niveau|co2 niveau|co2-gehalte|co2 gehalte|co2) {_NL_IN}",
                    f"hoeveel co2 is er [{_NL_IN}]",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"wat is het fijnstof[niveau] {_NL_IN}"], _m("pm25")),
            ([f"hoe is de luchtkwaliteit [{_NL_IN}]"], _m("aqi")),
            ([f"hoe (licht|donker) is het {_NL_IN}"], _m("illuminance")),
            ([f"is er (een|ergens een) [water]lek [{_NL_IN}]"], _m("leak")),
            (
                [
                    f"hoe lang (duurt|loopt) {_NL_ART} {{name}} nog",
                    f"wanneer is {_NL_ART} {{name}} klaar",
                    f"is {_NL_ART} {{name}} [al] klaar",
                ],
                _m("minutes_left"),
            ),
            ([f"is {_NL_ART} {{name}} aan het laden"], _m("charging")),
            ([f"wat doet {_NL_ART} {{name}} [nu]"], _m("status")),
            (
                ["is de auto aan het laden", "laadt de auto [nu]"],
                {"slots": {"measure": "charging", "domain": "ev_charger"}},
            ),
        ],
    },
}

# A water heater is a thermostat of its own (Matter's Water Heater device: Thermostat with
# its heat/off mode and setpoint): "turn off the water heater", "set the boiler to 55
# degrees", "how hot is the water heater". Only names of water heaters fit these
# sentences; a room's thermostat sentences never reach one.
_WH = {"requires_context": {"domain": "water_heater"}}
# "how hot is the water", "set the hot water to 55": the home's only water heater
_HOT_WATER = {"slots": {"domain": "water_heater"}}
_WATER_HEATER: dict[str, dict[str, list[tuple[list[str], dict[str, Any]]]]] = {
    "en": {
        "HassTurnOn": [(["(turn|switch) on [the] {name}", "(turn|switch) [the] {name} on"], _WH)],
        "HassTurnOff": [
            (["(turn|switch) off [the] {name}", "(turn|switch) [the] {name} off"], _WH)
        ],
        "HassClimateSetTemperature": [
            (["(set|put|turn) [the] {name} to {temperature} [degrees]"], _WH),
            (["(set|put|turn) the hot water to {temperature} [degrees]"], _HOT_WATER),
        ],
        "HassClimateGetTemperature": [
            (
                [
                    "(what is|what's) [the] temperature (of|on) [the] {name}",
                    "how (hot|warm) is [the] {name}",
                    "what temperature is [the] {name} [(at|set to)]",
                ],
                _WH,
            ),
            (
                [
                    "how (hot|warm) is the [hot] water [(now|right now)]",
                    "(what is|what's) the [hot] water temperature",
                    "what temperature is the [hot] water [(at|set to)]",
                    "is the [hot] water (hot|warm) [yet]",
                ],
                _HOT_WATER,
            ),
        ],
        "HassGetState": [(["(is|are) [the] {name} (on|off|heating)"], _WH)],
    },
    "de": {
        "HassTurnOn": [(["(schalte|schalt|mach|mache) [den|die|das] {name} (an|ein)"], _WH)],
        "HassTurnOff": [(["(schalte|schalt|mach|mache) [den|die|das] {name} aus"], _WH)],
        "HassClimateSetTemperature": [
            (["(stelle|stell|setze|setz) [den|die|das] {name} auf {temperature} [Grad]"], _WH)
        ],
        "HassClimateGetTemperature": [
            (
                [
                    "wie (heiß|warm) ist [der|die|das] {name}",
                    "welche Temperatur hat [der|die|das] {name}",
                ],
                _WH,
            ),
            (
                [
                    "wie (heiß|warm) ist das [Warm]wasser",
                    "welche Temperatur hat das [Warm]wasser",
                ],
                _HOT_WATER,
            ),
        ],
        "HassGetState": [(["ist [der|die|das] {name} (an|aus|ein)"], _WH)],
    },
    "fr": {
        "HassTurnOn": [(["allume [(le |la |l')]{name}"], _WH)],
        "HassTurnOff": [(["éteins [(le |la |l')]{name}"], _WH)],
        "HassClimateSetTemperature": [
            (["(mets|règle|regle) [(le |la |l')]{name} (à|sur) {temperature} [degrés]"], _WH)
        ],
        "HassClimateGetTemperature": [
            (["quelle est la température (du |de la |de l')[ ]{name}"], _WH)
        ],
    },
    "es": {
        "HassTurnOn": [(["(enciende|prende) [el|la] {name}"], _WH)],
        "HassTurnOff": [(["apaga [el|la] {name}"], _WH)],
        "HassClimateSetTemperature": [
            (["(pon|ajusta) [el|la] {name} a {temperature} [grados]"], _WH)
        ],
        "HassClimateGetTemperature": [
            (["(qué|cuál es la) temperatura (tiene|de|del|de la) [el|la] {name}"], _WH)
        ],
    },
    "nl": {
        "HassTurnOn": [(["(zet|doe) [de|het] {name} aan"], _WH)],
        "HassTurnOff": [(["(zet|doe) [de|het] {name} uit"], _WH)],
        "HassClimateSetTemperature": [
            (["(zet|stel) [de|het] {name} [in] op {temperature} [graden]"], _WH)
        ],
        "HassClimateGetTemperature": [
            (
                [
                    "hoe (heet|warm) is [de|het] {name}",
                    "wat is de temperatuur van [de|het] {name}",
                ],
                _WH,
            )
        ],
    },
}
for _lang, _intents in _WATER_HEATER.items():
    for _intent, _groups in _intents.items():
        KIND_TEMPLATES[_lang].setdefault(_intent, []).extend(_groups)

# Answers (merged into responses.RESPONSES: every language has every key).
KIND_RESPONSES: dict[str, dict[str, str]] = {
    "en": {
        "fan_speed": "Set {target} to {percent} percent speed.",
        "fan_speed_step": "Set {target} to speed {speed}.",
        "mode": "Set {target} to {mode}.",
        "mode_start": "Started {target} on {mode}.",
        "unknown_mode": "Sorry, {target} has no mode {mode}; it has {modes}.",
        "charge": "{target} is charging the car.",
        "stop_charging": "{target} stopped charging.",
        "boost": "Boosting {target} for {minutes} minutes.",
        "cancel_boost": "Cancelled the boost of {target}.",
        "cook": "{target} is cooking for {minutes} minutes.",
        "start": "Started {target}.",
        "pause": "Paused {target}.",
        "resume": "Resumed {target}.",
        "dock": "Sent {target} back to its dock.",
        "play": "Played {target}.",
        "clean_areas": "{target} is cleaning {areas}.",
        "unknown_area": "Sorry, {target} doesn't know {room}.",
        "read_power": "{target} is using {value} watts.",
        "read_energy": "{target} has used {value} kilowatt hours.",
        "read_carbon_dioxide": "The CO2 level in {target} is {value} {unit}.",
        "read_pm25": "PM2.5 in {target} is {value} {unit}.",
        "read_aqi": "The air quality in {target} is {value}.",
        "read_illuminance": "It is {value} lux in {target}.",
        "read_leak_yes": "{target} detects a leak!",
        "read_leak_no": "{target} detects no leak.",
        "read_minutes_left": "{target} has {value} minutes left.",
        "read_charging_yes": "{target} is charging the car.",
        "read_charging_no": "{target} is not charging.",
        "read_charging_unplugged": "No car is plugged into {target}.",
        "read_charging_plugged": "A car is plugged into {target} but not charging.",
        "water_temperature": "The water in {target} is {temperature} degrees.",
        "status_running": "{target} is running.",
        "status_paused": "{target} is paused.",
        "status_stopped": "{target} is not running.",
        "status_error": "{target} reports an error.",
        "status_seeking_charger": "{target} is going back to its dock.",
        "status_charging": "{target} is charging on its dock.",
        "status_docked": "{target} is on its dock.",
        "read_not_running": "{target} is not running.",
        "no_reading": "Sorry, {target} has no reading of that right now.",
        "aq_good": "good",
        "aq_fair": "fair",
        "aq_moderate": "moderate",
        "aq_poor": "poor",
        "aq_very_poor": "very poor",
        "aq_extremely_poor": "extremely poor",
        "aq_unknown": "unknown",
    },
    "de": {
        "fan_speed": "{target} läuft jetzt mit {percent} Prozent.",
        "fan_speed_step": "{target} läuft jetzt auf Stufe {speed}.",
        "mode": "{target} ist auf {mode} gestellt.",
        "mode_start": "{target} läuft mit {mode}.",
        "unknown_mode": "{target} hat keinen Modus {mode}, nur {modes}.",
        "charge": "{target} lädt das Auto.",
        "stop_charging": "{target} lädt nicht mehr.",
        "boost": "{target} heizt {minutes} Minuten lang extra.",
        "cancel_boost": "Der Boost von {target} ist beendet.",
        "cook": "{target} gart {minutes} Minuten lang.",
        "start": "{target} ist gestartet.",
        "pause": "{target} ist pausiert.",
        "resume": "{target} läuft weiter.",
        "dock": "{target} fährt zurück zur Ladestation.",
        "play": "{target} läutet.",
        "clean_areas": "{target} reinigt {areas}.",
        "unknown_area": "{target} kennt {room} leider nicht.",
        "read_power": "{target} verbraucht {value} Watt.",
        "read_energy": "{target} hat {value} Kilowattstunden verbraucht.",
        "read_carbon_dioxide": "Der CO2-Wert in {target} ist {value} {unit}.",
        "read_pm25": "Der Feinstaub (PM2,5) in {target} ist {value} {unit}.",
        "read_aqi": "Die Luftqualität in {target} ist {value}.",
        "read_illuminance": "In {target} sind es {value} Lux.",
        "read_leak_yes": "{target} meldet ein Leck!",
        "read_leak_no": "{target} meldet kein Leck.",
        "read_minutes_left": "{target} braucht noch {value} Minuten.",
        "read_charging_yes": "{target} lädt gerade.",
        "read_charging_no": "{target} lädt gerade nicht.",
        "read_charging_unplugged": "An {target} ist kein Auto angeschlossen.",
        "read_charging_plugged": "An {target} ist ein Auto angeschlossen, es lädt aber nicht.",
        "water_temperature": "Das Wasser in {target} hat {temperature} Grad.",
        "status_running": "{target} läuft gerade.",
        "status_paused": "{target} ist pausiert.",
        "status_stopped": "{target} läuft gerade nicht.",
        "status_error": "{target} meldet einen Fehler.",
        "status_seeking_charger": "{target} fährt zurück zur Ladestation.",
        "status_charging": "{target} lädt an der Ladestation.",
        "status_docked": "{target} steht in der Ladestation.",
        "read_not_running": "{target} läuft gerade nicht.",
        "no_reading": "Diesen Wert hat {target} gerade leider nicht.",
        "aq_good": "gut",
        "aq_fair": "ordentlich",
        "aq_moderate": "mäßig",
        "aq_poor": "schlecht",
        "aq_very_poor": "sehr schlecht",
        "aq_extremely_poor": "äußerst schlecht",
        "aq_unknown": "unbekannt",
    },
    "fr": {
        "fan_speed": "La vitesse de {target} est réglée à {percent} %.",
        "fan_speed_step": "{target} est réglé sur la vitesse {speed}.",
        "mode": "{target} est réglé sur {mode}.",
        "mode_start": "{target} a démarré en mode {mode}.",
        "unknown_mode": "Désolé, {target} n'a pas de mode {mode} ; il a {modes}.",
        "charge": "{target} recharge la voiture.",
        "stop_charging": "{target} a arrêté la recharge.",
        "boost": "{target} chauffe en plus pendant {minutes} minutes.",
        "cancel_boost": "Le boost de {target} est annulé.",
        "cook": "{target} cuit pendant {minutes} minutes.",
        "start": "{target} a démarré.",
        "pause": "{target} est en pause.",
        "resume": "{target} a repris.",
        "dock": "{target} retourne à sa base.",
        "play": "{target} a sonné.",
        "clean_areas": "{target} nettoie {areas}.",
        "unknown_area": "Désolé, {target} ne connaît pas {room}.",
        "read_power": "{target} consomme {value} watts.",
        "read_energy": "{target} a consommé {value} kilowattheures.",
        "read_carbon_dioxide": "Le taux de CO2 dans {target} est de {value} {unit}.",
        "read_pm25": "Les particules fines dans {target} sont à {value} {unit}.",
        "read_aqi": "La qualité de l'air dans {target} est {value}.",
        "read_illuminance": "Il y a {value} lux dans {target}.",
        "read_leak_yes": "{target} détecte une fuite !",
        "read_leak_no": "{target} ne détecte aucune fuite.",
        "read_minutes_left": "Il reste {value} minutes à {target}.",
        "read_charging_yes": "{target} est en train de recharger.",
        "read_charging_no": "{target} ne recharge pas.",
        "read_charging_unplugged": "Aucune voiture n'est branchée sur {target}.",
        "read_charging_plugged": "Une voiture est branchée sur {target}, mais ne recharge pas.",
        "water_temperature": "L'eau de {target} est à {temperature} degrés.",
        "status_running": "{target} est en marche.",
        "status_paused": "{target} est en pause.",
        "status_stopped": "{target} ne fonctionne pas en ce moment.",
        "status_error": "{target} signale une erreur.",
        "status_seeking_charger": "{target} retourne à sa base.",
        "status_charging": "{target} se recharge sur sa base.",
        "status_docked": "{target} est sur sa base.",
        "read_not_running": "{target} ne fonctionne pas en ce moment.",
        "no_reading": "Désolé, {target} n'a pas cette mesure pour le moment.",
        "aq_good": "bonne",
        "aq_fair": "correcte",
        "aq_moderate": "moyenne",
        "aq_poor": "mauvaise",
        "aq_very_poor": "très mauvaise",
        "aq_extremely_poor": "extrêmement mauvaise",
        "aq_unknown": "inconnue",
    },
    "es": {
        "fan_speed": "He puesto {target} al {percent} por ciento.",
        "fan_speed_step": "He puesto {target} en la velocidad {speed}.",
        "mode": "He puesto {target} en {mode}.",
        "mode_start": "He puesto en marcha {target} en {mode}.",
        "unknown_mode": "Lo siento, {target} no tiene el modo {mode}; tiene {modes}.",
        "charge": "{target} está cargando el coche.",
        "stop_charging": "{target} ha dejado de cargar.",
        "boost": "{target} calienta extra durante {minutes} minutos.",
        "cancel_boost": "He cancelado el refuerzo de {target}.",
        "cook": "{target} está cocinando durante {minutes} minutos.",
        "start": "He puesto en marcha {target}.",
        "pause": "He pausado {target}.",
        "resume": "He reanudado {target}.",
        "dock": "{target} vuelve a la base.",
        "play": "He hecho sonar {target}.",
        "clean_areas": "{target} está limpiando {areas}.",
        "unknown_area": "Lo siento, {target} no conoce {room}.",
        "read_power": "{target} consume {value} vatios.",
        "read_energy": "{target} ha consumido {value} kilovatios hora.",
        "read_carbon_dioxide": "El nivel de CO2 en {target} es de {value} {unit}.",
        "read_pm25": "Las partículas finas en {target} están a {value} {unit}.",
        "read_aqi": "La calidad del aire en {target} es {value}.",
        "read_illuminance": "Hay {value} lux en {target}.",
        "read_leak_yes": "¡{target} detecta una fuga!",
        "read_leak_no": "{target} no detecta ninguna fuga.",
        "read_minutes_left": "A {target} le quedan {value} minutos.",
        "read_charging_yes": "{target} está cargando.",
        "read_charging_no": "{target} no está cargando.",
        "read_charging_unplugged": "No hay ningún coche conectado a {target}.",
        "read_charging_plugged": "Hay un coche conectado a {target}, pero no está cargando.",
        "water_temperature": "El agua de {target} está a {temperature} grados.",
        "status_running": "{target} está en marcha.",
        "status_paused": "{target} está en pausa.",
        "status_stopped": "{target} no está funcionando.",
        "status_error": "{target} indica un error.",
        "status_seeking_charger": "{target} está volviendo a la base.",
        "status_charging": "{target} se está cargando en la base.",
        "status_docked": "{target} está en la base.",
        "read_not_running": "{target} no está funcionando.",
        "no_reading": "Lo siento, {target} no tiene ese dato ahora.",
        "aq_good": "buena",
        "aq_fair": "aceptable",
        "aq_moderate": "regular",
        "aq_poor": "mala",
        "aq_very_poor": "muy mala",
        "aq_extremely_poor": "pésima",
        "aq_unknown": "desconocida",
    },
    "nl": {
        "fan_speed": "{target} draait nu op {percent} procent.",
        "fan_speed_step": "{target} draait nu op stand {speed}.",
        "mode": "{target} staat op {mode}.",
        "mode_start": "{target} is gestart op {mode}.",
        "unknown_mode": "Sorry, {target} heeft geen stand {mode}, wel {modes}.",
        "charge": "{target} laadt de auto.",
        "stop_charging": "{target} is gestopt met laden.",
        "boost": "{target} verwarmt {minutes} minuten extra.",
        "cancel_boost": "De boost van {target} is geannuleerd.",
        "cook": "{target} is {minutes} minuten bezig.",
        "start": "{target} is gestart.",
        "pause": "{target} is gepauzeerd.",
        "resume": "{target} gaat verder.",
        "dock": "{target} gaat terug naar het basisstation.",
        "play": "{target} heeft geklonken.",
        "clean_areas": "{target} maakt {areas} schoon.",
        "unknown_area": "Sorry, {target} kent {room} niet.",
        "read_power": "{target} verbruikt {value} watt.",
        "read_energy": "{target} heeft {value} kilowattuur verbruikt.",
        "read_carbon_dioxide": "Het CO2-niveau in {target} is {value} {unit}.",
        "read_pm25": "Het fijnstof in {target} is {value} {unit}.",
        "read_aqi": "De luchtkwaliteit in {target} is {value}.",
        "read_illuminance": "Het is {value} lux in {target}.",
        "read_leak_yes": "{target} meldt een lek!",
        "read_leak_no": "{target} meldt geen lek.",
        "read_minutes_left": "{target} heeft nog {value} minuten.",
        "read_charging_yes": "{target} is aan het laden.",
        "read_charging_no": "{target} is niet aan het laden.",
        "read_charging_unplugged": "Er is geen auto aangesloten op {target}.",
        "read_charging_plugged": "Er is een auto aangesloten op {target}, maar die laadt niet.",
        "water_temperature": "Het water in {target} is {temperature} graden.",
        "status_running": "{target} draait.",
        "status_paused": "{target} is gepauzeerd.",
        "status_stopped": "{target} draait nu niet.",
        "status_error": "{target} meldt een fout.",
        "status_seeking_charger": "{target} gaat terug naar het basisstation.",
        "status_charging": "{target} laadt op in het basisstation.",
        "status_docked": "{target} staat in het basisstation.",
        "read_not_running": "{target} draait nu niet.",
        "no_reading": "Sorry, {target} heeft die meting nu niet.",
        "aq_good": "goed",
        "aq_fair": "redelijk",
        "aq_moderate": "matig",
        "aq_poor": "slecht",
        "aq_very_poor": "zeer slecht",
        "aq_extremely_poor": "extreem slecht",
        "aq_unknown": "onbekend",
    },
}
