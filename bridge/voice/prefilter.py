"""Which sentence templates can match a sentence at all: a sound pre-filter before hassil.

Most templates need a value of a slot list somewhere in the sentence: "turn on
{name}" a device's name, "set {area} to {color}" a room and a colour. hassil's own
pre-filter checks the literal words of a template; this one checks its lists. For every
template the lists it cannot match without are worked out once (``_list_clauses``: in
conjunctive normal form, like hassil's literal clauses — "({name}|{area})" needs one of
the two); for a sentence, the lists none of whose values occurs in it are *absent*, and
every template that needs an absent list is left out before hassil is called.

The filter only ever leaves out templates that cannot match, so hassil returns the same
results in the same order: a value of a text list matches only text equal to it (case
folded, as hassil compares); values that are templates themselves, lists of numbers
and wildcards are always taken as present. The narrowed ``Intents`` depend only on
which lists are absent, so they are kept (bounded) and reused.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    RuleReference,
    Sequence,
    TextChunk,
)
from hassil.intents import Intent, Intents, RangeSlotList, TextSlotList, TextSlotValue
from hassil.numbers import get_rbnf_engine
from hassil.util import check_excluded_context, check_required_context, normalize_for_matching

if TYPE_CHECKING:
    from hassil.expression import Sentence
    from hassil.intents import IntentData, SlotList

# hassil retries a chunk with "-" and "_" read as spaces ("living-room").
_BREAK_WORDS = str.maketrans("-_", "  ")
# Rule references nest; a loop of rules requires nothing.
_MAX_DEPTH = 24
# Narrowed intents kept per template set (one per set of absent lists: the sentence sets
# need ~70 for English), and lists spelled (the home's are new after every change).
_KEPT, _KEPT_LISTS = 256, 64
# A value template with more spellings than this is not judged.
_SPELLINGS = 256
# Length of the pieces a text is cut into to rule values out at once.
_GRAM = 3

_Clauses = frozenset[frozenset[str]]
# A block's required and excluded context.
_Scope = tuple[dict[str, Any], dict[str, Any]]


def _list_clauses(
    exp: Expression, rules: Mapping[str, Sentence], depth: int = 0
) -> set[frozenset[str]]:
    """Return the slot lists ``exp`` cannot match without, in conjunctive normal form.

    Every clause is a set of list names one of which the sentence must hold a value of.
    An empty result constrains nothing.
    """
    if depth > _MAX_DEPTH:
        return set()
    if isinstance(exp, ListReference):
        return {frozenset((exp.list_name,))}
    if isinstance(exp, Alternative):
        if exp.is_optional or not exp.items:
            return set()
        branches = [_list_clauses(item, rules, depth + 1) for item in exp.items]
        if any(not branch for branch in branches):
            return set()  # a branch needs no list
        # One branch matches: one of its clauses holds, so the union of a clause from
        # every branch does.
        merged: set[str] = set()
        for branch in branches:
            smallest: frozenset[str] = min(branch, key=len)
            merged.update(smallest)
        return {frozenset(merged)}
    if isinstance(exp, Group):  # a sequence or permutation needs every item
        clauses: set[frozenset[str]] = set()
        for item in exp.items:
            clauses.update(_list_clauses(item, rules, depth + 1))
        return clauses
    if isinstance(exp, RuleReference):
        rule = rules.get(exp.rule_name)
        return set() if rule is None else _list_clauses(rule.expression, rules, depth + 1)
    return set()


@dataclass(frozen=True, slots=True)
class _Block:
    """One block of an intent's sentences, with the list clauses of each sentence.

    ``scope`` numbers the block's required and excluded context: hassil matches a
    list value only when its context fits them ("turn on {name}" for lights takes a
    light's name), so a list is absent or present per scope.
    """

    intent: str
    data: IntentData
    clauses: tuple[_Clauses, ...]
    scope: int


@dataclass(frozen=True, slots=True)
class _Value:
    """One value of a list: its spellings, the scopes it fits and their heads.

    Spellings are folded and without whitespace; a scope fits when hassil may match
    the value in its blocks (by the value's context); heads are the first ``_GRAM``
    letters of the longer spellings.
    """

    spellings: tuple[str, ...]
    scopes: frozenset[int]
    heads: frozenset[str]

    def said(self, haystack: str) -> bool:
        """Return whether one of the spellings is in ``haystack``."""
        return any(n in haystack for n in self.spellings)


@dataclass(frozen=True, slots=True)
class _SpelledList:
    """A list's values, found by the heads of their spellings.

    A spelling can be in a text only when its head is one of the text's
    ``_GRAM``-letter pieces, so a text's pieces look up the few values to check;
    values with a shorter spelling are always checked.
    """

    by_head: dict[str, tuple[_Value, ...]]
    always: tuple[_Value, ...]

    @classmethod
    def of(
        cls, values: list[tuple[TextSlotValue | None, set[str]]], scopes: list[_Scope]
    ) -> _SpelledList:
        by_head: dict[str, list[_Value]] = {}
        always: list[_Value] = []
        for value, spellings in values:
            entry = _Value(
                spellings=tuple(sorted(spellings, key=lambda n: (len(n), n))),
                scopes=frozenset(i for i, scope in enumerate(scopes) if _fits(value, *scope)),
                heads=frozenset(n[:_GRAM] for n in spellings if len(n) >= _GRAM),
            )
            if any(len(n) < _GRAM for n in spellings):
                always.append(entry)
            for head in entry.heads:
                by_head.setdefault(head, []).append(entry)
        return cls(by_head={k: tuple(v) for k, v in by_head.items()}, always=tuple(always))

    def scopes(self, haystack: str, pieces: frozenset[str]) -> frozenset[int]:
        """Return the scopes for which a value of the list is in ``haystack``.

        ``pieces`` are the ``_GRAM``-letter pieces of ``haystack``.
        """
        candidates = {v for head in pieces & self.by_head.keys() for v in self.by_head[head]}
        candidates.update(self.always)
        found: frozenset[int] = frozenset()
        for value in candidates:
            if not value.scopes <= found and value.said(haystack):
                found |= value.scopes
        return found


class TemplateIndex:
    """The list clauses of every template of one ``Intents``, and its narrowed copies."""

    def __init__(self, intents: Intents) -> None:
        self.intents = intents
        self._blocks: list[_Block] = []
        self._scopes: list[_Scope] = []
        needed: set[str] = set()
        for intent in intents.intents.values():
            for data in intent.data:
                rules = {**intents.expansion_rules, **data.expansion_rules}
                own = set(data.slot_lists)  # a block's own lists: never filtered on
                per_sentence = []
                for sentence in data.sentences:
                    clauses = frozenset(
                        c for c in _list_clauses(sentence.expression, rules) if not c & own
                    )
                    needed.update(name for c in clauses for name in c)
                    per_sentence.append(clauses)
                scope = (data.requires_context or {}, data.excludes_context or {})
                if scope not in self._scopes:
                    self._scopes.append(scope)
                self._blocks.append(
                    _Block(intent.name, data, tuple(per_sentence), self._scopes.index(scope))
                )
        self.lists = frozenset(needed)  # the lists some template cannot match without
        self._narrowed: OrderedDict[tuple[frozenset[str], ...], Intents] = OrderedDict()
        # id -> (list, its spellings): the list is held so that its id is not reused.
        self._spelled: dict[int, tuple[SlotList, _SpelledList | None]] = {}
        words = sorted({w.strip() for w in intents.skip_words if w.strip()}, key=len, reverse=True)
        # hassil's own pattern for skip words (taken out as whole words, anywhere)
        self._skip = (
            re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, words))})(?!\w)", re.IGNORECASE)
            if words
            else None
        )

    def narrowed(self, text: str, slot_lists: Mapping[str, SlotList]) -> Intents:
        """Return the intents with only the templates that may match ``text``.

        ``slot_lists`` are the lists passed to hassil (they override the templates'
        own lists of the same name).
        """
        absent = self.absent(text, slot_lists)
        found = self._narrowed.get(absent)
        if found is not None:
            self._narrowed.move_to_end(absent)
            return found
        found = self._without(absent)
        self._narrowed[absent] = found
        if len(self._narrowed) > _KEPT:
            self._narrowed.popitem(last=False)
        return found

    def absent(self, text: str, slot_lists: Mapping[str, SlotList]) -> tuple[frozenset[str], ...]:
        """Return, per scope, the lists (of ``self.lists``) no value of which is in ``text``.

        Only values whose context fits the scope count, as hassil counts them.
        """
        nothing = (frozenset[str](),) * len(self._scopes)
        if self.intents.settings.ignore_whitespace:
            return nothing  # whitespace is dropped between words: not judged here
        haystack = _haystack(text, self._skip)
        if haystack is None:
            return nothing
        pieces = frozenset(haystack[i : i + _GRAM] for i in range(len(haystack) - _GRAM + 1))
        every = frozenset(range(len(self._scopes)))
        missing: list[list[str]] = [[] for _ in self._scopes]
        for name in self.lists:
            found = slot_lists[name] if name in slot_lists else self.intents.slot_lists.get(name)
            if found is None:
                continue  # hassil says so (MissingListError)
            spelled = self._spelled_values(found)
            if spelled is None:
                continue
            for scope in every - spelled.scopes(haystack, pieces):
                missing[scope].append(name)
        return tuple(frozenset(m) for m in missing)

    def warm(self) -> None:
        """Spell out the templates' own lists now (number ranges: ~0.1 s), not at first use.

        hassil's own tries of number words ("zwanzig", "vingt") are built here too: it
        builds one the first time a sentence reaches a range slot, ~0.1 s of the event
        loop's time in the middle of some caller's sentence.
        """
        for name in sorted(self.lists):
            found = self.intents.slot_lists.get(name)
            if found is not None:
                self._spelled_values(found)
        _warm_number_words(self.intents)

    def _spelled_values(self, slot_list: SlotList) -> _SpelledList | None:
        """Return the values of ``slot_list`` with their spellings (``_spellings``), kept."""
        kept = self._spelled.get(id(slot_list))
        if kept is not None and kept[0] is slot_list:
            return kept[1]
        values = _list_spellings(slot_list, self.intents.language)
        spelled = None if values is None else _SpelledList.of(values, self._scopes)
        if len(self._spelled) >= _KEPT_LISTS:
            self._spelled.clear()
        self._spelled[id(slot_list)] = (slot_list, spelled)
        return spelled

    def _without(self, absent: tuple[frozenset[str], ...]) -> Intents:
        """Return a copy of the intents without the templates that need an absent list."""
        intents: dict[str, Intent] = {}
        for block in self._blocks:
            gone = absent[block.scope]
            kept = [
                sentence
                for sentence, clauses in zip(block.data.sentences, block.clauses, strict=True)
                if all(not c <= gone for c in clauses)
            ]
            if not kept:
                continue
            if len(kept) == len(block.data.sentences):
                data = block.data
            else:
                data = replace(block.data)
                # hassil parses ``sentences`` once into this cached property; the copy
                # holds the kept ones (same objects, same order).
                data.__dict__["sentences"] = kept
            intents.setdefault(block.intent, Intent(name=block.intent)).data.append(data)
        base = self.intents
        return Intents(
            language=base.language,
            intents=intents,
            slot_lists=base.slot_lists,
            expansion_rules=base.expansion_rules,
            skip_words=base.skip_words,
            settings=base.settings,
        )


def _fits(value: TextSlotValue | None, required: dict[str, Any], excluded: dict[str, Any]) -> bool:
    """Return whether hassil may match ``value`` in a block of this context (None: any)."""
    if value is None:
        return True
    if required and not check_required_context(required, value.context, allow_missing_keys=True):
        return False
    return not (excluded and not check_excluded_context(excluded, value.context))


def _haystack(text: str, skip: re.Pattern[str] | None) -> str | None:
    """Return every form of ``text`` hassil matches list values against, folded.

    The text as hassil normalises it, without its skip words (``skip``), and both with
    "-" and "_" read as spaces; case folded and without whitespace (a value's words may
    be matched across any whitespace). None when folding changes the text's length
    (then it is not judged).
    """
    said = normalize_for_matching(text).text
    forms = [said, skip.sub(" ", said)] if skip is not None else [said]
    forms += [f.translate(_BREAK_WORDS) for f in forms]
    joined = "\x00".join(forms)
    folded = joined.casefold()
    if len(folded) != len(joined):
        return None
    return "".join(folded.split())


def _list_spellings(
    slot_list: SlotList, language: str
) -> list[tuple[TextSlotValue | None, set[str]]] | None:
    """Return every way each value of ``slot_list`` can read, or None when not judged.

    Folded and without whitespace, like ``_haystack``: a text list's values as
    written (a value that is a template, every spelling of it); a list of numbers,
    its digits and its number words as hassil spells them for ``language`` (as one
    value without context, None).
    """
    if isinstance(slot_list, TextSlotList):
        values: list[tuple[TextSlotValue | None, set[str]]] = []
        for value in slot_list.values:
            if isinstance(value.text_in, TextChunk) and not value.text_in.text.strip():
                continue  # hassil never matches an empty value
            spelled = _spellings(value.text_in)
            if spelled is None:
                return None
            # A template value that can read as nothing keeps "": present in any text.
            values.append((value, spelled))
        return values
    if isinstance(slot_list, RangeSlotList):
        numbers = _number_spellings(slot_list, language)
        return None if numbers is None else [(None, numbers)]
    return None  # a wildcard matches anything


def _spellings(exp: Expression, depth: int = 0) -> set[str] | None:
    """Return the texts ``exp`` can match, folded and without whitespace (None: too many)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(exp, TextChunk):
        folded = exp.text.casefold()
        if len(folded) != len(exp.text):
            return None  # hassil compares case as re.IGNORECASE does: not judged
        return {"".join(folded.split())}
    if isinstance(exp, Alternative):
        spelled: set[str] = {""} if exp.is_optional else set()
        for item in exp.items:
            found = _spellings(item, depth + 1)
            if found is None:
                return None
            spelled |= found
        return spelled if len(spelled) <= _SPELLINGS else None
    if isinstance(exp, Group):  # a sequence (a permutation's order is not judged)
        if not isinstance(exp, Sequence):
            return None
        spelled = {""}
        for item in exp.items:
            found = _spellings(item, depth + 1)
            if found is None:
                return None
            spelled = {a + b for a in spelled for b in found}
            if len(spelled) > _SPELLINGS:
                return None
        return spelled
    return None  # a list or rule inside a value: not judged


def _number_spellings(numbers: RangeSlotList, language: str) -> set[str] | None:
    """Return the digits and number words a number of ``numbers`` can be said with."""
    needles: set[str] = set("0123456789") if numbers.digits else set()
    if not numbers.words:
        return needles
    try:
        engine = get_rbnf_engine(numbers.words_language or language)
        for number in numbers.get_numbers():
            for words in engine.format_number(number).text_by_ruleset.values():
                for form in (words, words.translate(_BREAK_WORDS)):
                    folded = form.casefold()
                    if len(folded) != len(form):
                        return None
                    needles.add("".join(folded.split()))
    except ValueError:
        return None  # no number words for the language: not judged
    needles.discard("")
    return needles


def _warm_number_words(intents: Intents) -> None:
    """Build hassil's number-word trie of every range list of ``intents`` (once a process).

    hassil (pinned) keeps them in ``string_matcher._RANGE_TRIE_CACHE`` by language and
    range; should a later hassil move them, nothing is warmed and matching still works.
    """
    try:
        from hassil import string_matcher  # its internals, read once

        cache = string_matcher._RANGE_TRIE_CACHE
        build = string_matcher._build_range_trie
    except (ImportError, AttributeError):
        return
    for slot_list in intents.slot_lists.values():
        if not isinstance(slot_list, RangeSlotList) or not slot_list.words:
            continue
        language = slot_list.words_language or intents.language
        key = (slot_list.start, slot_list.stop, slot_list.step, slot_list.fraction_type)
        if key not in cache[language]:
            cache[language][key] = build(language, slot_list)
