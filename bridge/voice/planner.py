"""Planning a spoken command: the subject first, then the target, then the tool.

``Planner.plan(reading, text, lang, token)`` turns one template match into the tool
calls it asks for (``Plan``) or into the answer that nothing will be done
(``IntentReply``): a device named wins over a room, a kind of device is checked against
what the home holds, and the tool for a capability comes from the generator's own
``tool_for`` — voice never spells a tool name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hassil.intents import TextSlotList, TextSlotValue

from bridge.auth.visibility import may_see_device
from bridge.matter import Device, Room, slugify
from bridge.voice.floors import Floor
from bridge.voice.kind_words import (
    MEASURE_INTENT,
    MEASURES,
    MODE_FILLERS,
    OPERATE_INTENT,
    OPERATED,
    ROOM_MEASURES,
)
from bridge.voice.responses import RESPONSES, both, either, mode_said, say
from bridge.voice.subjects import domain_of, fits, noun
from bridge.voice.templates import CLIMATE_MODE_INTENT, RELATIVE_INTENT, STOP_INTENT
from bridge.voice.units import IMPERIAL, METRIC, from_celsius, to_celsius
from bridge.voice.wording import is_small

if TYPE_CHECKING:
    from hassil.intents import SlotList
    from hassil.recognize import RecognizeResult

    from bridge.auth.tokens import AgentToken
    from bridge.tools.definition import ToolDefinition

# Singular light nouns that, right after a room's name, mean "the <room> light": the one
# light there. (French and Spanish name the room after the noun, "la lumière du salon",
# which people use for the room's lights as a whole.)
_SINGULAR_LIGHT = {
    "en": ("light", "lamp"),
    "de": ("licht", "lampe", "leuchte"),
    "nl": ("lamp", "licht"),
}
# What "turn on/off" means per domain: the capability (tool row) to call.
_SWITCHING: dict[str, tuple[str, str]] = {
    "light": ("on", "off"),
    "switch": ("on", "off"),
    "fan": ("on", "off"),
    "lock": ("lock", "unlock"),
    "cover": ("open", "close"),
    "valve": ("open", "close"),
}
# Response key per capability that has its own sentence.
SAID = {
    "on": "on",
    "off": "off",
    "lock": "lock",
    "open": "open",
    "close": "close",
    "stop": "stop",
    "brightness": "brightness",
    "set_color": "color",
    "color_temperature": "color_temperature",
    "set_position": "set_position",
    "set_temperature": "set_temperature",
    "set_mode": "thermostat_off",
    "temperature": "set_temperature",
    "color": "color",
}
ToolFor = Callable[..., "ToolDefinition | None"]
# Cover classes a sentence may name without a room: a home has one garage door or gate.
_HOME_WIDE = frozenset({"garage", "gate"})
# Kinds a sentence may speak of all at once, each device on its own ("open all the
# curtains", "lock all the doors"); lights go by their rooms' tools instead.
_EVERY_ONE = frozenset({"cover", "lock"})
# Answers about several devices at once, by what was done: "A and B are locked".
_PLURAL = {
    "open": "are_open",
    "close": "are_closed",
    "lock": "are_locked",
    "unlock": "are_unlocked",
}
# A percentage said aloud, in any of the languages ("%", "percent", "Prozent", "pour
# cent", "por ciento", "procent").
_PERCENT_SAID = re.compile(r"%|\b(percent|prozent|pour cent|por ciento|procent)\b", re.I)
# Answers that have a room-lights form ("Turned on the lights in Kitchen.") and an
# every-light form ("Set all the lights to blue.").
_ROOM_SAID = frozenset({"on", "off", "brightness", "color"})
# Steps of a relative change said without a number: brightness points ("a bit": fewer),
# degrees in the units said.
BRIGHTNESS_STEP, SMALL_STEP = 20, 10
# A relative colour-temperature change ("warmer", "cooler"), in kelvin ("a bit": half).
KELVIN_STEP = 500
# A fan's relative step in speed points ("faster"; "a bit": SMALL_STEP), and the slowest
# it is stepped down to (slowing down never switches a fan off).
FAN_STEP, FAN_SLOWEST = 25, 10
# A cover's relative step in points of opening ("open the blind a bit": always said
# with "a bit", so there is no bigger step to be smaller than).
COVER_STEP = 20
TEMPERATURE_STEP = {METRIC: 1, IMPERIAL: 2}
# The tools that set a device's own named mode: a washer's or dishwasher's cycle, a
# robot's clean mode, an oven's or microwave's cooking mode (cluster maps' row suffixes).
_MODE_TOOLS = ("set_cycle", "set_clean_mode", "set_mode")
# (domain, action said) -> (capability, answer) where a kind says it its own way: an EV
# charger's "start" is EnableCharging.
_OPERATE_AS = {
    ("ev_charger", "start"): ("enable_charging", "charge"),
    ("ev_charger", "stop"): ("disable_charging", "stop_charging"),
}
# Actions that take the minutes said (a water heater's boost, a microwave's cooking).
_TIMED = frozenset({"boost", "cook"})
# Home Assistant's media intents this home answers: a speaker's mute and its volume.
SOUND_INTENTS = frozenset(
    {"HassMediaPlayerMute", "HassMediaPlayerUnmute", "HassSetVolume", "HassSetVolumeRelative"}
)
# A speaker's relative step in points of volume ("louder", "turn the volume up").
VOLUME_STEP = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class IntentReply:
    """What a spoken command did and the sentence to speak back."""

    speech: str
    language: str
    handled: bool
    intent: str | None = None
    calls: tuple[dict[str, Any], ...] = ()
    suggestions: tuple[str, ...] = ()
    duration_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Return the JSON answer of ``POST /v1/intents/handle``."""
        return {
            "speech": self.speech,
            "language": self.language,
            "handled": self.handled,
            "intent": self.intent,
            "calls": list(self.calls),
            "suggestions": list(self.suggestions),
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One tool call a sentence asks for, and the spoken name of what it acts on."""

    definition: ToolDefinition
    params: dict[str, Any]
    target: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The calls of a sentence and how to say what was done."""

    calls: tuple[Call, ...]
    key: str
    target: str
    values: dict[str, Any] = field(default_factory=dict)
    # Made one after the other, stopping at the first refused: "start the dishwasher in
    # eco mode" sets the programme before it starts.
    in_order: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """One template match: the intent, slot values and the words they were heard as."""

    intent: str
    values: dict[str, Any]
    texts: dict[str, str]
    combo: str
    units: str | None = None  # the temperature unit said aloud ("68 degrees fahrenheit")

    @classmethod
    def of(cls, result: RecognizeResult, units: str | None = None) -> Reading:
        """Return the reading of a hassil result (``units``: a temperature unit said)."""
        metadata = (result.intent_data.metadata or {}) if result.intent_data else {}
        return cls(
            intent=result.intent.name,
            values={k: v.value for k, v in result.entities.items()},
            texts={k: str(v.text or "") for k, v in result.entities.items()},
            combo=str(metadata.get("slot_combination", "")),
            units=units,
        )


@dataclass(slots=True)
class Home:
    """Devices and rooms as the recogniser sees them (rebuilt after registry changes)."""

    devices: list[Device]
    labels: dict[str, list[Device]] = field(default_factory=dict)  # casefold label → devices
    rooms: dict[str, Room] = field(default_factory=dict)  # room slug → room
    room_labels: dict[str, str] = field(default_factory=dict)  # casefold label → slug
    # slug → every word the room is heard by: its labels and its kind's (``room_words``)
    room_words: dict[str, tuple[str, ...]] = field(default_factory=dict)
    room_key: tuple[object, ...] = ()  # what the rooms and floors were built from
    plurals: set[str] = field(default_factory=set)  # plural labels: every device so named
    floors: dict[str, Floor] = field(default_factory=dict)  # floor slug → floor
    slot_lists: dict[str, SlotList] = field(default_factory=dict)
    # language -> the rooms' kind words said in it ("küche"), added to its "area" list
    area_words: dict[str, list[TextSlotValue]] = field(default_factory=dict)
    language_lists: dict[str, dict[str, SlotList]] = field(default_factory=dict)

    def lists_for(self, language: str) -> dict[str, SlotList]:
        """Return the slot lists for ``language``: the rooms' words in it among the areas."""
        lang = language.split("-")[0].casefold()
        found = self.language_lists.get(lang)
        if found is None:
            found = dict(self.slot_lists)
            words = self.area_words.get(lang)
            area = self.slot_lists.get("area")
            if words and isinstance(area, TextSlotList):
                found["area"] = TextSlotList(name="area", values=[*area.values, *words])
            self.language_lists[lang] = found
        return found


class Planner:
    """Turn a template match into tool calls, asking the generator which tool serves what."""

    def __init__(
        self,
        *,
        home: Callable[[], Home],
        tool_for: ToolFor,
        not_understood: Callable[[str, str, AgentToken | None], IntentReply],
        units: Callable[[], str] = lambda: METRIC,
    ) -> None:
        self._home = home
        self._units = units
        self._tool_for = tool_for
        self._not_understood = not_understood

    def plan(
        self,
        r: Reading,
        text: str,
        lang: str,
        token: AgentToken | None,
        named: Device | None = None,
        *,
        here: str | None = None,
    ) -> Plan | IntentReply:
        """Return the calls ``r`` asks for, or the answer that nothing will be done.

        ``named``: the device the name stands for (one of a plural name's devices).
        ``here``: the speaker's room (slug), if known: of devices sharing the name said,
        the one there ("turn on the reading lamp" said in the salon).
        """
        home = self._home()
        area = r.values.get("area")
        room = home.rooms.get(str(area)) if area is not None else None
        if area is not None and room is None:
            return reply(lang, "where", intent=r.intent)  # the speaker's room is unknown
        floor = home.floors.get(str(r.values["floor"])) if "floor" in r.values else None
        if floor is not None and room is None:
            floor_rooms = [home.rooms[slug] for slug in floor.rooms if slug in home.rooms]
            if not floor_rooms:
                return reply(lang, "no_rooms_floor", target=floor.name, intent=r.intent)
        device: Device | None = named
        if named is None and "name" in r.values:
            # Only devices the caller may see: one out of reach is a name not known.
            devices = [d for d in home.labels.get(str(r.values["name"]), []) if may_see(token, d)]
            if room is not None:
                inside = [d for d in devices if d.room and slugify(d.room) == room.slug]
                if (
                    not inside
                    and devices
                    # a robot's room said is the room to clean, not where it lives
                    and not all(domain_of(d) == "vacuum" for d in devices)
                    and _said_aloud(home, room, text, r.texts.get("name"))
                ):
                    # "turn on the ceiling fan in the hall": not the living room's
                    return reply(
                        lang,
                        "no_kind",
                        kind=r.texts.get("name", ""),
                        target=room.name,
                        intent=r.intent,
                    )
                devices = inside or devices
            elif floor is not None:  # "the reading lamp upstairs": the one on that floor
                devices = [
                    d for d in devices if d.room and slugify(d.room) in floor.rooms
                ] or devices
            elif here is not None and str(r.values["name"]) not in home.plurals:
                # no place said: a name several rooms share means the speaker's room's
                devices = [d for d in devices if d.room and slugify(d.room) == here] or devices
            if len(devices) > 1 and str(r.values["name"]) in home.plurals:
                return self._each_named(devices, r, text, lang, token)
            if len(devices) > 1:
                return which_one(devices, r.intent, lang, token)
            if not devices:
                return self._not_understood(text, lang, token)
            device = devices[0]
        if (
            r.intent == "HassLightSet"
            and device is not None
            and domain_of(device) == "fan"
            and "brightness" in r.values
        ):  # "stelle den Ventilator auf 50 %": a fan's percent is its speed
            values = {k: v for k, v in r.values.items() if k != "brightness"}
            r = replace(
                r, intent="HassFanSetSpeed", values={**values, "percentage": r.values["brightness"]}
            )
        if (
            r.intent == "HassLightSet"
            and device is not None
            and domain_of(device) == "cover"
            and "brightness" in r.values
        ):  # "stelle das Rollo auf 40 %", "set the blind to half": a cover's percent is open
            values = {k: v for k, v in r.values.items() if k not in ("brightness", "domain")}
            r = replace(
                r, intent="HassSetPosition", values={**values, "position": r.values["brightness"]}
            )
        if (
            r.intent == "HassSetPosition"
            and device is not None
            and domain_of(device) == "light"
            and "position" in r.values
            and r.values.get("domain") in (None, "light")
        ):  # "put the sofa lamp at 40 %": a light's percent is its brightness
            values = {k: v for k, v in r.values.items() if k != "position"}
            r = replace(
                r, intent="HassLightSet", values={**values, "brightness": r.values["position"]}
            )
        if (
            r.intent == "HassLightSet"
            and device is None
            and room is not None
            and "brightness" in r.values
            and not _PERCENT_SAID.search(text)
            and not any(domain_of(d) == "light" for d in room.devices)
            and any(d.kind == "thermostat" for d in room.devices)
        ):  # "set the hall to 21": a room with a thermostat and no light, no percent said
            values = {k: v for k, v in r.values.items() if k not in ("brightness", "domain")}
            r = replace(
                r,
                intent="HassClimateSetTemperature",
                values={**values, "temperature": r.values["brightness"]},
            )
        domain, device_class = _kind_said(r, device)
        if device is not None and domain is not None and not fits(device, str(domain)):
            return reply(lang, "cannot", target=device.name, intent=r.intent)
        if device is None and room is not None and domain == "light" and r.combo != "domain_all":
            lights = self._the_room_light(r, text, lang, room)
            if len(lights) > 1:  # "the kitchen light" in a kitchen with several
                return which_one(lights, r.intent, lang, token)
            device = lights[0] if lights else None
        subject = _Subject(
            intent=r.intent,
            domain=domain,
            device_class=device_class,
            device=device,
            room=room,
            lang=lang,
            token=token,
            floor=floor if room is None else None,
            everywhere=r.combo == "domain_all"
            and domain in _EVERY_ONE
            and room is None
            and floor is None,
        )
        if r.intent == RELATIVE_INTENT:
            return self._relative(subject, r, text)
        if r.intent == "HassFanSetSpeed":
            return self._fan_speed(subject, r, text)
        if r.intent in ("HassVacuumStart", "HassVacuumReturnToBase", OPERATE_INTENT):
            return self._operate(subject, r)
        if r.intent == "HassVacuumCleanArea":
            return self._clean_area(subject)
        if r.intent in SOUND_INTENTS:
            return self._sound(subject, r)
        if r.intent == MEASURE_INTENT:
            return self._measure(subject, r)
        if r.intent in ("HassTurnOn", "HassTurnOff"):
            return self._switch(subject, r)
        if r.intent == "HassLightSet":
            return self._light_set(subject, r)
        if r.intent in ("HassSetPosition", STOP_INTENT):
            return self._cover(subject, r)
        if r.intent == "HassGetState":
            return self._state(subject, r)
        if r.intent == CLIMATE_MODE_INTENT or r.values.get("asked") == "target":
            return self._thermostat(subject, r, token)
        return self._climate(subject, r, token)

    def _each_named(
        self, devices: Sequence[Device], r: Reading, text: str, lang: str, token: AgentToken | None
    ) -> Plan | IntentReply:
        """Return the calls for every device of a plural name ("close the smart curtains")."""
        plans: list[Plan] = []
        for device in devices:
            plan = self.plan(r, text, lang, token, named=device)
            if isinstance(plan, IntentReply):
                return plan
            plans.append(plan)
        plan = plans[0]
        return Plan(
            calls=tuple(c for p in plans for c in p.calls),
            key=plan.key,
            target=both(lang, [where_of(d) for d in devices]),
            values=plan.values,
        )

    def _the_room_light(self, r: Reading, text: str, lang: str, room: Room) -> list[Device]:
        """Return the room's lights when the sentence says "the <room> light" (one light).

        Empty when it speaks of the room's lights as a whole.
        """
        words = _SINGULAR_LIGHT.get(lang)
        heard = r.texts.get("area", "")
        if not words or not heard:
            return []
        pattern = re.escape(heard.casefold()) + r"\s?(" + "|".join(words) + r")\b"
        if not re.search(pattern, text.casefold()):
            return []
        return [d for d in room.devices if domain_of(d) == "light"]

    def _call(
        self,
        capability: str,
        params: dict[str, Any],
        target: str,
        *,
        device: Device | None = None,
        room: Room | None = None,
    ) -> Call | None:
        definition = self._tool_for(
            capability, device_id=device.id if device else None, room=room.slug if room else None
        )
        if definition is None:
            return None
        return Call(definition=definition, params=params, target=target)

    def _scope(self, s: _Subject) -> list[Room]:
        """Return the rooms a sentence speaks of: its room, or every room of its floor."""
        if s.room is not None:
            return [s.room]
        if s.floor is not None:
            home = self._home()
            return [home.rooms[slug] for slug in s.floor.rooms if slug in home.rooms]
        return []

    def _members(self, s: _Subject) -> list[Device]:
        """Return the devices in the subject's room (or floor) that are the kind it names."""
        if s.domain is None:
            return []
        rooms = self._scope(s)
        # "open the garage", "close the gate": one of a kind the home has, in any room
        pool = (
            [d for room in rooms for d in room.devices]
            if rooms or not (s.everywhere or _HOME_WIDE & {s.device_class})
            else self._home().devices
        )
        return [d for d in pool if fits(d, s.domain, s.device_class) and may_see(s.token, d)]

    def _each(
        self,
        s: _Subject,
        capability: str,
        params: dict[str, Any],
        key: str,
        values: dict[str, Any] | None = None,
    ) -> Plan | IntentReply:
        """Return calls of ``capability`` on the subject's device or its kind in its room."""
        targets = [s.device] if s.device is not None else self._members(s)
        if not targets:
            return self._no_kind(s)
        if len(targets) > 1 and not (self._scope(s) or s.everywhere):  # which garage door?
            return which_one(targets, s.intent, s.lang, s.token)
        made = [
            (d, c)
            for d in targets
            if (c := self._call(capability, params, d.name, device=d)) is not None
        ]
        calls = [c for _, c in made]
        if not calls:
            return reply(s.lang, "cannot", target=targets[0].name, intent=s.intent)
        if len(calls) == 1:
            return Plan(calls=tuple(calls), key=key, target=calls[0].target, values=values or {})
        # several at once ("the blinds in the living room", "all the doors"): each is
        # named, the whole home's by its room; "A and B are locked"
        names = both(s.lang, [where_of(d) if s.everywhere else c.target for d, c in made])
        if key in _PLURAL:
            return Plan(calls=tuple(calls), key=_PLURAL[key], target=names, values={"names": names})
        many = f"{key}_many" if f"{key}_many" in RESPONSES["en"] else key
        return Plan(calls=tuple(calls), key=many, target=names, values=values or {})

    def _no_kind(self, s: _Subject) -> IntentReply:
        kind = noun(s.lang, s.domain or "", s.device_class)
        if s.room is None and s.floor is not None:
            return reply(s.lang, "no_kind_floor", kind=kind, target=s.floor.name, intent=s.intent)
        if s.room is None:
            return reply(s.lang, "no_kind_home", kind=kind, intent=s.intent)
        return reply(s.lang, "no_kind", kind=kind, target=s.room.name, intent=s.intent)

    def _switch(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        plan = self._switched(s, r)
        if isinstance(plan, Plan) and ("except_name" in r.values or "except_area" in r.values):
            return self._spare(plan, s, r)
        return plan

    def _spare(self, plan: Plan, s: _Subject, r: Reading) -> Plan | IntentReply:
        """Return ``plan`` without the device or room said after "except" ("but").

        "Turn off all the lights except the porch light": the porch light's room is
        switched light by light, the others by their room tools; "… except the
        kitchen": the kitchen's calls go. What was spared is said after what was done.
        """
        home = self._home()
        spared_ids: set[str] = set()
        spared_rooms: set[str] = set()
        names: list[str] = []
        labels = [str(r.values["except_name"])] if "except_name" in r.values else []
        labels += [str(label) for label in r.values.get("except_more", ())]  # "A, B and C"
        slugs = [str(r.values["except_area"])] if "except_area" in r.values else []
        for label in labels:
            visible = [d for d in home.labels.get(label.casefold(), []) if may_see(s.token, d)]
            if visible:
                spared_ids.update(d.id for d in visible)
                names.extend(dict.fromkeys(d.name for d in visible))
            else:  # a room in a list ("… except the porch light and the kitchen")
                slugs.append(home.room_labels.get(label.casefold(), ""))
        for slug in slugs:
            if slug not in home.rooms:  # a name the caller may not see: nothing is done
                return reply(s.lang, "unknown", intent=s.intent)
            spared_rooms.add(slug)
            names.append(home.rooms[slug].name)
        capability = "on" if s.intent == "HassTurnOn" else "off"
        calls: list[Call] = []
        touched = False
        for call in plan.calls:
            meta = call.definition.metadata
            room = meta.get("room") if isinstance(meta.get("room"), dict) else None
            device_id = (meta.get("device") or {}).get("id")
            if room is not None:
                slug = str(room.get("slug"))
                if slug in spared_rooms:
                    touched = True
                    continue
                if spared_ids & set(room.get("devices", [])) and slug in home.rooms:
                    touched = True  # the room's other lights, one by one
                    for device in home.rooms[slug].devices:
                        if (
                            domain_of(device) == "light"
                            and device.id not in spared_ids
                            and may_see(s.token, device)
                            and (c := self._call(capability, {}, device.name, device=device))
                        ):
                            calls.append(c)
                    continue
            elif device_id in spared_ids or any(
                device_id in {d.id for d in home.rooms[slug].devices} for slug in spared_rooms
            ):
                touched = True
                continue
            calls.append(call)
        said = {"spared": both(s.lang, names), "spared_count": len(names)}
        if not touched:  # what was spared would not have been touched anyway
            return replace(plan, values={**plan.values, **said})
        if not calls:
            return reply(s.lang, "nothing_else", names=both(s.lang, names), intent=s.intent)
        return replace(plan, calls=tuple(calls), values={**plan.values, **said})

    def _switched(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        on = s.intent == "HassTurnOn"
        if r.values.get("toggle") and s.device is not None:  # "toggle the porch light"
            return self._each(s, "toggle", {}, "toggle")
        if s.domain == "climate" and (s.device is not None or self._scope(s)):
            # a thermostat said by name, or "turn off the heating in the hall": its mode off
            thermostats = self._thermostats(s)
            if not thermostats:
                return self._no_kind(s)
            target = s.device.name if s.device is not None else s.place
            # "turn the heating on": its mode heat; "the thermostat on": which mode is not said
            mode = str(r.values.get("heat_mode", "off" if not on else ""))
            if not mode:
                return reply(s.lang, "climate_on", target=target, intent=s.intent)
            calls = []
            for device in thermostats:
                call = self._mode_call(device, mode)
                if call is None:
                    return reply(s.lang, "cannot", target=device.name, intent=s.intent)
                calls.append(call)
            # every thermostat of the place: "Turned off <place>."
            said = target if len(calls) > 1 else calls[0].target
            if on:
                values = {"mode": mode_said(s.lang, mode)}
                return Plan(calls=tuple(calls), key="climate_mode", target=said, values=values)
            return Plan(calls=tuple(calls), key="thermostat_off", target=said)
        if s.domain == "fan":
            return self._fan_switch(s, on)
        if s.domain == "water_heater" and s.device is not None:
            return self._water_heater_switch(s, on)
        pair = _SWITCHING.get(s.domain or "")
        if pair is None:
            if s.device is not None:
                return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
            return self._no_kind(s)
        capability = pair[0] if on else pair[1]
        if r.combo == "everything":
            return self._everything(s, r)
        if s.domain == "light" and s.device is None:
            return self._room_lights(s, r, capability, {}, capability)
        return self._each(s, capability, {}, SAID.get(capability, capability))

    def _water_heater_switch(self, s: _Subject, on: bool) -> Plan | IntentReply:
        """Return a water heater's mode "heat" (on) or "off", when its tool has that mode."""
        assert s.device is not None  # noqa: S101 - the caller checked
        call = self._mode_call(s.device, "heat" if on else "off")
        if call is None:
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        return Plan(calls=(call,), key="on" if on else "off", target=s.device.name)

    def _mode_call(self, device: Device, mode: str) -> Call | None:
        """Return ``device``'s set_mode call to ``mode`` (None: its tool has no such mode)."""
        call = self._call("set_mode", {"mode": mode}, device.name, device=device)
        if call is None:
            return None
        modes = call.definition.parameters.get("properties", {}).get("mode", {}).get("enum", [])
        return call if mode in modes else None

    def _everything(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        """Return the calls of "everything off" (or "on") in the subject's room, floor or home.

        Off: the lights and the switches. On: the lights only, since what a switch
        powers (a heater, a pump) is not known to be safe to start. Nothing else: never
        a lock, cover, thermostat or fan, and never a room outside the place said ("turn
        everything off upstairs" is that floor's rooms only).
        """
        whole_home = s.room is None and s.floor is None
        if s.intent == "HassTurnOn":
            on = self._room_lights(
                s, replace(r, combo="domain_all") if whole_home else r, "on", {}, "on"
            )
            if isinstance(on, Plan) and not on.calls:
                return self._no_kind(s)
            return on
        if s.intent != "HassTurnOff":
            return reply(s.lang, "not_here", intent=s.intent)
        rooms = self._scope(s)
        lights = self._room_lights(
            s, replace(r, combo="domain_all") if whole_home else r, "off", {}, "off"
        )
        calls = list(lights.calls) if isinstance(lights, Plan) else []
        pool = [d for room in rooms for d in room.devices] if not whole_home else None
        for device in self._home().devices if pool is None else pool:
            # Only switches the caller may see, as only the rooms it sees above.
            if domain_of(device) == "switch" and may_see(s.token, device):
                call = self._call("off", {}, device.name, device=device)
                if call is not None:
                    calls.append(call)
        if not calls:
            return self._no_kind(s)
        if whole_home:
            return Plan(calls=tuple(calls), key="everything_off", target="")
        where = s.room.name if s.room is not None else s.floor.name if s.floor else ""
        return Plan(calls=tuple(calls), key="everything_off_in", target=where)

    def _room_lights(
        self,
        s: _Subject,
        r: Reading,
        capability: str,
        params: dict[str, Any],
        key: str,
        values: dict[str, Any] | None = None,
    ) -> Plan | IntentReply:
        """Return the room tool call (or, for the whole home, every room's)."""
        # "all the lights off downstairs": the floor said bounds "all" (never the home)
        if s.room is None and s.floor is None and r.combo == "domain_all" and key in _ROOM_SAID:
            home = self._home()
            seen = [
                home.rooms[slug]
                for slug in sorted(home.rooms)
                if any(may_see(s.token, d) for d in home.rooms[slug].devices)
            ]
            calls = [
                c
                for room in seen
                if (c := self._call(capability, params, room.name, room=room)) is not None
            ]
            if not calls:
                return self._no_kind(s)
            # "dim all the lights to 20 percent", "make all the lights blue": every room's
            # lights, said once
            return Plan(calls=tuple(calls), key=f"all_{key}", target="", values=values or {})
        if s.room is None and s.floor is not None:
            rooms = [
                room for room in self._scope(s) if any(may_see(s.token, d) for d in room.devices)
            ]
            calls = [
                c
                for room in rooms
                if (c := self._call(capability, params, room.name, room=room)) is not None
            ]
            if not calls:
                return self._no_kind(s)
            return Plan(
                calls=tuple(calls), key=f"floor_{key}", target=s.floor.name, values=values or {}
            )
        if s.room is None:
            return reply(s.lang, "where", intent=s.intent)
        call = self._call(capability, params, s.room.name, room=s.room)
        if call is None:
            if not [d for d in s.room.devices if domain_of(d) == "light"]:
                return self._no_kind(s)
            return reply(s.lang, "cannot", target=s.room.name, intent=s.intent)
        room_key = f"room_{key}" if key in _ROOM_SAID else key  # "the lights in Kitchen"
        return Plan(calls=(call,), key=room_key, target=s.room.name, values=values or {})

    def _light_set(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        params: dict[str, Any]
        values: dict[str, Any]
        if "brightness" in r.values:
            percent = number(r.values["brightness"])
            capability, params = "brightness", {"percent": percent}
            values = {"percent": spoken_number(percent, s.lang)}
        elif "color" in r.values:
            color = str(r.values["color"])
            heard = r.texts.get("color") or color  # said back in the speaker's words
            capability, params, values = "set_color", {"color": color}, {"color": heard}
        elif "temperature" in r.values:
            kelvin = number(r.values["temperature"])
            capability, params = "color_temperature", {"kelvin": kelvin}
            values = {"kelvin": spoken_number(kelvin, s.lang)}
        else:
            return reply(s.lang, "not_here", intent=s.intent)
        if capability == "color_temperature" and r.combo == "domain_all" and not s.place:
            s = replace(s, everywhere=True)  # "all the lights warm white": each that can
        if s.device is not None or capability == "color_temperature":
            if s.device is None and s.room is not None:  # no room tool: each light that can
                lights = [d for d in s.room.devices if domain_of(d) == "light"]
                calls = [
                    c
                    for d in lights
                    if (c := self._call(capability, params, d.name, device=d)) is not None
                ]
                if not calls:
                    return reply(s.lang, "cannot", target=s.room.name, intent=s.intent)
                return Plan(
                    calls=tuple(calls), key=SAID[capability], target=s.room.name, values=values
                )
            return self._each(s, capability, params, SAID[capability], values)
        room_capability = {"set_color": "color"}.get(capability, capability)
        return self._room_lights(s, r, room_capability, params, SAID[capability], values)

    def _cover(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        s = s.with_domain("cover")
        if s.intent == STOP_INTENT:
            return self._each(s, "stop", {}, "stop")
        percent = number(r.values.get("position", 0))
        return self._each(
            s,
            "set_position",
            {"percent_open": percent},
            "set_position",
            {"percent": spoken_number(percent, s.lang)},
        )

    def _state(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        if s.device is None and (r.combo == "anything" or "state" in r.values):
            return self._states(s, r)
        if s.device is None and s.domain == "sensor" and s.device_class is not None:
            if s.room is None and s.floor is not None:  # "the humidity upstairs"
                return self._floor_readings(s)
            members = self._members(s)
            if not members or s.room is None:
                return self._no_kind(s)
            call = self._call("state", {}, s.room.name, device=members[0])
            if call is None:
                return reply(s.lang, "cannot", target=members[0].name, intent=s.intent)
            return Plan(calls=(call,), key="state", target=s.room.name)  # asked by room
        if s.device is None:
            return reply(s.lang, "not_here", intent=s.intent)
        if r.values.get("asked") == "brightness":  # "how bright is the sofa lamp"
            return self._each(s, "state", {}, "brightness_state")
        if r.values.get("asked") == "color":  # "what colour is the sofa lamp"
            return self._each(s, "state", {}, "color_state")
        return self._each(s, "state", {}, "state")

    def _climate(self, s: _Subject, r: Reading, token: AgentToken | None) -> Plan | IntentReply:
        home = self._home()
        setting = s.intent == "HassClimateSetTemperature"
        if s.device is None and s.floor is not None:
            return self._floor_climate(s, r, setting)
        said = number(r.values.get("temperature", 0)) if setting else 0
        units = self._units()
        value = number(to_celsius(said, r.units or units))  # the tools take Celsius
        heard = said if (r.units or units) == units else number(from_celsius(value, units))
        device = s.device
        if device is None:
            pool = [d for d in home.devices if d.kind == "thermostat"]
            if s.domain == "water_heater":  # "how hot is the water": the water heaters
                pool = [d for d in home.devices if d.kind == s.domain and may_see(s.token, d)]
            if s.room is not None:
                pool = [d for d in pool if d in s.room.devices]
                if setting and pool:
                    call = self._call("temperature", {}, s.room.name, room=s.room)
                    if call is not None:
                        param = _first_param(call.definition, "celsius")
                        params = {param: _in_tool_units(value, param)}
                        call = Call(definition=call.definition, params=params, target=s.room.name)
                        limits = self._limits(pool, "set_temperature")
                        return Plan(
                            calls=(call,),
                            key="set_temperature",
                            target=s.room.name,
                            values={
                                "temperature": spoken_number(heard, s.lang),
                                "limits": limits,
                                "units": units,
                                "tool_units": _units_of(param),
                            },
                        )
                if not setting and not pool:  # a thermometer answers "how warm is it"
                    pool = [d for d in s.room.devices if d.kind == "temperature_sensor"]
            if len(pool) > 1:
                return which_one(pool, s.intent, s.lang, token)
            if not pool:
                target = s.room.name if s.room else ""
                if not target:
                    return reply(
                        s.lang, "no_kind_home", kind=noun(s.lang, "climate"), intent=s.intent
                    )
                return reply(s.lang, "no_temperature", target=target, intent=s.intent)
            device = pool[0]
        spoken = s.room.name if s.room is not None else device.name
        if setting:
            call = self._call("set_temperature", {}, spoken, device=device)
            if call is None:
                return reply(s.lang, "cannot", target=device.name, intent=s.intent)
            param = _first_param(call.definition, "celsius")
            params = {param: _in_tool_units(value, param)}
            return Plan(
                calls=(Call(definition=call.definition, params=params, target=spoken),),
                key="set_temperature",
                target=spoken,
                values={
                    "temperature": spoken_number(heard, s.lang),
                    "units": units,
                    "tool_units": _units_of(param),
                },
            )
        call = self._call("state", {}, spoken, device=device)
        if call is None:
            return reply(s.lang, "no_temperature", target=spoken, intent=s.intent)
        if device.kind == "water_heater":  # "the water in the Water Heater is 52 degrees"
            return Plan(calls=(call,), key="water_temperature", target=spoken)
        return Plan(calls=(call,), key="get_temperature", target=spoken)

    def _floor_readings(self, s: _Subject) -> Plan | IntentReply:
        """Return one read of the asked sensor kind per room of the subject's floor."""
        calls: list[Call] = []
        for room in self._scope(s):
            pool = [
                d
                for d in room.devices
                if fits(d, s.domain or "", s.device_class) and may_see(s.token, d)
            ]
            call = self._call("state", {}, room.name, device=pool[0]) if pool else None
            if call is not None:
                calls.append(call)
        if not calls:
            return self._no_kind(s)
        if len(calls) == 1:  # one room of the floor has one: answered by that room
            return Plan(calls=(calls[0],), key="state", target=calls[0].target)
        return Plan(calls=tuple(calls), key="readings", target=s.place)

    def _floor_climate(self, s: _Subject, r: Reading, setting: bool) -> Plan | IntentReply:
        """Return each room's heating call (or reading) on the subject's floor."""
        units = self._units()
        calls: list[Call] = []
        pools: list[Device] = []
        for room in self._scope(s):
            thermostats = [
                d for d in room.devices if d.kind == "thermostat" and may_see(s.token, d)
            ]
            if setting:
                call = self._call("temperature", {}, room.name, room=room) if thermostats else None
                if call is not None:
                    calls.append(call)
                    pools.extend(thermostats)
                continue
            pool = thermostats or [
                d for d in room.devices if d.kind == "temperature_sensor" and may_see(s.token, d)
            ]
            call = self._call("state", {}, room.name, device=pool[0]) if pool else None
            if call is not None:
                calls.append(call)
        if not calls:
            return reply(s.lang, "no_temperature", target=s.place, intent=s.intent)
        if not setting:
            return Plan(calls=tuple(calls), key="temperatures", target=s.place)
        said = number(r.values.get("temperature", 0))
        value = number(to_celsius(said, r.units or units))
        heard = said if (r.units or units) == units else number(from_celsius(value, units))
        made = []
        for call in calls:
            param = _first_param(call.definition, "celsius")
            made.append(
                Call(
                    definition=call.definition,
                    params={param: _in_tool_units(value, param)},
                    target=call.target,
                )
            )
        param = _first_param(calls[0].definition, "celsius")
        return Plan(
            calls=tuple(made),
            key="set_temperature",
            target=s.place,
            values={
                "temperature": spoken_number(heard, s.lang),
                "limits": self._limits(pools, "set_temperature"),
                "units": units,
                "tool_units": _units_of(param),
            },
        )

    def _states(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        """Return the state reads of every device a room/floor/home question asks about.

        "is anything on in the kitchen" (lights, switches, fans), "are the doors locked",
        "are the lights on upstairs": each device of the kind in the place (the speaker's
        room, else the whole home when the sentence names no place) is read; the answer
        names those in the asked state and those not.
        """
        home = self._home()
        asked = str(r.values.get("state", "on"))
        if r.combo == "anything":
            kinds: tuple[str, ...] = ("light", "switch", "fan")
        elif s.domain is not None:
            kinds = (s.domain,)
        else:
            return reply(s.lang, "not_here", intent=s.intent)
        # the place said, else every room of the home
        rooms = (
            self._scope(s)
            if s.room is not None or s.floor is not None
            else [home.rooms[slug] for slug in sorted(home.rooms)]
        )
        pool = [d for room in rooms for d in room.devices]
        devices = [
            d
            for d in pool
            if domain_of(d) in kinds
            and may_see(s.token, d)
            and (s.device_class is None or fits(d, domain_of(d), s.device_class))
        ]
        names = [d.name for d in devices]  # two "Smart Curtain"s: each said with its room
        calls = [
            c
            for d in devices
            if (
                c := self._call(
                    "state", {}, where_of(d) if names.count(d.name) > 1 else d.name, device=d
                )
            )
        ]
        if not calls and r.combo == "anything":  # nothing there that can be on
            return IntentReply(
                speech=say(s.lang, "nothing_on_in" if s.place else "nothing_on", target=s.place),
                language=s.lang,
                handled=True,
                intent=s.intent,
            )
        if not calls:
            return self._no_kind(s)
        return Plan(
            calls=tuple(calls),
            key="states",
            target=s.place,
            values={"state": asked, "anything": r.combo == "anything"},
        )

    def _relative(self, s: _Subject, r: Reading, text: str) -> Plan | IntentReply:
        """Return a relative change: "brighter", "dim the kitchen a bit", "2 degrees warmer".

        Brightness: the lights' states are read first (the plan's calls; ``after_reads``
        makes the brightness calls from them). Temperature: each thermostat's own
        raise/lower tool, by the step said or one degree (two in a Fahrenheit home).
        """
        up = r.values.get("direction") == "up"
        what = r.values.get("what")
        if s.device is not None and domain_of(s.device) == "media_player" and what is None:
            # "turn up the kitchen speaker": its volume
            step = r.values.get("step")
            said = {
                "volume_step": (step if up else -step)
                if isinstance(step, int | float) and step
                else ("up" if up else "down")
            }
            return self._sound(
                replace(s, intent="HassSetVolumeRelative"), replace(r, values={**r.values, **said})
            )
        if what == "warmth":  # "make the sofa lamp warmer": a light's white, fewer kelvin
            light = s.device is not None and domain_of(s.device) == "light"
            what, up = ("kelvin", not up) if light else ("temperature", up)
        if what is None:
            domain = s.domain or (domain_of(s.device) if s.device is not None else None)
            what = {
                "light": "brightness",
                "climate": "temperature",
                "water_heater": "temperature",
                "fan": "fan_speed",
                "cover": "position",
            }.get(str(domain))
        if what is None:
            if s.device is not None:
                return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
            return reply(s.lang, "not_here", intent=s.intent)
        if what == "temperature" and s.device is None and not self._scope(s):
            pool = [
                d for d in self._home().devices if d.kind == "thermostat" and may_see(s.token, d)
            ]
            if len(pool) == 1:  # "turn the heat up" in a home with one thermostat
                s = replace(s, device=pool[0])
        if s.device is None and not self._scope(s):
            return reply(s.lang, "where", intent=s.intent)
        if what == "temperature":
            return self._warmer(replace(s, domain="climate"), r, up)
        if what == "fan_speed":
            return self._faster(replace(s, domain="fan"), r, text, up)
        if what == "kelvin":
            return self._whiter(replace(s, domain="light"), text, up)
        if what == "position":
            return self._opener(replace(s, domain="cover"), r, up)
        s = replace(s, domain="light")
        if s.device is not None and domain_of(s.device) != "light":
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        lights = [s.device] if s.device is not None else self._members(s)
        if not lights:
            return self._no_kind(s)
        step = (
            number(r.values["step"])
            if "step" in r.values
            else (SMALL_STEP if is_small(text, s.lang) else BRIGHTNESS_STEP)
        )
        reads = [
            c
            for d in lights
            if self._tool_for("brightness", device_id=d.id) is not None
            and (c := self._call("state", {}, d.name, device=d)) is not None
        ]
        if not reads:
            return reply(s.lang, "cannot", target=s.place or lights[0].name, intent=s.intent)
        return Plan(
            calls=tuple(reads),
            key="relative_brightness",
            target=s.place or lights[0].name,
            values={
                "delta": step if up else -step,
                "devices": [d for d in lights if self._tool_for("brightness", device_id=d.id)],
            },
        )

    def _whiter(self, s: _Subject, text: str, up: bool) -> Plan | IntentReply:
        """Return the state reads of a relative colour-temperature change (cooler: up).

        ``after_reads`` makes the colour-temperature calls from the lights' kelvin.
        """
        if s.device is not None and domain_of(s.device) != "light":
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        lights = [s.device] if s.device is not None else self._members(s)
        if not lights:
            return self._no_kind(s)
        step = KELVIN_STEP // 2 if is_small(text, s.lang) else KELVIN_STEP
        return self._reads_first(s, lights, "color_temperature", "relative_kelvin", step, up)

    def _opener(self, s: _Subject, r: Reading, up: bool) -> Plan | IntentReply:
        """Return the covers' state reads of "open the blind a bit" (up) or "close ... a bit".

        ``after_reads`` moves each cover's own opening by the step (said, or COVER_STEP).
        """
        if s.device is not None and domain_of(s.device) != "cover":
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        covers = [s.device] if s.device is not None else self._members(s)
        if not covers:
            return self._no_kind(s)
        step = number(r.values["step"]) if "step" in r.values else COVER_STEP
        return self._reads_first(s, covers, "set_position", "relative_position", step, up)

    def _positions_after(self, plan: Plan, states: Sequence[Any], lang: str) -> Plan:
        """Return each cover's new opening: its own position read back, moved by the step."""

        def moved(state: dict[str, Any], delta: float) -> float | None:
            current = state.get("percent_open")
            if not isinstance(current, int | float) or isinstance(current, bool):
                return None  # no position reported: nothing to move from
            if not math.isfinite(current):
                return None
            return max(0.0, min(100.0, current + delta))

        return self._moved(plan, states, lang, "set_position", "percent_open", moved)

    def _moved(
        self,
        plan: Plan,
        states: Sequence[Any],
        lang: str,
        capability: str,
        param: str,
        moved: Callable[[dict[str, Any], float], float | None],
    ) -> Plan:
        """Return the calls of a relative change: each device's value read back, ``moved``.

        The plan's key is the capability's (``set_position``, ``fan_speed``) answer.
        """
        delta = float(plan.values["delta"])
        calls = []
        for device, state in zip(plan.values["devices"], states, strict=True):
            value = moved(state if isinstance(state, dict) else {}, delta)
            if value is None:
                continue
            call = self._call(capability, {param: number(round(value))}, device.name, device=device)
            if call is not None:
                calls.append(call)
        values = {"percent": spoken_number(calls[0].params[param], lang)} if calls else {}
        target = calls[0].target if len(calls) == 1 else plan.target
        key = {"set_fan_speed": "fan_speed"}.get(capability, capability)
        if not calls and capability == "set_fan_speed" and delta < 0:
            key = "idle"  # "slow the fan down" while it is off: it is off
            if len(plan.values["devices"]) == 1:
                target = plan.values["devices"][0].name

        return Plan(calls=tuple(calls), key=key, target=target, values=values)

    def _reads_first(
        self, s: _Subject, devices: list[Device], capability: str, key: str, step: float, up: bool
    ) -> Plan | IntentReply:
        """Return the state reads of a relative change, of the devices with ``capability``.

        ``after_reads`` makes the calls from what each device reports.
        """
        able = [d for d in devices if self._tool_for(capability, device_id=d.id) is not None]
        reads = [c for d in able if (c := self._call("state", {}, d.name, device=d)) is not None]
        if not reads:
            return reply(s.lang, "cannot", target=s.place or devices[0].name, intent=s.intent)
        return Plan(
            calls=tuple(reads),
            key=key,
            target=s.place or able[0].name,
            values={"delta": step if up else -step, "devices": able},
        )

    def _kelvins_after(self, plan: Plan, states: Sequence[Any], lang: str) -> Plan:
        """Return each light's colour-temperature call, its kelvin read moved by the step."""
        made = []
        for device, state in zip(plan.values["devices"], states, strict=True):
            current = state.get("color_temperature_kelvin") if isinstance(state, dict) else None
            if not isinstance(current, int | float) or isinstance(current, bool):
                continue  # not in white mode (a colour set): no kelvin to start from
            kelvin = number(round(current + float(plan.values["delta"])))
            call = self._call("color_temperature", {"kelvin": kelvin}, device.name, device=device)
            if call is not None:
                made.append(call)
        if not made:
            return replace(plan, calls=())
        values = {"kelvin": spoken_number(made[0].params["kelvin"], lang)}
        if len(made) == 1:
            return Plan(
                calls=tuple(made), key="color_temperature", target=made[0].target, values=values
            )
        key = "warmer_lights" if float(plan.values["delta"]) < 0 else "cooler_lights"
        return Plan(calls=tuple(made), key=key, target=both(lang, [c.target for c in made]))

    def after_reads(self, plan: Plan, states: Sequence[Any], lang: str) -> Plan:
        """Return the calls of a relative change from the devices' states (read first)."""
        if plan.key == "relative_kelvin":
            return self._kelvins_after(plan, states, lang)
        if plan.key == "relative_temperature":
            return self._setpoints_after(plan, states)
        if plan.key == "relative_fan":
            return self._fan_speeds_after(plan, states, lang)
        if plan.key == "relative_position":
            return self._positions_after(plan, states, lang)
        if plan.key == "relative_volume":
            return self._volumes_after(plan, states, lang)
        delta = float(plan.values["delta"])
        calls = []
        for device, state in zip(plan.values["devices"], states, strict=True):
            state = state if isinstance(state, dict) else {}
            current = state.get("brightness_percent")
            if state.get("on") is False or not isinstance(current, int | float):
                current = 0
            percent = number(round(max(1.0, min(100.0, current + delta))))
            call = self._call("brightness", {"percent": percent}, device.name, device=device)
            if call is not None:
                calls.append(call)
        if len(calls) == 1:
            return Plan(
                calls=tuple(calls),
                key="brightness",
                target=calls[0].target,
                values={"percent": spoken_number(calls[0].params["percent"], lang)},
            )
        return Plan(
            calls=tuple(calls), key="brighter" if delta > 0 else "dimmer", target=plan.target
        )

    def _thermostats(self, s: _Subject) -> list[Device]:
        """Return the thermostat said by name, else those of the subject's place."""
        if s.device is not None:
            return [s.device]
        return [d for d in self._members(s) if d.kind == "thermostat"]

    def _thermostat(self, s: _Subject, r: Reading, token: AgentToken | None) -> Plan | IntentReply:
        """Return a thermostat's mode by name, or the reading of its set-point.

        "set the hall thermostat to cool" (the mode one of its set-mode tool's own; any
        other does nothing and the answer lists its modes), "what is the hall thermostat
        set to" (its state, read aloud by the engine). One thermostat: the one named,
        else the only one of the place said; several ask which.
        """
        thermostats = self._thermostats(s)
        if len(thermostats) > 1:
            return which_one(thermostats, s.intent, s.lang, token)
        if not thermostats:
            if s.device is None and s.room is None and s.floor is None:
                pool = [
                    d
                    for d in self._home().devices
                    if d.kind == "thermostat" and may_see(s.token, d)
                ]
                if len(pool) == 1:  # the home's only thermostat
                    return self._thermostat(replace(s, device=pool[0]), r, token)
            return self._no_kind(s)
        device = thermostats[0]
        if device.kind != "thermostat":
            return reply(s.lang, "cannot", target=device.name, intent=s.intent)
        if s.intent != CLIMATE_MODE_INTENT:  # "what is it set to": its state, read aloud
            call = self._call("state", {}, device.name, device=device)
            if call is None:
                return reply(s.lang, "cannot", target=device.name, intent=s.intent)
            return Plan(calls=(call,), key="set_point", target=device.name)
        mode = str(r.values.get("mode", ""))
        call = self._mode_call(device, mode)
        if call is not None:
            key = "thermostat_off" if mode == "off" else "climate_mode"
            return Plan(
                calls=(call,), key=key, target=device.name, values={"mode": mode_said(s.lang, mode)}
            )
        tool = self._call("set_mode", {}, device.name, device=device)
        if tool is None:
            return reply(s.lang, "cannot", target=device.name, intent=s.intent)
        modes = tool.definition.parameters.get("properties", {}).get("mode", {}).get("enum", [])
        return reply(
            s.lang,
            "unknown_mode",
            target=device.name,
            mode=mode_said(s.lang, mode),
            modes=either(s.lang, [mode_said(s.lang, str(m)) for m in modes]),
            intent=s.intent,
        )

    def _warmer(self, s: _Subject, r: Reading, up: bool) -> Plan | IntentReply:
        """Return each thermostat's raise/lower call (the device said, or its place's)."""
        units = self._units()
        said_units = r.units or units
        step = number(r.values["step"]) if "step" in r.values else (TEMPERATURE_STEP[said_units])
        thermostats = self._thermostats(s)
        if not thermostats:
            return self._no_kind(s)
        heard = (
            step
            if said_units == units
            else number(round(step * (9 / 5 if units == IMPERIAL else 5 / 9), 1))
        )
        target = thermostats[0].name if len(thermostats) == 1 else s.place
        values = {"degrees": degrees_said(heard, s.lang)}
        calls: list[Call] = []
        reads: list[Call] = []
        for device in thermostats:
            adjust = self._call("adjust_temperature", {}, device.name, device=device)
            setter = self._tool_for("set_temperature", device_id=device.id)
            tool_units = _units_of(_first_param(setter, "celsius")) if setter else METRIC
            degrees = (
                step
                if said_units == tool_units
                else number(round(step * (9 / 5 if tool_units == IMPERIAL else 5 / 9), 1))
            )
            if adjust is not None:  # the device's own SetpointRaiseLower
                calls.append(
                    Call(
                        definition=adjust.definition,
                        params={"degrees": degrees if up else -degrees},
                        target=device.name,
                    )
                )
            elif setter is not None and (
                read := self._call("state", {}, device.name, device=device)
            ):
                reads.append(read)  # else: its set-point read, then set
            else:
                return reply(s.lang, "cannot", target=device.name, intent=s.intent)
        if reads and calls:  # some raise by command, some by set-point: say which can't
            return reply(s.lang, "cannot", target=reads[0].target, intent=s.intent)
        key = "raised" if up else "lowered"
        if reads:
            return Plan(
                calls=tuple(reads),
                key="relative_temperature",
                target=target,
                values={
                    **values,
                    "said": key,
                    "step": step if up else -step,
                    "said_units": said_units,
                    "devices": thermostats,
                },
            )
        return Plan(calls=tuple(calls), key=key, target=target, values=values)

    def _setpoints_after(self, plan: Plan, states: Sequence[Any]) -> Plan:
        """Return the set-temperature calls of a relative change from the set-points read."""
        calls = []
        for device, state in zip(plan.values["devices"], states, strict=True):
            state = state if isinstance(state, dict) else {}
            field_name = "cooling_setpoint" if state.get("mode") == "cool" else "heating_setpoint"
            current = state.get(field_name)
            setter = self._call("set_temperature", {}, device.name, device=device)
            if setter is None or not isinstance(current, int | float):
                continue
            param = _first_param(setter.definition, "celsius")
            tool_units = _units_of(param)
            step = float(plan.values["step"])
            if plan.values["said_units"] != tool_units:
                step = step * (9 / 5 if tool_units == IMPERIAL else 5 / 9)
            calls.append(
                Call(
                    definition=setter.definition,
                    params={param: number(round(current + step, 1))},
                    target=device.name,
                )
            )
        spoken = {k: v for k, v in plan.values.items() if k == "degrees"}
        return Plan(
            calls=tuple(calls), key=str(plan.values["said"]), target=plan.target, values=spoken
        )

    # -- issue 29's kinds: fans, robot vacuums, appliances, measured values ------------

    def _targets(self, s: _Subject) -> list[Device] | IntentReply:
        """Return the one device a kind sentence acts on: named, or the one of its kind.

        The kind is looked for in the room (or floor) said, else in the whole home; none
        there is "no such thing", several without a name is "which one?".
        """
        if s.device is not None:
            return [s.device]
        if s.domain is None:
            return reply(s.lang, "not_here", intent=s.intent)
        pool = (
            [d for room in self._scope(s) for d in room.devices]
            if self._scope(s)
            else self._home().devices
        )
        found = [d for d in pool if fits(d, s.domain, s.device_class) and may_see(s.token, d)]
        if not found:
            return self._no_kind(s)
        if len(found) > 1:
            return which_one(found, s.intent, s.lang, s.token)
        return found

    def _fans(self, s: _Subject) -> list[Device] | IntentReply:
        """Return the fan named, or the fans of the room or floor said."""
        if s.device is not None:
            return [s.device]
        if not self._scope(s):
            return reply(s.lang, "where", intent=s.intent)
        fans = self._members(s)
        return fans or self._no_kind(s)

    def _fan_switch(self, s: _Subject, on: bool) -> Plan | IntentReply:
        """Return a fan's on/off: its own on/off tool, else its FanMode.

        "On" is the mode On where the fan's sequence has it, else High (Matter 1.4
        4.4.6.1: On means the fan at its top speed).
        """
        fans = self._fans(s)
        if isinstance(fans, IntentReply):
            return fans
        calls = []
        for fan in fans:
            call = self._call("on" if on else "off", {}, fan.name, device=fan)
            mode_tool = self._tool_for("set_fan_mode", device_id=fan.id)
            if call is None and mode_tool is not None:
                modes = mode_tool.parameters.get("properties", {}).get("mode", {}).get("enum", [])
                mode = "off" if not on else next((m for m in ("on", "high") if m in modes), None)
                if mode is not None and mode in modes:
                    call = Call(definition=mode_tool, params={"mode": mode}, target=fan.name)
            if call is not None:
                calls.append(call)
        if not calls:
            return reply(s.lang, "cannot", target=fans[0].name, intent=s.intent)
        target = _target_of(calls, s.lang)
        return Plan(calls=tuple(calls), key="on" if on else "off", target=target)

    def _fan_speed(self, s: _Subject, r: Reading, text: str) -> Plan | IntentReply:
        s = s.with_domain("fan")
        fans = self._fans(s)
        if isinstance(fans, IntentReply):
            return fans
        if "fan_mode" in r.values:  # "set the fan to low": a mode of its own sequence
            return self._fan_mode(s, fans, str(r.values["fan_mode"]), r.texts.get("fan_mode"))
        said = r.values.get("percentage", r.values.get("fan_speed"))  # HA's slot, or ours
        if said is None:
            return reply(s.lang, "not_here", intent=s.intent)
        percent = number(said)
        if not _PERCENT_SAID.search(text):  # "set the fan to 2": its second speed, if it has
            steps = self._fan_steps(fans, percent)
            if not steps and r.values.get("speed_step"):  # "to speed 2": never a percent
                return reply(s.lang, "cannot", target=fans[0].name, intent=s.intent)
            if steps:
                return Plan(
                    calls=tuple(steps),
                    key="fan_speed_step",
                    target=_target_of(steps, s.lang),
                    values={"speed": spoken_number(percent, s.lang)},
                )
        calls = [
            c
            for fan in fans
            if (c := self._call("set_fan_speed", {"percent": percent}, fan.name, device=fan))
        ]
        if not calls:
            return reply(s.lang, "cannot", target=fans[0].name, intent=s.intent)
        target = _target_of(calls, s.lang)
        return Plan(
            calls=tuple(calls),
            key="fan_speed",
            target=target,
            values={"percent": spoken_number(percent, s.lang)},
        )

    def _fan_steps(self, fans: list[Device], said: float) -> list[Call]:
        """Return each fan's speed step call for a number said without "percent".

        Only when every fan has speed steps and ``said`` is one of them ("set the fan to
        2" on a fan of 3 speeds); else nothing, and the number is a percent.
        """
        if said != int(said) or said < 1:
            return []
        calls = []
        for fan in fans:
            tool = self._tool_for("set_fan_step", device_id=fan.id)
            speed = tool.parameters.get("properties", {}).get("speed", {}) if tool else {}
            top = speed.get("maximum")
            if not isinstance(top, int) or said > top:
                return []
            call = self._call("set_fan_step", {"speed": int(said)}, fan.name, device=fan)
            if call is None:
                return []
            calls.append(call)
        return calls

    def _fan_mode(
        self, s: _Subject, fans: list[Device], mode: str, heard: str | None
    ) -> Plan | IntentReply:
        """Return each fan's FanMode call, for fans whose mode sequence has ``mode``."""
        calls = []
        for fan in fans:
            tool = self._tool_for("set_fan_mode", device_id=fan.id)
            modes = tool.parameters["properties"]["mode"].get("enum", []) if tool else []
            if mode in modes:
                call = self._call("set_fan_mode", {"mode": mode}, fan.name, device=fan)
                if call is not None:
                    calls.append(call)
        if not calls:
            return reply(s.lang, "cannot", target=fans[0].name, intent=s.intent)
        target = _target_of(calls, s.lang)
        return Plan(calls=tuple(calls), key="mode", target=target, values={"mode": heard or mode})

    def _faster(self, s: _Subject, r: Reading, text: str, up: bool) -> Plan | IntentReply:
        """Return the fans' state reads; ``after_reads`` steps each one's speed from them."""
        fans = self._fans(s)
        if isinstance(fans, IntentReply):
            return fans
        if s.device is not None and domain_of(s.device) != "fan":
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        step = (
            number(r.values["step"])
            if "step" in r.values
            else (SMALL_STEP if is_small(text, s.lang) else FAN_STEP)
        )
        return self._reads_first(s, fans, "set_fan_speed", "relative_fan", step, up)

    def _fan_speeds_after(self, plan: Plan, states: Sequence[Any], lang: str) -> Plan:
        """Return each fan's new speed: its own speed read back, stepped.

        An idle fan is only sped up; slowing down stops at FAN_SLOWEST.
        """

        def moved(state: dict[str, Any], delta: float) -> float | None:
            current = state.get("fan_speed_percent")
            if not isinstance(current, int | float) or state.get("fan_mode") == "off":
                current = 0
            if delta < 0 and current <= 0:
                return None  # an idle fan is not "slower"
            low = FAN_SLOWEST if delta < 0 else 1
            return max(low, min(100.0, current + delta))

        return self._moved(plan, states, lang, "set_fan_speed", "percent", moved)

    def _sound(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        """Return a speaker's mute, unmute, volume or volume step ("louder": read first)."""
        s = s.with_domain("media_player")
        if s.device is not None and domain_of(s.device) != "media_player":
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        if s.intent == "HassMediaPlayerMute":
            return self._each(s, "mute", {}, "mute")
        if s.intent == "HassMediaPlayerUnmute":
            return self._each(s, "unmute", {}, "unmute")
        if s.intent == "HassSetVolume":
            level = r.values.get("volume_level")
            if not isinstance(level, int | float) or isinstance(level, bool):
                return reply(s.lang, "not_here", intent=s.intent)  # never a guessed volume
            percent = number(level)
            said = {"percent": spoken_number(percent, s.lang)}
            return self._each(s, "volume", {"percent": percent}, "volume", said)
        step = r.values.get("volume_step", "up")
        up = step != "down" and not (isinstance(step, int | float) and step < 0)
        size = abs(float(step)) if isinstance(step, int | float) and step else VOLUME_STEP
        devices = [s.device] if s.device is not None else self._members(s)
        if not devices:
            return self._no_kind(s)
        return self._reads_first(s, devices, "volume", "relative_volume", size, up)

    def _volumes_after(self, plan: Plan, states: Sequence[Any], lang: str) -> Plan:
        """Return each speaker's new volume: its own volume read back, stepped (0-100)."""

        def moved(state: dict[str, Any], delta: float) -> float | None:
            current = state.get("volume_percent")
            if not isinstance(current, int | float):
                return None  # a volume not known is not stepped from a guess
            return max(0.0, min(100.0, current + delta))

        return self._moved(plan, states, lang, "volume", "percent", moved)

    def _operate(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        """Return a robot's or an appliance's start / pause / resume / stop / dock.

        Also its cycle or clean mode by its own name, an EV charger's charging, a water
        heater's boost and a microwave's cooking time.
        """
        if s.intent == "HassVacuumReturnToBase":
            action = "return_to_base"
        else:
            action = str(r.values.get("action", "start"))
        if s.intent.startswith("HassVacuum"):
            s = s.with_domain("vacuum")
        if s.device is not None and domain_of(s.device) not in OPERATED:
            return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
        targets = self._targets(s)
        if isinstance(targets, IntentReply):
            return targets
        device = targets[0]
        if action in ("mode", "mode_start"):
            return self._set_mode(s, device, str(r.values.get("mode", "")), action)
        capability, key = _OPERATE_AS.get((domain_of(device), action), (action, action))
        params: dict[str, Any] = {}
        values: dict[str, Any] = {}
        if action in _TIMED:
            minutes = r.values.get("minutes")
            if not isinstance(minutes, int | float):  # never a guessed duration
                return reply(s.lang, "cannot", target=device.name, intent=s.intent)
            params = {"minutes": number(minutes)}
            values = {"minutes": spoken_number(minutes, s.lang)}
        call = self._call(capability, params, device.name, device=device)
        if call is None:
            return reply(s.lang, "cannot", target=device.name, intent=s.intent)
        key = {"return_to_base": "dock"}.get(key, key)
        return Plan(calls=(call,), key=key, target=device.name, values=values)

    def _set_mode(self, s: _Subject, device: Device, said: str, action: str) -> Plan | IntentReply:
        """Return the call setting ``device``'s mode named ``said`` (then its start).

        The mode is one of the device's own names (its set-mode tool's enum); any other
        does nothing and the answer lists the device's modes.
        """
        if domain_of(device) not in ("vacuum", "appliance"):
            return reply(s.lang, "cannot", target=device.name, intent=s.intent)
        tool = next(
            (t for c in _MODE_TOOLS if (t := self._tool_for(c, device_id=device.id)) is not None),
            None,
        )
        if tool is None:
            return reply(s.lang, "cannot", target=device.name, intent=s.intent)
        names = [str(n) for n in tool.parameters["properties"]["mode"].get("enum", [])]
        mode = mode_named(said, names)
        if mode is None and (area := self._area_named(device, said)) is not None:
            # "vacuum in the kitchen": not a mode but one of the robot's own rooms.
            clean = self._tool_for("clean_areas", device_id=device.id)
            assert clean is not None  # noqa: S101 - _area_named found its areas there
            return Plan(
                calls=(Call(definition=clean, params={"areas": [area]}, target=device.name),),
                key="clean_areas",
                target=device.name,
                values={"areas": area},
            )
        if mode is None:
            return reply(
                s.lang,
                "unknown_mode",
                target=device.name,
                mode=" ".join(mode_words(said)) or said,
                modes=either(s.lang, names),
                intent=s.intent,
            )
        calls = [Call(definition=tool, params={"mode": mode}, target=device.name)]
        if action == "mode_start":
            start = self._call("start", {}, device.name, device=device)
            if start is None:
                return reply(s.lang, "cannot", target=device.name, intent=s.intent)
            calls.append(start)
        return Plan(
            calls=tuple(calls),
            key=action,
            target=device.name,
            values={"mode": mode},
            in_order=True,
        )

    def _area_named(self, robot: Device, said: str) -> str | None:
        """Return the robot's own area that ``said`` names ("in the kitchen"), if any."""
        tool = self._tool_for("clean_areas", device_id=robot.id)
        if tool is None:
            return None
        names = tool.parameters.get("properties", {}).get("areas", {})
        words = " ".join(mode_words(said)).casefold()
        return next(
            (str(n) for n in names.get("items", {}).get("enum", []) if str(n).casefold() == words),
            None,
        )

    def _clean_area(self, s: _Subject) -> Plan | IntentReply:
        """Return "clean the kitchen": the robot that knows that room, by its own name."""
        if s.room is None:
            return reply(s.lang, "where", intent=s.intent)
        room = s.room
        s = replace(s, domain="vacuum", room=None)  # the robot lives anywhere in the home
        targets = [s.device] if s.device is not None else self._members_anywhere(s)
        if not targets:
            return self._no_kind(s)
        words = self._home().room_words.get(room.slug, room.labels)
        spoken = {label.casefold() for label in words} | {room.slug}
        knows: list[tuple[Device, ToolDefinition, str]] = []
        for robot in targets:
            tool = self._tool_for("clean_areas", device_id=robot.id)
            if tool is None:
                continue
            names = tool.parameters.get("properties", {}).get("areas", {})
            names = names.get("items", {}).get("enum", [])
            area = next((n for n in names if str(n).casefold() in spoken), None)
            if area is not None:
                knows.append((robot, tool, str(area)))
        if not knows:
            return reply(s.lang, "unknown_area", target=targets[0].name, room=room.name)
        if len(knows) > 1:
            return which_one([k[0] for k in knows], s.intent, s.lang, s.token)
        robot, tool, area = knows[0]
        call = Call(definition=tool, params={"areas": [area]}, target=robot.name)
        return Plan(
            calls=(call,), key="clean_areas", target=robot.name, values={"areas": room.name}
        )

    def only_room(
        self, r: Reading, lang: str, token: AgentToken | None
    ) -> str | IntentReply | None:
        """Return the room (slug) a sentence needing the speaker's room can only mean.

        "close the blind", "lock the door", "I'm cold", said where the speaker's room is
        not known: when every device of the kind ``r`` names that the caller may see is
        in one room, that room; otherwise (or with one of them in no room) None, and the
        speaker is asked which room. The answer that there is none of the kind when the
        caller may see none at all.
        """
        domain, device_class = _kind_said(r)
        if domain is None:
            return None
        s = _Subject(
            intent=r.intent,
            domain=domain,
            device_class=device_class,
            lang=lang,
            token=token,
        )
        found = self._members_anywhere(s)
        if domain == "fan" and any(d.kind == "fan" for d in found):
            # "turn the fan on": a fan, before an air purifier or a hood (fans to the
            # templates too)
            found = [d for d in found if d.kind == "fan"]
        if not found:  # "close the door" in a home without one: not a question of rooms
            return self._no_kind(s)
        rooms = {slugify(d.room) if d.room else "" for d in found}
        return rooms.pop() if len(rooms) == 1 and "" not in rooms else None

    def _members_anywhere(self, s: _Subject) -> list[Device]:
        """Return the home's devices of the subject's kind that the caller may see."""
        return [
            d
            for d in self._home().devices
            if s.domain is not None and fits(d, s.domain, s.device_class) and may_see(s.token, d)
        ]

    def _reports(self, device: Device, fields: tuple[str, ...]) -> ToolDefinition | None:
        """Return ``device``'s state tool when its state has one of ``fields``."""
        tool = self._tool_for("state", device_id=device.id)
        if tool is None or not set(fields) & set((tool.returns or {}).get("properties", {})):
            return None
        return tool

    def _measure(self, s: _Subject, r: Reading) -> Plan | IntentReply:
        """Return the state read that answers "how much power …", "what's the CO2 in …"."""
        measure = str(r.values.get("measure", ""))
        fields = MEASURES.get(measure)
        if fields is None:
            return reply(s.lang, "not_here", intent=s.intent)
        if (
            measure == "charging"
            and s.device is not None
            and self._reports(s.device, fields) is None
            and self._reports(s.device, MEASURES["status"]) is not None
        ):  # "is the robot vacuum charging": a robot says so in its status
            measure, fields = "status", MEASURES["status"]
        if s.device is not None:
            tool = self._reports(s.device, fields)
            if tool is None:
                return reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
            call = Call(definition=tool, params={}, target=s.device.name)
            return Plan(
                calls=(call,), key="measure", target=s.device.name, values={"measure": measure}
            )
        rooms = self._scope(s)
        pool = [d for room in rooms for d in room.devices] if rooms else self._home().devices
        if s.domain in ("appliance", "ev_charger", "vacuum"):  # "the washer": washers only
            pool = [d for d in pool if fits(d, s.domain, s.device_class)]
        found = [
            (d, tool)
            for d in pool
            if may_see(s.token, d) and (tool := self._reports(d, fields)) is not None
        ]
        if not found:
            return self._no_kind(replace(s, domain="sensor", device_class=measure))
        if len(found) > 1:
            if not rooms:
                return reply(s.lang, "where", intent=s.intent)
            return which_one([d for d, _ in found], s.intent, s.lang, s.token)
        device, tool = found[0]
        # "the CO2 in Office" is the room's; a plug's power or a leak is the device's
        # (no place said: the device's own room, "The air quality in Office is good.")
        target = ((s.place or device.room or "") if measure in ROOM_MEASURES else "") or device.name
        call = Call(definition=tool, params={}, target=target)
        return Plan(calls=(call,), key="measure", target=target, values={"measure": measure})

    def _limits(self, devices: Sequence[Device], capability: str) -> tuple[float, float] | None:
        """Return the widest (minimum, maximum) the devices' ``capability`` tools take."""
        lows, highs = [], []
        for device in devices:
            definition = self._tool_for(capability, device_id=device.id)
            if definition is None:
                continue
            for spec in definition.parameters.get("properties", {}).values():
                if "minimum" in spec and "maximum" in spec:
                    lows.append(float(spec["minimum"]))
                    highs.append(float(spec["maximum"]))
                    break
        return (min(lows), max(highs)) if lows else None


def _target_of(calls: Sequence[Call], lang: str) -> str:
    """Return what an answer names: the one call's target, or all of them ("A and B")."""
    return calls[0].target if len(calls) == 1 else both(lang, [c.target for c in calls])


# Subject of intents whose templates carry no domain slot.
_INTENT_DOMAIN = {
    "HassLightSet": "light",
    "HassFanSetSpeed": "fan",
    "HassVacuumStart": "vacuum",
    "HassVacuumReturnToBase": "vacuum",
    "HassVacuumCleanArea": "vacuum",
    "HassSetPosition": "cover",
    STOP_INTENT: "cover",
    "HassClimateSetTemperature": "climate",
    "HassClimateGetTemperature": "climate",
    CLIMATE_MODE_INTENT: "climate",
    # "mute", "louder" said alone: a speaker ("where is it" answers Planner.only_room)
    **dict.fromkeys(SOUND_INTENTS, "media_player"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Subject:
    """What a sentence is about: its intent, domain (and class), device or room."""

    intent: str
    domain: str | None
    device_class: str | None
    device: Device | None = None
    room: Room | None = None
    lang: str
    # The caller's token: "all the lights" means every room holding a light it may see.
    token: AgentToken | None = None
    floor: Floor | None = None  # a floor said instead of a room ("upstairs")
    everywhere: bool = False  # "open all the curtains": every one in the home

    def with_domain(self, domain: str) -> _Subject:
        return replace(self, domain=self.domain or domain)

    @property
    def place(self) -> str:
        """Return the name of the room or floor the sentence speaks of ("" for none)."""
        if self.room is not None:
            return self.room.name
        return self.floor.name if self.floor is not None else ""


def _said_aloud(home: Home, room: Room, text: str, name: str | None) -> bool:
    """Return whether ``text`` says one of ``room``'s words (not only the speaker's room).

    The name said is left out first: "the kitchen speaker" names no room.
    """

    def spaced(said: str) -> str:
        return " " + " ".join(re.findall(r"[^\W_]+", said.casefold())) + " "

    folded = spaced(text).replace(spaced(name) if name else "\x00", " ")
    return any(spaced(word) in folded for word in home.room_words.get(room.slug, room.labels))


def mode_words(said: str) -> list[str]:
    """Return the words of a mode said, without the words around a name ("eco mode")."""
    words = said.casefold().replace("-", " ").split()
    while words and words[0] in MODE_FILLERS:
        words.pop(0)
    while words and words[-1] in MODE_FILLERS:
        words.pop()
    return words


def mode_named(said: str, names: Sequence[str]) -> str | None:
    """Return the device's own mode name ``said`` stands for (``None``: not one of them)."""
    heard = mode_words(said)
    for name in names:
        if name.casefold().replace("-", " ").split() in (heard, said.casefold().split()):
            return name
    return None


def may_see(token: AgentToken | None, device: Device) -> bool:
    """Return whether ``token`` may read or control ``device`` (no token: an in-process caller)."""
    return token is None or may_see_device(token.permissions, device.id)


def _kind_said(r: Reading, device: Device | None = None) -> tuple[str | None, str | None]:
    """Return the domain and device class a reading speaks of.

    With no domain slot: the device's domain, else the intent's.
    """
    domain = r.values.get("domain")
    device_class = r.values.get("device_class")
    if isinstance(device_class, list):  # fr "store": ['blind', 'shade']
        device_class = ",".join(map(str, device_class))
    if domain is None:
        domain = domain_of(device) if device is not None else _INTENT_DOMAIN.get(r.intent)
    return (str(domain) if domain else None, str(device_class) if device_class else None)


def reply(lang: str, key: str, *, intent: str | None = None, **values: Any) -> IntentReply:
    """Return an answer that does nothing (the sentence for ``key``)."""
    return IntentReply(speech=say(lang, key, **values), language=lang, handled=False, intent=intent)


def which_one(
    devices: Sequence[Device], intent: str, lang: str, token: AgentToken | None
) -> IntentReply:
    """Ask which of several devices was meant, naming those the caller may see (no action)."""
    names = [where_of(d) for d in devices if may_see(token, d)]
    if not names:
        return IntentReply(speech=say(lang, "unknown"), language=lang, handled=False, intent=intent)
    return IntentReply(
        speech=say(lang, "ambiguous", names=either(lang, names)),
        language=lang,
        handled=False,
        intent=intent,
        suggestions=tuple(names),
    )


def _units_of(param: str) -> str:
    """Return the units a temperature tool parameter takes (``fahrenheit`` or Celsius)."""
    return IMPERIAL if param == "fahrenheit" else METRIC


def _in_tool_units(celsius: float, param: str) -> float:
    """Return a Celsius set-point in the unit of the tool's parameter."""
    return number(from_celsius(celsius, _units_of(param)))


def _first_param(definition: ToolDefinition, default: str) -> str:
    required = definition.parameters.get("required", [])
    return str(required[0]) if required else default


def where_of(device: Device) -> str:
    """Return a device's name with its room, as said when asking which one."""
    return f"{device.name} ({device.room})" if device.room else device.name


def number(value: Any) -> float:
    """Return a heard number as an int when it is whole."""
    result = float(value)
    return int(result) if result.is_integer() else result


_DEGREE_WORDS = {
    "en": ("degree", "degrees"),
    "de": ("Grad", "Grad"),
    "fr": ("degré", "degrés"),
    "es": ("grado", "grados"),
    "nl": ("graad", "graden"),
}


def degrees_said(value: Any, lang: str) -> str:
    """Return a number of degrees as said in ``lang`` ("1 degree", "2 Grad", "1,5 graden")."""
    one, many = _DEGREE_WORDS.get(lang, _DEGREE_WORDS["en"])
    return f"{spoken_number(value, lang)} {one if float(value) == 1 else many}"


def spoken_number(value: Any, lang: str) -> str:
    """Return a number as spoken back in ``lang`` (one decimal, a comma outside English)."""
    number = round(float(value), 1)
    text = str(int(number)) if number.is_integer() else f"{number:g}"
    return text if lang == "en" else text.replace(".", ",")
