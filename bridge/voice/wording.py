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
from collections.abc import Callable, Collection
from dataclasses import dataclass

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
        # "… and the ceiling light too": the list's last item said with "too"
        "too",
        "as well",
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
        "and thanks",
        "and thank you",
        "thanks a lot",
        "thanks very much",
        "thank you very much",
        "many thanks",
        "cheers",
        "if you don't mind",
        "when you can",
        "whenever you can",
        "when you get a chance",
        "when you have a moment",
        "if possible",
    ),
    "de": (
        "bitte",
        "danke",
        "bitte danke",
        "mal",
        "bitte mal",
        "jetzt",
        "sofort",
        "und danke",
        "danke schön",
        "dankeschön",
        "vielen dank",
    ),
    "fr": (
        "s'il te plaît",
        "s'il vous plaît",
        "stp",
        "svp",
        "merci",
        "maintenant",
        "pour moi",
        "et merci",
        "merci beaucoup",
    ),
    "es": ("por favor", "gracias", "ahora", "ya", "y gracias", "muchas gracias"),
    "nl": (
        "alsjeblieft",
        "alstublieft",
        "graag",
        "bedankt",
        "dank je",
        "nu",
        "even",
        "en bedankt",
        "dank je wel",
        "dankjewel",
        "dank u",
        "dank u wel",
    ),
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
# A value said with its unit: "40 percent", "21.5 degrees", "30%", "twenty percent".
_EN_VALUE = (
    rf"(\d+(?:[.,]\d+)?|{_EN_NUMBER}(?:[ -]{_EN_NUMBER})?)"
    r"( ?%| percent| per cent| degrees?| ?°[cf]?)"
)
# A part of the way: "a quarter", "two thirds", "three quarters" (in percent).
_EN_PARTS = {
    "a quarter": 25,
    "one quarter": 25,
    "a third": 33,
    "one third": 33,
    "two thirds": 67,
    "2 thirds": 67,
    "three quarters": 75,
    "3 quarters": 75,
}
_EN_PART = "(" + "|".join(sorted(_EN_PARTS, key=len, reverse=True)) + ")"
# What a command is said of, never across a second command ("... and dim it to 20").
_EN_SUBJECT = r"((?:(?!\b(?:and|then|but|or)\b)[^,])+?)"
# What rolls out and back in: an awning and its kin.
_AWNING = r"(?:awning|sun ?shade|canopy|shade|sun ?blind|blind|screen|marquee)s?"
_OPENING = r"(?:open|raise|lift|roll up|pull up|bring up|put up)"
_CLOSING = r"(?:close|shut|lower|drop|roll down|pull down|bring down|put down)"

# What a cover is called: "the living room blind", "the shutters", "the garage door".
_COVER_WORDS = (
    r"blind|shade|shutter|curtain|drape|roller|louvre|louver|garage door|garage|gate|cover"
    r"|window covering"
)
_COVERED = rf"{_EN_SUBJECT[1:-1]}\b(?:{_COVER_WORDS}|awning|screen)s?"
# (up and down: not an awning nor a screen, which are let down to be out)
_RAISED = rf"{_EN_SUBJECT[1:-1]}\b(?:{_COVER_WORDS})s?"
_THERMOSTAT_WORD = r"(?:heating|heat|heater|thermostat|ac|air conditioning|air con|aircon)"

# The same in the other languages (a name that ends in one: "Wohnzimmerrollo").
_DE_COVER = (
    r"(?:rollo|rollos|rollladen|rollläden|rolladen|jalousie|jalousien|vorhang|vorhänge"
    r"|garagentor|rolltor|plissee|raffstore|raffstores|fensterladen|fensterläden)"
)
_FR_COVER = (
    r"(?![^,]*\bbanne\b)(?:le |la |les |l')?(?:(?!\b(?:et|puis|mais|ou)\b)[^,])*?"
    r"\b(?:store|stores|volet|volets|rideau|rideaux|persienne|persiennes|porte du garage"
    r"|garage|portail)\b(?:(?!\b(?:et|puis|mais|ou)\b)[^,])*$"
)
_ES_COVER = (
    r"(?:el |la |los |las )?(?:(?!\b(?:y|e|luego|pero|o)\b)[^,])*?\b(?:persiana|persianas"
    r"|estor|estores|cortina|cortinas)\b(?:(?!\b(?:y|e|luego|pero|o)\b)[^,])*$"
)
# A subject of a rewrite that runs to its end: never across a comma or a joining word
# ("mach das Licht an und das Rollo runter" is two commands; the rewrite reads the last).
_DE_ONE = r"(?:(?!\b(?:und|dann|danach|oder|aber)\b)[^,])+?"
_NL_ONE = r"(?:(?!\b(?:en|dan|daarna|of|maar)\b)[^,])+?"
_NL_COVER = (
    r"(?:rolgordijn|rolgordijnen|gordijn|gordijnen|luik|luiken|rolluik|rolluiken|jaloezie"
    r"|jaloezieën|screen|screens|garagedeur|zonwering)"
)

# A command said after its subject ("the porch light, switch it off"), and names listed
# before it ("the kitchen light and the porch light, ..."), never holding a command.
_DISLOCATED_VERBS = r"turn|switch|put|shut|set|dim|open|close|lock|unlock|start|stop|raise|lower"
_NAMES_LISTED = rf"(?:(?!\b(?:and|then|but|or|{_DISLOCATED_VERBS}|it|them|is|are)\b)[^,])+?"

Replacement = str | Callable[[re.Match[str]], str]


def _up_down(match: re.Match[str]) -> str:
    """Return "open " for "pull up ...", "close " for "pull down ..."."""
    return "open " if match[1].lower() == "up" else "close "


def _down_up(match: re.Match[str]) -> str:
    """Return "open <cover>" for "pull <cover> up", "close <cover>" for "... down".

    A place said after it stays after it ("… down in the living room").
    """
    place = match[3] if match.re.groups >= 3 and match[3] else ""
    return f"{'open' if match[2].lower() == 'up' else 'close'} {match[1]}{place}"


# "hab ich ... abgeschlossen": the participle said -> the state asked about.
_DE_LEFT = {
    "abgeschlossen": "abgeschlossen",
    "zugeschlossen": "abgeschlossen",
    "abgesperrt": "abgeschlossen",
    "zugesperrt": "abgeschlossen",
    "verriegelt": "abgeschlossen",
    "angelassen": "an",
    "an gelassen": "an",
    "brennen lassen": "an",
    "ausgemacht": "aus",
    "ausgeschaltet": "aus",
    "offen gelassen": "offen",
    "offengelassen": "offen",
    "aufgelassen": "offen",
}


def _de_left(match: re.Match[str]) -> str:
    """Return "ist <it> <state>" for "hab ich <it> <participle>"."""
    return f"ist {match[1]} {_DE_LEFT[match[2].lower()]}"


def _fr_locked(match: re.Match[str]) -> str:
    """Return "<it> est-elle verrouillée" for "est-ce que j'ai fermé <it> à clé"."""
    return f"{match[1] or match[2] or match[3]} est-elle verrouillée"


def _half_or_full(match: re.Match[str]) -> str:
    """Return "set <light> to 50 / 100 percent" for "turn on <light> at half brightness"."""
    return f"set {match[1]} to {50 if match[2].lower() == 'half' else 100} percent"


def _heating_asked(match: re.Match[str]) -> str:
    """Return "what is the thermostat (in <room>) set to" for "is the heating on ..."."""
    if match[2]:
        return f"what is the thermostat {match[1]} the {match[2]} set to"
    return "what is the thermostat set to"


def _part_open(match: re.Match[str]) -> str:
    """Return "set <cover> to <N> percent" for "open <cover> a quarter (of the way)"."""
    return f"set {match[1]} to {_EN_PARTS[match[2].lower()]} percent"


def _part_closed(match: re.Match[str]) -> str:
    """Return the open share of "close <cover> three quarters (of the way)"."""
    return f"set {match[1]} to {100 - _EN_PARTS[match[2].lower()]} percent"


def _part_said(match: re.Match[str]) -> str:
    """Return "to 25 percent" for "to a quarter", "a quarter open"; the open share."""
    share = _EN_PARTS[match[2].lower()]
    return f"{match[1]}{100 - share if (match[3] or '').strip() == 'closed' else share} percent"


def _percent_closed(match: re.Match[str]) -> str:
    """Return "to 20 percent" for "to 80 percent closed" (the open share; at most 100)."""
    closed = int(match[2])
    return match[0] if closed > 100 else f"{match[1]} {100 - closed} percent"


Rules = tuple[tuple[re.Pattern[str], Replacement], ...]


def _compiled(*rules: tuple[str, Replacement]) -> Rules:
    """Return (pattern, replacement) rules with their patterns compiled, case aside."""
    return tuple(
        (re.compile(pattern, re.IGNORECASE), replacement) for pattern, replacement in rules
    )


# (pattern, replacement), in order, per language. Each one is a way of saying
# something the templates already know in other words, never a new meaning.
_SAYINGS: dict[str, Rules] = {
    "en": _compiled(
        # "all lights off upstairs", "all the fans on": an order for all of them (not
        # the question "are all the lights off")
        (r"^all (?:of )?(?:the )?(lights|lamps|fans|switches) (on|off)\b", r"turn \2 all the \1"),
        # "what's on in the kitchen", "what's still on upstairs": which lights are on
        (
            r"^what(?:'s| is)(?: still)? (?:on|switched on|turned on|left on)"
            r"(?=$| (?:in|on|upstairs|downstairs|here)\b)",
            "which lights are on",
        ),
        # "switch off the lights in every room": all of them
        (r"\b(?:all )?(?:the )?(lights|lamps) in (?:every|each|all the) rooms?\b", r"all the \1"),
        # "dim everything in the living room to 20 percent": its lights (a value for all)
        (
            r"^(dim|set|brighten|turn) everything ((?:in|on) (?:the )?\w.*?) (to|at) (?=\d)",
            r"\1 the lights \2 \3 ",
        ),
        # "make sure the front door is locked", "… the lights are off in the hall": do it
        (r"^make sure (?:that )?(.+?) (?:is|are) locked$", r"lock \1"),
        (r"^make sure (?:that )?(.+?) (?:is|are) unlocked$", r"unlock \1"),
        (r"^make sure (?:that )?(.+?) (?:is|are) (on|off)\b", r"turn \2 \1"),
        (r"^make sure (?:that )?(.+?) (?:is|are) (?:closed|shut)\b", r"close \1"),
        (r"^make sure (?:that )?(.+?) (?:is|are) open\b", r"open \1"),
        # "change the colour of the sofa lamp to purple", "set the sofa lamp colour to red"
        (r"^(?:change|set|switch|turn) the colou?r of (.+?) (?:to|into) (?=\S)", r"make \1 "),
        (r"^(?:change|set|switch|turn) (.+?)(?:'s)? colou?r (?:to|into) (?=\S)", r"make \1 "),
        # "make the sofa lamp a cooler white": cooler
        (
            r"\ba (warmer|cooler|colder|brighter|dimmer|softer) (?:white|light|colou?r|shade"
            r"|tone)$",
            r"\1",
        ),
        # "I'd like the sofa lamp at half brightness": 50 percent
        (r"\b(at|to) half brightness$", r"\1 50 percent"),
        # "lock up the front door"
        (r"^lock up (?=\S)", "lock "),
        # "kill the kitchen light", "cut the lights in the hall": off
        (r"^(?:kill|cut)(?: off| out)? (?!.*\b(?:to|at|by)\b)(?=\S)", "turn off "),
        # "turn on the couch lamp at 30 percent": that brightness
        (rf"^(?:turn|switch|put) on {_EN_SUBJECT} (?:at|to) {_EN_VALUE}$", r"set \1 to \2\3"),
        (rf"^(?:turn|switch|put) {_EN_SUBJECT} on (?:at|to) {_EN_VALUE}$", r"set \1 to \2\3"),
        # "I'd like the hall at 21 degrees", "the ceiling light at 40 percent": set it
        (
            r"^(?:i need|i want|i'd like|i would like|let's have|let me have|give me) "
            rf"{_EN_SUBJECT} (?:at|to|on) {_EN_VALUE}$",
            r"set \1 to \2\3",
        ),
        (rf"^(the {_EN_SUBJECT[1:-1]}) at {_EN_VALUE}$", r"set \1 to \2\3"),
        # "open the blind a quarter of the way", "close it three quarters": the open share
        (
            rf"^{_OPENING} {_EN_SUBJECT} {_EN_PART}(?: of the way)?(?: open| up)?$",
            _part_open,
        ),
        (
            rf"^{_CLOSING} {_EN_SUBJECT} {_EN_PART}(?: of the way)?(?: closed| shut| down)?$",
            _part_closed,
        ),
        # "set the blind to three quarters", "to a third open": the open share
        (rf"\b(to |at ){_EN_PART}( open| closed)?$", _part_said),
        # "set the blind to 80 percent open" / "20 percent closed": the open share
        (r"\b(to|at) (\d+(?:[.,]\d+)?) ?(?:%|percent|per cent) open$", r"\1 \2 percent"),
        (r"\b(to|at) (\d{1,3}) ?(?:%|percent|per cent) (?:closed|shut)$", _percent_closed),
        # "is the porch light still on": whether it is on
        (
            r"^(is|are) (.+?) still (on|off|open|closed|shut|locked|unlocked|running|cleaning"
            r"|vacuuming|charging|washing|drying|working|heating|cooling|docked|paused)$",
            r"\1 \2 \3",
        ),
        (
            r"^(is|are) (.+?) (on|off|open|closed|shut|locked|unlocked|running|cleaning"
            r"|vacuuming|charging|washing|drying|working|heating|cooling|docked|paused) still$",
            r"\1 \2 \3",
        ),
        # "how open is the blind", "how far open is it": whether it is open
        (r"^how (?:far )?(open|closed) (is|are) (.+)$", r"\2 \3 \1"),
        # "what mode is the thermostat in": what it is set to
        (r"^what mode (?:is|are) (.+?)(?: in| on| set to)?$", r"what is \1 set to"),
        # "give me some light in the kitchen": the lights on
        (
            r"^(?:give me|i need|i want|let's have|let me have) (?:some |more )?light"
            r"(?=$| in | on )",
            "turn on the lights",
        ),
        # "make it 22 in the hall", "68 fahrenheit": a temperature said without degrees
        (
            r"^(make|set) it (\d+(?:[.,]\d+)?)(?= (?:fahrenheit|celsius|f|c|in|on|upstairs"
            r"|downstairs)\b)",
            r"\1 it \2 degrees",
        ),
        # "can you check if the front door is locked", "tell me whether ...": the question
        (
            r"^(?:check|see|tell me|find out|let me know|ask)(?: for me)? (?:if|whether) "
            r"(.+?) (is|are) (.+)$",
            r"\2 \1 \3",
        ),
        # "check the humidity in the bathroom": what it is
        (
            r"^(?:check|tell me|give me|read|read me) (?:the )?(temperature|humidity)\b",
            r"what is the \1",
        ),
        # "did I leave the garage open": whether it is open
        (
            r"^did (?:i|we|you|someone|somebody|anyone|anybody) leave (.+?) "
            r"(open|closed|shut|on|off|locked|unlocked|running)$",
            r"is \1 \2",
        ),
        # "put the lights out": off
        (r"^put out (.+? lights?)$", r"turn off \1"),
        (r"^put (.+? lights?) out$", r"turn off \1"),
        # "roll out the awning", "extend the awning": open; "retract the awning": close
        # (an awning's words only: "put the lights out" is no awning)
        (rf"^(?:roll|pull|put|let|wind) out (?=(?:{_EN_SUBJECT[1:-1]}) {_AWNING}$)", "open "),
        (
            rf"^(?:roll|pull|put|let|wind) (.+? {_AWNING}) out(?=$| half ?way\b| to )",
            r"open \1",
        ),
        (rf"^extend (?=.+? {_AWNING}(?:$| half ?way\b| to ))", "open "),
        (
            rf"^(?:retract|roll in|pull in|wind in|bring in) (?=.+? {_AWNING}$)",
            "close ",
        ),
        (rf"^(?:roll|pull|wind|bring) (.+? {_AWNING}) in$", r"close \1"),
        # "let the awning down": out (an awning is let down to shade)
        (r"^(?:let|wind) (.+? awnings?) down$", r"open \1"),
        # "put the shade down in the living room": close it there
        (
            rf"^(?:pull|roll|bring|draw|wind|let|put) ({_RAISED}) (up|down)"
            r"( (?:in|on) (?:the )?\w.*)$",
            _down_up,
        ),
        # "close every blind in the house", "close the curtains everywhere": all of them
        (
            r"\bevery ((?:blind|shade|shutter|curtain|drape|awning|light|lamp|fan)s?)"
            r"(?: in the (?:whole )?(?:house|home|flat|apartment)| everywhere)?$",
            r"all the \1s",
        ),
        (
            r"\b(?:all )?(?:of )?(?:the )?((?:blind|shade|shutter|curtain|drape|awning|light"
            r"|lamp|fan)s) "
            r"(?:everywhere|in the whole (?:house|home|flat|apartment)|throughout the "
            r"(?:house|home|flat|apartment)|all over the (?:house|home))$",
            r"all the \1",
        ),
        # "shut off the garden valve", "shut down the fan": off
        (r"^shut (?:off|down) (?=\S)", "turn off "),
        # "hoover the kitchen": vacuum it
        (r"^hoover\b", "vacuum"),
        # "how long until the washer finishes": whether it is done (its state says
        # how long is left)
        (
            r"^how long (?:until|till|before|is left (?:on|for)|left (?:on|for)) (.+?)"
            r"(?: (?:finishes|is done|is finished|ends|will be done|is ready))?$",
            r"is \1 done",
        ),
        # "boost the hot water for an hour": in minutes
        (r"\bfor (?:an|one) hour and a half\b", "for 90 minutes"),
        (r"\bfor half an hour\b", "for 30 minutes"),
        (r"\bfor (?:an|one) hour\b", "for 60 minutes"),
        (r"\bfor (two|2) hours\b", "for 120 minutes"),
        # "set the thermostat in the hall to 21": the temperature there
        (
            r"^(set|put|turn) (?:the )?(?:thermostat|heating|heat|heater)s? (in|on) "
            rf"(?=.+ to {_EN_NUMBER})",
            r"\1 the temperature \2 ",
        ),
        # "turn the porch light back on", "switch it off again": on or off all the same
        (r"\bback (on|off)\b", r"\1"),
        (r"\b(on|off) again\b", r"\1"),
        # "put the porch light on", "put on the lights in the kitchen": a switch, not
        # "put the thermostat on cool" (on a mode) nor "put the fan on high"
        (r"^put (on|off) (?=\S)", r"turn \1 "),
        # (not "put the dishwasher on": a wash started, said the British way)
        (
            r"^put (?!(?:the |a )?(?:dishwasher|washing machine|washer|laundry|wash|dryer"
            r"|tumble dryer) on$)(.+?) (on|off)(?=$| in )",
            r"turn \1 \2",
        ),
        # "raise / lower the blind halfway": half open either way
        (
            r"^(?:raise|lower|lift|drop|roll|pull|bring|move|draw)(?: up| down)? (.+?) "
            r"(?:(?:up|down) )?(?=half ?way\b)",
            r"open \1 ",
        ),
        # "is the porch light on or off": whether it is on
        (r"^(is|are) (.+?) (?:on or off|off or on)\b", r"\1 \2 on"),
        # "is the blind up or down", "is the garage door open or shut": whether it is open
        (
            r"^(is|are) (.+?) (?:up or down|down or up|open or (?:closed|shut)"
            r"|(?:closed|shut) or open)$",
            r"\1 \2 open",
        ),
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
        (rf"\b(?:up|down) to (?={_EN_NUMBER}|half\b|full\b|max\b|maximum\b)", "to "),
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
        # "switch on the sofa lamp at half brightness", "the kitchen lights to full": that
        # brightness (a fan's "full" is its speed, a cover's its open share)
        (
            rf"^(?:turn|switch|put) on {_EN_SUBJECT} (?:at|to) (half|full) brightness$",
            _half_or_full,
        ),
        (r"\b(to|at) (?:full|max|maximum)(?: brightness)?$", r"\1 100 percent"),
        # "set the blind to half": 50 percent (not "half open", "halfway")
        (r"\b(to|at) half\b(?! (?:open|closed|brightness|way))", r"\1 50 percent"),
        # "pull the blind up", "roll down the shutters", "let the curtains down": open or
        # close (a cover's words only: "bring the lights down" is a dimming)
        (rf"^(?:pull|roll|bring|draw|wind|let|put) (up|down) (?={_RAISED}$)", _up_down),
        (rf"^(?:pull|roll|bring|draw|wind|let|put) ({_RAISED}) (up|down)$", _down_up),
        # "draw the curtains": closed; "draw back the curtains", "draw them open": open
        (rf"^draw (?:back|open|apart) (?={_COVERED}$)", "open "),
        (rf"^draw ({_COVERED}) (?:back|open|apart)$", r"open \1"),
        (rf"^draw (?:shut |closed |to )?(?={_COVERED}$)", "close "),
        (rf"^draw ({_COVERED}) (?:shut|closed|to)$", r"close \1"),
        (rf"^open up (?={_COVERED}$)", "open "),
        # "hold the blind there", "stop the shutters where they are": stop them
        (
            rf"^(?:stop|hold|halt|freeze|pause) ({_COVERED})(?: right)?(?: there| here"
            r"| where (?:it|they) (?:is|are)| now| moving)?$",
            r"stop \1",
        ),
        # "fan on high", "the ceiling fan to low", "air purifier on auto": its mode
        (
            r"^((?:the )?(?:(?!\b(?:and|then|but|or|set|put|turn|switch)\b)[^,])*?"
            r"\b(?:fans?|purifiers?)) "
            r"(?:on|to|at) (low|medium|high|auto|full|max|maximum)(?: speed)?"
            r"((?: (?:in|on)(?: the)? \w.*| upstairs| downstairs))?$",
            r"set \1 to \2\3",
        ),
        # "set the fan to speed 2", "the fan on setting 3": that speed step
        (r"^(.*\bfans?\b.*?) (to|on|at) (?:step|setting|level|gear) (\d{1,2})$", r"\1 \2 speed \3"),
        # "is it heating in the hall", "is the heating on upstairs": what the thermostat is
        # set to (its state answers)
        (
            r"^is it (?:heating|cooling|warming up|cooling down) (in|on) (?:the )?(.+)$",
            r"what is the thermostat \1 the \2 set to",
        ),
        (
            rf"^is the {_THERMOSTAT_WORD} (?:on|running|working|going|heating|cooling)"
            r"(?: (in|on) (?:the )?(.+))?$",
            _heating_asked,
        ),
        (
            r"^is (?:the )?(.+? thermostat) (?:on|running|working|heating|cooling)$",
            r"what is the \1 set to",
        ),
        # "make it dark in the kitchen", "make the kitchen dark": its lights off
        (r"^make it dark (in|on) (.+)$", r"turn off the lights \1 \2"),
        (r"^make (?!it\b)(.+?) dark$", r"turn off the lights in \1"),
        # "the porch light, switch it off": the command said of it (the comma read as
        # "and" when a list is cut at its commas)
        (
            rf"^((?:the|my|our) {_EN_SUBJECT[1:-1]})(?: and)? ({_DISLOCATED_VERBS}) "
            r"(?:it|them) ?(.*)$",
            r"\2 \1 \3",
        ),
        # "the kitchen light and the porch light, turn them off": both, once each
        (
            rf"^((?:the|my|our) {_NAMES_LISTED} and (?:the |my |our )?{_NAMES_LISTED})(?: and)? "
            rf"({_DISLOCATED_VERBS}) them ?(.*)$",
            r"\2 \1 \3",
        ),
        # "the front door, is it locked": the question said of it
        (
            rf"^((?:the|my|our) {_EN_SUBJECT[1:-1]})(?: and)? (is|are) (?:it|they) (.+)$",
            r"\2 \1 \3",
        ),
    ),
    "de": _compiled(
        # "21 einhalb Grad", "einundzwanzig einhalb" spoken as digits: the half
        (r"\b(\d+) ?(?:und )?einhalb\b", r"\1,5"),
        # "ist das Verandalicht an oder aus": whether it is on
        (r"^(ist|sind) (.+?) (?:an oder aus|aus oder an)\b", r"\1 \2 an"),
        # "ist das Verandalicht noch an": whether it is on
        (
            r"^(ist|sind) (.+?) noch (an|aus|offen|zu|geschlossen|auf|abgeschlossen"
            r"|aufgeschlossen)$",
            r"\1 \2 \3",
        ),
        # "zieh die Vorhänge zu / auf", "fahr die Markise aus / ein": close or open
        (r"^(?:zieh|ziehe) (.+?) (?:zu)$", r"schließe \1"),
        (r"^(?:zieh|ziehe) (.+?) (?:auf)$", r"öffne \1"),
        (r"^(?:fahr|fahre) (.+?) aus$", r"öffne \1"),
        (r"^(?:fahr|fahre) (.+?) ein$", r"schließe \1"),
        # "schließ die Garage", "mach die Garage auf": its door (the room has no other)
        (r"^(schließ|schließe|schliess|öffne|öffnen) (?:die )?garage$", r"\1 das Garagentor"),
        (r"^(mach|mache) (?:die )?garage (auf|zu)$", r"\1 das Garagentor \2"),
        # "öffne das Rollo ganz", "mach es ganz zu": all the way is open or closed
        (r"^(öffne|schließe|schliess|schließ) (.+?) (?:ganz|vollständig|komplett)$", r"\1 \2"),
        (r"^(mach|mache) (.+?) (?:ganz|vollständig|komplett) (auf|zu)$", r"\1 \2 \3"),
        # "schau mal, ob die Haustür abgeschlossen ist": the question
        (
            r"^(?:schau|schaue|guck|gucke|prüf|prüfe|sieh)(?: mal)?(?: nach)? ob (.+?) "
            r"(an|aus|offen|zu|geschlossen|abgeschlossen|aufgeschlossen) (ist|sind)$",
            r"\3 \1 \2",
        ),
        # "wie weit ist das Rollo offen": whether it is open
        (r"^wie weit (ist|sind) (.+?) (offen|geöffnet|geschlossen|zu)$", r"\1 \2 \3"),
        # "hab ich die Haustür abgeschlossen", "habe ich das Licht angelassen": whether it is
        (
            rf"^(?:hab|habe|haben|hast|habt) (?:ich|wir|du|ihr|jemand) (.+?) "
            rf"({'|'.join(_DE_LEFT)})$",
            _de_left,
        ),
        # "lass das Rollo runter", "zieh die Jalousie hoch": close or open
        (
            rf"^(?:lass|lasse|zieh|ziehe|fahr|fahre|mach|mache|roll|rolle|hol|hole) "
            rf"({_DE_ONE}{_DE_COVER}) (?:runter|herunter|hinunter|nach unten)$",
            r"schließe \1",
        ),
        (
            rf"^(?:lass|lasse|zieh|ziehe|fahr|fahre|mach|mache|roll|rolle|hol|hole) "
            rf"({_DE_ONE}{_DE_COVER}) (?:hoch|rauf|herauf|hinauf|nach oben)$",
            r"öffne \1",
        ),
        # "mach die Lampen im Erdgeschoss alle aus", "schalte die Lichter alle ein": all
        (
            r"^(mach|mache|schalte|schalt) die (lampen|lichter)((?: \S+){0,4}?) alle "
            r"(aus|an|ein)$",
            r"\1 alle \2\3 \4",
        ),
        # "dreh die Heizung im Flur auf 21 Grad": a set-point said
        (r"^(?:dreh|drehe) (.+?) auf (?=\d+(?:[.,]\d+)? ?(?:grad|°))", r"stell \1 auf "),
        # "Rollo halb auf", "die Jalousie im Bad halb zu" (no verb; with one, the
        # templates read it): half open
        (
            rf"^((?:(?:der|die|das|den) )?\S*?{_DE_COVER}(?: (?:im|in der|am) \S+)?) halb "
            r"(?:auf|offen|zu|runter|hoch)$",
            r"stell \1 auf 50 Prozent",
        ),
        # "dreh die Stehlampe runter auf 20 Prozent": a value said
        (
            r"^(?:dreh|drehe|mach|mache|fahr|fahre) (.+?) (?:runter|herunter|hoch|rauf|herauf) "
            r"auf (?=\d)",
            r"stell \1 auf ",
        ),
    ),
    "fr": _compiled(
        # "la lumière est-elle toujours allumée", "est encore allumée": whether it is
        (
            r"\b(est|sont)((?:-t)?-(?:il|elle|ils|elles))? (?:encore|toujours) "
            r"(?=(?:allumée?s?|éteinte?s?|ouverte?s?|fermée?s?|verrouillée?s?)$)",
            r"\1\2 ",
        ),
        # "ouvre complètement le store", "ferme-le en grand": all the way
        (
            r"^(ouvre|ferme|ouvrez|fermez) (?:complètement|entièrement|totalement|en grand) "
            r"(?=\S)",
            r"\1 ",
        ),
        (
            r"^(ouvre|ferme|ouvrez|fermez) (.+?) (?:complètement|entièrement|totalement"
            r"|en grand)$",
            r"\1 \2",
        ),
        # "vérifie si la porte est verrouillée", "dis-moi si ...": the question
        (
            r"^(?:vérifie|vérifiez|regarde|regardez|dis-moi|dites-moi) si (.+?) (est|sont) "
            r"(?=\S)",
            r"est-ce que \1 \2 ",
        ),
        # "remonte le store", "descends les volets": open or close (not an awning's
        # "store banne", let down to be out)
        (rf"^(?:remonte|monte|lève|relève|soulève) (?={_FR_COVER})", "ouvre "),
        (rf"^(?:descends|redescends|rabaisse|abaisse) (?={_FR_COVER})", "ferme "),
        # "est-ce que j'ai fermé la porte à clé", "ai-je verrouillé la porte": whether it is
        (
            r"^(?:(?:est-ce que |est ce que |est-ce qu'|est ce qu')?(?:j'ai|on a|nous avons"
            r"|tu as|quelqu'un a)|ai-je) (?:bien )?(?:fermé à clé (.+)|verrouillé (.+?)(?: à clé)?"
            r"|fermé (.+?) à clé)$",
            _fr_locked,
        ),
        # "ferme la porte d'entrée à clé", "ferme à clé la porte": lock it
        (r"^ferme à clé (?=\S)", "verrouille "),
        (r"^ferme (.+?) à clé\b", r"verrouille \1"),
        # "augmente un peu la lumière du séjour": the step after what it changes
        (
            r"^(augmente|monte|baisse|diminue) (un peu|légèrement|un petit peu) "
            r"(la (?:lumière|luminosité) .+)$",
            r"\1 \3 \2",
        ),
        # "ferme le garage": its door ("ferme" alone would be a light's off)
        (r"^(ferme|ouvre) (?:le )?garage$", r"\1 la porte du garage"),
        # "déploie le store banne", "replie l'auvent": out or in
        (r"\bl'auvent\b", "le store banne"),
        (r"\bauvent\b", "store banne"),
        (r"^(?:déploie|déroule|sors|descends|baisse) (?=.*\bbannes?\b)", "ouvre "),
        (r"^(?:replie|enroule|rentre|range|remonte|relève) (?=.*\bbannes?\b)", "ferme "),
        # "monte le chauffage du couloir à 22 degrés", "baisse la lampe à 30 %": that value
        (
            r"^(?:monte|remonte|baisse|rabaisse|augmente|diminue) (.+?) (?:à|a) "
            r"(?=\d)",
            r"mets \1 à ",
        ),
        # "baisse le store du salon à moitié", "monte le volet à mi-hauteur": halfway
        (
            r"^(?:monte|remonte|baisse|rabaisse|descends|mets|règle) (.+?) (?:à moitié"
            r"|à mi-hauteur|à mi-course|à la moitié)$",
            r"mets \1 à 50 %",
        ),
        # "allume le ventilateur au minimum", "mets-le au maximum": its slowest or fastest
        (
            r"^(?:allume|mets|règle|passe) (.*?\bventilateurs?\b.*?) (?:au|à la) "
            r"(?:minimum|vitesse minimale|plus bas|plus lent)$",
            r"mets \1 en vitesse faible",
        ),
        (
            r"^(?:allume|mets|règle|passe) (.*?\bventilateurs?\b.*?) (?:au|à la) "
            r"(?:maximum|vitesse maximale|plus haut|plus rapide|à fond)$",
            r"mets \1 en vitesse rapide",
        ),
    ),
    "es": _compiled(
        # "sube la calefacción del pasillo a 21 grados", "baja la luz al 20 %": that value
        (r"^(?:sube|baja|aumenta|reduce) (.+?) (?:a|al|hasta) (?=\d)", r"pon \1 a "),
        # "extiende el toldo", "recoge el toldo": out or in (an awning is lowered to shade)
        (r"^(?:extiende|despliega|saca|baja|desenrolla) (?=.*\btoldos?\b)", "abre "),
        (r"^(?:recoge|pliega|retrae|enrolla|sube|guarda) (?=.*\btoldos?\b)", "cierra "),
        # "comprueba si la puerta está cerrada con llave", "dime si ...": the question
        (
            r"^(?:comprueba|compruebe|mira|mire|verifica|verifique|dime|dígame)(?: a ver)? "
            r"si (.+?) (está|están) (.+)$",
            r"\2 \3 \1",
        ),
        # "baja la persiana hasta la mitad", "sube el estor a la mitad": half open
        (
            r"^(?:abre|cierra|sube|baja|pon|deja) ((?:el |la |los |las )?(?:[^,]*? )?(?:persiana"
            r"|persianas|estor|estores|cortina|cortinas)\b[^,]*?) (?:hasta |a |por )?la mitad$",
            r"pon \1 al 50 por ciento",
        ),
        # "abre la persiana del todo", "cierra completamente la persiana": all the way
        (
            r"^(abre|cierra|sube|baja) (.+?) (?:del todo|completamente|por completo"
            r"|totalmente)$",
            r"\1 \2",
        ),
        (
            r"^(abre|cierra) (?:del todo|completamente|por completo|totalmente) (?=\S)",
            r"\1 ",
        ),
        # "levanta la persiana": up, as "sube"
        (rf"^(?:levanta|alza) (?={_ES_COVER})", "sube "),
        # "¿sigue encendida la luz del porche?", "la luz sigue encendida": whether it is
        (r"^sigue (encendid[ao]|apagad[ao]|abiert[ao]|cerrad[ao]) (.+)$", r"está \1 \2"),
        (r"^siguen (encendid[ao]s|apagad[ao]s|abiert[ao]s|cerrad[ao]s) (.+)$", r"están \1 \2"),
        (r"^(.+?) sigue (encendid[ao]|apagad[ao]|abiert[ao]|cerrad[ao])$", r"está \2 \1"),
        (r"^(.+?) siguen (encendid[ao]s|apagad[ao]s|abiert[ao]s|cerrad[ao]s)$", r"están \2 \1"),
    ),
    "nl": _compiled(
        # "doe de lampen in de woonkamer wat feller": make them so
        (r"^doe (?=.+ (?:feller|lichter|donkerder|minder fel)$)", "maak "),
        # "rol de zonneluifel uit", "haal de markies in": an awning out or in
        (r"\b(?:zonneluifel|luifel|markies)(s?)\b", r"zonnescherm\1"),
        (r"^(?:rol|draai|klap|zet) (.+?\bzonnescherm(?:en)?) uit$", r"doe \1 open"),
        (r"^(?:rol|draai|klap|haal) (.+?\bzonnescherm(?:en)?) in$", r"doe \1 dicht"),
        (r"^(?:rol|draai|klap) uit (?=.*\bzonnescherm)", "open "),
        # "kijk even of de voordeur op slot is": the question
        (
            r"^(?:kijk|check|controleer)(?: even| eens| nog even)? of (.+?) "
            r"(op slot|van het slot|aan|uit|open|dicht) (is|zijn|staat|staan)$",
            r"\3 \1 \2",
        ),
        # "trek het rolgordijn omhoog", "laat de luiken zakken": open or close
        (
            rf"^(?:trek|rol|haal|laat|zet|doe|draai) ({_NL_ONE}{_NL_COVER}) "
            r"(?:omhoog|op|naar boven)$",
            r"open \1",
        ),
        (
            rf"^(?:trek|rol|haal|laat|zet|doe|draai) ({_NL_ONE}{_NL_COVER}) "
            r"(?:omlaag|neer|naar beneden|zakken)$",
            r"sluit \1",
        ),
        # "doe het rolgordijn helemaal open", "sluit het helemaal": all the way
        (r"^(doe|zet) (.+?) helemaal (open|dicht)$", r"\1 \2 \3"),
        (r"^(open|sluit) (.+?) helemaal$", r"\1 \2"),
        # "is de verandalamp nog aan", "staat het licht nog aan": whether it is
        (
            r"^(is|zijn|staat|staan) (.+?) nog (aan|uit|open|dicht|op slot|van het slot)$",
            r"\1 \2 \3",
        ),
    ),
}


# The half after a number said in digits, in the other languages: "21 degrés et demi",
# "21 grados y medio", "21 en een halve graad" (the unit moves after the decimal).
_HALVES: dict[str, Rules] = {
    lang: _compiled(
        (rf"\b(\d+) ({unit}) {half}\b", r"\1,5 \2"),
        (rf"\b(\d+) {half}\b", r"\1,5"),
    )
    for lang, unit, half in (
        ("fr", r"degrés?", r"et demie?"),
        ("es", r"grados?", r"y medio"),
        ("nl", r"graden|graad", r"en een (?:half|halve)"),
    )
}
_SAYINGS.update({lang: _SAYINGS.get(lang, ()) + rules for lang, rules in _HALVES.items()})


@dataclass(frozen=True, slots=True)
class _Shares:
    """How a language says a cover's open share, and how its templates want it said."""

    set_to: str  # the templates' own way: "stell {what} auf {n} Prozent"
    preposition: str  # "auf", "à", "al", "op"
    percent: str  # "%", "Prozent", "pour cent", ...
    open_words: str  # after the percent: "offen", "ouverte?"
    closed_words: str  # "geschlossen", "fermée?"
    opening: str  # "öffne", "ouvre", ...
    on: str  # a switch-on said with a value: "mach (X) an auf 30 Prozent"
    parts: dict[str, int]  # "einem Viertel": 25
    unit: str  # the templates' percent word
    joins: str  # the words that join two commands ("und", "dann")


_SHARES = {
    "de": _Shares(
        set_to="stell {what} auf {n} Prozent",
        preposition="auf",
        percent=r"(?: ?%| prozent)",
        open_words=r"(?:offen|geöffnet|auf)",
        closed_words=r"(?:geschlossen|zu)",
        opening=r"(?:öffne|öffnen|mach|mache|fahr|fahre|zieh|ziehe)",
        on=r"^(?:mach|mache|schalte|schalt|dreh|drehe) (.+?) (?:an|ein) (?:auf|mit)",
        parts={
            "einem viertel": 25,
            "ein viertel": 25,
            "einem drittel": 33,
            "ein drittel": 33,
            "zwei dritteln": 67,
            "zwei drittel": 67,
            "drei vierteln": 75,
            "drei viertel": 75,
            "dreiviertel": 75,
            "zu einem viertel": 25,
            "zu einem drittel": 33,
            "zu zwei dritteln": 67,
            "zu drei vierteln": 75,
        },
        unit="Prozent",
        joins="und|dann|oder|aber",
    ),
    "fr": _Shares(
        set_to="mets {what} à {n} pour cent",
        preposition="à",
        percent=r"(?: ?%| pour cent| pourcent)",
        open_words=r"(?:ouverte?s?)",
        closed_words=r"(?:fermée?s?)",
        opening=r"(?:ouvre|ouvrez|monte|montez|lève|levez|remonte)",
        on=r"^(?:allume|allumez) (.+?) (?:à)",
        parts={"au quart": 25, "au tiers": 33, "aux deux tiers": 67, "aux trois quarts": 75},
        unit="pour cent",
        joins="et|puis|ou|mais",
    ),
    "es": _Shares(
        set_to="pon {what} al {n} por ciento",
        preposition="al",
        percent=r"(?: ?%| por ciento)",
        open_words=r"(?:abierta?s?)",
        closed_words=r"(?:cerrada?s?)",
        opening=r"(?:abre|abra|sube|suba|levanta)",
        on=r"^(?:enciende|encienda|prende) (.+?) (?:al|a)",
        parts={
            "un cuarto": 25,
            "hasta un cuarto": 25,
            "un tercio": 33,
            "hasta la mitad": 50,
            "a la mitad": 50,
            "dos tercios": 67,
            "tres cuartos": 75,
            "hasta tres cuartos": 75,
        },
        unit="por ciento",
        joins="y|e|luego|o|pero",
    ),
    "nl": _Shares(
        set_to="zet {what} op {n} procent",
        preposition="op",
        percent=r"(?: ?%| procent)",
        open_words=r"(?:open|geopend)",
        closed_words=r"(?:dicht|gesloten)",
        opening=r"(?:open|doe|zet)",
        on=r"^(?:doe|zet) (.+?) aan (?:op|met|naar)",
        parts={
            "voor een kwart": 25,
            "een kwart": 25,
            "voor een derde": 33,
            "een derde": 33,
            "voor twee derde": 67,
            "twee derde": 67,
            "voor driekwart": 75,
            "driekwart": 75,
            "drie kwart": 75,
        },
        unit="procent",
        joins="en|dan|of|maar",
    ),
}


def _share_rules(shares: _Shares) -> Rules:
    """Return a language's rules for an open share said as a part or a closed percent."""
    parts = "(" + "|".join(re.escape(p) for p in sorted(shares.parts, key=len, reverse=True)) + ")"
    number = r"(\d{1,3}(?:[.,]\d+)?)"
    subject = rf"((?:(?!\b(?:{shares.joins})\b)[^,])+?)"

    def part(match: re.Match[str]) -> str:
        return shares.set_to.format(what=match[1], n=shares.parts[match[2].lower()])

    def closed(match: re.Match[str]) -> str:
        share = float(match[2].replace(",", "."))
        if share > 100:
            return match[0]
        return f"{match[1]}{shares.preposition} {100 - share:g} {shares.unit}"

    def switched_on(match: re.Match[str]) -> str:
        return shares.set_to.format(what=match[1], n=match[2])

    pattern = rf"^{shares.opening} {subject} {parts}(?: {shares.open_words})?$"
    rules: tuple[tuple[str, Replacement], ...] = (
        # "öffne das Rollo zu einem Viertel", "ouvre le store aux trois quarts"
        (pattern, part),
        # "auf 70 Prozent offen": the share; "auf 30 Prozent geschlossen": the rest
        (
            rf"(^|\s){shares.preposition} {number}{shares.percent} {shares.open_words}$",
            rf"\1{shares.preposition} \2 {shares.unit}",
        ),
        (rf"(^|\s){shares.preposition} {number}{shares.percent} {shares.closed_words}$", closed),
        # "mach die Deckenlampe an auf 30 Prozent": that brightness
        (rf"{shares.on.replace('(.+?)', subject)} {number}{shares.percent}$", switched_on),
    )
    return _compiled(*rules)


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


_SAYINGS.update({lang: _SAYINGS.get(lang, ()) + _share_rules(r) for lang, r in _SHARES.items()})
