"""Lexical relevance search over tool definitions (the registry's ``discover``).

Each definition becomes a bag of weighted tokens from its name (split on ``_``, ``-``,
``.`` and camelCase), description, tags, ``metadata.aliases``, examples, capabilities,
category and namespace. Queries are tokenized the same way, stop words dropped and a
small synonym table applied ("lamp" → "light", "switch" → "turn", "dim" → "brightness").
Scores are BM25 over an incrementally maintained inverted index, so adding or removing
a tool costs only its own tokens and a query touches only the postings of its words.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable
from typing import Any

from bridge.tools.definition import ToolDefinition

_SPLIT_RE = re.compile(r"[^0-9a-z]+")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

STOP_WORDS = frozenset(
    "a an the to of in into at by for from with and or is are be it its this that these "
    "those my your our me i you we please can could would will should do does just some "
    "what which who how".split()
)

# Query-side synonyms: each word also counts as these words (at a lower weight).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "lamp": ("light",),
    "bulb": ("light",),
    "lighting": ("light",),
    "switch": ("turn", "toggle"),
    "shut": ("off", "turn"),
    "deactivate": ("off",),
    "disable": ("off",),
    "activate": ("on",),
    "enable": ("on",),
    "dim": ("brightness", "level", "lower"),
    "brighten": ("brightness", "level"),
    "bright": ("brightness",),
    "brightness": ("level",),
    "temp": ("temperature",),
    "warmer": ("temperature", "heat", "set"),
    "hotter": ("temperature", "heat", "set"),
    "cooler": ("temperature", "cool", "set"),
    "colder": ("temperature", "cool", "set"),
    "heat": ("heating", "temperature"),
    "thermostat": ("temperature", "setpoint"),
    "colour": ("color",),
    "hue": ("color",),
    "message": ("notify", "notification"),
    "alert": ("notify", "notification"),
    "remember": ("store",),
    "save": ("store",),
    "recall": ("get",),
    "fetch": ("get",),
    "find": ("search",),
    "lookup": ("search",),
}

K1 = 1.2
B = 0.5
SYNONYM_WEIGHT = 0.6
FIELD_WEIGHTS = {
    "name": 3.0,
    "tags": 2.0,
    "aliases": 2.0,
    "description": 1.0,
    "examples": 0.7,
    "capabilities": 0.5,
    "category": 0.5,
    "namespace": 0.5,
}


def _stem(token: str) -> str:
    if len(token) > 4 and token.endswith(("ches", "shes", "xes", "sses")):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Return the normalized tokens of ``text`` (camelCase split, lower-cased, stemmed)."""
    spaced = _CAMEL_RE.sub(" ", text).lower()
    return [_stem(t) for t in _SPLIT_RE.split(spaced) if t]


def query_terms(query: str) -> dict[str, float]:
    """Return the weighted terms of a query: its own words (1.0) and their synonyms."""
    terms: dict[str, float] = {}
    for token in tokenize(query):
        if token in STOP_WORDS:
            continue
        terms[token] = 1.0
        for syn in SYNONYMS.get(token, ()):
            terms[syn] = max(terms.get(syn, 0.0), SYNONYM_WEIGHT)
    return terms


def document_terms(defn: ToolDefinition) -> dict[str, float]:
    """Return the weighted tokens indexed for ``defn``."""
    weights: dict[str, float] = {}

    def add(field: str, texts: Iterable[str]) -> None:
        w = FIELD_WEIGHTS[field]
        for text in texts:
            for token in tokenize(text):
                if token not in STOP_WORDS:
                    weights[token] = weights.get(token, 0.0) + w

    meta = defn.metadata
    add("name", [defn.name])
    add("namespace", [defn.namespace])
    add("description", [defn.description])
    add("tags", defn.tags)
    aliases = meta.get("aliases")
    if isinstance(aliases, list):
        add("aliases", [a for a in aliases if isinstance(a, str)])
    examples = meta.get("examples")
    if isinstance(examples, list):
        add("examples", _example_texts(examples))
    add("capabilities", defn.requires.capabilities)
    if defn.category is not None:
        add("category", [defn.category.value])
    return weights


def _example_texts(examples: list[Any]) -> list[str]:
    texts: list[str] = []
    for example in examples:
        if isinstance(example, str):
            texts.append(example)
        elif isinstance(example, dict):
            if isinstance(example.get("description"), str):
                texts.append(example["description"])
            params = example.get("params")
            if isinstance(params, dict):
                texts.extend(v for v in params.values() if isinstance(v, str))
    return texts


class SearchIndex:
    """An inverted index of tool documents keyed by identity, scored with BM25."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, float]] = {}
        self._docs: dict[str, dict[str, float]] = {}
        self._lengths: dict[str, float] = {}
        self._total_length = 0.0

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, identity: str, defn: ToolDefinition) -> None:
        """Index ``defn`` under ``identity`` (replacing an earlier entry)."""
        self.remove(identity)
        terms = document_terms(defn)
        self._docs[identity] = terms
        length = sum(terms.values())
        self._lengths[identity] = length
        self._total_length += length
        for token, weight in terms.items():
            self._postings.setdefault(token, {})[identity] = weight

    def remove(self, identity: str) -> None:
        """Drop ``identity`` from the index (no-op if absent)."""
        terms = self._docs.pop(identity, None)
        if terms is None:
            return
        self._total_length -= self._lengths.pop(identity)
        for token in terms:
            posting = self._postings.get(token)
            if posting is not None:
                posting.pop(identity, None)
                if not posting:
                    del self._postings[token]

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Return up to ``limit`` ``(identity, score)`` pairs, best first; ties by identity."""
        n = len(self._docs)
        if n == 0 or limit <= 0:
            return []
        avg = self._total_length / n if self._total_length > 0 else 1.0
        scores: dict[str, float] = {}
        for term, q_weight in query_terms(query).items():
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = math.log(1.0 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for identity, tf in posting.items():
                norm = K1 * (1.0 - B + B * self._lengths[identity] / avg)
                gain = q_weight * idf * tf * (K1 + 1.0) / (tf + norm)
                scores[identity] = scores.get(identity, 0.0) + gain
        best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
        return [(identity, round(score, 6)) for identity, score in best]
