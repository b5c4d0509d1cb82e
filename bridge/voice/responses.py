"""Short sentences to speak back, per language (en, de, fr, es, nl).

Each template is filled with ``str.format``: ``{target}`` (a device or room name),
``{percent}``, ``{color}``, ``{temperature}``, ``{names}``, ``{done}``, ``{total}``,
``{languages}``.
"""

from __future__ import annotations

LANGUAGES = ("en", "de", "fr", "es", "nl")

RESPONSES: dict[str, dict[str, str]] = {
    "en": {
        "on": "Turned on {target}.",
        "off": "Turned off {target}.",
        "brightness": "Set {target} to {percent} percent.",
        "color": "Set {target} to {color}.",
        "set_temperature": "Set {target} to {temperature} degrees.",
        "get_temperature": "It is {temperature} degrees in {target}.",
        "partial": "Done for {done} of {total}; {names} did not respond.",
        "failed": "Sorry, {target} did not respond.",
        "denied": "Sorry, you are not allowed to do that with {target}.",
        "unavailable": "Sorry, {target} is not reachable right now.",
        "ambiguous": "Which one do you mean: {names}?",
        "unknown": "Sorry, I didn't understand that.",
        "suggest": "Sorry, I didn't understand that. Did you mean {names}?",
        "unsupported": "Sorry, {target} can't do that.",
        "no_temperature": "Sorry, I don't know the temperature in {target}.",
        "language": "Sorry, I only understand these languages: {languages}.",
    },
    "de": {
        "on": "{target} ist eingeschaltet.",
        "off": "{target} ist ausgeschaltet.",
        "brightness": "{target} ist auf {percent} Prozent gestellt.",
        "color": "{target} ist auf {color} gestellt.",
        "set_temperature": "{target} ist auf {temperature} Grad gestellt.",
        "get_temperature": "In {target} sind es {temperature} Grad.",
        "partial": "Erledigt für {done} von {total}; {names} hat nicht geantwortet.",
        "failed": "Leider hat {target} nicht geantwortet.",
        "denied": "Das darfst du mit {target} leider nicht.",
        "unavailable": "{target} ist gerade nicht erreichbar.",
        "ambiguous": "Welches meinst du: {names}?",
        "unknown": "Das habe ich leider nicht verstanden.",
        "suggest": "Das habe ich leider nicht verstanden. Meinst du {names}?",
        "unsupported": "Das kann {target} leider nicht.",
        "no_temperature": "Die Temperatur in {target} kenne ich leider nicht.",
        "language": "Ich verstehe nur diese Sprachen: {languages}.",
    },
    "fr": {
        "on": "{target} est allumé.",
        "off": "{target} est éteint.",
        "brightness": "{target} est réglé à {percent} pour cent.",
        "color": "{target} est réglé sur {color}.",
        "set_temperature": "{target} est réglé à {temperature} degrés.",
        "get_temperature": "Il fait {temperature} degrés dans {target}.",
        "partial": "Fait pour {done} sur {total} ; {names} n'a pas répondu.",
        "failed": "Désolé, {target} n'a pas répondu.",
        "denied": "Désolé, vous n'avez pas le droit de faire cela avec {target}.",
        "unavailable": "Désolé, {target} n'est pas joignable pour le moment.",
        "ambiguous": "Lequel voulez-vous dire : {names} ?",
        "unknown": "Désolé, je n'ai pas compris.",
        "suggest": "Désolé, je n'ai pas compris. Vouliez-vous dire {names} ?",
        "unsupported": "Désolé, {target} ne sait pas faire cela.",
        "no_temperature": "Désolé, je ne connais pas la température dans {target}.",
        "language": "Désolé, je ne comprends que ces langues : {languages}.",
    },
    "es": {
        "on": "He encendido {target}.",
        "off": "He apagado {target}.",
        "brightness": "He puesto {target} al {percent} por ciento.",
        "color": "He puesto {target} en {color}.",
        "set_temperature": "He puesto {target} a {temperature} grados.",
        "get_temperature": "Hace {temperature} grados en {target}.",
        "partial": "Hecho para {done} de {total}; {names} no respondió.",
        "failed": "Lo siento, {target} no respondió.",
        "denied": "Lo siento, no tienes permiso para hacer eso con {target}.",
        "unavailable": "Lo siento, {target} no está disponible ahora.",
        "ambiguous": "¿Cuál quieres decir: {names}?",
        "unknown": "Lo siento, no lo he entendido.",
        "suggest": "Lo siento, no lo he entendido. ¿Quieres decir {names}?",
        "unsupported": "Lo siento, {target} no puede hacer eso.",
        "no_temperature": "Lo siento, no sé la temperatura en {target}.",
        "language": "Lo siento, solo entiendo estos idiomas: {languages}.",
    },
    "nl": {
        "on": "{target} staat aan.",
        "off": "{target} staat uit.",
        "brightness": "{target} staat op {percent} procent.",
        "color": "{target} staat op {color}.",
        "set_temperature": "{target} staat op {temperature} graden.",
        "get_temperature": "Het is {temperature} graden in {target}.",
        "partial": "Gedaan voor {done} van {total}; {names} reageerde niet.",
        "failed": "Sorry, {target} reageerde niet.",
        "denied": "Sorry, dat mag je niet met {target}.",
        "unavailable": "Sorry, {target} is nu niet bereikbaar.",
        "ambiguous": "Welke bedoel je: {names}?",
        "unknown": "Sorry, dat heb ik niet begrepen.",
        "suggest": "Sorry, dat heb ik niet begrepen. Bedoel je {names}?",
        "unsupported": "Sorry, {target} kan dat niet.",
        "no_temperature": "Sorry, ik weet de temperatuur in {target} niet.",
        "language": "Sorry, ik begrijp alleen deze talen: {languages}.",
    },
}

OR_WORD = {"en": "or", "de": "oder", "fr": "ou", "es": "o", "nl": "of"}


def say(language: str, key: str, **values: object) -> str:
    """Return the sentence ``key`` in ``language`` (English when the language is unknown)."""
    table = RESPONSES.get(language, RESPONSES["en"])
    return table[key].format(**values)


def either(language: str, names: list[str]) -> str:
    """Return ``"a, b or c"`` in ``language``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {OR_WORD.get(language, 'or')} {names[-1]}"
