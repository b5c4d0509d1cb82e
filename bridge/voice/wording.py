"""Everyday wording around a command: politeness, fillers, "a bit", and small typos.

``plain(text, lang)`` takes out what people wrap a command in — "please", "could you",
"hey", "um", "for me", "bitte", "s'il te plaît", "por favor", "alsjeblieft" … — so the
templates see the command itself ("could you please turn on the kitchen light for me?" →
"turn on the kitchen light"). Only whole words at the start or end of the sentence (and
"please"-words anywhere) go: the words in the middle of a command are never touched.
``is_small(text, lang)`` tells a small relative change ("dim the kitchen a bit").
``corrected(text, targets, known)`` mends a misspelt word of a name or room ("kitchn",
"ligth") when exactly one of their words is one edit away; the engine tries it only
after the sentence as said matched nothing, and a corrected sentence is planned like
any other (an ambiguous or unknown target still does nothing).
"""

from __future__ import annotations

import re
from collections.abc import Collection

# Said before a command (longest first within a language; the sentence start only).
_OPENERS: dict[str, tuple[str, ...]] = {
    "en": (
        "hey",
        "hi",
        "ok",
        "okay",
        "um",
        "uh",
        "erm",
        "so",
        "right",
        "now",
        "just",
        "could you",
        "can you",
        "would you",
        "will you",
        "could you please",
        "can you please",
        "would you please",
        "would you mind",
        "i want you to",
        "i'd like you to",
        "i would like you to",
        "please",
        "kindly",
        "go ahead and",
    ),
    "de": (
        "hey",
        "hallo",
        "ähm",
        "äh",
        "also",
        "ok",
        "okay",
        "bitte",
        "kannst du",
        "könntest du",
        "würdest du",
        "kannst du bitte",
        "könntest du bitte",
        "würdest du bitte",
        "können sie",
        "könnten sie",
        "mal",
        "doch",
    ),
    "fr": (
        "hé",
        "hey",
        "euh",
        "bon",
        "alors",
        "ok",
        "peux-tu",
        "pourrais-tu",
        "pouvez-vous",
        "pourriez-vous",
        "tu peux",
        "est-ce que tu peux",
        "est-ce que vous pouvez",
        "s'il te plaît",
        "s'il vous plaît",
        "stp",
        "svp",
    ),
    "es": (
        "oye",
        "hola",
        "eh",
        "bueno",
        "vale",
        "ok",
        "por favor",
        "puedes",
        "podrías",
        "puede",
        "podría",
        "me puedes",
        "me podrías",
        "quiero que",
    ),
    "nl": (
        "hé",
        "hey",
        "hoi",
        "eh",
        "uhm",
        "oké",
        "ok",
        "nou",
        "even",
        "alsjeblieft",
        "alstublieft",
        "kun je",
        "kan je",
        "wil je",
        "zou je",
        "kunt u",
        "wilt u",
        "zou je even",
        "kun je even",
        "wil je even",
    ),
}
# Said after a command (the sentence end only).
_CLOSERS: dict[str, tuple[str, ...]] = {
    "en": (
        "please",
        "for me",
        "for me please",
        "please thanks",
        "thanks",
        "thank you",
        "now",
        "right now",
        "if you can",
        "if you could",
        "would you",
        "could you",
    ),
    "de": ("bitte", "danke", "bitte danke", "mal", "bitte mal", "jetzt", "sofort"),
    "fr": ("s'il te plaît", "s'il vous plaît", "stp", "svp", "merci", "maintenant", "pour moi"),
    "es": ("por favor", "gracias", "ahora", "ya"),
    "nl": ("alsjeblieft", "alstublieft", "graag", "bedankt", "dank je", "nu", "even"),
}
# "please"-words taken out wherever they are ("turn on please the light").
_ANYWHERE: dict[str, tuple[str, ...]] = {
    "en": ("please",),
    "de": ("bitte",),
    "fr": ("s'il te plaît", "s'il vous plaît"),
    "es": ("por favor",),
    "nl": ("alsjeblieft", "alstublieft"),
}
# "a bit", "a little": a small relative change.
_SMALL: dict[str, tuple[str, ...]] = {
    "en": ("a bit", "a little", "slightly", "a touch", "a tad", "a little bit"),
    "de": ("etwas", "ein bisschen", "ein wenig", "leicht", "ein bissel"),
    "fr": ("un peu", "légèrement", "un petit peu"),
    "es": ("un poco", "un poquito", "ligeramente"),
    "nl": ("een beetje", "iets", "wat", "een tikje"),
}
# Punctuation around words, never inside a number ("20.5", "20,5" stay).
_PUNCTUATION = re.compile(r"[?!;:¿¡\u2026]+|(?<!\d)[.,]+|[.,]+(?!\d)")


def _pattern(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_OPEN_RE = {
    lang: re.compile(rf"^(?:(?:{_pattern(w)})\s+)+", re.IGNORECASE) for lang, w in _OPENERS.items()
}
_CLOSE_RE = {
    lang: re.compile(rf"(?:\s+(?:{_pattern(w)}))+$", re.IGNORECASE) for lang, w in _CLOSERS.items()
}
_ANY_RE = {
    lang: re.compile(rf"(?<!\S)(?:{_pattern(w)})(?!\S)", re.IGNORECASE)
    for lang, w in _ANYWHERE.items()
}
_SMALL_RE = {
    lang: re.compile(rf"(?<!\w)(?:{_pattern(w)})(?!\w)", re.IGNORECASE)
    for lang, w in _SMALL.items()
}


def plain(text: str, lang: str) -> str:
    """Return ``text`` without the politeness and fillers around its command."""
    out = " ".join(_PUNCTUATION.sub(" ", text).split())
    if lang not in _OPEN_RE:
        return out
    out = _ANY_RE[lang].sub(" ", out)
    out = " ".join(out.split())
    out = _OPEN_RE[lang].sub("", out)
    out = _CLOSE_RE[lang].sub("", out)
    return " ".join(out.split())


def is_small(text: str, lang: str) -> bool:
    """Return whether ``text`` asks for a small relative change ("a bit", "un peu")."""
    pattern = _SMALL_RE.get(lang)
    return bool(pattern and pattern.search(text))


def corrected(text: str, targets: Collection[str], known: Collection[str]) -> str | None:
    """Return ``text`` with misspelt words mended, or None when nothing was mended.

    A word is mended only when it is neither a target (names', rooms' and floors' words,
    casefolded) nor a ``known`` word (the templates' own: "lights" stays "lights"), is
    at least five letters long, and exactly one target of at least five letters is one
    edit (insert, delete, substitute, swap of neighbours) away from it.
    """
    words = text.split()
    changed = False
    for i, word in enumerate(words):
        folded = word.casefold()
        if len(folded) < 5 or folded in targets or folded in known:
            continue
        near = [v for v in targets if len(v) >= 5 and _one_edit(folded, v)]
        if len(near) == 1:
            words[i] = near[0]
            changed = True
    return " ".join(words) if changed else None


def _one_edit(a: str, b: str) -> bool:
    """Return whether ``a`` and ``b`` differ by exactly one edit (or one swap)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]
