"""Everyday words for a room in every spoken language ("Küche" for a room named Kitchen).

A home is named in one language and spoken to in several: a room called "Kitchen" is
"die Küche", "la cuisine", "la cocina" and "de keuken" to the people who live there.
Each kind of room below lists its words in every language the bridge speaks; a room
whose name or alias is one of a kind's words is heard by all of that kind's words, so
long as it is the home's only room of that kind and no other room or floor is called
so ("Schlafzimmer" and "Slaapkamer" in one home: "bedroom" stays nobody's; a room named
"Salon" keeps "salon" beside a "Living Room").

Details: docs/voice.md, "Room words in every language".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Each kind of room: its words in English, German, French, Spanish and Dutch (a word in
# one kind only; compared casefolded, as whole words).
KINDS: dict[str, tuple[str, ...]] = {
    "kitchen": ("kitchen", "küche", "cuisine", "cocina", "keuken"),
    "living room": (
        "living room",
        "lounge",
        "sitting room",
        "family room",
        "wohnzimmer",
        "stube",
        "salon",
        "séjour",
        "salle de séjour",
        "salón",
        "sala de estar",
        "sala",
        "woonkamer",
        "zitkamer",
    ),
    "bedroom": (
        "bedroom",
        "master bedroom",
        "schlafzimmer",
        "chambre",
        "chambre à coucher",
        "dormitorio",
        "habitación",
        "recámara",
        "slaapkamer",
    ),
    "bathroom": (
        "bathroom",
        "bath",
        "badezimmer",
        "bad",
        "salle de bain",
        "salle de bains",
        "baño",
        "cuarto de baño",
        "badkamer",
    ),
    "toilet": ("toilet", "loo", "wc", "toilette", "gäste-wc", "toilettes", "aseo", "wc's"),
    "hall": (
        "hall",
        "hallway",
        "corridor",
        "flur",
        "diele",
        "korridor",
        "couloir",
        "entrée",
        "pasillo",
        "recibidor",
        "gang",
        "hal",
    ),
    "dining room": ("dining room", "esszimmer", "salle à manger", "comedor", "eetkamer"),
    "office": (
        "office",
        "study",
        "home office",
        "büro",
        "arbeitszimmer",
        "bureau",
        "oficina",
        "despacho",
        "estudio",
        "kantoor",
        "werkkamer",
        "studeerkamer",
    ),
    "nursery": (
        "nursery",
        "kids room",
        "kids' room",
        "children's room",
        "kinderzimmer",
        "chambre d'enfant",
        "chambre des enfants",
        "habitación de los niños",
        "cuarto de los niños",
        "kinderkamer",
    ),
    "guest room": (
        "guest room",
        "spare room",
        "gästezimmer",
        "chambre d'amis",
        "habitación de invitados",
        "cuarto de invitados",
        "logeerkamer",
    ),
    "garage": ("garage", "garaje", "cochera"),
    "garden": ("garden", "yard", "backyard", "garten", "jardin", "jardín", "tuin"),
    "basement": ("basement", "cellar", "keller", "cave", "sous-sol", "sótano", "kelder"),
    "attic": ("attic", "loft", "dachboden", "grenier", "combles", "ático", "desván", "zolder"),
    "laundry": (
        "laundry",
        "laundry room",
        "utility room",
        "waschküche",
        "hauswirtschaftsraum",
        "buanderie",
        "lavadero",
        "cuarto de lavado",
        "washok",
        "wasruimte",
        "bijkeuken",
    ),
    "terrace": ("terrace", "patio", "terrasse", "terraza", "terras"),
    "balcony": ("balcony", "balkon", "balcon", "balcón"),
    "porch": ("porch", "veranda", "véranda", "porche"),
    "entrance": (
        "entrance",
        "entry",
        "entryway",
        "foyer",
        "eingang",
        "eingangsbereich",
        "entrada",
        "ingang",
    ),
}
_KIND_OF: dict[str, str] = {word: kind for kind, words in KINDS.items() for word in words}


def spoken_words(
    rooms: Iterable[tuple[str, Sequence[str]]], taken: Iterable[str] = ()
) -> dict[str, tuple[str, ...]]:
    """Return, for each room slug, the kind's words it is heard by beyond its own labels.

    ``rooms``: (slug, labels) of every room of the home; ``taken``: other words a room
    word must never shadow (floor names). A kind two rooms share gives neither its words;
    a word that is a room's own label or a taken word is never lent to another room.
    """
    listed = [(slug, [label.casefold() for label in labels]) for slug, labels in rooms]
    own = {label for _, labels in listed for label in labels}
    blocked = own | {word.casefold() for word in taken}
    kinds: dict[str, list[str]] = {}
    for slug, labels in listed:
        for kind in dict.fromkeys(_KIND_OF[label] for label in labels if label in _KIND_OF):
            kinds.setdefault(kind, []).append(slug)
    lent: dict[str, tuple[str, ...]] = {}
    for kind, slugs in kinds.items():
        if len(slugs) != 1:
            continue
        words = tuple(word for word in KINDS[kind] if word not in blocked)
        if words:
            lent[slugs[0]] = lent.get(slugs[0], ()) + words
    return lent
