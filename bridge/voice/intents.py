"""Spoken commands without an LLM: Home Assistant's sentence templates matched to our tools.

``IntentEngine.handle(text, language, token=...)`` recognises a transcript with
``hassil`` and the ``home-assistant-intents`` templates (en, de, fr, es, nl), restricted
to the intents the bridge can serve — ``HassTurnOn``, ``HassTurnOff``, ``HassLightSet``
(brightness, colour), ``HassClimateSetTemperature`` and ``HassClimateGetTemperature`` —
with slot lists built from our devices: ``{name}`` holds every device name and alias
(with the device's domain as context, so "set the thermostat to red" does not match),
``{area}`` every room's name and aliases. A device named in the sentence wins over a
room; a room means its room tool (``room_<room>_lights_off``: every light at once). The
chosen tool is invoked through the invocation pipeline with the caller's token, so a
spoken command is authorised, validated and audited like any other call.

Nothing is ever done on a guess: a name that fits several devices gets "which one do
you mean", a sentence that matches nothing gets close names (fuzzy over names, aliases
and rooms) as suggestions, an unknown language gets the list of languages. Those answers
name only devices (and rooms with a device) the caller's token may read or control, so
a sentence cannot be used to learn what else the home holds. The slot
lists are rebuilt lazily after any registry change (devices renamed, moved, added) and
when a room's aliases change.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hassil import Intents, recognize_all
from hassil.errors import MissingListError
from hassil.expression import TextChunk
from hassil.intents import SlotList, TextSlotList, TextSlotValue

from bridge.auth.permissions import covers
from bridge.errors import InvalidParamsError
from bridge.invocation.messages import RequestContext, ToolRequest
from bridge.matter.devices import Device, slugify
from bridge.matter.rooms import Room, rooms_of
from bridge.voice.responses import LANGUAGES, both, either, say
from bridge.voice.subjects import domain_of, fits, noun
from bridge.voice.templates import STOP_INTENT, load_templates

if TYPE_CHECKING:
    from hassil.recognize import RecognizeResult

    from bridge.auth.tokens import AgentToken
    from bridge.invocation.invoker import Invoker
    from bridge.tools.definition import ToolDefinition
    from bridge.tools.registry import ToolRegistry

_LOG = logging.getLogger(__name__)
SUPPORTED_INTENTS = frozenset(
    {"HassTurnOn", "HassTurnOff", "HassLightSet", "HassSetPosition", "HassGetState",
     "HassClimateSetTemperature", "HassClimateGetTemperature", STOP_INTENT}
)  # fmt: skip
MAX_TEXT = 500
MAX_AREA = 64
# Stand-in for "the speaker's room" when asking whether a sentence needs one.
_SOMEWHERE = "\x00somewhere"
# Singular light nouns that, right after a room's name, mean "the <room> light": the one
# light there. (French and Spanish name the room after the noun, "la lumière du salon",
# which people use for the room's lights as a whole.)
_SINGULAR_LIGHT = {"en": ("light", "lamp"), "de": ("licht", "lampe", "leuchte"),
                   "nl": ("lamp", "licht")}  # fmt: skip
# What "turn on/off" means per domain: the capability (tool row) to call.
_SWITCHING: dict[str, tuple[str, str]] = {
    "light": ("on", "off"), "switch": ("on", "off"), "fan": ("on", "off"),
    "lock": ("lock", "unlock"), "cover": ("open", "close"), "valve": ("open", "close"),
}  # fmt: skip
# Response key per capability that has its own sentence.
_SAID = {"on": "on", "off": "off", "lock": "lock", "open": "open", "close": "close",
         "stop": "stop", "brightness": "brightness", "set_color": "color",
         "color_temperature": "color_temperature", "set_position": "set_position",
         "set_temperature": "set_temperature", "set_mode": "thermostat_off",
         "temperature": "set_temperature", "color": "color"}  # fmt: skip
ToolFor = Callable[..., "ToolDefinition | None"]


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
class _Call:
    """One tool call a sentence asks for, and the spoken name of what it acts on."""

    definition: ToolDefinition
    params: dict[str, Any]
    target: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """The calls of a sentence and how to say what was done."""

    calls: tuple[_Call, ...]
    key: str
    target: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Reading:
    """One template match: the intent, slot values and the words they were heard as."""

    intent: str
    values: dict[str, Any]
    texts: dict[str, str]
    combo: str

    @classmethod
    def of(cls, result: RecognizeResult) -> _Reading:
        """Return the reading of a hassil result."""
        metadata = (result.intent_data.metadata or {}) if result.intent_data else {}
        return cls(
            intent=result.intent.name,
            values={k: v.value for k, v in result.entities.items()},
            texts={k: str(v.text or "") for k, v in result.entities.items()},
            combo=str(metadata.get("slot_combination", "")),
        )


@dataclass(slots=True)
class _Home:
    """Devices and rooms as the recogniser sees them (rebuilt after registry changes)."""

    devices: list[Device]
    labels: dict[str, list[Device]] = field(default_factory=dict)  # casefold label → devices
    rooms: dict[str, Room] = field(default_factory=dict)  # room slug → room
    room_labels: dict[str, str] = field(default_factory=dict)  # casefold label → slug
    room_key: tuple[tuple[str, tuple[str, ...]], ...] = ()  # what the rooms were built from
    slot_lists: dict[str, SlotList] = field(default_factory=dict)


def normalise_language(language: str) -> str:
    """Return the base language of a tag (``"de-AT"`` → ``"de"``)."""
    return language.strip().replace("_", "-").split("-", 1)[0].lower()


class IntentEngine:
    """Recognise transcripts and run them as tool calls with the caller's token."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        invoker: Invoker,
        devices: Callable[[], Sequence[Device]],
        tool_for: ToolFor,
        rooms: Callable[[], Sequence[Room]] | None = None,
        languages: Sequence[str] = LANGUAGES,
    ) -> None:
        self.registry = registry
        self.invoker = invoker
        self._devices = devices
        self._tool_for = tool_for
        self._rooms = rooms or (lambda: rooms_of(self._devices(), {}))
        self.languages = tuple(languages)
        self._intents: dict[str, tuple[Intents, Intents]] = {}
        self._home: _Home | None = None
        self._pending: set[asyncio.Task[Any]] = set()
        self._unsubscribe = registry.subscribe(self._changed)

    def close(self) -> None:
        """Stop following the registry and drop calls still waiting for approval."""
        self._unsubscribe()
        for task in self._pending:
            task.cancel()

    def _changed(self, action: str, entry: Any) -> None:
        self._home = None

    # -- recognition ------------------------------------------------------------------

    def intents_for(self, language: str) -> tuple[Intents, Intents]:
        """Return the (cached) intents of ``language``: those we serve, and the others.

        The others are only tried when nothing we serve matched, which gives the same
        answer as matching all at once (a served intent always ranks first) at a
        fraction of the cost for the sentences that matter.
        """
        found = self._intents.get(language)
        if found is None:
            doc = load_templates(language)
            if doc is None:
                raise InvalidParamsError(f"no sentence templates for '{language}'")
            served = {k: v for k, v in doc["intents"].items() if k in SUPPORTED_INTENTS}
            others = {k: v for k, v in doc["intents"].items() if k not in SUPPORTED_INTENTS}
            found = (Intents.from_dict({**doc, "intents": served}),
                     Intents.from_dict({**doc, "intents": others}))  # fmt: skip
            self._intents[language] = found
        return found

    def home(self) -> _Home:
        """Return the devices, labels and slot lists (rebuilt after a registry change)."""
        rooms = self._rooms()
        room_key = tuple((r.slug, r.aliases) for r in rooms)
        if self._home is not None and self._home.room_key == room_key:
            return self._home
        home = _Home(devices=list(self._devices()), room_key=room_key)
        names: list[TextSlotValue] = []
        for device in home.devices:
            context = {"domain": domain_of(device)}
            for label in dict.fromkeys((device.name, *device.aliases)):
                home.labels.setdefault(label.casefold(), []).append(device)
                names.append(TextSlotValue(TextChunk(label), label.casefold(), context))
        areas: list[TextSlotValue] = []
        for room in rooms:
            home.rooms[room.slug] = room
            for label in room.labels:
                home.room_labels.setdefault(label.casefold(), room.slug)
            home.room_labels.setdefault(room.slug, room.slug)
            areas.extend(TextSlotValue(TextChunk(label), room.slug) for label in room.labels)
        home.slot_lists = {
            "name": TextSlotList(name="name", values=names),
            "area": TextSlotList(name="area", values=areas),
            "floor": TextSlotList(name="floor", values=[]),
        }
        self._home = home
        return home

    def recognize(
        self, text: str, language: str, here: str | None = None
    ) -> list[RecognizeResult]:
        """Return every template match of ``text``, best first.

        ``here`` is the speaker's room (slug): sentences without a place match there.
        A sentence we can serve comes before one we cannot, a named device before a
        room, a room said aloud before the speaker's room.
        """
        home = self.home()
        context = {"area": here} if here else None
        results: list[RecognizeResult] = []
        for intents in self.intents_for(language):
            results = self._match(text, intents, home, context, language)
            if results:
                break

        def rank(r: RecognizeResult) -> tuple[bool, bool, bool]:
            area = r.entities.get("area")
            return (r.intent.name not in SUPPORTED_INTENTS, "name" not in r.entities,
                    area is not None and not area.text)  # fmt: skip

        return sorted(results, key=rank)

    @staticmethod
    def _match(
        text: str, intents: Intents, home: _Home, context: dict[str, Any] | None, language: str
    ) -> list[RecognizeResult]:
        while True:
            try:
                return list(recognize_all(text, intents, slot_lists=home.slot_lists,
                                          intent_context=context, language=language))
            except MissingListError as err:  # a template list we have no values for
                name = str(err).rsplit("{", 1)[-1].rstrip("}")
                if name in home.slot_lists:
                    raise
                home.slot_lists[name] = TextSlotList(name=name, values=[])

    # -- handling ---------------------------------------------------------------------

    async def handle(
        self, text: str, language: str, *, token: AgentToken | None, area: str | None = None
    ) -> IntentReply:
        """Recognise ``text`` and run it with ``token``; never act on an unclear sentence.

        ``area`` is the speaker's room (a room name, alias or slug; e.g. a voice
        satellite's): sentences without a place ("turn on the lights") act there, and
        do nothing without it. Raises ``InvalidParamsError`` for empty or oversized text.
        """
        started = time.perf_counter()
        lang = normalise_language(language or "en")
        if not isinstance(text, str) or not text.strip():
            raise InvalidParamsError("'text' must be a non-empty string", {"field": "text"})
        if len(text) > MAX_TEXT:
            raise InvalidParamsError(
                f"'text' must have at most {MAX_TEXT} characters", {"field": "text"}
            )
        if area is not None and (not isinstance(area, str) or len(area) > MAX_AREA):
            raise InvalidParamsError(f"'area' must be a room name of at most {MAX_AREA} "
                                     "characters", {"field": "area"})  # fmt: skip
        if lang not in self.languages:
            reply = IntentReply(
                speech=say("en", "language", languages=", ".join(self.languages)),
                language=lang,
                handled=False,
            )
        else:
            here = self.home().room_labels.get(area.strip().casefold()) if area else None
            reply = await self._handle(text.strip(), lang, token, here)
        return _timed(reply, started)

    async def _handle(
        self, text: str, lang: str, token: AgentToken | None, here: str | None
    ) -> IntentReply:
        results = self.recognize(text, lang, here)
        if not results:
            if here is None and self.recognize(text, lang, _SOMEWHERE):
                return _reply(lang, "where")
            return self._not_understood(text, lang, token)
        reading = _Reading.of(results[0])
        if reading.intent not in SUPPORTED_INTENTS:
            return _reply(lang, "not_here", intent=reading.intent)
        plan = self._plan(reading, text, lang, token)
        if isinstance(plan, IntentReply):
            return plan
        return await self._run(reading.intent, plan, lang, token)

    # -- planning: the subject first, then the target, then the tool ------------------

    def _plan(
        self, r: _Reading, text: str, lang: str, token: AgentToken | None
    ) -> _Plan | IntentReply:
        home = self.home()
        area = r.values.get("area")
        room = home.rooms.get(str(area)) if area is not None else None
        if area is not None and room is None:
            return _reply(lang, "where", intent=r.intent)  # the speaker's room is unknown
        device: Device | None = None
        if "name" in r.values:
            devices = list(home.labels.get(str(r.values["name"]), []))
            if room is not None:
                devices = [d for d in devices if d.room and slugify(d.room) == room.slug] or devices
            if len(devices) > 1:
                return _which_one(devices, r.intent, lang, token)
            if not devices:
                return self._not_understood(text, lang, token)
            device = devices[0]
        domain = r.values.get("domain")
        device_class = r.values.get("device_class")
        if domain is None:
            domain = domain_of(device) if device is not None else _INTENT_DOMAIN.get(r.intent)
        if device is not None and domain is not None and not fits(device, str(domain)):
            return _reply(lang, "cannot", target=device.name, intent=r.intent)
        if device is None and room is not None and domain == "light" and r.combo != "domain_all":
            lights = self._the_room_light(r, text, lang, room)
            if len(lights) > 1:  # "the kitchen light" in a kitchen with several
                return _which_one(lights, r.intent, lang, token)
            device = lights[0] if lights else None
        subject = _Subject(intent=r.intent, domain=str(domain) if domain else None,
                           device_class=str(device_class) if device_class else None,
                           device=device, room=room, lang=lang)  # fmt: skip
        if r.intent in ("HassTurnOn", "HassTurnOff"):
            return self._switch(subject, r)
        if r.intent == "HassLightSet":
            return self._light_set(subject, r)
        if r.intent in ("HassSetPosition", STOP_INTENT):
            return self._cover(subject, r)
        if r.intent == "HassGetState":
            return self._state(subject)
        return self._climate(subject, r, token)

    def _the_room_light(self, r: _Reading, text: str, lang: str, room: Room) -> list[Device]:
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

    def _call(self, capability: str, params: dict[str, Any], target: str, *,
              device: Device | None = None, room: Room | None = None) -> _Call | None:  # fmt: skip
        definition = self._tool_for(capability, device_id=device.id if device else None,
                                    room=room.slug if room else None)  # fmt: skip
        if definition is None:
            return None
        return _Call(definition=definition, params=params, target=target)

    def _members(self, s: _Subject) -> list[Device]:
        """Return the devices in the subject's room that are the kind it names."""
        if s.room is None or s.domain is None:
            return []
        return [d for d in s.room.devices if fits(d, s.domain, s.device_class)]

    def _each(self, s: _Subject, capability: str, params: dict[str, Any], key: str,
              values: dict[str, Any] | None = None) -> _Plan | IntentReply:  # fmt: skip
        """Return calls of ``capability`` on the subject's device or its kind in its room."""
        targets = [s.device] if s.device is not None else self._members(s)
        if not targets:
            return self._no_kind(s)
        calls = [c for d in targets
                 if (c := self._call(capability, params, d.name, device=d)) is not None]
        if not calls:
            return _reply(s.lang, "cannot", target=targets[0].name, intent=s.intent)
        target = calls[0].target if len(calls) == 1 else either(s.lang, [c.target for c in calls])
        return _Plan(calls=tuple(calls), key=key, target=target, values=values or {})

    def _no_kind(self, s: _Subject) -> IntentReply:
        kind = noun(s.lang, s.domain or "", s.device_class)
        if s.room is None:
            return _reply(s.lang, "no_kind_home", kind=kind, intent=s.intent)
        return _reply(s.lang, "no_kind", kind=kind, target=s.room.name, intent=s.intent)

    def _switch(self, s: _Subject, r: _Reading) -> _Plan | IntentReply:
        on = s.intent == "HassTurnOn"
        if s.domain == "climate" and s.device is not None:
            if on:
                return _reply(s.lang, "climate_on", target=s.device.name, intent=s.intent)
            call = self._call("set_mode", {"mode": "off"}, s.device.name, device=s.device)
            modes = (call.definition.parameters.get("properties", {}).get("mode", {})
                     .get("enum", [])) if call else []  # fmt: skip
            if call is None or "off" not in modes:
                return _reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
            return _Plan(calls=(call,), key="thermostat_off", target=s.device.name)
        pair = _SWITCHING.get(s.domain or "")
        if pair is None:
            if s.device is not None:
                return _reply(s.lang, "cannot", target=s.device.name, intent=s.intent)
            return self._no_kind(s)
        capability = pair[0] if on else pair[1]
        if s.domain == "light" and s.device is None:
            return self._room_lights(s, r, capability, {}, capability)
        return self._each(s, capability, {}, _SAID.get(capability, capability))

    def _room_lights(
        self,
        s: _Subject,
        r: _Reading,
        capability: str,
        params: dict[str, Any],
        key: str,
        values: dict[str, Any] | None = None,
    ) -> _Plan | IntentReply:
        """Return the room tool call (or, for the whole home, every room's)."""
        if s.room is None and r.combo == "domain_all" and capability in ("on", "off"):
            home = self.home()
            calls = [c for slug in sorted(home.rooms)
                     if (c := self._call(capability, params, home.rooms[slug].name,
                                         room=home.rooms[slug])) is not None]  # fmt: skip
            if not calls:
                return self._no_kind(s)
            return _Plan(calls=tuple(calls), key=f"all_{capability}", target="")
        if s.room is None:
            return _reply(s.lang, "where", intent=s.intent)
        call = self._call(capability, params, s.room.name, room=s.room)
        if call is None:
            if not [d for d in s.room.devices if domain_of(d) == "light"]:
                return self._no_kind(s)
            return _reply(s.lang, "cannot", target=s.room.name, intent=s.intent)
        return _Plan(calls=(call,), key=key, target=s.room.name, values=values or {})

    def _light_set(self, s: _Subject, r: _Reading) -> _Plan | IntentReply:
        params: dict[str, Any]
        values: dict[str, Any]
        if "brightness" in r.values:
            percent = _number(r.values["brightness"])
            capability, params = "brightness", {"percent": percent}
            values = {"percent": _spoken_number(percent, s.lang)}
        elif "color" in r.values:
            color = str(r.values["color"])
            capability, params, values = "set_color", {"color": color}, {"color": color}
        elif "temperature" in r.values:
            kelvin = _number(r.values["temperature"])
            capability, params = "color_temperature", {"kelvin": kelvin}
            values = {"kelvin": _spoken_number(kelvin, s.lang)}
        else:
            return _reply(s.lang, "not_here", intent=s.intent)
        if s.device is not None or capability == "color_temperature":
            if s.device is None and s.room is not None:  # no room tool: each light that can
                lights = [d for d in s.room.devices if domain_of(d) == "light"]
                calls = [c for d in lights
                         if (c := self._call(capability, params, d.name, device=d)) is not None]
                if not calls:
                    return _reply(s.lang, "cannot", target=s.room.name, intent=s.intent)
                return _Plan(calls=tuple(calls), key=_SAID[capability], target=s.room.name,
                             values=values)  # fmt: skip
            return self._each(s, capability, params, _SAID[capability], values)
        room_capability = {"set_color": "color"}.get(capability, capability)
        return self._room_lights(s, r, room_capability, params, _SAID[capability], values)

    def _cover(self, s: _Subject, r: _Reading) -> _Plan | IntentReply:
        s = s.with_domain("cover")
        if s.intent == STOP_INTENT:
            return self._each(s, "stop", {}, "stop")
        percent = _number(r.values.get("position", 0))
        return self._each(s, "set_position", {"percent_open": percent}, "set_position",
                          {"percent": _spoken_number(percent, s.lang)})  # fmt: skip

    def _state(self, s: _Subject) -> _Plan | IntentReply:
        if s.device is None and s.domain == "sensor" and s.device_class is not None:
            members = self._members(s)
            if not members or s.room is None:
                return self._no_kind(s)
            call = self._call("state", {}, s.room.name, device=members[0])
            if call is None:
                return _reply(s.lang, "cannot", target=members[0].name, intent=s.intent)
            return _Plan(calls=(call,), key="state", target=s.room.name)  # asked by room
        if s.device is None:
            return _reply(s.lang, "not_here", intent=s.intent)
        return self._each(s, "state", {}, "state")

    def _climate(
        self, s: _Subject, r: _Reading, token: AgentToken | None
    ) -> _Plan | IntentReply:
        home = self.home()
        setting = s.intent == "HassClimateSetTemperature"
        value = _number(r.values.get("temperature", 0)) if setting else 0
        device = s.device
        if device is None:
            pool = [d for d in home.devices if d.kind == "thermostat"]
            if s.room is not None:
                pool = [d for d in pool if d in s.room.devices]
                if setting and pool:
                    call = self._call("temperature", {}, s.room.name, room=s.room)
                    if call is not None:
                        params = {_first_param(call.definition, "celsius"): value}
                        call = _Call(definition=call.definition, params=params,
                                     target=s.room.name)  # fmt: skip
                        limits = self._limits(pool, "set_temperature")
                        return _Plan(calls=(call,), key="set_temperature", target=s.room.name,
                                     values={"temperature": _spoken_number(value, s.lang),
                                             "limits": limits})  # fmt: skip
                if not setting and not pool:  # a thermometer answers "how warm is it"
                    pool = [d for d in s.room.devices if d.kind == "temperature_sensor"]
            if len(pool) > 1:
                return _which_one(pool, s.intent, s.lang, token)
            if not pool:
                target = s.room.name if s.room else ""
                if not target:
                    return _reply(s.lang, "no_kind_home", kind=noun(s.lang, "climate"),
                                  intent=s.intent)  # fmt: skip
                return _reply(s.lang, "no_temperature", target=target, intent=s.intent)
            device = pool[0]
        spoken = s.room.name if s.room is not None else device.name
        if setting:
            call = self._call("set_temperature", {}, spoken, device=device)
            if call is None:
                return _reply(s.lang, "cannot", target=device.name, intent=s.intent)
            params = {_first_param(call.definition, "celsius"): value}
            return _Plan(calls=(_Call(definition=call.definition, params=params,
                                      target=spoken),),
                         key="set_temperature", target=spoken,
                         values={"temperature": _spoken_number(value, s.lang)})  # fmt: skip
        call = self._call("state", {}, spoken, device=device)
        if call is None:
            return _reply(s.lang, "no_temperature", target=spoken, intent=s.intent)
        return _Plan(calls=(call,), key="get_temperature", target=spoken)

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

    # -- running ----------------------------------------------------------------------

    async def _run(
        self, intent: str, plan: _Plan, lang: str, token: AgentToken | None
    ) -> IntentReply:
        for call in plan.calls:
            refused = _out_of_range(call, plan.values.get("limits"), lang)
            if refused is not None:
                return IntentReply(speech=refused, language=lang, handled=False, intent=intent)
        if len(plan.calls) == 1 and _needs_approval(plan.calls[0].definition):
            return self._ask_approval(intent, plan.calls[0], lang, token)
        outcomes = await asyncio.gather(*(self._invoke(c, token) for c in plan.calls))
        made = tuple(record for record, _ in outcomes)
        failed = [(c, record) for c, (record, _) in zip(plan.calls, outcomes, strict=True)
                  if not record["ok"]]  # fmt: skip
        if len(plan.calls) > 1:
            if failed:
                speech = say(lang, "partial_rooms", done=len(plan.calls) - len(failed),
                             total=len(plan.calls),
                             names=both(lang, [c.target for c, _ in failed]))  # fmt: skip
                return IntentReply(speech=speech, language=lang, handled=True, intent=intent,
                                   calls=made)  # fmt: skip
            return IntentReply(speech=say(lang, plan.key, target=plan.target, **_spoken(plan)),
                               language=lang, handled=True, intent=intent, calls=made)
        record, result = outcomes[0]
        if not record["ok"]:
            code = str(record["error"]["code"])
            key = {"PERMISSION_DENIED": "denied", "DEVICE_UNAVAILABLE": "unavailable",
                   "CONTROLLER_UNAVAILABLE": "unavailable",
                   "INVALID_PARAMS": "bad_value"}.get(code, "failed")  # fmt: skip
            return IntentReply(speech=say(lang, key, target=plan.target), language=lang,
                               handled=False, intent=intent, calls=made)  # fmt: skip
        if isinstance(result, dict) and "devices" in result and not result.get("ok", True):
            names = [d["name"] for d in result["devices"] if not d.get("ok")]
            speech = say(lang, "partial", done=result.get("succeeded", 0),
                         total=len(result["devices"]), names=either(lang, names))  # fmt: skip
            return IntentReply(speech=speech, language=lang, handled=True, intent=intent,
                               calls=made)  # fmt: skip
        speech = _answer(plan, result, lang)
        return IntentReply(speech=speech, language=lang, handled=True, intent=intent, calls=made)

    async def _invoke(
        self, call: _Call, token: AgentToken | None
    ) -> tuple[dict[str, Any], Any]:
        tool = f"{call.definition.namespace}:{call.definition.name}"
        request = ToolRequest(tool=tool, params=call.params,
                              context=RequestContext(agent_id=token.agent_id if token else None))
        response = await self.invoker.invoke(request, token=token)
        record: dict[str, Any] = {"tool": tool, "params": call.params,
                                  "ok": response.error is None}  # fmt: skip
        if response.error is not None:
            record["error"] = {"code": response.error.get("code"),
                               "message": response.error.get("message")}  # fmt: skip
            return record, None
        record["result"] = response.result
        return record, response.result

    def _ask_approval(
        self, intent: str, call: _Call, lang: str, token: AgentToken | None
    ) -> IntentReply:
        """Start a call a person must approve; answer now that it waits for them."""
        task = asyncio.get_running_loop().create_task(self._invoke(call, token))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        tool = f"{call.definition.namespace}:{call.definition.name}"
        record = {"tool": tool, "params": call.params, "ok": None, "pending": "approval"}
        return IntentReply(speech=say(lang, "needs_approval", target=call.target),
                           language=lang, handled=True, intent=intent,
                           calls=(record,))  # fmt: skip

    def _not_understood(self, text: str, lang: str, token: AgentToken | None) -> IntentReply:
        heard = self.heard_names(text, token=token)
        if heard:
            return IntentReply(speech=say(lang, "unclear", names=either(lang, heard)),
                               language=lang, handled=False)  # fmt: skip
        close = self.close_matches(text, token=token)
        if close:
            speech = say(lang, "suggest", names=either(lang, close))
        else:
            speech = say(lang, "unknown")
        return IntentReply(speech=speech, language=lang, handled=False,
                           suggestions=tuple(close))  # fmt: skip

    def _labels(self, token: AgentToken | None) -> dict[str, str]:
        """Return the names, aliases and rooms the token may know of (casefold → label)."""
        home = self.home()
        labels: dict[str, str] = {}
        for device in home.devices:
            if may_see(token, device):
                for label in (device.name, *device.aliases):
                    labels.setdefault(label.casefold(), label)
        for room in home.rooms.values():
            if any(may_see(token, d) for d in room.devices):
                for name in room.labels:
                    labels.setdefault(name.casefold(), name)
        return labels

    def heard_names(self, text: str, *, token: AgentToken | None = None) -> list[str]:
        """Return the names of ``text`` said exactly (so never offered back as a guess)."""
        folded = " " + " ".join(_words(text)) + " "
        return [label for key, label in self._labels(token).items()
                if f" {' '.join(_words(key))} " in folded]  # fmt: skip

    def close_matches(
        self, text: str, limit: int = 3, *, token: AgentToken | None = None
    ) -> list[str]:
        """Return device names, aliases and rooms that look like words of ``text``.

        With a token, only devices it may read or control count, and rooms holding one.
        """
        words = _words(text)
        scored: list[tuple[float, str]] = []
        for folded, label in self._labels(token).items():
            size = max(1, len(folded.split()))
            best = 0.0
            for i in range(max(1, len(words) - size + 1)):
                window = " ".join(words[i:i + size])
                best = max(best, difflib.SequenceMatcher(None, folded, window).ratio())
            if best >= 0.7:
                scored.append((best, label))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [label for _, label in scored[:limit]]


# Subject of intents whose templates carry no domain slot.
_INTENT_DOMAIN = {"HassLightSet": "light", "HassSetPosition": "cover", STOP_INTENT: "cover",
                  "HassClimateSetTemperature": "climate",
                  "HassClimateGetTemperature": "climate"}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class _Subject:
    """What a sentence is about: its intent, domain (and class), device or room."""

    intent: str
    domain: str | None
    device_class: str | None
    device: Device | None
    room: Room | None
    lang: str

    def with_domain(self, domain: str) -> _Subject:
        return _Subject(intent=self.intent, domain=self.domain or domain,
                        device_class=self.device_class, device=self.device, room=self.room,
                        lang=self.lang)  # fmt: skip

    def with_device(self, device: Device) -> _Subject:
        return _Subject(intent=self.intent, domain=self.domain, device_class=self.device_class,
                        device=device, room=self.room, lang=self.lang)  # fmt: skip


def may_see(token: AgentToken | None, device: Device) -> bool:
    """Return whether ``token`` may read or control ``device`` (no token: an in-process caller)."""
    if token is None:
        return True
    wanted = (f"device:control:{device.id}", f"device:read:{device.id}")
    return any(covers(p, w) for p in token.permissions for w in wanted)


def _reply(lang: str, key: str, *, intent: str | None = None, **values: Any) -> IntentReply:
    return IntentReply(speech=say(lang, key, **values), language=lang, handled=False,
                       intent=intent)  # fmt: skip


def _which_one(
    devices: Sequence[Device], intent: str, lang: str, token: AgentToken | None
) -> IntentReply:
    """Ask which of several devices was meant, naming those the caller may see (no action)."""
    names = [_where(d) for d in devices if may_see(token, d)]
    if not names:
        return IntentReply(speech=say(lang, "unknown"), language=lang, handled=False,
                           intent=intent)  # fmt: skip
    return IntentReply(speech=say(lang, "ambiguous", names=either(lang, names)), language=lang,
                       handled=False, intent=intent, suggestions=tuple(names))  # fmt: skip


def _needs_approval(definition: ToolDefinition) -> bool:
    return definition.dangerous or (
        definition.confirmation is not None and definition.confirmation.mode == "always"
    )


def _out_of_range(call: _Call, limits: Any, lang: str) -> str | None:
    """Return the answer for a value outside the tool's range (``None`` when it fits)."""
    properties = call.definition.parameters.get("properties", {})
    for key, value in call.params.items():
        if not isinstance(value, int | float):
            continue
        spec = properties.get(key, {})
        low, high = spec.get("minimum"), spec.get("maximum")
        if low is None or high is None:
            if limits is None:
                continue
            low, high = limits
        if not low <= value <= high:
            return say(lang, "out_of_range", value=_spoken_number(value, lang),
                       target=call.target, low=_spoken_number(low, lang),
                       high=_spoken_number(high, lang))  # fmt: skip
    return None


def _spoken(plan: _Plan) -> dict[str, Any]:
    return {k: v for k, v in plan.values.items() if k != "limits"}


def _answer(plan: _Plan, result: Any, lang: str) -> str:
    """Return the sentence for a successful single call (state questions read the result)."""
    values = _spoken(plan)
    state = result if isinstance(result, dict) else {}
    if plan.key == "get_temperature":
        measured = state.get("temperature")
        if not isinstance(measured, int | float):
            return say(lang, "no_temperature", target=plan.target)
        return say(lang, "get_temperature", target=plan.target,
                   temperature=_spoken_number(measured, lang))  # fmt: skip
    if plan.key != "state":
        return say(lang, plan.key, target=plan.target, **values)
    if isinstance(state.get("humidity_percent"), int | float):
        return say(lang, "humidity", target=plan.target,
                   percent=_spoken_number(round(state["humidity_percent"]), lang))  # fmt: skip
    if isinstance(state.get("temperature"), int | float):
        return say(lang, "get_temperature", target=plan.target,
                   temperature=_spoken_number(state["temperature"], lang))  # fmt: skip
    if state.get("lock_state") in ("locked", "unlocked", "not_fully_locked", "unlatched"):
        key = "state_locked" if state["lock_state"] == "locked" else "state_unlocked"
        return say(lang, key, target=plan.target)
    if state.get("contact") in ("open", "closed"):
        return say(lang, f"state_{state['contact']}", target=plan.target)
    if isinstance(state.get("percent_open"), int | float):
        return say(lang, "state_position", target=plan.target,
                   percent=_spoken_number(round(state["percent_open"]), lang))  # fmt: skip
    if isinstance(state.get("on"), bool):
        return say(lang, "state_on" if state["on"] else "state_off", target=plan.target)
    return say(lang, "state_unknown", target=plan.target)


def _first_param(definition: ToolDefinition, default: str) -> str:
    required = definition.parameters.get("required", [])
    return str(required[0]) if required else default


def _words(text: str) -> list[str]:
    return re.sub(r"[?.,!;:¿¡]", " ", text.casefold()).split()


def _where(device: Device) -> str:
    return f"{device.name} ({device.room})" if device.room else device.name


def _number(value: Any) -> float:
    number = float(value)
    return int(number) if number.is_integer() else number


def _spoken_number(value: Any, lang: str) -> str:
    number = round(float(value), 1)
    text = str(int(number)) if number.is_integer() else f"{number:g}"
    return text if lang == "en" else text.replace(".", ",")


def _timed(reply: IntentReply, started: float) -> IntentReply:
    return IntentReply(
        speech=reply.speech, language=reply.language, handled=reply.handled,
        intent=reply.intent, calls=reply.calls, suggestions=reply.suggestions,
        duration_ms=(time.perf_counter() - started) * 1000,
    )  # fmt: skip
