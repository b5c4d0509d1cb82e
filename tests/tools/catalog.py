"""A realistic catalogue of hundreds of device tools, shaped like the Matter generator's output."""

from __future__ import annotations

from bridge.tools.definition import Category, Requires, ToolDefinition

ROOMS = [
    "living_room",
    "kitchen",
    "hallway",
    "bedroom",
    "guest_bedroom",
    "bathroom",
    "office",
    "garage",
    "porch",
    "garden",
    "dining_room",
    "basement",
    "attic",
    "laundry",
    "nursery",
    "study",
    "landing",
    "pantry",
    "patio",
    "den",
    "loft",
    "closet",
    "entrance",
    "staircase",
    "playroom",
    "gym",
    "library",
    "workshop",
    "conservatory",
    "balcony",
]

LEVEL = {
    "type": "object",
    "required": ["percent"],
    "properties": {"percent": {"type": "integer", "minimum": 0, "maximum": 100}},
}
EMPTY = {"type": "object", "properties": {}}
TEMP = {
    "type": "object",
    "required": ["celsius"],
    "properties": {"celsius": {"type": "number", "minimum": 5, "maximum": 35}},
}

# (device slug, human noun, [(suffix, description template, category, params)])
DEVICES = [
    (
        "light",
        "light",
        [
            ("on", "Turn on the {room} light", Category.ACTING, EMPTY),
            ("off", "Turn off the {room} light", Category.ACTING, EMPTY),
            ("toggle", "Toggle the {room} light", Category.ACTING, EMPTY),
            ("brightness", "Set the {room} light brightness in percent", Category.ACTING, LEVEL),
            ("color", "Set the {room} light color by name, hex or kelvin", Category.ACTING, EMPTY),
        ],
    ),
    (
        "plug",
        "smart plug",
        [
            ("on", "Turn on the {room} smart plug", Category.ACTING, EMPTY),
            ("off", "Turn off the {room} smart plug", Category.ACTING, EMPTY),
        ],
    ),
    (
        "thermostat",
        "thermostat",
        [
            (
                "set_temperature",
                "Set the {room} thermostat target temperature in °C",
                Category.ACTING,
                TEMP,
            ),
            ("read_temperature", "Read the current {room} temperature", Category.SENSING, EMPTY),
        ],
    ),
    (
        "blinds",
        "blinds",
        [
            ("open", "Open the {room} blinds", Category.ACTING, EMPTY),
            ("close", "Close the {room} blinds", Category.ACTING, EMPTY),
        ],
    ),
]


def catalog() -> list[ToolDefinition]:
    """Return 30 rooms x 11 tools = 330 device tool definitions."""
    out = []
    for room in ROOMS:
        words = room.replace("_", " ")
        for slug, noun, rows in DEVICES:
            for suffix, template, category, params in rows:
                out.append(
                    ToolDefinition(
                        name=f"{slug}_{room}_{suffix}",
                        namespace="matter",
                        description=template.format(room=words),
                        category=category,
                        parameters=params,
                        requires=Requires(
                            capabilities=("matter_bridge",),
                            permissions=(f"device:control:{slug}_{room}",),
                        ),
                        metadata={"tags": [slug, words], "aliases": [f"{words} {noun}"]},
                        server_name="",
                    )
                )
    return out
