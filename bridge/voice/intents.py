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

import difflib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hassil import Intents, recognize_all
from hassil.errors import MissingListError
from hassil.expression import TextChunk
from hassil.intents import SlotList, TextSlotList, TextSlotValue
from home_assistant_intents import get_intents

from bridge.auth.permissions import covers
from bridge.errors import InvalidParamsError
from bridge.invocation.messages import RequestContext, ToolRequest
from bridge.matter.devices import Device, slugify
from bridge.matter.rooms import Room, rooms_of
from bridge.voice.responses import LANGUAGES, either, say

if TYPE_CHECKING:
    from hassil.recognize import RecognizeResult

    from bridge.auth.tokens import AgentToken
    from bridge.invocation.invoker import Invoker
    from bridge.tools.registry import ToolRegistry

_LOG = logging.getLogger(__name__)
SUPPORTED_INTENTS = frozenset(
    {"HassTurnOn", "HassTurnOff", "HassLightSet", "HassClimateSetTemperature",
     "HassClimateGetTemperature"}
)  # fmt: skip
DOMAINS = {"light": "light", "plug": "switch", "switch": "switch", "thermostat": "climate"}
MAX_TEXT = 500
# Common phrasings the shared templates lack, added per language and intent (our own
# templates in the same hassil syntax; everything else is Home Assistant's).
_PCT = "{brightness}[([ ]%)| percent]"
EXTRA_SENTENCES: dict[str, dict[str, list[str]]] = {
    "en": {
        "HassLightSet": [
            f"dim [the] {{name}} to {_PCT}",
            f"dim [the] {{area}} lights to {_PCT}",
            f"dim [the] lights in [the] {{area}} to {_PCT}",
            f"set [the] {{area}} lights to {_PCT}",
            "set [the] {area} lights to {color}",
        ],
        "HassClimateSetTemperature": [
            "set [the] heating in [the] {area} to {temperature} [degrees]",
        ],
        "HassClimateGetTemperature": ["what is [the] {name} set to"],
    },
    "de": {
        "HassLightSet": [
            "(stelle|setze) [das|den|die] {name} auf {brightness}[([ ]%)| Prozent]",
            "(stelle|setze) das Licht (im|in der) {area} auf {brightness}[([ ]%)| Prozent]",
            "mach [das|den|die] {name} {color}",
        ],
        "HassClimateSetTemperature": [
            "(stelle|setze) [das|den|die] {name} auf {temperature} [Grad]",
        ],
    },
}


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


@dataclass(slots=True)
class _Home:
    """Devices and rooms as the recogniser sees them (rebuilt after registry changes)."""

    devices: list[Device]
    labels: dict[str, list[Device]] = field(default_factory=dict)  # casefold label → devices
    rooms: dict[str, str] = field(default_factory=dict)  # room slug → room name
    room_list: list[Room] = field(default_factory=list)
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
        rooms: Callable[[], Sequence[Room]] | None = None,
        languages: Sequence[str] = LANGUAGES,
    ) -> None:
        self.registry = registry
        self.invoker = invoker
        self._devices = devices
        self._rooms = rooms or (lambda: rooms_of(self._devices(), {}))
        self.languages = tuple(languages)
        self._intents: dict[str, Intents] = {}
        self._home: _Home | None = None
        self._unsubscribe = registry.subscribe(self._changed)

    def close(self) -> None:
        """Stop following the registry."""
        self._unsubscribe()

    def _changed(self, action: str, entry: Any) -> None:
        self._home = None

    # -- recognition ------------------------------------------------------------------

    def intents_for(self, language: str) -> Intents:
        """Return the (cached) supported intents of ``language``."""
        found = self._intents.get(language)
        if found is None:
            doc = get_intents(language)
            if doc is None:
                raise InvalidParamsError(f"no sentence templates for '{language}'")
            doc["intents"] = {k: v for k, v in doc["intents"].items() if k in SUPPORTED_INTENTS}
            for intent, sentences in EXTRA_SENTENCES.get(language, {}).items():
                doc["intents"][intent]["data"].append({"sentences": sentences})
            found = Intents.from_dict(doc)
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
            context = {"domain": DOMAINS.get(device.kind, device.kind)}
            for label in dict.fromkeys((device.name, *device.aliases)):
                home.labels.setdefault(label.casefold(), []).append(device)
                names.append(TextSlotValue(TextChunk(label), label.casefold(), context))
        areas: list[TextSlotValue] = []
        for room in rooms:
            home.rooms[room.slug] = room.name
            home.room_list.append(room)
            areas.extend(TextSlotValue(TextChunk(label), room.slug) for label in room.labels)
        home.slot_lists = {
            "name": TextSlotList(name="name", values=names),
            "area": TextSlotList(name="area", values=areas),
            "floor": TextSlotList(name="floor", values=[]),
        }
        self._home = home
        return home

    def recognize(self, text: str, language: str) -> list[RecognizeResult]:
        """Return every template match of ``text`` (best first: a named device before a room)."""
        intents = self.intents_for(language)
        home = self.home()
        while True:
            try:
                results = list(
                    recognize_all(text, intents, slot_lists=home.slot_lists, language=language)
                )
                break
            except MissingListError as err:  # a template list we have no values for
                name = str(err).rsplit("{", 1)[-1].rstrip("}")
                if name in home.slot_lists:
                    raise
                home.slot_lists[name] = TextSlotList(name=name, values=[])
        return sorted(results, key=lambda r: ("name" not in r.entities, "area" in r.entities))

    # -- handling ---------------------------------------------------------------------

    async def handle(self, text: str, language: str, *, token: AgentToken | None) -> IntentReply:
        """Recognise ``text`` and run it with ``token``; never act on an unclear sentence."""
        started = time.perf_counter()
        lang = normalise_language(language or "en")
        if not isinstance(text, str) or not text.strip():
            raise InvalidParamsError("'text' must be a non-empty string", {"field": "text"})
        if len(text) > MAX_TEXT:
            raise InvalidParamsError(
                f"'text' must have at most {MAX_TEXT} characters", {"field": "text"}
            )
        if lang not in self.languages:
            reply = IntentReply(
                speech=say("en", "language", languages=", ".join(self.languages)),
                language=lang,
                handled=False,
            )
        else:
            reply = await self._handle(text.strip(), lang, token)
        return _timed(reply, started)

    async def _handle(self, text: str, lang: str, token: AgentToken | None) -> IntentReply:
        results = self.recognize(text, lang)
        if not results:
            return self._not_understood(text, lang, token)
        result = results[0]
        entities = {k: v.value for k, v in result.entities.items()}
        intent = result.intent.name
        home = self.home()
        area = entities.get("area")
        devices: list[Device] = []
        if "name" in entities:
            devices = list(home.labels.get(str(entities["name"]), []))
            if area is not None:
                devices = [d for d in devices if d.room and slugify(d.room) == area] or devices
            if len(devices) > 1:
                return _which_one(devices, intent, lang, token)
            if not devices:
                return self._not_understood(text, lang, token)
        device = devices[0] if devices else None
        plan = self._plan(intent, entities, device, area, home, lang, token)
        if isinstance(plan, IntentReply):
            return plan
        tool, params, key, target = plan
        return await self._run(intent, tool, params, key, target, entities, lang, token)

    def _plan(
        self,
        intent: str,
        entities: Mapping[str, Any],
        device: Device | None,
        area: str | None,
        home: _Home,
        lang: str,
        token: AgentToken | None,
    ) -> tuple[str, dict[str, Any], str, str] | IntentReply:
        """Return (tool, params, response key, spoken target) or a reply that explains."""
        room = home.rooms.get(area) if area else None
        target = device.name if device is not None else (room or "")
        if intent in ("HassTurnOn", "HassTurnOff"):
            action = "on" if intent == "HassTurnOn" else "off"
            tool = (f"{device.slug}_{action}" if device is not None
                    else f"room_{area}_lights_{action}")  # fmt: skip
            return self._checked(tool, {}, action, target, intent, lang)
        if intent == "HassLightSet":
            if "brightness" in entities:
                percent = _number(entities["brightness"])
                tool = (f"{device.slug}_brightness" if device is not None
                        else f"room_{area}_lights_brightness")  # fmt: skip
                return self._checked(tool, {"percent": percent}, "brightness", target, intent,
                                     lang)  # fmt: skip
            if "color" in entities:
                tool = (f"{device.slug}_set_color" if device is not None
                        else f"room_{area}_lights_color")  # fmt: skip
                return self._checked(tool, {"color": str(entities["color"])}, "color", target,
                                     intent, lang)  # fmt: skip
            return self._unsupported(target, intent, lang)
        thermostat = device
        if thermostat is None:
            pool = [d for d in home.devices if d.kind == "thermostat"]
            if area is not None:
                pool = [d for d in pool if d.room and slugify(d.room) == area]
            if intent == "HassClimateSetTemperature" and area is not None and pool:
                tool = f"room_{area}_temperature"
                value = _number(entities.get("temperature"))
                return self._checked(tool, self._temperature_params(tool, value),
                                     "set_temperature", room or "", intent, lang)  # fmt: skip
            if len(pool) > 1:
                return _which_one(pool, intent, lang, token)
            if not pool:
                return self._unsupported(room or target, intent, lang, key="no_temperature")
            thermostat = pool[0]
        spoken = room or thermostat.name
        if intent == "HassClimateSetTemperature":
            tool = f"{thermostat.slug}_set_temperature"
            value = _number(entities.get("temperature"))
            return self._checked(tool, self._temperature_params(tool, value), "set_temperature",
                                 spoken, intent, lang)  # fmt: skip
        return self._checked(f"{thermostat.slug}_state", {}, "get_temperature", spoken, intent,
                             lang)  # fmt: skip

    def _temperature_params(self, tool: str, value: float) -> dict[str, Any]:
        entry = self._lookup(tool)
        required = entry.definition.parameters.get("required", []) if entry else []
        return {str(required[0]) if required else "celsius": value}

    def _lookup(self, name: str) -> Any:
        for entry in self.registry.list(namespace="matter"):
            if entry.definition.name == name:
                return entry
        return None

    def _checked(
        self, tool: str, params: dict[str, Any], key: str, target: str, intent: str, lang: str
    ) -> tuple[str, dict[str, Any], str, str] | IntentReply:
        if self._lookup(tool) is None:
            return self._unsupported(target, intent, lang)
        return f"matter:{tool}", params, key, target

    def _unsupported(
        self, target: str, intent: str, lang: str, key: str = "unsupported"
    ) -> IntentReply:
        return IntentReply(speech=say(lang, key, target=target or "?"), language=lang,
                           handled=False, intent=intent)  # fmt: skip

    async def _run(
        self,
        intent: str,
        tool: str,
        params: dict[str, Any],
        key: str,
        target: str,
        entities: Mapping[str, Any],
        lang: str,
        token: AgentToken | None,
    ) -> IntentReply:
        request = ToolRequest(
            tool=tool,
            params=params,
            context=RequestContext(agent_id=token.agent_id if token else None),
        )
        response = await self.invoker.invoke(request, token=token)
        call: dict[str, Any] = {"tool": tool, "params": params, "ok": response.error is None}
        if response.error is not None:
            call["error"] = {"code": response.error.get("code"),
                             "message": response.error.get("message")}  # fmt: skip
            code = response.error.get("code")
            failure = {"PERMISSION_DENIED": "denied", "DEVICE_UNAVAILABLE": "unavailable",
                       "CONTROLLER_UNAVAILABLE": "unavailable"}.get(str(code), "failed")
            return IntentReply(speech=say(lang, failure, target=target), language=lang,
                               handled=False, intent=intent, calls=(call,))  # fmt: skip
        result = response.result
        call["result"] = result
        if isinstance(result, dict) and "devices" in result and not result.get("ok", True):
            failed = [d["name"] for d in result["devices"] if not d.get("ok")]
            speech = say(lang, "partial", done=result.get("succeeded", 0),
                         total=len(result["devices"]), names=either(lang, failed))  # fmt: skip
            return IntentReply(speech=speech, language=lang, handled=True, intent=intent,
                               calls=(call,))  # fmt: skip
        values: dict[str, Any] = {"target": target}
        if key == "brightness":
            values["percent"] = _spoken_number(params["percent"], lang)
        elif key == "color":
            values["color"] = params["color"]
        elif key == "set_temperature":
            values["temperature"] = _spoken_number(next(iter(params.values())), lang)
        elif key == "get_temperature":
            measured = result.get("temperature") if isinstance(result, dict) else None
            if not isinstance(measured, int | float):
                return IntentReply(speech=say(lang, "no_temperature", target=target),
                                   language=lang, handled=True, intent=intent, calls=(call,))
            values["temperature"] = _spoken_number(measured, lang)
        return IntentReply(speech=say(lang, key, **values), language=lang, handled=True,
                           intent=intent, calls=(call,))  # fmt: skip

    def _not_understood(self, text: str, lang: str, token: AgentToken | None) -> IntentReply:
        close = self.close_matches(text, token=token)
        if close:
            speech = say(lang, "suggest", names=either(lang, close))
        else:
            speech = say(lang, "unknown")
        return IntentReply(speech=speech, language=lang, handled=False,
                           suggestions=tuple(close))  # fmt: skip

    def close_matches(
        self, text: str, limit: int = 3, *, token: AgentToken | None = None
    ) -> list[str]:
        """Return device names, aliases and rooms that look like words of ``text``.

        With a token, only devices it may read or control count, and rooms holding one.
        """
        home = self.home()
        words = text.casefold().replace("?", " ").replace(".", " ").split()
        labels: dict[str, str] = {}
        for device in home.devices:
            if may_see(token, device):
                for label in (device.name, *device.aliases):
                    labels.setdefault(label.casefold(), label)
        for room in home.room_list:
            if any(may_see(token, d) for d in room.devices):
                for name in room.labels:
                    labels.setdefault(name.casefold(), name)
        scored: list[tuple[float, str]] = []
        for folded, label in labels.items():
            size = max(1, len(folded.split()))
            best = 0.0
            for i in range(max(1, len(words) - size + 1)):
                window = " ".join(words[i:i + size])
                best = max(best, difflib.SequenceMatcher(None, folded, window).ratio())
            if best >= 0.7:
                scored.append((best, label))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [label for _, label in scored[:limit]]


def may_see(token: AgentToken | None, device: Device) -> bool:
    """Return whether ``token`` may read or control ``device`` (no token: an in-process caller)."""
    if token is None:
        return True
    wanted = (f"device:control:{device.id}", f"device:read:{device.id}")
    return any(covers(p, w) for p in token.permissions for w in wanted)


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


def _where(device: Device) -> str:
    return f"{device.name} ({device.room})" if device.room else device.name


def _number(value: Any) -> float:
    number = float(value)
    return int(number) if number.is_integer() else number


def _spoken_number(value: Any, lang: str) -> str:
    number = float(value)
    text = str(int(number)) if number.is_integer() else f"{number:g}"
    return text if lang == "en" else text.replace(".", ",")


def _timed(reply: IntentReply, started: float) -> IntentReply:
    return IntentReply(
        speech=reply.speech, language=reply.language, handled=reply.handled,
        intent=reply.intent, calls=reply.calls, suggestions=reply.suggestions,
        duration_ms=(time.perf_counter() - started) * 1000,
    )  # fmt: skip
