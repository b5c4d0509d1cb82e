"""Spoken commands without an LLM: Home Assistant's sentence templates matched to our tools.

Details: docs/modules.md, ``bridge.voice.intents``.
"""

from __future__ import annotations

import asyncio
import difflib
import gc
import itertools
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hassil import Intents, recognize_all
from hassil.errors import MissingListError
from hassil.expression import TextChunk
from hassil.intents import TextSlotList, TextSlotValue

from bridge.errors import BridgeError, ErrorCode, InvalidParamsError
from bridge.invocation.invoker import APPROVAL_WAITING
from bridge.invocation.messages import RequestContext, ToolRequest
from bridge.matter import Device, Room, rooms_of, slugify
from bridge.tools.validation import validate_call
from bridge.voice.colours import colour_name, colour_said
from bridge.voice.compound import (
    commas_joined,
    completions,
    is_compound,
    parts,
    with_noun,
    with_referent,
)
from bridge.voice.floors import FloorLike, floors_of
from bridge.voice.kind_words import KIND_INTENTS
from bridge.voice.planner import (
    SOUND_INTENTS,
    Call,
    Home,
    IntentReply,
    Plan,
    Planner,
    Reading,
    ToolFor,
    may_see,
    reply,
    spoken_number,
)
from bridge.voice.prefilter import TemplateIndex
from bridge.voice.readings import answer_measure
from bridge.voice.responses import LANGUAGES, both, either, say
from bridge.voice.room_words import spoken_words
from bridge.voice.subjects import domain_of
from bridge.voice.templates import (
    CLIMATE_MODE_INTENT,
    RELATIVE_INTENT,
    STOP_INTENT,
    load_templates,
)
from bridge.voice.units import (
    IMPERIAL,
    METRIC,
    explicit_unit,
    from_celsius,
    home_units,
    to_celsius,
)
from bridge.voice.wording import corrected, plain, said_later, said_plainly

if TYPE_CHECKING:
    from hassil.recognize import RecognizeResult

    from bridge.auth.tokens import AgentToken
    from bridge.invocation.invoker import Invoker
    from bridge.tools.registry import ToolRegistry

_LOG = logging.getLogger(__name__)
SUPPORTED_INTENTS = frozenset(
    {
        "HassTurnOn",
        "HassTurnOff",
        "HassLightSet",
        "HassSetPosition",
        "HassGetState",
        "HassClimateSetTemperature",
        "HassClimateGetTemperature",
        STOP_INTENT,
        RELATIVE_INTENT,
        CLIMATE_MODE_INTENT,
        *KIND_INTENTS,  # fans, robot vacuums, appliances, measured values (kind_words)
        *SOUND_INTENTS,  # a speaker's mute and volume (Home Assistant's templates)
    }
)
# The answer for calls a person must approve first, by what the plan does.
_APPROVAL_KEY = {
    "unlock": "needs_approval",
    "are_unlocked": "needs_approval",
    "open": "needs_approval_open",
    "are_open": "needs_approval_open",
}
# Stand-in for "the speaker's room" when asking whether a sentence needs one.
_SOMEWHERE = "\x00somewhere"
# A room or floor said aloud: (slug, the label heard, the sentence without it, a floor).
_Place = tuple[str, str, str, bool]


def normalise_language(language: str) -> str:
    """Return the base language of a tag (``"de-AT"`` → ``"de"``)."""
    return language.strip().replace("_", "-").split("-", 1)[0].lower()


# Words beyond which a sentence is not one command (the sets' longest single command has
# 13; compound sentences are cut into parts first): no second tries at matching it.
RETRY_WORDS = 20


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
        units: str = "auto",
        floors: Sequence[FloorLike] | Callable[[], Sequence[FloorLike]] = (),
    ) -> None:
        self.registry = registry
        self.invoker = invoker
        self._devices = devices
        self._tool_for = tool_for
        self._rooms = rooms or (lambda: rooms_of(self._devices(), {}))
        self.languages = tuple(languages)
        self._intents: dict[str, tuple[TemplateIndex, TemplateIndex]] = {}
        self._compiling: dict[str, asyncio.Future[tuple[TemplateIndex, TemplateIndex]]] = {}
        self._home: Home | None = None
        self._pending: set[asyncio.Task[Any]] = set()
        self._unsubscribe = registry.subscribe(self._changed)
        self.configured_units = units
        # The home model's floors (read at each rebuild), or a fixed list.
        self._floors = floors if callable(floors) else (lambda fixed=tuple(floors): fixed)
        self._spoken_words: dict[str, frozenset[str]] = {}
        self._planner = Planner(
            home=self.home, tool_for=tool_for, not_understood=self._not_understood, units=self.units
        )

    def units(self) -> str:
        """Return the units the home speaks temperatures in (``metric``/``imperial``)."""
        return home_units(self.configured_units, self.home().devices)

    def close(self) -> None:
        """Stop following the registry and drop calls still waiting for approval.

        The compiled templates were frozen out of the cyclic collector (``intents_for``);
        they hold reference cycles, so they go back to it here, or a process that builds
        engine after engine (a test run) would keep every one (14 MB each for two
        languages). The collector is the process's: whatever else was frozen goes back
        with them, to be frozen again by the next start-up or re-sync.
        """
        self._unsubscribe()
        for task in self._pending:
            task.cancel()
        if self._intents:
            self._intents.clear()
            gc.unfreeze()

    def _changed(self, action: str, entry: Any) -> None:
        self._home = None

    # -- recognition ------------------------------------------------------------------

    def intents_for(self, language: str) -> tuple[TemplateIndex, TemplateIndex]:
        """Return the (cached) intents of ``language``: those we serve, and the others.

        The others are only tried when nothing we serve matched, which gives the same
        answer as matching all at once (a served intent always ranks first) at a
        fraction of the cost for the sentences that matter. Each comes indexed by the
        slot lists its templates need (``bridge.voice.prefilter``).
        """
        found = self._intents.get(language)
        if found is None:
            doc = load_templates(language)
            if doc is None:
                raise InvalidParamsError(f"no sentence templates for '{language}'")
            served = {k: v for k, v in doc["intents"].items() if k in SUPPORTED_INTENTS}
            others = {k: v for k, v in doc["intents"].items() if k not in SUPPORTED_INTENTS}
            found = (
                TemplateIndex(Intents.from_dict({**doc, "intents": served})),
                TemplateIndex(Intents.from_dict({**doc, "intents": others})),
            )
            for index in found:
                index.warm()
            self._intents[language] = found
            # A language's compiled templates (~54,000 objects for English, ~270,000 for
            # five) live as long as the engine: out of the cyclic collector with them, as
            # ``run`` does with what start-up built, or every full collection scans them
            # all, holding the interpreter 290-390 ms with five languages compiled
            # (bench/intents.py). Reference counting still frees them with the engine.
            gc.freeze()
        return found

    async def _compiled(self, language: str) -> None:
        """Have ``language``'s templates compiled, in a thread the first time.

        Compiling one language's templates costs 0.1-0.3 s of CPU; on the event loop
        that would stall every other caller for that long the first time the language is
        spoken. Callers who ask meanwhile wait for the same compile.
        """
        if language in self._intents:
            return
        compiling = self._compiling.get(language)
        if compiling is None:
            compiling = asyncio.ensure_future(asyncio.to_thread(self.intents_for, language))
            self._compiling[language] = compiling
            compiling.add_done_callback(lambda _: self._compiling.pop(language, None))
        await asyncio.shield(compiling)

    def home(self) -> Home:
        """Return the devices, labels and slot lists (rebuilt after a registry change)."""
        rooms = self._rooms()
        floors = tuple(self._floors())
        room_key = (tuple((r.slug, r.aliases) for r in rooms), floors)
        if self._home is not None and self._home.room_key == room_key:
            return self._home
        home = Home(devices=list(self._devices()), room_key=room_key)
        room_words = {label.casefold() for room in rooms for label in room.labels}
        names: list[TextSlotValue] = []
        for device in home.devices:
            context = {"domain": domain_of(device)}
            for label in dict.fromkeys((device.name, *device.aliases)):
                home.labels.setdefault(label.casefold(), []).append(device)
                names.append(TextSlotValue(TextChunk(label), label.casefold(), context))
        for label, devices in list(home.labels.items()):
            plural = _plural(label, room_words)
            if plural and plural not in home.labels:  # "the smart curtains": all of them
                home.labels[plural] = devices
                home.plurals.add(plural)
                names.append(
                    TextSlotValue(TextChunk(plural), plural, {"domain": domain_of(devices[0])})
                )
        areas: list[TextSlotValue] = []
        known_floors = floors_of(floors, rooms)
        # "Küche" for a room named Kitchen: the words of its kind in every language
        lent = spoken_words(
            ((room.slug, room.labels) for room in rooms),
            taken=[*home.labels, *(label for f in known_floors for label in f.labels)],
        )
        for room in rooms:
            home.rooms[room.slug] = room
            by_language = lent.get(room.slug, {})
            labels = (*room.labels, *(w for words in by_language.values() for w in words))
            home.room_words[room.slug] = tuple(dict.fromkeys(labels))
            for label in labels:
                home.room_labels.setdefault(label.casefold(), room.slug)
            home.room_labels.setdefault(room.slug, room.slug)
            areas.extend(TextSlotValue(TextChunk(label), room.slug) for label in room.labels)
            for language, words in by_language.items():  # recognised in their language only
                home.area_words.setdefault(language, []).extend(
                    TextSlotValue(TextChunk(word), room.slug) for word in words
                )
        levels: list[TextSlotValue] = []
        for floor in known_floors:
            home.floors[floor.slug] = floor
            levels.extend(TextSlotValue(TextChunk(label), floor.slug) for label in floor.labels)
        home.slot_lists = {
            "name": TextSlotList(name="name", values=names),
            "area": TextSlotList(name="area", values=areas),
            "floor": TextSlotList(name="floor", values=levels),
        }
        self._home = home
        return home

    def recognize(
        self, text: str, language: str, here: str | None = None, *, served_only: bool = False
    ) -> list[RecognizeResult]:
        """Return every template match of ``text``, best first.

        ``here`` is the speaker's room (slug): sentences without a place match there.
        A sentence we can serve comes before one we cannot, a named device before a
        room, a room said aloud before the speaker's room.
        """
        home = self.home()
        context = {"area": here} if here else None
        results: list[RecognizeResult] = []
        for index in self.intents_for(language):
            results = self._match(text, index, home, context, language)
            if results:
                break

        def rank(r: RecognizeResult) -> tuple[bool, bool, bool, bool]:
            area = r.entities.get("area")
            return (
                r.intent.name not in SUPPORTED_INTENTS,
                "name" not in r.entities,
                area is not None and not area.text,
                # a question asked of something in particular ("what is the thermostat
                # set to", "how bright is the lamp") before the general reading of it
                "asked" not in r.entities,
            )

        return sorted(results, key=rank)

    @staticmethod
    def _match(
        text: str,
        index: TemplateIndex,
        home: Home,
        context: dict[str, Any] | None,
        language: str,
    ) -> list[RecognizeResult]:
        while True:
            try:
                return list(
                    recognize_all(
                        text,
                        index.narrowed(text, lists := home.lists_for(language)),
                        slot_lists=lists,
                        intent_context=context,
                        language=language,
                    )
                )
            except MissingListError as err:  # a template list we have no values for
                name = str(err).rsplit("{", 1)[-1].rstrip("}")
                if name in home.slot_lists:
                    raise
                home.slot_lists[name] = TextSlotList(name=name, values=[])
                home.language_lists.clear()

    # -- handling ---------------------------------------------------------------------

    async def handle(
        self, text: str, language: str, *, token: AgentToken | None, area: str | None = None
    ) -> IntentReply:
        """Recognise ``text`` and run it with ``token``; never act on an unclear sentence.

        ``area`` is the speaker's room (a room name, alias or slug; e.g. a voice
        satellite's): sentences without a place ("turn on the lights") act there, and
        do nothing without it. The sentence's shape was checked where it entered
        (``SpokenCommand.CHECK``: text, language and area within their limits).
        """
        started = time.perf_counter()
        lang = normalise_language(language or "en")
        if lang not in self.languages:
            reply = IntentReply(
                speech=say("en", "language", languages=", ".join(self.languages)),
                language=lang,
                handled=False,
            )
        else:
            await self._compiled(lang)
            here = self.home().room_labels.get(area.strip().casefold()) if area else None
            reply = await self._handle(text.strip(), lang, token, here)
        return _timed(reply, started)

    async def _handle(
        self, text: str, lang: str, token: AgentToken | None, here: str | None
    ) -> IntentReply:
        spoken = text
        text, said_units = explicit_unit(said_plainly(plain(text, lang) or text, lang))
        results = self.recognize(text, lang, here)
        # The second tries (a spelling mended, a room said or the only room) each match
        # the templates again; a sentence longer than any one command gets none of them.
        retry = len(text.split()) <= RETRY_WORDS
        if not results and retry:  # a misspelt name or room ("kitchn"): mended if unique
            mended = corrected(text, self._vocabulary(token), self._template_words(lang))
            if mended is not None and (found := self.recognize(mended, lang, here)):
                text, results = mended, found
        place: _Place | None = None  # the room or floor said, when the rest matched alone
        segments = parts(text, lang) if not results else []
        if not results and "," in spoken:
            # "turn off the sofa lamp, the ceiling light and the porch light": cut at the
            # commas too
            listed = parts(
                explicit_unit(said_plainly(plain(commas_joined(spoken, lang), lang), lang))[0],
                lang,
            )
            segments = listed if len(listed) > len(segments) else segments
        if is_compound(segments):
            return await self._handle_compound(segments, lang, token, here, said_units)
        if not results and retry and (said := self._with_room_said(text, lang)) is not None:
            place, results = said
        if not results:
            # "close the blind" with the speaker's room unknown: the room of the home's
            # only blinds, or the question which room
            there = self._in_only_room(text, lang, token) if here is None and retry else None
            if there is None:
                return self._not_understood(text, lang, token)
            if isinstance(there, IntentReply):
                return there
            results = there
        reading = Reading.of(results[0], said_units)
        # "kitchen light" alone, or with a room or floor said ("kitchen light downstairs"):
        # never a guess at what to do (the room said is not in the reading's texts)
        if verbless(reading, place[2] if place is not None else text):
            return self._not_understood(text, lang, token)
        if reading.intent not in SUPPORTED_INTENTS:
            return reply(lang, "not_here", intent=reading.intent)
        if place is not None:
            bound = self._in_said_room(reading, place, lang)
            if isinstance(bound, IntentReply):
                return bound
            reading = bound
        plan = self._planner.plan(reading, text, lang, token, here=here)
        if isinstance(plan, IntentReply):
            return plan
        return await self._run(reading.intent, _asked_units(plan, reading), lang, token)

    def _in_only_room(
        self, text: str, lang: str, token: AgentToken | None, *, served_only: bool = False
    ) -> list[RecognizeResult] | IntentReply | None:
        """Return ``text``'s matches in the one room it can mean, when it needs the speaker's.

        None: ``text`` does not read as a sentence about the speaker's room. Otherwise its
        matches there ("close the blind": the room of the home's only blinds,
        ``Planner.only_room``), or the answer: which room, or that there is none.
        """
        somewhere = self.recognize(text, lang, _SOMEWHERE, served_only=served_only)
        if not somewhere:
            return None
        only = self._planner.only_room(Reading.of(somewhere[0]), lang, token)
        if isinstance(only, IntentReply):
            return only
        there = self.recognize(text, lang, only, served_only=served_only) if only else []
        if not there or verbless(Reading.of(there[0]), text):
            return reply(lang, "where")
        return there

    def _label_said(self, segment: list[str]) -> str | None:
        """Return the device or room name a list item says alone ("the sofa lamp"), if any."""
        words = list(segment)
        while words and words[0] in _ROOM_LEADS:
            words.pop(0)
        label = " ".join(words).casefold()
        home = self.home()
        return label if label in home.labels or label in home.room_labels else None

    def _vocabulary(self, token: AgentToken | None) -> frozenset[str]:
        """Return the words a typo may be mended to (never a hidden device's name).

        They are the words of the names and rooms ``token`` may see, and the floors'.
        """
        floors = [label for floor in self.home().floors.values() for label in floor.labels]
        return frozenset(w for label in (*self._labels(token), *floors) for w in _words(label))

    def _template_words(self, lang: str) -> frozenset[str]:
        """Return every word of the language's templates (never mended into a name)."""
        found = self._spoken_words.get(lang)
        if found is None:
            doc = load_templates(lang) or {}
            text = repr((doc.get("intents"), doc.get("expansion_rules"), doc.get("lists")))
            found = frozenset(w.casefold() for w in re.findall(r"[^\W\d_]+", text))
            self._spoken_words[lang] = found
        return found

    def _said_room(self, text: str) -> _Place | None:
        """Return the longest room or floor name said in ``text``.

        As (slug, label, the text without it, whether it is a floor).
        """
        folded = " ".join(_words(text))
        best: _Place | None = None
        home = self.home()
        places = [(label, slug, False) for label, slug in home.room_labels.items()]
        places += [
            (label.casefold(), floor.slug, True)
            for floor in home.floors.values()
            for label in floor.labels
        ]
        for label, slug, is_floor in places:
            found = re.search(rf"(?<!\w){re.escape(label)}(?!\w)", folded)
            if found and (best is None or len(label) > len(best[1])):
                rest = " ".join((folded[: found.start()] + folded[found.end() :]).split())
                best = (slug, label, rest, is_floor)
        return best

    def _with_room_said(self, text: str, lang: str) -> tuple[_Place, list[RecognizeResult]] | None:
        """Return the place said and the matches of ``text`` read as '<room> <name or kind>'.

        "lock the entry lock", "open the living room smart curtain": the room's name taken
        out, the rest recognised as said in that room. None when that reads as nothing.
        """
        said = self._said_room(text)
        if said is None:
            return None
        slug, label, rest, is_floor = said
        # a floor said: as if in one of its rooms ("what's the humidity upstairs", "close
        # the blinds on the first floor"); _in_said_room puts the floor in that room's place
        here = _SOMEWHERE if is_floor else slug
        # "how bright is the reading lamp in the salon": without its "in the" too
        lead = _without_lead(" ".join(_words(text)), label)
        for reading in dict.fromkeys((lead, rest)):
            if reading and (found := self.recognize(reading, lang, here, served_only=True)):
                return (slug, label, reading, is_floor), found
        return None

    def _in_said_room(self, reading: Reading, said: _Place, lang: str) -> Reading | IntentReply:
        """Return ``reading`` bound to the room said aloud, or why not (not in that room)."""
        slug, label, _, is_floor = said
        home = self.home()
        if is_floor:  # "the reading lamp upstairs": a device of that floor's rooms
            floor = home.floors[slug]
            if "name" in reading.values:
                devices = home.labels.get(str(reading.values["name"]), [])
                if not [d for d in devices if d.room and slugify(d.room) in floor.rooms]:
                    return reply(
                        lang,
                        "no_kind_floor",
                        kind=reading.texts.get("name", ""),
                        target=floor.name,
                        intent=reading.intent,
                    )
            values = {k: v for k, v in reading.values.items() if k != "area"}
            return Reading(
                intent=reading.intent,
                values={**values, "floor": slug},
                texts={**reading.texts, "floor": label},
                combo=reading.combo,
                units=reading.units,
            )
        if "name" in reading.values:
            devices = home.labels.get(str(reading.values["name"]), [])
            if not [d for d in devices if d.room and slugify(d.room) == slug]:
                # a name of another room's device: never that one
                return reply(
                    lang,
                    "no_kind",
                    kind=reading.texts.get("name", ""),
                    target=home.rooms[slug].name,
                    intent=reading.intent,
                )
        return Reading(
            intent=reading.intent,
            values={**reading.values, "area": slug},
            texts={**reading.texts, "area": label},
            combo=reading.combo,
            units=reading.units,
        )

    async def _handle_compound(
        self,
        segments: list[list[str]],
        lang: str,
        token: AgentToken | None,
        here: str | None,
        said_units: str | None = None,
    ) -> IntentReply:
        """Plan every part of a compound sentence, then run them in the order spoken.

        All or nothing at planning: a part not understood, about a kind the home does not
        have, ambiguous or out of range stops the whole sentence, and the answer says which.
        """
        plans: list[tuple[str, Plan]] = []
        named: str | None = None  # the device the last part named ("it" in the next)
        sparing = False  # the last part spared something ("… except the porch light")
        spared = 0  # parts the last one took as more of what it spares
        before = ""  # the sentence the last part was read as
        for i, segment in enumerate(segments):
            if spared:
                spared -= 1
                continue
            tries = completions(segments, i, lang)
            if sparing:
                # after "… except A": never a verb borrowed ("and B" is B spared too, or a
                # sentence of its own: "… and lock the front door")
                tries = iter([" ".join(segment)])
            if named is not None and (meant := with_referent(segment, named, lang)):
                # "turn on the sofa lamp and dim it to 20 %": "it" is the sofa lamp
                tries = itertools.chain(
                    completions([*segments[:i], meant, *segments[i + 1 :]], i, lang), tries
                )
            shared = named is not None and len(self.home().labels.get(named.casefold(), [])) > 1
            if i and (nouns := with_noun(segment, named, before, lang, shared=shared)):
                # "turn off the kitchen light and the one on the porch": the porch light
                tries = itertools.chain(
                    *(
                        completions([*segments[:i], said.split(), *segments[i + 1 :]], i, lang)
                        for said in nouns
                    ),
                    tries,
                )
            candidates = list(_said_both_ways(tries, lang))
            found = next(
                (
                    (c, r)
                    for c in candidates
                    if (r := self.recognize(c, lang, here, served_only=True))
                    and not verbless(Reading.of(r[0]), c)
                ),
                None,
            )
            part = " ".join(segment)
            if found is None and here is None:
                # "put the kitchen lights on and the blind up": "open the blind" in the
                # room of the home's only blind; which room, if no candidate finds one
                asked: IntentReply | None = None
                for said in candidates:
                    there = self._in_only_room(said, lang, token, served_only=True)
                    if isinstance(there, IntentReply):
                        asked = asked or there
                    elif there is not None:
                        found = (said, there)
                        break
                if found is None and asked is not None:
                    return _nothing_done(asked, lang)
            if found is None:
                return IntentReply(
                    speech=say(lang, "part_unknown", part=part), language=lang, handled=False
                )
            sentence, results = found
            before = sentence
            reading = Reading.of(results[0], said_units)
            named = reading.texts.get("name") or None
            sparing = "except_name" in reading.values or "except_area" in reading.values
            if sparing:  # "… except A, B and C": B and C spared too
                more: list[str] = []
                for item in segments[i + 1 :]:
                    if (label := self._label_said(item)) is None:
                        break
                    more.append(label)
                spared = len(more)
                if more:
                    reading = replace(reading, values={**reading.values, "except_more": more})
            plan = self._planner.plan(reading, sentence, lang, token, here=here)
            if isinstance(plan, IntentReply):
                return _nothing_done(plan, lang)
            plan = _asked_units(plan, reading)
            for call in plan.calls:
                refused = _out_of_range(call, plan.values, lang)
                if refused is not None:
                    return _nothing_done(reply(lang, "unknown"), lang, refused)
            plans.append((reading.intent, plan))
        plans = _said_once(_cleaned_together(plans, lang))
        replies: list[IntentReply] = []
        for number, (intent, plan) in enumerate(plans):
            done = await self._run(intent, plan, lang, token)
            replies.append(done)
            if number + 1 == len(plans):
                break
            # The parts run in the order spoken, each after the last one worked: nothing
            # after a part a person must approve first ("unlock the door and then lock
            # it") or one the device or the bridge refused.
            held = any(c.get("pending") == "approval" for c in done.calls)
            if held or not done.handled:
                rest = " ".join(" ".join(segment) for segment in segments[number + 1 :])
                key = "part_held" if held else "part_skipped"
                replies.append(
                    IntentReply(speech=say(lang, key, part=rest), language=lang, handled=False)
                )
                plans = plans[: number + 1]
                break
        return IntentReply(
            speech=" ".join(r.speech for r in replies),
            language=lang,
            handled=all(r.handled for r in replies),
            intent="+".join(intent for intent, _ in plans),
            calls=tuple(c for r in replies for c in r.calls),
        )

    # -- running ----------------------------------------------------------------------

    async def _run(
        self, intent: str, plan: Plan, lang: str, token: AgentToken | None
    ) -> IntentReply:
        done = await self._run_calls(intent, plan, lang, token)
        spared = plan.values.get("spared")
        if spared and done.handled:  # "… except the porch light": what was left as it was
            key = "spared_many" if plan.values.get("spared_count", 1) > 1 else "spared"
            return replace(done, speech=f"{done.speech} {say(lang, key, names=spared)}")
        return done

    async def _run_calls(
        self, intent: str, plan: Plan, lang: str, token: AgentToken | None
    ) -> IntentReply:
        for call in plan.calls:
            refused = _out_of_range(call, plan.values, lang)
            if refused is not None:
                return IntentReply(speech=refused, language=lang, handled=False, intent=intent)
        if plan.key.startswith("relative_") or plan.key in ("states", "temperatures", "readings"):
            read = await self._read(intent, plan, lang, token)
            if isinstance(read, IntentReply):
                return read
            states, made_reads = read
            if not plan.key.startswith("relative_"):
                units = _units_of_answer(plan, self.units())
                return IntentReply(
                    speech=_unit_named(_summary(plan, states, lang, units), units, self.units()),
                    language=lang,
                    handled=True,
                    intent=intent,
                    calls=made_reads,
                )
            plan = self._planner.after_reads(plan, states, lang)
            if not plan.calls:  # nothing read back that can be changed (or a fan is off)
                return IntentReply(
                    speech=say(
                        lang, "idle" if plan.key == "idle" else "cannot", target=plan.target
                    ),
                    language=lang,
                    handled=False,
                    intent=intent,
                )
        if plan.in_order:
            outcomes = []
            for call in plan.calls:  # the next only after the device took the last
                outcomes.append(await self._invoke(call, token))
                if outcomes[-1].problem is not None or outcomes[-1].waiting:
                    break
            plan = replace(plan, calls=plan.calls[: len(outcomes)])
        else:
            outcomes = list(await asyncio.gather(*(self._invoke(c, token) for c in plan.calls)))
        made = tuple(o.record for o in outcomes)
        failed = [
            (c, o) for c, o in zip(plan.calls, outcomes, strict=True) if o.problem is not None
        ]
        waiting = [c for c, o in zip(plan.calls, outcomes, strict=True) if o.waiting]
        if waiting:
            # "Unlocking … needs approval" for a lock, "Opening …" for a garage door or
            # gate; any other call the invoker holds for a person (a confirmation
            # ``always``, or ``when`` its condition holds). Never "… are open" for
            # what waits; the others said done only when they are.
            key = _APPROVAL_KEY.get(plan.key, "approval_asked")
            speech = say(lang, key, target=both(lang, [c.target for c in waiting]))
            if failed:
                speech = f"{_partial(plan, failed, lang, len(waiting))} {speech}"
            elif len(waiting) < len(plan.calls):
                speech = f"{speech} {say(lang, 'rest_done')}"
            return IntentReply(
                speech=speech, language=lang, handled=True, intent=intent, calls=made
            )
        if len(plan.calls) > 1:
            if failed:
                return IntentReply(
                    speech=_partial(plan, failed, lang),
                    language=lang,
                    handled=True,
                    intent=intent,
                    calls=made,
                )
            return IntentReply(
                speech=say(lang, plan.key, target=plan.target, **_spoken(plan)),
                language=lang,
                handled=True,
                intent=intent,
                calls=made,
            )
        outcome = outcomes[0]
        if outcome.problem is not None:
            return self._refused(intent, plan, lang, token, outcome.problem, made)
        result = outcome.result
        if isinstance(result, dict) and "devices" in result and not result.get("ok", True):
            names = [d["name"] for d in result["devices"] if not d.get("ok")]
            speech = say(
                lang,
                "partial",
                done=result.get("succeeded", 0),
                total=len(result["devices"]),
                names=either(lang, names),
            )
            return IntentReply(
                speech=speech, language=lang, handled=True, intent=intent, calls=made
            )
        units = _units_of_answer(plan, self.units())
        speech = _answer(plan, result, lang, units)
        if plan.key in _READ_DEGREES:  # a reading spoken in the unit asked
            speech = _unit_named(speech, units, self.units())
        return IntentReply(speech=speech, language=lang, handled=True, intent=intent, calls=made)

    async def _read(
        self, intent: str, plan: Plan, lang: str, token: AgentToken | None
    ) -> tuple[list[Any], tuple[dict[str, Any], ...]] | IntentReply:
        """Return the results of a plan's state reads, or why they failed (nothing acted)."""
        outcomes = await asyncio.gather(*(self._invoke(c, token) for c in plan.calls))
        made = tuple(o.record for o in outcomes)
        for call, o in zip(plan.calls, outcomes, strict=True):
            if o.problem is not None:
                return self._refused(
                    intent, replace(plan, target=call.target), lang, token, o.problem, made
                )
        return [o.result for o in outcomes], made

    async def _invoke(self, call: Call, token: AgentToken | None) -> _Outcome:
        """Run one call; answer its outcome, or that it waits for a person's approval.

        Whether a call needs approval is the invoker's to decide (``dangerous``, a
        confirmation ``always`` or ``when`` its condition holds): the call runs with
        ``APPROVAL_WAITING`` set, and once the invoker says an approval is pending the
        answer is given while the call goes on waiting (``close`` drops it). A call
        refused before that (no permission, a bound reached) is answered as it ended.
        """
        loop = asyncio.get_running_loop()
        asked: asyncio.Future[str] = loop.create_future()

        def waiting(approval_id: str) -> None:
            if not asked.done():
                asked.set_result(approval_id)

        marker = APPROVAL_WAITING.set(waiting)
        try:
            task = loop.create_task(self._call(call, token))  # runs with the marker set
        finally:
            APPROVAL_WAITING.reset(marker)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        watched: set[asyncio.Future[Any]] = {task, asked}
        try:
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
        if task.done():
            return task.result()
        tool = f"{call.definition.namespace}:{call.definition.name}"
        record = {"tool": tool, "params": call.params, "ok": None, "pending": "approval"}
        return _Outcome(record=record, waiting=True)

    async def _call(self, call: Call, token: AgentToken | None) -> _Outcome:
        tool = f"{call.definition.namespace}:{call.definition.name}"
        request = ToolRequest(
            tool=tool,
            params=call.params,
            context=RequestContext(agent_id=token.agent_id if token else None),
        )
        response = await self.invoker.invoke(request, token=token)
        record: dict[str, Any] = {"tool": tool, "params": call.params, "ok": response.ok}
        problem = response.problem
        if problem is not None:
            record["error"] = {"code": problem.code.value, "message": problem.message}
            return _Outcome(record=record, problem=problem)
        record["result"] = response.result
        return _Outcome(record=record, result=response.result)

    def _refused(
        self,
        intent: str,
        plan: Plan,
        lang: str,
        token: AgentToken | None,
        problem: BridgeError,
        made: tuple[dict[str, Any], ...],
    ) -> IntentReply:
        """Return the answer for a call that did not succeed, saying why.

        The target is named only when the caller may see it (a device it may read or
        control, a room holding one); else the answer is that of a name not understood.
        """
        if plan.target.casefold() not in self._labels(token):
            return IntentReply(
                speech=say(lang, "unknown"), language=lang, handled=False, intent=intent, calls=made
            )
        key = _REFUSALS.get(problem.code) or ("refused" if _device_refused(problem) else "failed")
        return IntentReply(
            speech=say(lang, key, target=plan.target),
            language=lang,
            handled=False,
            intent=intent,
            calls=made,
        )

    def _not_understood(self, text: str, lang: str, token: AgentToken | None) -> IntentReply:
        if said_later(text, lang):  # "turn off the porch light in 10 minutes": not now
            return IntentReply(speech=say(lang, "later"), language=lang, handled=False)
        heard = self.heard_names(text, token=token)
        if heard:
            return IntentReply(
                speech=say(lang, "unclear", names=either(lang, heard)), language=lang, handled=False
            )
        close = self.close_matches(text, token=token)
        if close:
            speech = say(lang, "suggest", names=either(lang, close))
        else:
            speech = say(lang, "unknown")
        return IntentReply(speech=speech, language=lang, handled=False, suggestions=tuple(close))

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
                for name in room.labels:  # not its kind's words: never offered as a guess
                    labels.setdefault(name.casefold(), name)
        return labels

    def heard_names(self, text: str, *, token: AgentToken | None = None) -> list[str]:
        """Return the names of ``text`` said exactly (so never offered back as a guess)."""
        folded = " " + " ".join(_words(text)) + " "
        return [
            label
            for key, label in self._labels(token).items()
            if f" {' '.join(_words(key))} " in folded
        ]

    def close_matches(
        self, text: str, limit: int = 3, *, token: AgentToken | None = None
    ) -> list[str]:
        """Return device names, aliases and rooms that look like words of ``text``.

        With a token, only devices it may read or control count, and rooms holding one.
        """
        words = _words(text)
        by_size: dict[int, list[tuple[str, str]]] = {}
        for folded, label in self._labels(token).items():
            by_size.setdefault(max(1, len(folded.split())), []).append((folded, label))
        best: dict[str, float] = {}
        for size, group in by_size.items():
            # each distinct run of ``size`` words once, however often the sentence says it
            windows = dict.fromkeys(
                " ".join(words[i : i + size]) for i in range(max(1, len(words) - size + 1))
            )
            for window in windows:
                best_of_window(window, group, best)
        scored = sorted(((-score, label) for label, score in best.items() if score >= CLOSE))
        return [label for _, label in scored[:limit]]


# How alike a name and some words of a sentence must be (difflib's ratio) to offer it.
CLOSE = 0.7


def _said_once(plans: list[tuple[str, Plan]]) -> list[tuple[str, Plan]]:
    """Return ``plans`` without a part that repeats the part before it, call for call.

    "turn off the porch light, the porch light" is one command said twice, not two.
    Only the part just before counts ("on, off, on" is three changes), and a toggle or a
    step said twice ("brighter, brighter") is two.
    """
    kept: list[tuple[str, Plan]] = []
    for intent, plan in plans:
        if kept and plan.calls and plan.key != "toggle" and not plan.key.startswith("relative_"):
            before = kept[-1][1]
            if _calls_of(plan) == _calls_of(before):
                continue
        kept.append((intent, plan))
    return kept


def _calls_of(plan: Plan) -> list[tuple[str, str]]:
    """Return a plan's calls as (tool, parameters) for comparing two plans."""
    return [(c.definition.key, repr(sorted(c.params.items()))) for c in plan.calls]


def _cleaned_together(plans: list[tuple[str, Plan]], lang: str) -> list[tuple[str, Plan]]:
    """Return ``plans`` with a robot's areas said one after the other as one call.

    "vacuum the kitchen and the bedroom" plans one clean per part; a robot told to clean
    one area and then another would clean only the last, so one call takes both.
    """
    merged: list[tuple[str, Plan]] = []
    for intent, plan in plans:
        if merged and _cleans_areas(plan) and _cleans_areas(last := merged[-1][1]):
            before, now = last.calls[0], plan.calls[0]
            if before.definition.identity == now.definition.identity:
                areas = list(before.params["areas"])
                areas += [a for a in now.params["areas"] if a not in areas]
                call = replace(before, params={**before.params, "areas": areas})
                values = {**last.values, "areas": both(lang, [str(a) for a in areas])}
                merged[-1] = (merged[-1][0], replace(last, calls=(call,), values=values))
                continue
        merged.append((intent, plan))
    return merged


def _cleans_areas(plan: Plan) -> bool:
    return (
        plan.key == "clean_areas"
        and len(plan.calls) == 1
        and isinstance(plan.calls[0].params.get("areas"), list)
    )


def _said_both_ways(tries: Iterable[str], lang: str) -> Iterator[str]:
    """Yield each try of a compound's part as said, then put plainly when that differs.

    The whole sentence was put plainly before it was cut, but a turn of phrase that
    ends its command ("open the blind a quarter") is only seen once its part stands alone.
    """
    for tried in tries:
        yield tried
        plainly = said_plainly(tried, lang)
        if plainly != tried:
            yield plainly


def best_of_window(window: str, group: list[tuple[str, str]], best: dict[str, float]) -> None:
    """Raise ``best[label]`` to how alike ``window`` and each (folded, label) of ``group`` are.

    The same ratio as ``SequenceMatcher(None, folded, window).ratio()``, at a fraction of
    its cost: the window's index is built once for the group, and a name is compared in
    full only when the cheap upper bounds (lengths, then letters in common) could still
    reach ``CLOSE`` and beat its best so far. A 500-character sentence of home words
    would otherwise cost ~0.1 s of the event loop.
    """
    matcher = difflib.SequenceMatcher(None, "", window)
    size = len(window)
    for folded, label in group:
        floor = max(CLOSE, best.get(label, 0.0))
        length = len(folded) + size
        if not length or 2.0 * min(len(folded), size) / length < floor:
            continue
        matcher.set_seq1(folded)
        if matcher.quick_ratio() < floor:
            continue
        score = matcher.ratio()
        if score > best.get(label, 0.0):
            best[label] = score


# Words that lead a room said after a name ("the lamp in the salon", "die Lampe im
# Salon", "la lampe du salon", "la lámpara del salón", "de lamp in de salon").
_ROOM_LEADS = frozenset(
    {
        "in", "on", "at", "of", "the",
        "im", "der", "dem", "den", "des", "auf", "am",
        "dans", "de", "du", "le", "la", "les", "l'", "au", "aux", "à",
        "en", "el", "del", "los", "las", "al",
        "op", "het",
    }
)  # fmt: skip


def _without_lead(folded: str, label: str) -> str | None:
    """Return ``folded`` without the room ``label`` and the little words just before it."""
    found = re.search(rf"(?<!\w){re.escape(label)}(?!\w)", folded)
    if found is None:
        return None
    before = folded[: found.start()].split()
    dropped = 0
    while before and before[-1] in _ROOM_LEADS and dropped < 3:
        before.pop()
        dropped += 1
    return " ".join([*before, *folded[found.end() :].split()])


# Words that say nothing about what to do: articles, places' prepositions and politeness
# in the five languages (not "an": German for "on"; not "on", "aan", "allume"...).
_NO_VERB = frozenset(
    {
        "the",
        "a",
        "my",
        "our",
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "le",
        "la",
        "les",
        "l'",
        "du",
        "el",
        "los",
        "las",
        "lo",
        "de",
        "del",
        "het",
        "een",
        "mijn",
        "meine",
        "mein",
        "mon",
        "ma",
        "mes",
        "mi",
        "mis",
        # where, and politeness: "the sofa lamp in the lounge, please" says no more
        "in",
        "im",
        "at",
        "dans",
        "au",
        "en",
        "op",
        "please",
        "bitte",
        "alsjeblieft",
        "hey",
        "um",
    }
)


_DIRECTIONS = frozenset({"up", "down"})
_LOUDNESS = frozenset({"lauter", "leiser", "laut", "leise", "louder", "quieter", "softer"})


def _a_direction(value: Any) -> bool:
    return isinstance(value, str) and value in _DIRECTIONS


def verbless(reading: Reading, text: str) -> bool:
    """Return whether ``text`` is only the names it was matched on ("sofa lamp" alone).

    Home Assistant's English templates read a bare name as "turn it on"; a sentence
    that says no word of what to do is never acted on. A direction heard as a word of
    loudness is what to do, not a name: German "lauter" alone is Home Assistant's
    ``{volume_step}`` (up), as "louder" is; a bare "hoch" or "runter" (which could be
    the blinds) stays unclear.
    """
    named: Counter[str] = Counter()
    for key, heard in reading.texts.items():
        words = _words(heard)
        if not (_a_direction(reading.values.get(key)) and _LOUDNESS.intersection(words)):
            named.update(words)
    # each word of a name stands for itself once: "lock the front lock" says "lock" once
    # more than the name "Front Lock" does, so it says what to do
    rest = Counter(w for w in _words(text) if w not in _NO_VERB)
    return not rest - named


@dataclass(frozen=True, slots=True, kw_only=True)
class _Outcome:
    """One call's end as the invoker answered it: its record, result or typed error."""

    record: dict[str, Any]
    result: Any = None
    problem: BridgeError | None = None
    waiting: bool = False  # an approval is pending; the call goes on in the background


# What to say for a refused call, by the invoker's typed error (others: "failed").
_REFUSALS: dict[ErrorCode, str] = {
    ErrorCode.PERMISSION_DENIED: "denied",
    ErrorCode.TOOL_NOT_FOUND: "denied",
    ErrorCode.DEVICE_UNAVAILABLE: "unavailable",
    ErrorCode.CONTROLLER_UNAVAILABLE: "unavailable",
    ErrorCode.RATE_LIMITED: "busy",
    ErrorCode.OVERLOADED: "busy",
    ErrorCode.CONFIRMATION_DENIED: "approval_denied",
    ErrorCode.CONFIRMATION_TIMEOUT: "approval_denied",
    ErrorCode.INVALID_PARAMS: "bad_value",
}


def _device_refused(problem: BridgeError) -> bool:
    """Return whether the device answered and said no (an error state or a status).

    Such a call did not fail for want of an answer: "did not respond" would be untrue
    ("start the dishwasher" while it runs: OperationalState's CommandInvalidInState).
    """
    return problem.code is ErrorCode.TOOL_FAILED and (
        "error_state" in problem.details or "status" in problem.details
    )


def _out_of_range(call: Call, values: dict[str, Any], lang: str) -> str | None:
    """Return the answer for a value outside the call's range (``None`` when it fits).

    The tool's own range is the invoker's rule: ``validate_call`` (the check the invoker
    runs on every call) says whether the parameters fit, and its bounds are only read to
    say them. A device's reported limits (``values["limits"]``) are the planner's
    knowledge, for a parameter whose schema has no range.
    """
    properties = call.definition.parameters.get("properties", {})
    try:
        validate_call(call.definition, call.params)
    except InvalidParamsError as err:
        for key in _params_at_fault(err):
            spec = properties.get(key, {})
            value = call.params.get(key)
            low, high = spec.get("minimum"), spec.get("maximum")
            if isinstance(value, int | float) and low is not None and high is not None:
                return _range_answer(call, values, lang, value, low, high)
        return None  # another fault: the invoker refuses the call, said as "bad_value"
    limits = values.get("limits")
    if limits is None:
        return None
    for key, value in call.params.items():
        spec = properties.get(key, {})
        if not isinstance(value, int | float) or None not in (
            spec.get("minimum"),
            spec.get("maximum"),
        ):
            continue
        low, high = limits
        if not low <= value <= high:
            return _range_answer(call, values, lang, value, low, high)
    return None


def _params_at_fault(err: InvalidParamsError) -> list[str]:
    """Return the top-level parameter names an ``InvalidParamsError``'s problems name."""
    problems = err.details.get("errors", [])
    paths = [p.get("path", "") for p in problems if isinstance(p, dict)]
    return [path[2:].split(".")[0].split("[")[0] for path in paths if path.startswith("$.")]


def _range_answer(
    call: Call, values: dict[str, Any], lang: str, value: float, low: float, high: float
) -> str:
    units = values.get("units")
    said = spoken_number(value, lang)
    if units is not None:  # a temperature: the value as said, limits in home units
        said = str(values.get("temperature", said))
        tool_units = values.get("tool_units", METRIC)
        low, high = (from_celsius(to_celsius(v, tool_units), units) for v in (low, high))
    return say(
        lang,
        "out_of_range",
        value=said,
        target=call.target,
        low=spoken_number(low, lang),
        high=spoken_number(high, lang),
    )


def _plural(label: str, room_words: set[str]) -> str | None:
    """Return the English plural of a device name ("smart curtain" → "smart curtains").

    None for a name that starts with a room's ("kitchen light"): "the kitchen lights"
    are the room's lights, never one device's plural.
    """
    words = label.split()
    if not words or not label.isascii() or label.endswith("s"):
        return None
    if any(label == w or label.startswith(w + " ") for w in room_words):
        return None
    return label + ("es" if label.endswith(("sh", "ch", "x", "z")) else "s")


def _nothing_done(why: IntentReply, lang: str, speech: str | None = None) -> IntentReply:
    """Return the answer that no part of a compound sentence was done, and why."""
    return IntentReply(
        speech=f"{say(lang, 'nothing_done')} {speech or why.speech}",
        language=lang,
        handled=False,
        intent=why.intent,
        suggestions=why.suggestions,
    )


def _spoken(plan: Plan) -> dict[str, Any]:
    return {
        k: v
        for k, v in plan.values.items()
        if k not in ("limits", "units", "spared", "spared_count", "answer_units")
    }


def _asked_units(plan: Plan, reading: Reading) -> Plan:
    """Return ``plan`` answering in the unit said, when one was said.

    "How warm is it in the hall in fahrenheit" is answered in Fahrenheit in a metric home.
    """
    if reading.units is None:
        return plan
    return replace(plan, values={**plan.values, "answer_units": reading.units})


def _units_of_answer(plan: Plan, home: str) -> str:
    """Return the units a plan's answer speaks temperatures in: as asked, else the home's."""
    asked = plan.values.get("answer_units")
    return asked if asked in (METRIC, IMPERIAL) else home


# "degrees" in each language's answers; its unit is named after it ("61 degrees
# Fahrenheit", "16 Grad Celsius") when the answer is not in the home's own units.
_DEGREES = re.compile(
    r"\b(degrees?|Grad|degrés?|grados?|graden|graad)\b(?! (?:Fahrenheit|Celsius))"
)
_UNIT_NAME = {METRIC: "Celsius", IMPERIAL: "Fahrenheit"}
# The single answers that speak a reading's degrees (a set-point confirmed is spoken as
# the planner put it, in the home's units).
_READ_DEGREES = frozenset({"get_temperature", "water_temperature", "set_point"})


def _unit_named(speech: str, units: str, home: str) -> str:
    """Return ``speech`` with the unit named after its degrees when asked in another unit.

    "How warm is it in the bathroom in fahrenheit", in a metric home: "It is 61 degrees
    Fahrenheit in Bathroom." (the home's own unit is never named: nobody asked).
    """
    if units == home or units not in _UNIT_NAME:
        return speech
    return _DEGREES.sub(rf"\1 {_UNIT_NAME[units]}", speech)


def _set_point(
    plan: Plan, state: dict[str, Any], lang: str, degrees: Callable[[float], str]
) -> str:
    """Return what a thermostat is set to: by its mode, the setpoint it works to."""
    mode = state.get("mode")
    heat, cool = state.get("heating_setpoint"), state.get("cooling_setpoint")
    heat = heat if isinstance(heat, int | float) else None
    cool = cool if isinstance(cool, int | float) else None
    if mode == "off":
        return say(lang, "set_point_off", target=plan.target)
    if mode == "auto" and heat is not None and cool is not None:
        return say(
            lang, "set_point_range", target=plan.target, low=degrees(heat), high=degrees(cool)
        )
    working = cool if mode in ("cool", "precooling") else heat
    if working is None:
        working = heat if heat is not None else cool
    if working is None:
        return say(lang, "no_temperature", target=plan.target)
    return say(lang, "set_point", target=plan.target, temperature=degrees(working))


def _answer(plan: Plan, result: Any, lang: str, units: str) -> str:
    """Return the sentence for a successful single call (state questions read the result)."""
    values = _spoken(plan)
    state = result if isinstance(result, dict) else {}
    read_in = IMPERIAL if state.get("unit") == "°F" else METRIC  # the tool's unit

    def degrees(value: float) -> str:  # a reading, spoken in the home's units
        return spoken_number(from_celsius(to_celsius(value, read_in), units), lang)

    if plan.key == "measure":
        return answer_measure(plan, state, lang)
    if plan.key in ("get_temperature", "water_temperature"):
        measured = state.get("temperature")
        if not isinstance(measured, int | float):
            return say(lang, "no_temperature", target=plan.target)
        return say(lang, plan.key, target=plan.target, temperature=degrees(measured))
    if plan.key == "set_point":  # "what is the hall thermostat set to"
        return _set_point(plan, state, lang, degrees)
    if plan.key == "color_state":  # "what colour is the sofa lamp"
        colour = colour_name(state)
        if state.get("on") is False or colour is None:
            return say(
                lang, "state_off" if state.get("on") is False else "state_on", target=plan.target
            )
        return say(lang, "state_color", target=plan.target, color=colour_said(lang, colour))
    if plan.key == "brightness_state":  # "how bright is the sofa lamp"
        percent = state.get("brightness_percent")
        if state.get("on") is False or not isinstance(percent, int | float):
            return say(
                lang, "state_off" if state.get("on") is False else "state_on", target=plan.target
            )
        return say(
            lang,
            "state_brightness",
            target=plan.target,
            percent=spoken_number(round(percent), lang),
        )
    if plan.key != "state":
        return say(lang, plan.key, target=plan.target, **values)
    if isinstance(state.get("humidity_percent"), int | float):
        return say(
            lang,
            "humidity",
            target=plan.target,
            percent=spoken_number(round(state["humidity_percent"]), lang),
        )
    if isinstance(state.get("temperature"), int | float):
        return say(
            lang, "get_temperature", target=plan.target, temperature=degrees(state["temperature"])
        )
    if state.get("lock_state") in ("locked", "unlocked", "not_fully_locked", "unlatched"):
        key = "state_locked" if state["lock_state"] == "locked" else "state_unlocked"
        return say(lang, key, target=plan.target)
    if state.get("contact") in ("open", "closed"):
        return say(lang, f"state_{state['contact']}", target=plan.target)
    if state.get("valve") in ("open", "closed"):  # a water valve: its CurrentState
        return say(lang, f"state_{state['valve']}", target=plan.target)
    if "closure" in state and (shut := _open_or_closed(state)) is not None:
        return say(lang, f"state_{shut}", target=plan.target)  # a garage door, a gate
    if isinstance(state.get("percent_open"), int | float):
        return say(
            lang,
            "state_position",
            target=plan.target,
            percent=spoken_number(round(state["percent_open"]), lang),
        )
    if state.get("muted") is True:  # a speaker: its OnOff is its mute
        return say(lang, "state_muted", target=plan.target)
    if state.get("muted") is False and isinstance(state.get("volume_percent"), int | float):
        return say(
            lang,
            "state_volume",
            target=plan.target,
            percent=spoken_number(round(state["volume_percent"]), lang),
        )
    if isinstance(state.get("on"), bool):
        return say(lang, "state_on" if state["on"] else "state_off", target=plan.target)
    return say(lang, "state_unknown", target=plan.target)


_STATE_FIELDS = {
    "on": ("on", True),
    "off": ("on", False),
    "locked": ("lock_state", "locked"),
    "unlocked": ("lock_state", "unlocked"),
    "open": ("contact", "open"),
    "closed": ("contact", "closed"),
}
_OPPOSITE = {
    "on": "off",
    "off": "on",
    "locked": "unlocked",
    "unlocked": "locked",
    "open": "closed",
    "closed": "open",
}


def _summary(plan: Plan, states: Sequence[Any], lang: str, units: str) -> str:
    """Return the answer to a question about several devices (states or temperatures)."""
    if plan.key == "temperatures":
        readings = []
        for call, state in zip(plan.calls, states, strict=True):
            value = state.get("temperature") if isinstance(state, dict) else None
            if isinstance(value, int | float):
                read_in = IMPERIAL if state.get("unit") == "°F" else METRIC
                spoken = spoken_number(from_celsius(to_celsius(value, read_in), units), lang)
                readings.append(say(lang, "reading", temperature=spoken, target=call.target))
        if not readings:
            return say(lang, "no_temperature", target=plan.target)
        return say(lang, "readings", readings=both(lang, readings))
    if plan.key == "readings":  # a sensor kind on a floor: each room's reading in turn
        one = replace(plan, key="state")
        return " ".join(
            _answer(replace(one, target=call.target), state, lang, units)
            for call, state in zip(plan.calls, states, strict=True)
        )
    asked = str(plan.values.get("state", "on"))
    key, wanted = _STATE_FIELDS.get(asked, ("on", True))
    yes: list[str] = []
    no: list[str] = []
    for call, state in zip(plan.calls, states, strict=True):
        value = state.get(key) if isinstance(state, dict) else None
        if key == "lock_state" and value is not None and value != "locked":
            value = "unlocked"
        if key == "contact" and isinstance(state, dict):  # a door, valve, cover or closure
            value = _open_or_closed(state)
        if value is None:
            continue
        (yes if value == wanted else no).append(call.target)
    if plan.values.get("anything") or (not yes and asked == "on" and not no):
        if not yes:
            return say(lang, "nothing_on_in" if plan.target else "nothing_on", target=plan.target)
        return _named_state(lang, "on", yes)
    parts = [_named_state(lang, asked, yes)] if yes else []
    if no:
        parts.append(_named_state(lang, _OPPOSITE.get(asked, "off"), no))
    # nothing read: name the place asked about, else the devices ("the garage doors")
    target = plan.target or both(lang, [call.target for call in plan.calls])
    return " ".join(parts) or say(lang, "state_unknown", target=target)


def _open_or_closed(state: dict[str, Any]) -> str | None:
    """Return "open" or "closed" from a device's state (None: it does not say).

    A contact sensor's contact, a valve's state, a closure's position (any open position:
    open) or a cover's percentage (above 0: open, as Home Assistant reads a cover).
    """
    for key in ("contact", "valve"):
        if state.get(key) in ("open", "closed"):
            return str(state[key])
    closure = state.get("closure")
    if isinstance(closure, str) and closure != "unknown":
        return "closed" if closure == "closed" else "open"
    percent = state.get("percent_open")
    if isinstance(percent, int | float) and not isinstance(percent, bool):
        return "open" if percent > 0 else "closed"
    return None


def _named_state(lang: str, state: str, names: list[str]) -> str:
    """Return "X is on." or "X and Y are on." in ``lang``."""
    if len(names) == 1:
        return say(lang, f"state_{state}", target=names[0])
    return say(lang, f"are_{state}", names=both(lang, names))


def _words(text: str) -> list[str]:
    return re.sub(r"[?.,!;:¿¡]", " ", text.casefold()).split()


def _timed(reply: IntentReply, started: float) -> IntentReply:
    return IntentReply(
        speech=reply.speech,
        language=reply.language,
        handled=reply.handled,
        intent=reply.intent,
        calls=reply.calls,
        suggestions=reply.suggestions,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _partial(plan: Plan, failed: list[tuple[Call, _Outcome]], lang: str, waiting: int = 0) -> str:
    """Return "Done for N of M; not done: A and B" for a plan some of whose calls failed.

    ``waiting``: how many others wait for a person, neither done nor failed.
    """
    return say(
        lang,
        "partial_rooms",
        done=len(plan.calls) - len(failed) - waiting,
        total=len(plan.calls),
        names=both(lang, [c.target for c, _ in failed]),
    )
