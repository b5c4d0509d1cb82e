"""What a sentence is about: Home Assistant's domains and device classes, and our device kinds.

Home Assistant's templates say what a sentence is about through their slots
(``domain: cover``, ``device_class`` from its ``cover_classes`` list …) and through the
domain a ``{name}`` must have. ``domain_of(device)`` gives each of our devices the same
vocabulary, so a sentence about a fan can only ever reach a fan. ``noun(language,
domain, device_class)`` is the word for the subject in an answer ("there is no fan in
the Kitchen").
"""

from __future__ import annotations

from bridge.matter import Device
from bridge.voice.kind_words import APPLIANCE_CLASSES

# our device kind -> Home Assistant domain
KIND_DOMAINS: dict[str, str] = {
    "light": "light",
    "plug": "switch",
    "switch": "switch",
    "thermostat": "climate",
    "lock": "lock",
    "blind": "cover",
    "fan": "fan",
    "contact_sensor": "binary_sensor",
    "occupancy_sensor": "binary_sensor",
    "smoke_alarm": "binary_sensor",
    "leak_sensor": "binary_sensor",
    "closure": "cover",  # Matter 1.5 closures: garage doors, gates (classes from the name)
    # Issue 29's kinds: an air purifier or a hood is a fan to Home Assistant too; a washer,
    # dryer, dishwasher, oven or microwave an appliance (its class: kind_words).
    "air_purifier": "fan",
    "extractor_hood": "fan",
    "vacuum": "vacuum",
    "valve": "valve",
    "freeze_sensor": "binary_sensor",
    "rain_sensor": "binary_sensor",
    "chime": "chime",  # plays its selected sound (kind_words: "ring the chime")
    "speaker": "media_player",  # mute, unmute, its volume (Home Assistant's media templates)
    **dict.fromkeys(APPLIANCE_CLASSES, "appliance"),
}
SENSOR_KINDS = {
    "temperature_sensor": "temperature",
    "humidity_sensor": "humidity",
    "light_sensor": "illuminance",
    "pressure_sensor": "pressure",
    "flow_sensor": "flow",
    "air_quality_sensor": "aqi",
}
# Cover device classes a device kind answers to (a blind is not a curtain or a door).
KIND_COVER_CLASSES: dict[str, frozenset[str]] = {
    "blind": frozenset({"blind", "shade", "shutter"}),
}
WINDOW_COVERING, COVERING_TYPE = 0x0102, 0x0000
_SHADE = frozenset({"shade", "blind"})  # a roller shade is a (roller) blind too
# WindowCovering Type (Matter 1.4 application clusters 5.3.5.2) -> what people call it:
# Rollershade 0-3, Drapery 4, Awning 5, Shutter 6, TiltBlindTiltOnly 7,
# TiltBlindLiftAndTilt 8, ProjectorScreen 9 (Unknown 10 and absent: the kind's classes).
COVERING_TYPE_CLASSES: dict[int, frozenset[str]] = {
    0: _SHADE,
    1: _SHADE,
    2: _SHADE,
    3: _SHADE,
    4: frozenset({"curtain"}),
    5: frozenset({"awning"}),
    6: frozenset({"shutter", "blind", "shade"}),  # roller shutters: "Rollo", "persiana"
    7: _SHADE,
    8: _SHADE,
    9: frozenset({"shade"}),
}


# Words in a closure's name that say what it is (ClosureControl has no Type attribute).
_CLOSURE_WORDS: dict[str, frozenset[str]] = {
    "garage": frozenset({"garage", "door"}),
    "garagentor": frozenset({"garage", "door"}),
    "garaje": frozenset({"garage", "door"}),
    "garagedeur": frozenset({"garage", "door"}),
    "gate": frozenset({"gate"}),
    "tor": frozenset({"gate"}),
    "portail": frozenset({"gate"}),
    "verja": frozenset({"gate"}),
    "portón": frozenset({"gate"}),
    "hek": frozenset({"gate"}),
}


def cover_classes(device: Device) -> frozenset[str]:
    """Return the cover classes ``device`` answers to, from its own WindowCovering Type.

    A closure (Matter 1.5) answers to what its name says it is ("Garage Door": garage,
    door), else only to its name: a "close the blinds" never reaches a garage door.
    """
    if device.kind == "closure":
        words = device.name.casefold().split()
        return frozenset(c for w in words for c in _CLOSURE_WORDS.get(w, ()))
    covering = device.attr(WINDOW_COVERING, COVERING_TYPE)
    if device.kind == "blind" and isinstance(covering, int) and covering in COVERING_TYPE_CLASSES:
        return COVERING_TYPE_CLASSES[covering]
    return KIND_COVER_CLASSES.get(device.kind, frozenset())


def domain_of(device: Device) -> str:
    """Return the Home Assistant domain of ``device`` (``sensor`` for measuring devices)."""
    if device.kind in SENSOR_KINDS:
        return "sensor"
    return KIND_DOMAINS.get(device.kind, device.kind)


def fits(device: Device, domain: str, device_class: str | None = None) -> bool:
    """Return whether ``device`` is the kind of thing ``domain`` (and class) names."""
    if domain_of(device) != domain:
        return False
    if device_class is None:
        return True
    if domain == "cover":  # one class, or several a word may mean ("blind,shade")
        return bool(set(device_class.split(",")) & cover_classes(device))
    if domain == "sensor":
        return SENSOR_KINDS.get(device.kind) == device_class
    if domain == "appliance":  # "start the dishwasher" never starts the washer
        return APPLIANCE_CLASSES.get(device.kind) == device_class
    return True


_NOUNS: dict[str, dict[str, str]] = {
    "en": {
        "light": "light",
        "fan": "fan",
        "cover": "cover",
        "lock": "lock",
        "switch": "switch",
        "climate": "thermostat",
        "media_player": "speaker",
        "valve": "valve",
        "scene": "scene",
        "script": "script",
        "button": "button",
        "vacuum": "vacuum",
        "chime": "chime",
        "lawn_mower": "lawn mower",
        "sensor": "sensor",
        "binary_sensor": "sensor",
        "humidity": "humidity sensor",
        "temperature": "thermometer",
        "blind": "blind",
        "curtain": "curtain",
        "door": "door",
        "garage": "garage door",
        "gate": "gate",
        "shade": "shade",
        "shutter": "shutter",
        "window": "window",
        "awning": "awning",
        "appliance": "appliance",
        "dishwasher": "dishwasher",
        "washer": "washing machine",
        "dryer": "dryer",
        "oven": "oven",
        "microwave": "microwave",
        "power": "power meter",
        "energy": "energy meter",
        "carbon_dioxide": "CO2 sensor",
        "pm25": "particulate sensor",
        "aqi": "air quality sensor",
        "illuminance": "light sensor",
        "leak": "leak sensor",
        "minutes_left": "appliance",
        "ev_charger": "EV charger",
        "water_heater": "water heater",
    },
    "de": {
        "light": "Licht",
        "fan": "Ventilator",
        "cover": "Rollladen",
        "lock": "Schloss",
        "switch": "Schalter",
        "climate": "Thermostat",
        "media_player": "Lautsprecher",
        "valve": "Ventil",
        "scene": "Szene",
        "script": "Skript",
        "button": "Taster",
        "vacuum": "Staubsauger",
        "chime": "Gong",
        "lawn_mower": "Rasenmäher",
        "sensor": "Sensor",
        "binary_sensor": "Sensor",
        "humidity": "Feuchtigkeitssensor",
        "temperature": "Thermometer",
        "blind": "Rollo",
        "curtain": "Vorhang",
        "door": "Tür",
        "garage": "Garagentor",
        "gate": "Tor",
        "shade": "Rollo",
        "shutter": "Rollladen",
        "window": "Fenster",
        "awning": "Markise",
        "appliance": "Haushaltsgerät",
        "dishwasher": "Spülmaschine",
        "washer": "Waschmaschine",
        "dryer": "Trockner",
        "oven": "Backofen",
        "microwave": "Mikrowelle",
        "power": "Strommesser",
        "energy": "Energiezähler",
        "carbon_dioxide": "CO2-Sensor",
        "pm25": "Feinstaubsensor",
        "aqi": "Luftqualitätssensor",
        "illuminance": "Lichtsensor",
        "leak": "Wassermelder",
        "minutes_left": "Haushaltsgerät",
        "ev_charger": "Wallbox",
        "water_heater": "Warmwasserbereiter",
    },
    "fr": {
        "light": "lumière",
        "fan": "ventilateur",
        "cover": "volet",
        "lock": "serrure",
        "switch": "interrupteur",
        "climate": "thermostat",
        "media_player": "enceinte",
        "valve": "vanne",
        "scene": "scène",
        "script": "script",
        "button": "bouton",
        "vacuum": "aspirateur",
        "chime": "carillon",
        "lawn_mower": "tondeuse",
        "sensor": "capteur",
        "binary_sensor": "capteur",
        "humidity": "capteur d'humidité",
        "temperature": "thermomètre",
        "blind": "store",
        "curtain": "rideau",
        "door": "porte",
        "garage": "porte de garage",
        "gate": "portail",
        "shade": "store",
        "shutter": "volet",
        "window": "fenêtre",
        "awning": "auvent",
        "appliance": "appareil",
        "dishwasher": "lave-vaisselle",
        "washer": "machine à laver",
        "dryer": "sèche-linge",
        "oven": "four",
        "microwave": "micro-ondes",
        "power": "compteur électrique",
        "energy": "compteur d'énergie",
        "carbon_dioxide": "capteur de CO2",
        "pm25": "capteur de particules",
        "aqi": "capteur de qualité de l'air",
        "illuminance": "capteur de lumière",
        "leak": "détecteur de fuite",
        "minutes_left": "appareil",
        "ev_charger": "borne de recharge",
        "water_heater": "chauffe-eau",
    },
    "es": {
        "light": "luz",
        "fan": "ventilador",
        "cover": "persiana",
        "lock": "cerradura",
        "switch": "interruptor",
        "climate": "termostato",
        "media_player": "altavoz",
        "valve": "válvula",
        "scene": "escena",
        "script": "script",
        "button": "botón",
        "vacuum": "aspiradora",
        "chime": "carillón",
        "lawn_mower": "cortacésped",
        "sensor": "sensor",
        "binary_sensor": "sensor",
        "humidity": "sensor de humedad",
        "temperature": "termómetro",
        "blind": "persiana",
        "curtain": "cortina",
        "door": "puerta",
        "garage": "puerta del garaje",
        "gate": "verja",
        "shade": "estor",
        "shutter": "contraventana",
        "window": "ventana",
        "awning": "toldo",
        "appliance": "electrodoméstico",
        "dishwasher": "lavavajillas",
        "washer": "lavadora",
        "dryer": "secadora",
        "oven": "horno",
        "microwave": "microondas",
        "power": "medidor de potencia",
        "energy": "medidor de energía",
        "carbon_dioxide": "sensor de CO2",
        "pm25": "sensor de partículas",
        "aqi": "sensor de calidad del aire",
        "illuminance": "sensor de luz",
        "leak": "sensor de fugas",
        "minutes_left": "electrodoméstico",
        "ev_charger": "cargador de coche",
        "water_heater": "calentador de agua",
    },
    "nl": {
        "light": "lamp",
        "fan": "ventilator",
        "cover": "zonwering",
        "lock": "slot",
        "switch": "schakelaar",
        "climate": "thermostaat",
        "media_player": "speaker",
        "valve": "klep",
        "scene": "scène",
        "script": "script",
        "button": "knop",
        "vacuum": "stofzuiger",
        "chime": "gong",
        "lawn_mower": "grasmaaier",
        "sensor": "sensor",
        "binary_sensor": "sensor",
        "humidity": "vochtigheidssensor",
        "temperature": "thermometer",
        "blind": "jaloezie",
        "curtain": "gordijn",
        "door": "deur",
        "garage": "garagedeur",
        "gate": "hek",
        "shade": "rolgordijn",
        "shutter": "rolluik",
        "window": "raam",
        "awning": "zonnescherm",
        "appliance": "apparaat",
        "dishwasher": "vaatwasser",
        "washer": "wasmachine",
        "dryer": "droger",
        "oven": "oven",
        "microwave": "magnetron",
        "power": "stroommeter",
        "energy": "energiemeter",
        "carbon_dioxide": "CO2-sensor",
        "pm25": "fijnstofsensor",
        "aqi": "luchtkwaliteitssensor",
        "illuminance": "lichtsensor",
        "leak": "lekmelder",
        "minutes_left": "apparaat",
        "ev_charger": "laadpaal",
        "water_heater": "boiler",
    },
}


def noun(language: str, domain: str, device_class: str | None = None) -> str:
    """Return the word for a subject in ``language`` (the class's word when there is one)."""
    table = _NOUNS.get(language, _NOUNS["en"])
    device_class = (device_class or "").split(",")[0]
    return table.get(device_class, table.get(domain, _NOUNS["en"].get(domain, domain)))
