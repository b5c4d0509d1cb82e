"""Everyday words for a room in every spoken language ("Küche" for a room named Kitchen).

A home is named in one language and spoken to in several: a room called "Kitchen" is
"die Küche", "la cuisine", "la cocina" and "de keuken" to the people who live there.
Each kind of room below lists its words per language; a room whose name or alias is one
of a kind's words is heard by that kind's other words, each in its own language only,
so long as it is the home's only room of that kind and the word is no other room's,
floor's or device's ("Schlafzimmer" and "Slaapkamer" in one home: "bedroom" stays
nobody's; a room named "Salon" keeps "salon" beside a "Living Room").

Details: docs/voice.md, "The eighteenth session".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Each kind of room: its words in English, German, French, Spanish and Dutch (a word of
# one kind only; compared casefolded, as whole words). Speech hears a word in its own
# language only ("Küche" in German; the room's own name and aliases in every language).
KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "kitchen": {
        "en": ("kitchen",),
        "de": ("küche",),
        "fr": ("cuisine",),
        "es": ("cocina",),
        "nl": ("keuken",),
    },
    "living room": {
        "en": ("living room", "lounge", "sitting room", "family room"),
        "de": ("wohnzimmer", "stube"),
        "fr": ("salon", "séjour", "salle de séjour"),
        "es": ("salón", "sala de estar", "sala"),
        "nl": ("woonkamer", "zitkamer"),
    },
    "bedroom": {
        "en": ("bedroom", "master bedroom"),
        "de": ("schlafzimmer",),
        "fr": ("chambre", "chambre à coucher"),
        "es": ("dormitorio", "habitación", "recámara"),
        "nl": ("slaapkamer",),
    },
    "bathroom": {
        "en": ("bathroom", "bath"),
        "de": ("badezimmer", "bad"),
        "fr": ("salle de bain", "salle de bains"),
        "es": ("baño", "cuarto de baño"),
        "nl": ("badkamer",),
    },
    "toilet": {
        "en": ("toilet", "loo", "wc"),
        "de": ("toilette", "gäste-wc", "wc"),
        "fr": ("toilettes", "wc"),
        "es": ("aseo",),
        "nl": ("wc", "toilet"),
    },
    "hall": {
        "en": ("hall", "hallway", "corridor"),
        "de": ("flur", "diele", "korridor"),
        "fr": ("couloir", "entrée"),
        "es": ("pasillo", "recibidor"),
        "nl": ("gang", "hal"),
    },
    "dining room": {
        "en": ("dining room",),
        "de": ("esszimmer",),
        "fr": ("salle à manger",),
        "es": ("comedor",),
        "nl": ("eetkamer",),
    },
    "office": {
        "en": ("office", "study", "home office"),
        "de": ("büro", "arbeitszimmer"),
        "fr": ("bureau",),
        "es": ("oficina", "despacho", "estudio"),
        "nl": ("kantoor", "werkkamer", "studeerkamer"),
    },
    "nursery": {
        "en": ("nursery", "kids room", "kids' room", "children's room"),
        "de": ("kinderzimmer",),
        "fr": ("chambre d'enfant", "chambre des enfants"),
        "es": ("habitación de los niños", "cuarto de los niños"),
        "nl": ("kinderkamer",),
    },
    "guest room": {
        "en": ("guest room", "spare room"),
        "de": ("gästezimmer",),
        "fr": ("chambre d'amis",),
        "es": ("habitación de invitados", "cuarto de invitados"),
        "nl": ("logeerkamer",),
    },
    "garage": {
        "en": ("garage",),
        "de": ("garage",),
        "fr": ("garage",),
        "es": ("garaje", "cochera"),
        "nl": ("garage",),
    },
    "garden": {
        "en": ("garden", "yard", "backyard"),
        "de": ("garten",),
        "fr": ("jardin",),
        "es": ("jardín",),
        "nl": ("tuin",),
    },
    "basement": {
        "en": ("basement", "cellar"),
        "de": ("keller",),
        "fr": ("cave", "sous-sol"),
        "es": ("sótano",),
        "nl": ("kelder",),
    },
    "attic": {
        "en": ("attic", "loft"),
        "de": ("dachboden",),
        "fr": ("grenier", "combles"),
        "es": ("ático", "desván"),
        "nl": ("zolder",),
    },
    "laundry": {
        "en": ("laundry", "laundry room", "utility room"),
        "de": ("waschküche", "hauswirtschaftsraum"),
        "fr": ("buanderie",),
        "es": ("lavadero", "cuarto de lavado"),
        "nl": ("washok", "wasruimte", "bijkeuken"),
    },
    "terrace": {
        "en": ("terrace", "patio"),
        "de": ("terrasse",),
        "fr": ("terrasse",),
        "es": ("terraza",),
        "nl": ("terras",),
    },
    "balcony": {
        "en": ("balcony",),
        "de": ("balkon",),
        "fr": ("balcon",),
        "es": ("balcón",),
        "nl": ("balkon",),
    },
    "porch": {
        "en": ("porch", "veranda"),
        "de": ("veranda",),
        "fr": ("véranda", "porche"),
        "es": ("porche",),
        "nl": ("veranda",),
    },
    "entrance": {
        "en": ("entrance", "entry", "entryway", "foyer"),
        "de": ("eingang", "eingangsbereich"),
        "fr": ("foyer",),
        "es": ("entrada",),
        "nl": ("ingang",),
    },
}
_KIND_OF: dict[str, str] = {
    word: kind
    for kind, by_language in KINDS.items()
    for words in by_language.values()
    for word in words
}
Lent = dict[str, dict[str, tuple[str, ...]]]  # room slug -> language -> words


def spoken_words(rooms: Iterable[tuple[str, Sequence[str]]], taken: Iterable[str] = ()) -> Lent:
    """Return, for each room slug, its kind's words by language beyond its own labels.

    ``rooms``: (slug, labels) of every room of the home; ``taken``: other words a room
    word must never shadow (floor names, device names). A kind two rooms share gives
    neither its words; a word that is a room's own label or a taken word is never lent.
    """
    listed = [(slug, [label.casefold() for label in labels]) for slug, labels in rooms]
    own = {label for _, labels in listed for label in labels}
    blocked = own | {word.casefold() for word in taken}
    kinds: dict[str, list[str]] = {}
    for slug, labels in listed:
        for kind in dict.fromkeys(_KIND_OF[label] for label in labels if label in _KIND_OF):
            kinds.setdefault(kind, []).append(slug)
    lent: Lent = {}
    for kind, slugs in kinds.items():
        if len(slugs) != 1:
            continue
        by_language = {
            language: kept
            for language, words in KINDS[kind].items()
            if (kept := tuple(word for word in words if word not in blocked))
        }
        if by_language:
            lent[slugs[0]] = by_language
    return lent
