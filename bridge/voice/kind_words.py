"""The spoken words of issue 29's kinds: fans, robot vacuums, appliances, energy, sensors.

One place for what the newer device kinds are called and asked (in the style of
``templates.EXTRA``): sentence templates added to Home Assistant's own (whose
``HassFanSetSpeed``, ``HassVacuumStart``, ``HassVacuumReturnToBase`` and
``HassVacuumCleanArea`` the bridge serves as they are), our two intents for what Home
Assistant's templates lack — running an appliance (``OPERATE_INTENT``: start, pause,
resume, stop a dishwasher, a washer or a robot) and asking a measured value
(``MEASURE_INTENT``: power, energy, CO2, PM2.5, air quality, light level, leaks, minutes
left) — and the answers in five languages. The planner decides what they do.
"""

from __future__ import annotations

from typing import Any

# Our intents. Slots: ``action`` (start/pause/resume/stop) for OPERATE_INTENT and
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


def _op(action: str, domains: tuple[str, ...] = ("vacuum", "appliance")) -> dict[str, Any]:
    """Return an OPERATE group's data keys: the action, for names of these domains."""
    return {"slots": {"action": action}, "requires_context": {"domain": list(domains)}}


def _kind(action: str, domain: str, device_class: str | None = None) -> dict[str, Any]:
    """Return an OPERATE group's data keys for a kind word ("start the dishwasher")."""
    slots: dict[str, Any] = {"action": action, "domain": domain}
    if device_class is not None:
        slots["device_class"] = device_class
    return {"slots": slots}


def _m(measure: str) -> dict[str, Any]:
    return {"slots": {"measure": measure}}


_VACUUM = {"slots": {"domain": "vacuum"}}
_FAN_NAME = {"requires_context": {"domain": ["fan"]}}
_VACUUM_NAME = {"requires_context": {"domain": ["vacuum"]}}
_FASTER = {"slots": {"direction": "up", "what": "fan_speed", "domain": "fan"}}
_SLOWER = {"slots": {"direction": "down", "what": "fan_speed", "domain": "fan"}}

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
            (["(start|run) [the] {name}"], _op("start")),
            (["pause [the] {name}"], _op("pause")),
            (["(resume|continue|unpause) [the] {name}"], _op("resume")),
            (["stop [the] {name}"], _op("stop")),
            (["pause [the] " + _EN_VACUUM], _kind("pause", "vacuum")),
            (["(start|run) [the] dishwasher"], _kind("start", "appliance", "dishwasher")),
            (
                ["(start|run) [the] (washing machine|washer|laundry)"],
                _kind("start", "appliance", "washer"),
            ),
            (["(start|run) [the] (dryer|tumble dryer)"], _kind("start", "appliance", "dryer")),
        ],
        "HassVacuumStart": [(["(start|run) [the] " + _EN_VACUUM], _VACUUM)],
        "HassFanSetSpeed": [
            (
                ["set [the] (fan|fans) speed [in here] to {fan_speed:percentage}[%| percent]"],
                {"slots": {"domain": "fan"}, "requires_context": {"area": {"slot": True}}},
            ),
            (
                [
                    "set [the] {area} (fan|fans) speed to {fan_speed:percentage}[%| percent]",
                    "set [the] (fan|fans) speed " + _EN_IN + " to {fan_speed:percentage}"
                    "[%| percent]",
                ],
                {"slots": {"domain": "fan"}},
            ),
        ],
        "HassVacuumReturnToBase": [
            (
                [
                    "(dock|park) [the] {name}",
                    "send [the] {name} (home|back [to (its|the) (dock|base|charger)])",
                ],
                _VACUUM_NAME,
            ),
            (
                [
                    f"(dock|park) [the] {_EN_VACUUM}",
                    f"send [the] {_EN_VACUUM} (home|back [to (its|the) (dock|base|charger)])",
                ],
                _VACUUM,
            ),
        ],
        _RELATIVE: [
            (
                ["(make|turn) [the] {name} faster", "speed up [the] {name}"],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                ["(make|turn) [the] {name} slower", "slow down [the] {name}"],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [
                    f"(make|turn) [the] fan[s] faster [{_EN_IN}]",
                    "(make|turn) [the] {area} fan[s] faster",
                    f"speed up [the] fan[s] [{_EN_IN}]",
                    "(turn|put) [the] fan[s] up",
                ],
                _FASTER,
            ),
            (
                [
                    f"(make|turn) [the] fan[s] slower [{_EN_IN}]",
                    "(make|turn) [the] {area} fan[s] slower",
                    f"slow down [the] fan[s] [{_EN_IN}]",
                    "(turn|put) [the] fan[s] down",
                ],
                _SLOWER,
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
                    "(what is|what's) [the] (co2|carbon dioxide) [level] " + _EN_IN,
                    "how much (co2|carbon dioxide) is there " + _EN_IN,
                    "(what is|what's) the (co2|carbon dioxide) [level] of [the] {name}",
                ],
                _m("carbon_dioxide"),
            ),
            (
                [
                    "(what is|what's) [the] (pm2.5|pm 2.5|fine dust|particulate matter) [level] "
                    + _EN_IN
                ],
                _m("pm25"),
            ),
            (
                [
                    "(how|what) is the air quality " + _EN_IN,
                    "how is the air " + _EN_IN,
                    "(what is|what's) the air quality [like] " + _EN_IN,
                ],
                _m("aqi"),
            ),
            (
                [
                    "how (bright|light|dark) is it " + _EN_IN,
                    "(what is|what's) the (illuminance|light level|brightness) " + _EN_IN,
                ],
                _m("illuminance"),
            ),
            (
                [
                    "is there [a] [water] leak [" + _EN_IN + "]",
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
                ],
                _m("minutes_left"),
            ),
        ],
    },
    "de": {
        OPERATE_INTENT: [
            ([f"(starte|start) {_DE_ART} {{name}}"], _op("start")),
            (
                [f"(pausiere|unterbrich) {_DE_ART} {{name}}", f"halte {_DE_ART} {{name}} an"],
                _op("pause"),
            ),
            ([f"setze {_DE_ART} {{name}} fort"], _op("resume")),
            ([f"(stoppe|stopp) {_DE_ART} {{name}}"], _op("stop")),
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
        ],
        "HassVacuumStart": [(["(starte|start) [den] (Staubsauger|Saugroboter|Sauger)"], _VACUUM)],
        _RELATIVE: [
            (
                [f"(mach|stelle|stell) {_DE_ART} {{name}} schneller"],
                {"slots": {"direction": "up", "what": "fan_speed"}, **_FAN_NAME},
            ),
            (
                [f"(mach|stelle|stell) {_DE_ART} {{name}} langsamer"],
                {"slots": {"direction": "down", "what": "fan_speed"}, **_FAN_NAME},
            ),
            ([f"(mach|stelle|stell) den Ventilator [{_DE_IN}] schneller"], _FASTER),
            ([f"(mach|stelle|stell) den Ventilator [{_DE_IN}] langsamer"], _SLOWER),
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
                    f"wie viel (CO2|Kohlendioxid) ist {_DE_IN}",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"wie hoch ist der Feinstaub[wert] {_DE_IN}"], _m("pm25")),
            (
                [f"wie ist die (Luftqualität|Luft) {_DE_IN}"],
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
                ],
                _m("minutes_left"),
            ),
        ],
    },
    "fr": {
        OPERATE_INTENT: [
            ([f"(lance|démarre|mets en marche) {_FR_ART}{{name}}"], _op("start")),
            ([f"(mets|met) {_FR_ART}{{name}} en pause", f"pause {_FR_ART}{{name}}"], _op("pause")),
            ([f"(reprends|relance) {_FR_ART}{{name}}"], _op("resume")),
            ([f"(arrête|stoppe) {_FR_ART}{{name}}"], _op("stop")),
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
            ([f"(accélère|augmente) le ventilateur [{_FR_IN}]"], _FASTER),
            ([f"(ralentis|baisse) le ventilateur [{_FR_IN}]"], _SLOWER),
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
                    f"quel est le (taux|niveau) de (co2|dioxyde de carbone) {_FR_IN}",
                    f"combien de (co2|dioxyde de carbone) [y a-t-il] {_FR_IN}",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"quel est le (taux|niveau) de particules fines {_FR_IN}"], _m("pm25")),
            ([f"(quelle est|comment est) la qualité de l'air {_FR_IN}"], _m("aqi")),
            ([f"(quelle est la luminosité|il fait clair) {_FR_IN}"], _m("illuminance")),
            (
                [f"(y a-t-il|est-ce qu'il y a|il y a) une fuite [d'eau] [{_FR_IN}]"],
                _m("leak"),
            ),
            (
                [
                    "combien de temps reste-t-il (au|à la|à l') {name}",
                    f"quand {_FR_ART}{{name}} aura-t-il fini",
                ],
                _m("minutes_left"),
            ),
        ],
    },
    "es": {
        OPERATE_INTENT: [
            (
                [f"(pon en marcha|inicia|arranca|empieza) {_ES_ART} {{name}}"],
                _op("start", ("appliance",)),
            ),
            ([f"(pausa|pon en pausa) {_ES_ART} {{name}}"], _op("pause")),
            ([f"(reanuda|continúa) {_ES_ART} {{name}}"], _op("resume")),
            ([f"(para|detén) {_ES_ART} {{name}}"], _op("stop")),
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
        ],
        "HassVacuumStart": [
            (["(inicia|pon en marcha|arranca) [el|la] (aspiradora|robot aspirador)"], _VACUUM),
            ([f"(inicia|pon en marcha|arranca) {_ES_ART} {{name}}"], _VACUUM_NAME),
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
            ([f"(acelera|sube) el ventilador [{_ES_IN}]"], _FASTER),
            ([f"(frena|baja) el ventilador [{_ES_IN}]"], _SLOWER),
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
                    f"(cuál|cual) es el nivel de (co2|dióxido de carbono) {_ES_IN}",
                    f"(cuánto|cuanto) (co2|dióxido de carbono) hay {_ES_IN}",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"(cuál|cual) es el nivel de partículas finas {_ES_IN}"], _m("pm25")),
            ([f"(cómo|como|cuál|cual) es la calidad del aire {_ES_IN}"], _m("aqi")),
            ([f"(cuánta|cuanta) luz hay {_ES_IN}"], _m("illuminance")),
            ([f"hay (una|alguna) fuga [de agua] [{_ES_IN}]"], _m("leak")),
            (
                ["(cuánto|cuanto) [tiempo] le queda (al|a la) {name}"],
                _m("minutes_left"),
            ),
        ],
    },
    "nl": {
        OPERATE_INTENT: [
            ([f"start {_NL_ART} {{name}}"], _op("start", ("appliance",))),
            (
                [f"pauzeer {_NL_ART} {{name}}", f"zet {_NL_ART} {{name}} op pauze"],
                _op("pause"),
            ),
            ([f"hervat {_NL_ART} {{name}}"], _op("resume")),
            ([f"stop {_NL_ART} {{name}}"], _op("stop")),
            (["start [de] (vaatwasser|vaatwasmachine)"], _kind("start", "appliance", "dishwasher")),
            (["start [de] wasmachine"], _kind("start", "appliance", "washer")),
            (["start [de] droger"], _kind("start", "appliance", "dryer")),
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
            ([f"zet de ventilator [{_NL_IN}] (sneller|harder)"], _FASTER),
            ([f"zet de ventilator [{_NL_IN}] (langzamer|zachter)"], _SLOWER),
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
                    f"hoeveel co2 is er {_NL_IN}",
                ],
                _m("carbon_dioxide"),
            ),
            ([f"wat is het fijnstof[niveau] {_NL_IN}"], _m("pm25")),
            ([f"hoe is de luchtkwaliteit {_NL_IN}"], _m("aqi")),
            ([f"hoe (licht|donker) is het {_NL_IN}"], _m("illuminance")),
            ([f"is er (een|ergens een) [water]lek [{_NL_IN}]"], _m("leak")),
            (
                [
                    f"hoe lang (duurt|loopt) {_NL_ART} {{name}} nog",
                    f"wanneer is {_NL_ART} {{name}} klaar",
                ],
                _m("minutes_left"),
            ),
        ],
    },
}

# Answers (merged into responses.RESPONSES: every language has every key).
KIND_RESPONSES: dict[str, dict[str, str]] = {
    "en": {
        "fan_speed": "Set {target} to {percent} percent speed.",
        "start": "Started {target}.",
        "pause": "Paused {target}.",
        "resume": "Resumed {target}.",
        "dock": "Sent {target} back to its dock.",
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
        "start": "{target} ist gestartet.",
        "pause": "{target} ist pausiert.",
        "resume": "{target} läuft weiter.",
        "dock": "{target} fährt zurück zur Ladestation.",
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
        "start": "{target} a démarré.",
        "pause": "{target} est en pause.",
        "resume": "{target} a repris.",
        "dock": "{target} retourne à sa base.",
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
        "start": "He puesto en marcha {target}.",
        "pause": "He pausado {target}.",
        "resume": "He reanudado {target}.",
        "dock": "{target} vuelve a la base.",
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
        "start": "{target} is gestart.",
        "pause": "{target} is gepauzeerd.",
        "resume": "{target} gaat verder.",
        "dock": "{target} gaat terug naar het basisstation.",
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
