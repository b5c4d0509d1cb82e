"""Everyday wording around a command: politeness, fillers, "a bit", and small typos.

``plain(text, lang)`` takes out what people wrap a command in — "please", "could you",
"hey", "um", "for me", "bitte", "s'il te plaît", "por favor", "alsjeblieft" … — so the
templates see the command itself ("could you please turn on the kitchen light for me?" →
"turn on the kitchen light"). Only whole words at the start or end of the sentence (and
"please"-words anywhere) go: the words in the middle of a command are never touched.
``said_plainly(text, lang)`` puts everyday turns of phrase the way the templates say them
("turn the lamp down to 20 percent" → "turn the lamp to 20 percent", "up a degree" →
"up by 1 degree", "a notch" → "a bit", "a nice warm white" → "warm white", "to cool at
22" → "to cool and 22 degrees", "to half" → "to 50 percent").
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


_EN_NUMBER = (
    r"(?:\d|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty"
    r"|thirty|forty|fifty|sixty|seventy|eighty|ninety|a hundred|hundred)"
)
_EN_COLOUR = (
    r"(?:(?:warm|cool|cold|soft|bright|pure|natural) white|white|daylight|candle ?light|red"
    r"|orange|yellow|green|blue|purple|pink|cyan|magenta|violet|turquoise|lilac|lavender"
    r"|amber|gold|teal|indigo)"
)
_EN_MODE = r"(?:heat|heating|cool|cooling|auto|automatic)"
# (pattern, replacement), in order, per language. Each one is a way of saying
# something the templates already know in other words, never a new meaning.
_SAYINGS: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "en": tuple(
        (re.compile(pattern, re.IGNORECASE), replacement)
        for pattern, replacement in (
            # "lock up the front door"
            (r"^lock up (?=\S)", "lock "),
            # "turn the porch light back on", "switch it off again": on or off all the same
            (r"\bback (on|off)\b", r"\1"),
            (r"\b(on|off) again\b", r"\1"),
            # "put the porch light on", "put on the lights in the kitchen": a switch, not
            # "put the thermostat on cool" (on a mode) nor "put the fan on high"
            (r"^put (on|off) (?=\S)", r"turn \1 "),
            (r"^put (.+?) (on|off)(?=$| in )", r"turn \1 \2"),
            # "raise / lower the blind halfway": half open either way
            (
                r"^(?:raise|lower|lift|drop|roll|pull|bring|move)(?: up| down)? (.+?) "
                r"(?:(?:up|down) )?(?=half ?way\b)",
                r"open \1 ",
            ),
            # "is the porch light on or off": whether it is on
            (r"^(is|are) (.+?) (?:on or off|off or on)\b", r"\1 \2 on"),
            # "are the lights in the kitchen on": the kitchen's lights
            (
                r"^are (?:the |all the )?lights (?:in|on) (?:the )?(.+?) (on|off)$",
                r"are the \1 lights \2",
            ),
            (r"^is the light (?:in|on) (?:the )?(.+?) (on|off)$", r"is the \1 light \2"),
            # "cool the hall down by two degrees", "warm up the hall", "heat the hall up a bit"
            (
                r"^(?:cool|chill) (?:down )?(.+?) (?:down )?by (.+)$",
                r"turn the heat down by \2 in \1",
            ),
            (r"^(?:warm|heat) (?:up )?(.+?) (?:up )?by (.+)$", r"turn the heat up by \2 in \1"),
            # (not "heat the hall to 22 degrees": a value said has its own template)
            (
                r"^(?:cool|chill) (?!.*\b(?:to|at)\b)(?!.*\d)(?:down )?(.+?)(?: down)?"
                r"( a bit| a little)?$",
                r"make \1\2 cooler",
            ),
            (
                r"^(?:warm|heat) (?!.*\b(?:to|at)\b)(?!.*\d)(?:up )?(.+?)(?: up)?"
                r"( a bit| a little)?$",
                r"make \1\2 warmer",
            ),
            # "what's the humidity like upstairs": what it is
            (r"^(what(?:'s| is)) the (temperature|humidity) like\b", r"\1 the \2"),
            # "twenty one and a half", "21 and a half degrees": the half as a decimal
            (r"\b(\d+) and a half\b", r"\1.5"),
            (rf"\b({_EN_NUMBER}(?:[ -]{_EN_NUMBER})?) and a half\b", r"\1 point five"),
            # "bump / nudge / knock / crank the heating up": a turn
            (r"^(?:bump|nudge|knock|crank) (?=\S)", "turn "),
            # "turn the lamp down to 20 percent", "brighten it up to 90": a value said
            (rf"\b(?:up|down) to (?={_EN_NUMBER}|half\b|full\b)", "to "),
            (
                rf"^(?:brighten|raise|increase|lower|reduce|decrease|bring) (?=.+ to {_EN_NUMBER})",
                "set ",
            ),
            # "up a degree", "down two degrees"
            (r"\b(up|down) (?:by )?(?:a|one) degree\b", r"\1 by 1 degree"),
            (r"\b(up|down) (?:by )?(?:half a|a half) degree\b", r"\1 by 0.5 degrees"),
            (rf"\b(up|down) ({_EN_NUMBER}\S*) degrees\b", r"\1 by \2 degrees"),
            (r"\b(?:a|one) notch\b", "a bit"),
            # "a nice warm white": the colour itself
            (rf"\b(?:a|an)(?: (?:nice|lovely|pretty|soft))? (?={_EN_COLOUR}\b)", ""),
            # "set the thermostat to cool at 22": the mode and the set-point
            (
                rf"^(?:set|put|switch|turn|change) (.+?) (?:to|on|in|into) ({_EN_MODE})(?: mode)? "
                r"at (\d+(?:[.,]\d+)?)(?: ?(?:degrees?|°))?(?!\S)",
                r"set \1 to \2 and \3 degrees",
            ),
            # "set the blind to half": 50 percent (not "half open", "halfway")
            (r"\b(to|at) half\b(?! (?:open|closed|brightness|way))", r"\1 50 percent"),
        )
    ),
    "de": tuple(
        (re.compile(pattern, re.IGNORECASE), replacement)
        for pattern, replacement in (
            # "21 einhalb Grad", "einundzwanzig einhalb" spoken as digits: the half
            (r"\b(\d+) ?(?:und )?einhalb\b", r"\1,5"),
            # "ist das Verandalicht an oder aus": whether it is on
            (r"^(ist|sind) (.+?) (?:an oder aus|aus oder an)\b", r"\1 \2 an"),
            # "dreh die Stehlampe runter auf 20 Prozent": a value said
            (
                r"^(?:dreh|drehe|mach|mache|fahr|fahre) (.+?) (?:runter|herunter|hoch|rauf|herauf) "
                r"auf (?=\d)",
                r"stell \1 auf ",
            ),
        )
    ),
    "fr": tuple(
        (re.compile(pattern, re.IGNORECASE), replacement)
        for pattern, replacement in (
            # "ferme la porte d'entrée à clé", "ferme à clé la porte": lock it
            (r"^ferme à clé (?=\S)", "verrouille "),
            (r"^ferme (.+?) à clé\b", r"verrouille \1"),
        )
    ),
}


# The half after a number said in digits, in the other languages: "21 degrés et demi",
# "21 grados y medio", "21 en een halve graad" (the unit moves after the decimal).
_HALVES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    lang: tuple(
        (re.compile(pattern, re.IGNORECASE), replacement)
        for pattern, replacement in (
            (rf"\b(\d+) ({unit}) {half}\b", r"\1,5 \2"),
            (rf"\b(\d+) {half}\b", r"\1,5"),
        )
    )
    for lang, unit, half in (
        ("fr", r"degrés?", r"et demie?"),
        ("es", r"grados?", r"y medio"),
        ("nl", r"graden|graad", r"en een (?:half|halve)"),
    )
}
_SAYINGS.update({lang: _SAYINGS.get(lang, ()) + rules for lang, rules in _HALVES.items()})


def said_plainly(text: str, lang: str) -> str:
    """Return ``text`` with everyday turns of phrase put as the templates say them."""
    for pattern, replacement in _SAYINGS.get(lang, ()):
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


# A time said: "in 10 minutes", "for an hour", "at 7 pm", "tonight" (``said_later``).
_LATER: dict[str, str] = {
    "en": (
        r"\b(?:in|for|after|within) (?:about |another )?(?:a|an|one|half an|a few|a couple of|\d+"
        r"|two|three|four|five|ten|fifteen|twenty|thirty|forty|forty-five|sixty|ninety)"
        r" (?:more )?(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\b"
        r"|\bat (?:\d{1,2}(?::\d\d)? ?(?:am|pm|a\.m\.|p\.m\.|o'clock)|noon|midnight)"
        r"|\buntil \d{1,2}(?::\d\d)?\b|\b(?:tomorrow|tonight|later on|later|this evening"
        r"|this afternoon|in the morning|in the evening)\b"
    ),
    "de": (
        r"\b(?:in|für|nach|innerhalb von) (?:eine|einer|einem|ein|einer halben|eine halbe|\d+"
        r"|zwei|drei|vier|fünf|zehn|fünfzehn|zwanzig|dreißig|vierzig|sechzig|ein paar)"
        r" (?:sekunden?|minuten?|stunden?)\b"
        r"|\bum \d{1,2}(?::\d\d)? ?uhr\b|\bum \d{1,2}:\d\d\b|\bbis \d{1,2}(?: ?uhr|:\d\d)\b"
        r"|\b(?:morgen|heute abend|heute nacht|später|nachher)\b"
    ),
    "fr": (
        r"\b(?:dans|pendant|pour|d'ici) (?:une|un|une demi-|\d+|deux|trois|quatre|cinq|dix"
        r"|quinze|vingt|trente|quarante|soixante|quelques) ?(?:secondes?|minutes?|heures?)\b"
        r"|\bà \d{1,2} ?h(?:\d\d)?\b|\bà \d{1,2} heures?\b|\bjusqu'à \d{1,2} ?h"
        r"|\b(?:demain|ce soir|cette nuit|plus tard|tout à l'heure)\b"
    ),
    "es": (
        r"\b(?:en|durante|por|dentro de) (?:un|una|media|\d+|dos|tres|cuatro|cinco|diez"
        r"|quince|veinte|treinta|cuarenta|sesenta|unos|unas) (?:segundos?|minutos?|horas?)\b"
        r"|\ba las \d{1,2}\b|\bhasta las \d{1,2}\b"
        r"|\b(?:mañana|esta noche|esta tarde|más tarde)\b"
    ),
    "nl": (
        r"\b(?:over|voor|na|binnen) (?:een|één|een half|\d+|twee|drie|vier|vijf|tien|vijftien"
        r"|twintig|dertig|veertig|zestig|een paar) (?:seconden?|minuut|minuten|uur|uren)\b"
        r"|\bom \d{1,2}(?::\d\d)? ?uur\b|\bom \d{1,2}:\d\d\b|\btot \d{1,2}(?: ?uur|:\d\d)\b"
        r"|\b(?:morgen|vanavond|vannacht|straks|later)\b"
    ),
}
_LATER_RE = {lang: re.compile(pattern, re.IGNORECASE) for lang, pattern in _LATER.items()}


def said_later(text: str, lang: str) -> bool:
    """Return whether ``text`` says a time: a delay, a duration, a clock time, "tonight"."""
    pattern = _LATER_RE.get(lang)
    return bool(pattern and pattern.search(text))


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
