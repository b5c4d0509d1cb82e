"""A room is heard by its kind's words in every language, unless that would be a guess."""

from __future__ import annotations

from bridge.voice.room_words import KINDS, spoken_words


def test_a_lone_kitchen_is_heard_in_every_language() -> None:
    lent = spoken_words([("kitchen", ("Kitchen",)), ("hall", ("Hall", "Flur"))])
    assert lent["kitchen"] == {
        "de": ("küche",),
        "fr": ("cuisine",),
        "es": ("cocina",),
        "nl": ("keuken",),
    }  # its own name is no loan: no English word left
    # "Flur" is the hall's own alias: the other words of the kind are lent, not it
    assert lent["hall"]["de"] == ("diele", "korridor")
    assert lent["hall"]["en"] == ("hallway", "corridor")


def test_a_kind_two_rooms_share_lends_neither_its_words() -> None:
    lent = spoken_words(
        [("schlafzimmer", ("Schlafzimmer",)), ("slaapkamer", ("Slaapkamer",)), ("bad", ("Bad",))]
    )
    assert "schlafzimmer" not in lent
    assert "slaapkamer" not in lent
    assert lent["bad"]["en"] == ("bathroom", "bath")
    assert lent["bad"]["de"] == ("badezimmer",)  # "Bad" is its own name


def test_a_room_keeps_its_own_name_when_it_is_another_kinds_word() -> None:
    # "Salon" is French for a living room, but here it is a room of its own beside the
    # Living Room: both are of that kind, so no word moves between them
    lent = spoken_words([("salon", ("Salon",)), ("living_room", ("Living Room", "lounge"))])
    assert lent == {}


def test_words_taken_by_a_floor_or_a_device_are_never_lent() -> None:
    lent = spoken_words(
        [("cellar", ("Cellar",)), ("terrace", ("Terrace",))], taken=["Keller", "Patio"]
    )
    assert "de" not in lent["cellar"]  # "Keller", its only German word, is a floor's
    assert lent["cellar"]["nl"] == ("kelder",)
    assert "en" not in lent["terrace"]  # its own name, and "Patio" a device's
    assert lent["terrace"]["fr"] == ("terrasse",)


def test_a_room_named_in_no_known_words_gets_none() -> None:
    assert spoken_words([("den", ("Den",)), ("kitchen", ("Kitchen",))]).keys() == {"kitchen"}


def test_every_word_is_of_one_kind_only() -> None:
    kinds = [set().union(*by_language.values()) for by_language in KINDS.values()]
    words = [w for kind in kinds for w in kind]
    assert len(words) == len(set(words)), sorted({w for w in words if words.count(w) > 1})
    assert all(w == w.casefold() for w in words)
    assert all(set(by_language) == {"en", "de", "fr", "es", "nl"} for by_language in KINDS.values())


def test_another_rooms_alias_is_never_taken_from_it() -> None:
    # "Küche" is the annex's own alias: the annex is a kitchen too, so the kind is shared
    lent = spoken_words([("kitchen", ("Kitchen",)), ("annex", ("Annex", "Küche"))])
    assert lent == {}
