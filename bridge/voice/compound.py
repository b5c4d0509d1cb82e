"""Compound sentences: "X and (then) Y" and several targets of one command.

``parts(text, lang)`` cuts a sentence at its joining words ("and", "and then", ", then",
"und dann", "et puis", "y luego", "en daarna" …) into segments. ``completions(segments,
i)`` lists the sentences segment ``i`` may stand for: with the start of the first and
the end of the last segment ("schalte" + "die Nachttischlampe" + "aus"), with the start
of the first ("turn on" + "the sofa lamp"), with the end of the last ("schalte die
Küchenlampe" + "ein"), and last the segment alone ("turn off the sofa lamp"). The engine
recognises each candidate with the same templates as a whole sentence and keeps the first
that matches; a segment that matches nothing, or plans to nothing, stops the whole
sentence (nothing is done).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Joining words per language, longest first (so "and then" wins over "and").
_JOINERS: dict[str, tuple[str, ...]] = {
    "en": ("and then", "and also", "and", "then", "as well as"),
    "de": ("und dann", "und danach", "und", "dann", "danach"),
    "fr": ("et puis", "et ensuite", "et", "puis", "ensuite"),
    "es": ("y luego", "y después", "y despues", "y", "luego", "después", "despues"),
    "nl": ("en daarna", "en dan", "en", "daarna", "dan"),
}
# Words that only announce a list ("both the kitchen light and …").
_LEADING: dict[str, tuple[str, ...]] = {"en": ("both",), "de": ("sowohl",), "nl": ("zowel",)}
MAX_SEGMENTS = 4
# Bounds on the candidates (each one a recognition): a segment of at most this many
# words, a verb phrase borrowed of at most MAX_PREFIX words ("turn on the", "schalte",
# "turn off the lights in" + "the living room"), a particle of at most MAX_SUFFIX ("ein",
# "aan", "on") — at most 21 per segment.
MAX_SEGMENT_WORDS = 12
MAX_PREFIX, MAX_SUFFIX = 6, 2
# a comma that is not inside a number ("20,5 Grad" is one number)
_COMMA = r"(?:,(?!\d)|(?<!\d),)"
_SPLITTERS = {
    lang: re.compile(
        r"\s*"
        + _COMMA
        + r"\s*(?:(?:"
        + "|".join(map(re.escape, words))
        + r")\s+)?|\s+(?:"
        + "|".join(map(re.escape, words))
        + r")\s+",
        re.IGNORECASE,
    )
    for lang, words in _JOINERS.items()
}


def parts(text: str, lang: str) -> list[list[str]]:
    """Return the word lists of ``text``'s segments (one segment: not compound)."""
    splitter = _SPLITTERS.get(lang)
    if splitter is None:
        return [text.split()]
    leading = _LEADING.get(lang, ())
    words = [w for w in text.split() if w.casefold() not in leading]
    pieces = [p.split() for p in splitter.split(" ".join(words))]
    return [p for p in pieces if p]


_AND = {"en": "and", "de": "und", "fr": "et", "es": "y", "nl": "en"}


def commas_joined(text: str, lang: str) -> str:
    """Return ``text`` with its list commas said as the language's "and".

    "turn off the sofa lamp, the ceiling light and the porch light": the commas are
    gone once the fillers are taken off (``wording.plain``), so a list is cut at them
    only through this. Commas inside a number ("20,5") stay.
    """
    word = _AND.get(lang)
    if word is None:
        return text
    # "the sofa lamp, the ceiling light, and the porch light": one "and", not two
    return re.sub(r"\s*" + _COMMA + r"\s*(?:" + word + r"\s+)?", f" {word} ", text, flags=re.I)


def is_compound(segments: list[list[str]]) -> bool:
    """Return whether ``segments`` are a compound sentence the engine will try."""
    return 1 < len(segments) <= MAX_SEGMENTS and all(len(s) <= MAX_SEGMENT_WORDS for s in segments)


# The words a list's last part may lend the parts before it: verb particles, separable
# verbs and English kind nouns ("turn the porch light and the kitchen light off",
# "schalte die Küchenlampe und die Deckenlampe ein", "doe de keukenlamp en de
# verandalamp uit", "the kitchen and living room lights"); never a value.
_PARTICLES: dict[str, frozenset[str]] = {
    "en": frozenset(
        {"on", "off", "up", "down", "back", "out", "in", "open", "closed", "shut", "again"}
        # "turn off the kitchen and living room lights": the kind both rooms' parts name
        | {"light", "lights", "lamp", "lamps", "blind", "blinds", "curtain", "curtains"}
        | {"shade", "shades", "fan", "fans", "heating", "thermostat", "thermostats"}
    ),
    "de": frozenset(
        {
            "ein",
            "an",
            "aus",
            "auf",
            "zu",
            "ab",
            "hoch",
            "runter",
            "rauf",
            "herunter",
            "wieder",
            "einschalten",
            "ausschalten",
            "anschalten",
            "anmachen",
            "ausmachen",
            "aufmachen",
            "zumachen",
            "öffnen",
            "schließen",
            "abschließen",
            "aufschließen",
        }
    ),
    "fr": frozenset(),
    "es": frozenset(),
    "nl": frozenset(
        {
            "aan",
            "uit",
            "open",
            "dicht",
            "op",
            "neer",
            "omhoog",
            "omlaag",
            "weer",
            "aanzetten",
            "uitzetten",
            "aandoen",
            "uitdoen",
            "openen",
            "sluiten",
        }
    ),
}


def completions(segments: list[list[str]], i: int, lang: str) -> Iterator[str]:
    """Yield the sentences segment ``i`` may stand for, borrowed words first.

    A segment that reads as a sentence of its own borrowing words is the list form ("turn
    off the kitchen light and the porch light": "turn off" + "the porch light"); only
    then is it tried alone — alone, a bare "the porch light" or "die Deckenlampe ein"
    can match something else (turn on; brightness 1) and act wrongly. Last, words that
    are no particle ("make the sofa lamp and the ceiling light blue": "blue"), only for a
    segment that means nothing alone.
    """
    own = segments[i]
    head, tail = segments[0], segments[-1]
    last = i == len(segments) - 1
    # a particle is a word ("ein", "aan", "off"); a value is borrowed only after the
    # segment alone: "allume le lampadaire et mets-le en bleu" must not read its first
    # part as "allume le lampadaire en bleu" (its switch-on lost), and never a number
    # ("allume le lampadaire et mets-le à 20 %": not "allume le lampadaire 20 %")
    particles = _PARTICLES.get(lang, frozenset())
    borrowed = (
        []
        if last
        else [
            tail[-k:]
            for k in range(1, min(MAX_SUFFIX, len(tail) - 1) + 1)
            if all(word.isalpha() for word in tail[-k:])
        ]
    )
    suffixes = [s for s in borrowed if all(word.casefold() in particles for word in s)]
    values = [s for s in borrowed if s not in suffixes]
    prefixes = [head[:j] for j in range(1, min(MAX_PREFIX, len(head) - 1) + 1)] if i else []
    for prefix in prefixes:
        for suffix in suffixes:
            yield " ".join([*prefix, *own, *suffix])
    for prefix in prefixes:
        yield " ".join([*prefix, *own])
    for suffix in suffixes:
        yield " ".join([*own, *suffix])
    yield " ".join(own)
    for value in values:
        for prefix in prefixes:
            yield " ".join([*prefix, *own, *value])
        yield " ".join([*own, *value])


# Pronouns standing for the device the part before named, per language (whole words;
# "es" in German only after a verb: "mach es heller" alone speaks of the room).
_PRONOUNS: dict[str, frozenset[str]] = {
    "en": frozenset({"it", "them"}),
    "de": frozenset({"ihn", "sie", "es"}),
    "fr": frozenset(),
    "es": frozenset(),
    "nl": frozenset({"hem", "ze", "het"}),
}


# French and Spanish imperatives carry the pronoun on the verb: "mets-la", "éteins-le";
# "ponla", "apágala" (the stem's written accent goes with the pronoun).
_FR_CLITIC = re.compile(r"^(?P<verb>[^\W\d_]+)-(?:le|la|les)$", re.IGNORECASE)
_ES_CLITIC = re.compile(r"^(?P<verb>[^\W\d_]{2,}?)(?:la|lo|las|los)$", re.IGNORECASE)
_ES_ACCENTS = str.maketrans("áéíóúÁÉÍÓÚ", "aeiouAEIOU")


def with_referent(segment: list[str], name: str, lang: str) -> list[str] | None:
    """Return ``segment`` with its one pronoun replaced by ``name`` (None: no pronoun).

    "turn on the sofa lamp and dim it to 20 percent": the second part read as "dim sofa
    lamp to 20 percent"; "… et mets-la à 20 %" as "mets <name> à 20 %", "… y ponla al
    20 %" as "pon <name> al 20 %" (only the part's first word is read as a verb with its
    pronoun). The engine tries the result first and the part as said after it.
    """
    pronouns = _PRONOUNS.get(lang, frozenset())
    found = [k for k, word in enumerate(segment) if word.casefold() in pronouns]
    if len(found) == 1:
        k = found[0]
        return [*segment[:k], *name.split(), *segment[k + 1 :]]
    if found or not segment:
        return None
    clitic = {"fr": _FR_CLITIC, "es": _ES_CLITIC}.get(lang)
    verb = clitic.match(segment[0]) if clitic is not None else None
    if verb is None:
        return None
    stem = verb["verb"].translate(_ES_ACCENTS) if lang == "es" else verb["verb"]
    return [stem, *name.split(), *segment[1:]]


# "turn off the kitchen light and the one on the porch", "apaga la luz de la cocina y la
# del porche", "éteins la lampe de cuisine et celle du porche": the part names a place and
# stands for the noun of the part before it. (English: "the one(s)" and what follows;
# French: a demonstrative and its "du / de la / dans le …"; Spanish: an article and its
# "de / del …".)
# (a verb of its own may come first: "… and switch on the one on the porch", "… et
# allume celle du porche", "… y enciende la del porche")
_VERB = r"(?P<verb>(?:[^\W\d_]+ ){1,3}?)?"
_ONE_SAID: dict[str, re.Pattern[str]] = {
    "en": re.compile(
        rf"^{_VERB}(?P<art>the) (?P<one>one|ones) (?P<rest>(?:in|on|at|of|by) .+)$", re.I
    ),
    "fr": re.compile(
        rf"^{_VERB}(?P<art>celle|celui|celles|ceux) (?P<rest>(?:du|des|de la|de l'|de|dans"
        r"|sur) .+)$",
        re.I,
    ),
    "es": re.compile(rf"^{_VERB}(?P<art>la|el|las|los) (?P<rest>(?:del|de|en) .+)$", re.I),
}
_FR_ARTICLE = {"celle": "la", "celui": "le", "celles": "les", "ceux": "les"}
# Kind nouns a part may name without a device (the noun "the one" stands for).
_KIND_NOUNS: dict[str, frozenset[str]] = {
    "en": frozenset(
        {"light", "lights", "lamp", "lamps", "blind", "blinds", "curtain", "curtains"}
        | {"shade", "shades", "fan", "fans", "door", "doors", "thermostat", "thermostats"}
    ),
    "fr": frozenset(
        {"lumière", "lumières", "lampe", "lampes", "store", "stores", "rideau", "rideaux"}
        | {"volet", "volets", "porte", "portes", "ventilateur", "ventilateurs", "thermostat"}
    ),
    "es": frozenset(
        {"luz", "luces", "lámpara", "lámparas", "persiana", "persianas", "cortina", "cortinas"}
        | {"estor", "estores", "puerta", "puertas", "ventilador", "termostato"}
    ),
}
_PLACE_WORDS = {"in", "on", "at", "of", "by", "the"}


def with_noun(
    segment: list[str], named: str | None, before: str, lang: str, *, shared: bool = False
) -> list[str]:
    """Return the sentences a "the one …" part stands for (none: it is not one).

    ``named`` is the device name the part before it said, ``before`` that part's words:
    the noun is the name's head ("kitchen light": light; "luz de la cocina": luz), or a
    kind noun the part before said ("the lights in the kitchen and the ones in the hall").
    English is read as the whole name in that place when several devices share it
    (``shared``: "the reading lamp in the salon"), then both ways with the noun: "the
    porch light" and "the light on the porch" (for "the ones", the other way round).
    """
    said = _ONE_SAID.get(lang)
    found = said.match(" ".join(segment)) if said is not None else None
    if found is None:
        return []
    nouns = _KIND_NOUNS[lang]
    noun = None
    if named:
        words = named.split()
        noun = words[-1] if lang == "en" else words[0]
    if noun is None:
        noun = next((w for w in before.casefold().split() if w in nouns), None)
    if noun is None:
        return []
    rest, verb = found["rest"], found["verb"] or ""
    if lang == "fr":
        return [f"{verb}{_FR_ARTICLE[found['art'].casefold()]} {noun} {rest}"]
    if lang == "es":
        return [f"{verb}{found['art']} {noun} {rest}"]
    place = [w for w in rest.split() if w.casefold() not in _PLACE_WORDS]
    whole = [f"{verb}the {named} {rest}"] if named and shared else []
    by_place = verb + " ".join(["the", *place, noun])
    if found["one"].casefold() == "one":
        # one device: "the porch light", "the living room light" (its only light, or the
        # question which) before the room's lights ("the light in the kitchen")
        return [*whole, by_place, f"{verb}the {noun} {rest}"]
    return [*whole, f"{verb}the {noun} {rest}", by_place]
