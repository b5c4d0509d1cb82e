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

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    RuleReference,
    TextChunk,
)
from hassil.intents import Intent, Intents, TextSlotList
from hassil.util import normalize_for_matching, remove_skip_words

if TYPE_CHECKING:
    from hassil.expression import Sentence
    from hassil.intents import IntentData, SlotList

# hassil retries a chunk with "-" and "_" read as spaces ("living-room").
_BREAK_WORDS = str.maketrans("-_", "  ")
# Rule references nest; a loop of rules requires nothing.
_MAX_DEPTH = 24
# Narrowed intents kept per template set (one per set of absent lists).
_KEPT = 64

_Clauses = frozenset[frozenset[str]]


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
    """One block of an intent's sentences, with the list clauses of each sentence."""

    intent: str
    data: IntentData
    clauses: tuple[_Clauses, ...]


class TemplateIndex:
    """The list clauses of every template of one ``Intents``, and its narrowed copies."""

    def __init__(self, intents: Intents) -> None:
        self.intents = intents
        self._blocks: list[_Block] = []
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
                self._blocks.append(_Block(intent.name, data, tuple(per_sentence)))
        self.lists = frozenset(needed)  # the lists some template cannot match without
        self._narrowed: OrderedDict[frozenset[str], Intents] = OrderedDict()

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

    def absent(self, text: str, slot_lists: Mapping[str, SlotList]) -> frozenset[str]:
        """Return the lists (of ``self.lists``) no value of which occurs in ``text``."""
        if self.intents.settings.ignore_whitespace:
            return frozenset()  # whitespace is dropped between words: not judged here
        haystack = _haystack(text, self.intents.skip_words)
        missing = []
        for name in self.lists:
            found = slot_lists[name] if name in slot_lists else self.intents.slot_lists.get(name)
            if isinstance(found, TextSlotList) and not _occurs(found, haystack):
                missing.append(name)
        return frozenset(missing)

    def _without(self, absent: frozenset[str]) -> Intents:
        """Return a copy of the intents without the templates that need an absent list."""
        intents: dict[str, Intent] = {}
        for block in self._blocks:
            kept = [
                sentence
                for sentence, clauses in zip(block.data.sentences, block.clauses, strict=True)
                if all(not c <= absent for c in clauses)
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


def _haystack(text: str, skip_words: list[str]) -> str:
    """Return every form of ``text`` hassil matches list values against, case folded."""
    said = normalize_for_matching(text).text
    forms = [said, remove_skip_words(said, skip_words, False)] if skip_words else [said]
    forms += [f.translate(_BREAK_WORDS) for f in forms]
    return "\n".join(forms).casefold()


def _occurs(slot_list: TextSlotList, haystack: str) -> bool:
    """Return whether some value of ``slot_list`` may match within ``haystack``."""
    for value in slot_list.values:
        chunk = value.text_in
        if not isinstance(chunk, TextChunk):
            return True  # a template value: not judged here
        said = chunk.text.strip()
        if not said:
            continue  # hassil never matches an empty value
        folded = said.casefold()
        if len(folded) != len(said) or folded in haystack:
            return True
    return False
