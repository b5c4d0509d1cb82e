"""``wording.said_plainly``: everyday turns of phrase put as the templates say them.

Each rewrite is another way of saying what a template already knows, never a new
meaning; the sentence sets (``wording10.yaml``, ``wording10_heldout.yaml``) check the
calls made end to end on a real controller.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.voice.intents import verbless
from bridge.voice.planner import Reading
from bridge.voice.wording import plain, said_later, said_plainly
from tests.voice.sentence_set import MULTI_LANGUAGE_SETS, load_sentences


@pytest.mark.parametrize(
    ("said", "plainly"),
    [
        ("turn the sofa lamp down to 20 percent", "turn the sofa lamp to 20 percent"),
        ("dim the light down to half", "dim the light to 50 percent"),
        ("brighten the ceiling light up to 90 percent", "set the ceiling light to 90 percent"),
        ("bring the blind down to twenty percent", "set the blind to twenty percent"),
        ("lower the hall thermostat to 19", "set the hall thermostat to 19"),
        ("turn the hall thermostat up a degree", "turn the hall thermostat up by 1 degree"),
        ("turn it down one degree", "turn it down by 1 degree"),
        (
            "crank the heat up two degrees in the hall",
            "turn the heat up by two degrees in the hall",
        ),
        ("turn the heating down a notch", "turn the heating down a bit"),
        ("make the sofa lamp a nice warm white", "make the sofa lamp warm white"),
        ("set the lamp to an orange", "set the lamp to orange"),
        ("put the thermostat on cool at 22", "set the thermostat to cool and 22 degrees"),
        (
            "switch the hall thermostat to heat mode at 21.5 degrees",
            "set the hall thermostat to heat and 21.5 degrees",
        ),
        ("set the blind to half", "set the blind to 50 percent"),
        ("lock up the front door", "lock the front door"),
        ("put the porch light on", "turn the porch light on"),
        ("put on the porch light", "turn on the porch light"),
        ("put the lights off in the kitchen", "turn the lights off in the kitchen"),
        ("put the thermostat on cool", "put the thermostat on cool"),  # a mode: left
        ("put the fan on high", "put the fan on high"),
        ("turn the porch light back on", "turn the porch light on"),
        ("switch the lamp off again", "switch the lamp off"),
        ("raise the blind halfway", "open the blind halfway"),
        ("pull the blind down half way", "open the blind half way"),
        ("bring up the blind halfway", "open the blind halfway"),
        ("raise the blind", "raise the blind"),
        ("set it to twenty one and a half", "set it to twenty one point five"),
        ("set it to nineteen and a half", "set it to nineteen point five"),
        ("set it to 21 and a half degrees", "set it to 21.5 degrees"),
        ("turn the heat down half a degree", "turn the heat down by 0.5 degrees"),
    ],
)
def test_a_turn_of_phrase_is_said_plainly(said: str, plainly: str) -> None:
    assert said_plainly(said, "en") == plainly


@pytest.mark.parametrize(
    "sentence",
    [
        "make it a bit warmer",  # "a bit" is no colour
        "set the blind to half open",  # "half open" stays for its own template
        "open the blind halfway",
        "turn it up by 2 degrees",  # already plain
        "lock up",  # the home's only lock, its own template
        "turn up the lights",
        "set the hall thermostat to 21",
        "raise the blinds",  # no value said: stays a raise
        "push the button",
        "what is it set to",
    ],
)
def test_what_is_already_plain_is_left_alone(sentence: str) -> None:
    assert said_plainly(sentence, "en") == sentence


def test_the_german_value_said_after_runter() -> None:
    assert (
        said_plainly("dreh die Stehlampe runter auf 20 Prozent", "de")
        == "stell die Stehlampe auf 20 Prozent"
    )
    assert said_plainly("dreh die Heizung runter", "de") == "dreh die Heizung runter"


@pytest.mark.parametrize(
    ("lang", "said", "plainly"),
    [
        ("de", "stell es auf 21 einhalb Grad", "stell es auf 21,5 Grad"),
        ("de", "mach das Rollo halb zu", "mach das Rollo halb zu"),  # no number: left
        # a rewrite's subject never spans a joining word: each part is read on its own
        (
            "de",
            "mach das Licht im Wohnzimmer an und das Rollo runter",
            "mach das Licht im Wohnzimmer an und das Rollo runter",
        ),
        (
            "nl",
            "doe de lamp aan en het rolgordijn omlaag",
            "doe de lamp aan en het rolgordijn omlaag",
        ),
        ("nl", "laat het rolgordijn neer", "sluit het rolgordijn"),
        ("fr", "règle-le à 21 degrés et demi", "règle-le à 21,5 degrés"),
        ("fr", "à 20 et demie", "à 20,5"),
        ("es", "ponlo a 21 grados y medio", "ponlo a 21,5 grados"),
        ("es", "la persiana a medio camino", "la persiana a medio camino"),
        ("nl", "zet hem op 21 en een halve graad", "zet hem op 21,5 graad"),
        ("nl", "zet hem op 20 en een half", "zet hem op 20,5"),
        # a question, a room's lights, a room warmed or cooled, a lock said another way
        ("en", "is the porch light on or off", "is the porch light on"),
        ("en", "are the kitchen lights off or on", "are the kitchen lights on"),
        ("en", "turn it on or off", "turn it on or off"),  # no question: left
        ("en", "what's the humidity like upstairs", "what's the humidity upstairs"),
        ("en", "what is the temperature like in the hall", "what is the temperature in the hall"),
        ("fr", "ferme la porte d'entrée à clé", "verrouille la porte d'entrée"),
        ("fr", "ferme à clé la porte d'entrée", "verrouille la porte d'entrée"),
        ("fr", "ferme le store", "ferme le store"),
        ("es", "cierra la puerta principal con llave", "cierra la puerta principal con llave"),
        ("en", "are the lights in the kitchen on", "are the kitchen lights on"),
        ("en", "is the light in the hall off", "is the hall light off"),
        ("de", "ist das Verandalicht an oder aus", "ist das Verandalicht an"),
        (
            "en",
            "cool the hall down by two degrees",
            "turn the heat down by two degrees in the hall",
        ),
        ("en", "heat up the hall by 3 degrees", "turn the heat up by 3 degrees in the hall"),
        ("en", "warm up the hall", "make the hall warmer"),
        ("en", "heat the hall up a bit", "make the hall a bit warmer"),
        ("en", "cool down the bedroom a little", "make the bedroom a little cooler"),
        ("en", "warm up the sofa lamp", "make the sofa lamp warmer"),  # a warmer white
        ("en", "heat the hall to 22 degrees", "heat the hall to 22 degrees"),  # a value: left
        ("en", "warm the bedroom up at 7", "warm the bedroom up at 7"),
        ("en", "cool the hall to 19", "cool the hall to 19"),
        # a cover pulled, drawn or held; never a light, and an awning is let down to be out
        ("en", "pull up the blind", "open the blind"),
        ("en", "roll the kitchen shutters down", "close the kitchen shutters"),
        ("en", "put the garage door down", "close the garage door"),
        ("en", "draw the curtains", "close the curtains"),
        ("en", "draw back the curtains", "open the curtains"),
        ("en", "draw the bedroom curtains apart", "open the bedroom curtains"),
        ("en", "hold the blind right there", "stop the blind"),
        ("en", "stop the shutters where they are", "stop the shutters"),
        ("en", "bring the lights down", "bring the lights down"),
        ("en", "let the awning down", "open the awning"),  # out, to shade
        ("en", "put the shade down in the living room", "close the shade in the living room"),
        (
            "en",
            "pull the blind down and turn on the lamp",
            "pull the blind down and turn on the lamp",
        ),
        # a fan's mode said without a verb, its speed step
        ("en", "fan on high", "set fan to high"),
        ("en", "the ceiling fan to low speed", "set the ceiling fan to low"),
        ("en", "set the fan to step 2", "set the fan to speed 2"),
        ("en", "put the bedroom fan on setting 3", "put the bedroom fan on speed 3"),
        ("en", "set the lamp to level 3", "set the lamp to level 3"),  # no fan: left
        ("en", "turn the sofa lamp on high", "turn the sofa lamp on high"),
        # whether it heats: what the thermostat is set to (its state)
        ("en", "is it heating in the hall", "what is the thermostat in the hall set to"),
        ("en", "is the heating on in the bedroom", "what is the thermostat in the bedroom set to"),
        ("en", "is the AC running", "what is the thermostat set to"),
        ("en", "is the bedroom thermostat heating", "what is the bedroom thermostat set to"),
        ("en", "is it on in the kitchen", "is it on in the kitchen"),  # not the heating
        # "still" before what a robot or an appliance is doing
        ("en", "is the robot vacuum still cleaning", "is the robot vacuum cleaning"),
        ("en", "is the dryer still drying", "is the dryer drying"),
        ("en", "is the robot still charging", "is the robot charging"),
        ("en", "is the robot still stuck", "is the robot still stuck"),  # no such state
        # a room made dark; a subject said first
        ("en", "make it dark in the living room", "turn off the lights in the living room"),
        ("en", "make the bedroom dark", "turn off the lights in the bedroom"),
        ("en", "make it darker", "make it darker"),
        ("en", "the porch light switch it off", "switch the porch light off"),
        ("en", "the porch light and switch it off", "switch the porch light off"),
        ("en", "my reading lamp dim it to 30 percent", "dim my reading lamp to 30 percent"),
        ("en", "the porch light is it on", "is the porch light on"),
        (
            "en",
            "the kitchen light and the porch light turn them off",
            "turn the kitchen light and the porch light off",
        ),
        (
            "en",
            "the kitchen light and turn off the porch light and switch them on",
            "the kitchen light and turn off the porch light and switch them on",
        ),
        ("en", "draw the blind halfway", "open the blind halfway"),
        # the other languages' covers
        ("de", "lass das Rollo runter", "schließe das Rollo"),
        ("de", "zieh die Wohnzimmerjalousie nach oben", "öffne die Wohnzimmerjalousie"),
        ("de", "mach das Licht runter", "mach das Licht runter"),
        # "did I lock ...", in German and French: whether it is
        ("de", "hab ich die Haustür abgeschlossen", "ist die Haustür abgeschlossen"),
        ("de", "habe ich das Verandalicht angelassen", "ist das Verandalicht an"),
        ("de", "haben wir das Garagentor offen gelassen", "ist das Garagentor offen"),
        ("de", "hab ich das gemacht", "hab ich das gemacht"),
        (
            "fr",
            "est-ce que j'ai fermé la porte d'entrée à clé",
            "la porte d'entrée est-elle verrouillée",
        ),
        ("fr", "ai-je verrouillé la porte", "la porte est-elle verrouillée"),
        ("fr", "est-ce qu'on a bien fermé à clé la porte", "la porte est-elle verrouillée"),
        ("fr", "est-ce que j'ai fermé la porte", "est-ce que j'ai fermé la porte"),
        # half or full brightness with a switch-on; "to full", "to max"
        ("en", "switch on the sofa lamp at half brightness", "set the sofa lamp to 50 percent"),
        ("en", "turn on the lamp to full brightness", "set the lamp to 100 percent"),
        ("en", "turn the kitchen lights to full", "turn the kitchen lights to 100 percent"),
        ("en", "set the lamp to maximum brightness", "set the lamp to 100 percent"),
        ("en", "set the fan to full speed", "set the fan to full speed"),
        ("fr", "remonte le store", "ouvre le store"),
        ("fr", "descends les volets du salon", "ferme les volets du salon"),
        ("fr", "descends le store banne", "ouvre le store banne"),  # an awning: out
        ("fr", "replie l'auvent", "ferme le store banne"),
        ("fr", "ferme le garage", "ferme la porte du garage"),  # its door, not its lights
        (
            "fr",
            "monte le chauffage du couloir à 22 degrés",
            "mets le chauffage du couloir à 22 degrés",
        ),
        ("fr", "règle le plafonnier à 30 %", "règle le plafonnier à 30 %"),
        ("fr", "baisse le store du salon à moitié", "mets le store du salon à 50 %"),
        ("fr", "allume le ventilateur au minimum", "mets le ventilateur en vitesse faible"),
        ("es", "recoge el toldo", "cierra el toldo"),
        ("es", "baja el toldo", "abre el toldo"),
        ("es", "baja la persiana", "baja la persiana"),  # a blind lowered: closed, as before
        ("nl", "rol de zonneluifel uit", "doe de zonnescherm open"),
        ("nl", "haal de markies in", "doe de zonnescherm dicht"),
        ("de", "schließ die Garage", "schließ das Garagentor"),
        ("en", "all lights off upstairs", "turn off all the lights upstairs"),
        ("en", "make sure the front door is locked", "lock the front door"),
        ("en", "make sure the lights are off in the kitchen", "turn off the lights in the kitchen"),
        ("en", "change the colour of the sofa lamp to green", "make the sofa lamp green"),
        ("en", "make the sofa lamp a cooler white", "make the sofa lamp cooler"),
        ("en", "fan on low in the living room", "set fan to low in the living room"),
        ("en", "close every blind in the house", "close all the blinds"),
        ("en", "turn off the lights everywhere", "turn off all the lights"),
        ("en", "what's on in the kitchen", "which lights are on in the kitchen"),
        ("en", "what's on tv", "what's on tv"),
        (
            "es",
            "sube la calefacción del pasillo a 21 grados",
            "pon la calefacción del pasillo a 21 grados",
        ),
        (
            "nl",
            "doe de lampen in de woonkamer wat feller",
            "maak de lampen in de woonkamer wat feller",
        ),
        ("fr", "augmente un peu la lumière du séjour", "augmente la lumière du séjour un peu"),
        ("fr", "monte le chauffage", "monte le chauffage"),
        ("fr", "monte le chauffage et ferme le store", "monte le chauffage et ferme le store"),
        ("es", "levanta la persiana del salón", "sube la persiana del salón"),
        ("es", "levanta la persiana y apaga la luz", "levanta la persiana y apaga la luz"),
        ("nl", "trek het rolgordijn omhoog", "open het rolgordijn"),
        ("nl", "laat de luiken zakken", "sluit de luiken"),
        ("nl", "doe het licht omhoog", "doe het licht omhoog"),
    ],
)
def test_a_turn_of_phrase_is_said_plainly_in_its_language(
    lang: str, said: str, plainly: str
) -> None:
    assert said_plainly(said, lang) == plainly


@pytest.mark.parametrize(
    ("lang", "said", "plainly"),
    [
        # a switch-on with a value, "kill"/"cut", a wish with a value
        ("en", "kill the porch light", "turn off the porch light"),
        ("en", "cut off the lights in the hall", "turn off the lights in the hall"),
        ("en", "cut the lights to 20 percent", "cut the lights to 20 percent"),  # a value: left
        ("en", "turn on the lamp at 30 percent", "set the lamp to 30 percent"),
        ("en", "switch the lamp on to 75%", "set the lamp to 75%"),
        ("en", "turn the lamp on at twenty percent", "set the lamp to twenty percent"),
        ("en", "i'd like the hall at 21 degrees", "set the hall to 21 degrees"),
        ("en", "the ceiling light at 40 percent", "set the ceiling light to 40 percent"),
        ("en", "the alarm at 7", "the alarm at 7"),  # no unit: left
        # never across a second command
        (
            "en",
            "turn on the sofa lamp and dim it to 20 percent",
            "turn on the sofa lamp and dim it to 20 percent",
        ),
        ("en", "the lamp and the blind at 40 percent", "the lamp and the blind at 40 percent"),
        # parts of the way and open or closed percents: the open share
        ("en", "open the blind a quarter of the way", "set the blind to 25 percent"),
        ("en", "raise the blind two thirds", "set the blind to 67 percent"),
        ("en", "close the blind three quarters of the way", "set the blind to 25 percent"),
        ("en", "lower the shade a third", "set the shade to 67 percent"),
        ("en", "set the blind to a quarter", "set the blind to 25 percent"),
        ("en", "set the blind to three quarters closed", "set the blind to 25 percent"),
        ("en", "set the blind to 80 percent open", "set the blind to 80 percent"),
        ("en", "set the blind to 80% closed", "set the blind to 20 percent"),
        ("en", "set the blind to 300 percent closed", "set the blind to 300 percent closed"),
        # the thermostat "in" a room, with a temperature said
        ("en", "set the thermostat in the hall to 19.5", "set the temperature in the hall to 19.5"),
        ("en", "set the heating in the hall to heat", "set the heating in the hall to heat"),
        ("de", "öffne das Rollo zu drei Vierteln", "stell das Rollo auf 75 Prozent"),
        ("de", "stell das Rollo auf 30 % geschlossen", "stell das Rollo auf 70 Prozent"),
        ("de", "stell das Rollo auf 70 Prozent offen", "stell das Rollo auf 70 Prozent"),
        ("de", "mach die Lampe an auf 30 Prozent", "stell die Lampe auf 30 Prozent"),
        (
            "de",
            "mach die Lampe an und das Rollo auf 30 Prozent",
            "mach die Lampe an und das Rollo auf 30 Prozent",
        ),
        ("fr", "ouvre le store aux trois quarts", "mets le store à 75 pour cent"),
        ("fr", "mets le store à 60 % fermé", "mets le store à 40 pour cent"),
        ("fr", "allume la lampe à 30 pour cent", "mets la lampe à 30 pour cent"),
        ("es", "abre la persiana hasta la mitad", "pon la persiana al 50 por ciento"),
        ("es", "pon la persiana al 70 por ciento cerrada", "pon la persiana al 30 por ciento"),
        ("es", "enciende la lámpara al 30 por ciento", "pon la lámpara al 30 por ciento"),
        ("nl", "doe het rolgordijn voor driekwart open", "zet het rolgordijn op 75 procent"),
        ("nl", "zet het rolgordijn op 10 procent dicht", "zet het rolgordijn op 90 procent"),
        ("nl", "doe de lamp aan op 35 procent", "zet de lamp op 35 procent"),
        # a question with "still", "how open", "what mode"; a wish for light; degrees
        ("en", "is the porch light still on", "is the porch light on"),
        ("en", "are the lights on still", "are the lights on"),
        ("en", "how far open is the blind", "is the blind open"),
        ("en", "what mode is the hall thermostat in", "what is the hall thermostat set to"),
        ("en", "give me some light in the kitchen", "turn on the lights in the kitchen"),
        ("en", "give me some lighting", "give me some lighting"),
        ("en", "make it 68 fahrenheit in the hall", "make it 68 degrees fahrenheit in the hall"),
        ("en", "make it 22 in the hall", "make it 22 degrees in the hall"),
        ("en", "make it 22 percent", "make it 22 percent"),
        ("de", "ist das Verandalicht noch an", "ist das Verandalicht an"),
        ("de", "wie weit ist das Rollo offen", "ist das Rollo offen"),
        ("fr", "la lumière est-elle toujours allumée", "la lumière est-elle allumée"),
        ("fr", "est-ce que le store est encore ouvert", "est-ce que le store est ouvert"),
        ("fr", "il fait encore froid", "il fait encore froid"),
        ("es", "sigue encendida la luz del porche", "está encendida la luz del porche"),
        ("es", "la persiana sigue abierta", "está abierta la persiana"),
        ("es", "siguen apagadas las luces", "están apagadas las luces"),
        ("nl", "is de verandalamp nog aan", "is de verandalamp aan"),
        ("nl", "staat het rolgordijn nog open", "staat het rolgordijn open"),
        ("nl", "doe de lamp nog een keer aan", "doe de lamp nog een keer aan"),
        # the kinds: off said "shut off", "hoover", a wash put on, how long is left, hours
        ("en", "shut off the garden valve", "turn off the garden valve"),
        ("en", "hoover the kitchen", "vacuum the kitchen"),
        ("en", "put the dishwasher on", "put the dishwasher on"),  # its own template
        ("en", "put a wash on", "put a wash on"),
        ("en", "how long until the washing machine finishes", "is the washing machine done"),
        ("en", "how long is left on the dishwasher", "is the dishwasher done"),
        ("en", "how long does it take", "how long does it take"),
        ("en", "boost the hot water for an hour", "boost the hot water for 60 minutes"),
        ("en", "boost it for half an hour", "boost it for 30 minutes"),
        ("en", "boost it for an hour and a half", "boost it for 90 minutes"),
        # an awning rolled out or in; lights put out; "did I leave ... open"
        ("en", "roll out the awning", "open the awning"),
        ("en", "put the awning out halfway", "open the awning halfway"),
        ("en", "retract the patio awning", "close the patio awning"),
        ("en", "roll the awning in", "close the awning"),
        ("en", "let the dog out", "let the dog out"),
        ("en", "pull the plug out", "pull the plug out"),
        ("en", "extend the warranty", "extend the warranty"),
        ("en", "bring the washing in", "bring the washing in"),
        ("en", "put the lights out", "turn off the lights"),
        ("en", "put out the kitchen light", "turn off the kitchen light"),
        ("en", "did I leave the garage open", "is the garage open"),
        ("en", "did someone leave the porch light on", "is the porch light on"),
        ("de", "zieh die Vorhänge zu", "schließe die Vorhänge"),
        ("de", "zieh die Vorhänge auf", "öffne die Vorhänge"),
        ("de", "fahr die Markise aus", "öffne die Markise"),
        ("de", "fahr die Markise ein", "schließe die Markise"),
        # all the way: open or closed
        ("de", "öffne das Rollo ganz", "öffne das Rollo"),
        ("de", "mach das Rollo ganz zu", "mach das Rollo zu"),
        ("de", "mach die Deckenlampe ganz hell", "mach die Deckenlampe ganz hell"),
        ("fr", "ouvre complètement le store", "ouvre le store"),
        ("fr", "ferme le store en grand", "ferme le store"),
        ("es", "abre la persiana del todo", "abre la persiana"),
        ("es", "cierra completamente la persiana", "cierra la persiana"),
        ("nl", "doe het rolgordijn helemaal open", "doe het rolgordijn open"),
        ("nl", "sluit het rolgordijn helemaal", "sluit het rolgordijn"),
        # a question asked to be checked: the question itself
        ("en", "check if the front door is locked", "is the front door locked"),
        ("en", "tell me whether the lights are on", "are the lights on"),
        ("en", "check the humidity in the bathroom", "what is the humidity in the bathroom"),
        ("en", "check the lights", "check the lights"),
        ("de", "schau mal ob die Haustür abgeschlossen ist", "ist die Haustür abgeschlossen"),
        ("fr", "vérifie si la porte est verrouillée", "est-ce que la porte est verrouillée"),
        ("es", "comprueba si la puerta está cerrada", "está cerrada la puerta"),
        ("nl", "kijk even of de voordeur op slot is", "is de voordeur op slot"),
    ],
)
def test_a_value_said_another_way_is_said_plainly(lang: str, said: str, plainly: str) -> None:
    assert said_plainly(said, lang) == plainly


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "turn on the kitchen light please and thank you"),
        ("en", "turn on the kitchen light and thanks"),
        ("en", "turn on the kitchen light, thanks a lot"),
        ("en", "turn on the kitchen light cheers"),
        ("en", "could you turn on the kitchen light when you get a chance"),
        ("de", "mach die Küchenlampe an, danke schön"),
        ("de", "mach die Küchenlampe an und danke"),
        ("fr", "allume la lampe de cuisine, merci beaucoup"),
        ("es", "enciende la luz de la cocina y gracias"),
        ("nl", "doe de keukenlamp aan, dank je wel"),
    ],
)
def test_thanks_after_a_command_are_left_out(lang: str, said: str) -> None:
    command = {
        "en": "turn on the kitchen light",
        "de": "mach die Küchenlampe an",
        "fr": "allume la lampe de cuisine",
        "es": "enciende la luz de la cocina",
        "nl": "doe de keukenlamp aan",
    }[lang]
    assert plain(said, lang) == command


# What the French, Spanish and Dutch rules look for: a half after a number, a lock said
# "ferme ... à clé", a part of the way, a percent said open or closed, a switch-on with a
# value.
_RULED = re.compile(
    r"\b(?:demie?|medio|half|halve)\b|à clé"
    r"|\b(?:quarts?|tiers|cuartos?|tercios?|mitad|kwart|derde|driekwart)\b"
    r"|(?:%|cent|ciento|procent) (?:ouverte?s?|fermée?s?|abiert[ao]s?|cerrad[ao]s?|open|geopend"
    r"|dicht|gesloten)$"
    r"|^(?:allumez?|enciend[ea]n?|prende|doe|zet) .+ (?:à|al|a|op|met|naar) \d"
    r"|\b(?:encore|toujours|sigue|siguen|nog)\b"
    r"|\b(?:complètement|entièrement|totalement|en grand|del todo|completamente|por completo"
    r"|helemaal)\b"
    r"|^(?:vérifiez?|regardez?|dis-moi|dites-moi|comprueba|compruebe|mira|mire|verifica"
    r"|verifique|dime|dígame|kijk|check|controleer)\b"
    r"|^(?:est-ce qu(?:e |')|ai-je |j'ai |on a )"
    r"|^(?:remonte|monte|lève|relève|soulève|descends|redescends|rabaisse|abaisse|levanta"
    r"|alza)\b"
    r"|^(?:trek|rol|haal|laat|zet|doe|draai) .+ (?:omhoog|op|naar boven|omlaag|neer"
    r"|naar beneden|zakken)$"
    # the eighteenth session's: a garage said for its door, an awning out or in, a value
    # or a half said with "monte / baisse", a fan at its slowest or fastest
    r"|^(?:ferme|ouvre) (?:le )?garage$|\b(?:bannes?|auvent|toldos?|luifels?|markies"
    r"|zonneluifels?)\b"
    r"|^(?:monte|remonte|baisse|rabaisse|augmente|diminue) .+ à \d"
    r"|à (?:moitié|mi-hauteur|mi-course|la moitié)$"
    r"|\bventilateurs?\b.* (?:au|à la) (?:minimum|maximum)"
    r"|^(?:rol|draai|klap|haal|zet) .*\bzonnescherm(?:en)? (?:uit|in)$"
    r"|^(?:sube|baja|aumenta|reduce) .+ (?:a|al|hasta) \d"
    r"|^doe .+ (?:feller|lichter|donkerder|minder fel)$"
    r"|^(?:augmente|monte|baisse|diminue) (?:un peu|légèrement|un petit peu) la",
    re.IGNORECASE,
)


def test_every_set_sentence_is_said_plainly_once_for_all() -> None:
    """Saying a sentence plainly twice changes nothing more (no rewrite feeds another)."""
    seen = 0
    for which in ("dev", *MULTI_LANGUAGE_SETS):
        for sentence in load_sentences(which):
            once = said_plainly(sentence.text, sentence.language)
            assert said_plainly(once, sentence.language) == once, sentence.text
            if sentence.language in ("fr", "es", "nl") and not _RULED.search(sentence.text):
                assert once == " ".join(sentence.text.split())  # no rule there
            seen += 1
    assert seen > 500


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "turn off the porch light in 10 minutes"),
        ("en", "switch on the sofa lamp for half an hour"),
        ("en", "turn on the kitchen light at 7 pm"),
        ("en", "open the blind at 6:30 am"),
        ("en", "lock the front door tonight"),
        ("de", "schalte das Licht in 5 Minuten aus"),
        ("de", "mach die Lampe um 7 Uhr an"),
        ("de", "mach die Stehlampe für eine Stunde an"),
        ("fr", "éteins la lumière dans une heure"),
        ("fr", "allume la lampe à 19 h"),
        ("es", "apaga la luz en 10 minutos"),
        ("es", "enciende la luz a las 7"),
        ("nl", "doe de lamp over 10 minuten uit"),
        ("nl", "doe de lamp om 7 uur aan"),
    ],
)
def test_a_time_said_is_heard(lang: str, text: str) -> None:
    assert said_later(text, lang)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "turn on the light in the kitchen"),
        ("en", "set the thermostat to 21"),
        ("en", "dim the lamp to 10 percent"),
        ("en", "set the blind at 50 percent"),
        ("de", "dreh die Heizung um 2 Grad hoch"),  # "um 2 Grad": by two degrees
        ("de", "stell das Rollo auf 40 Prozent"),
        ("fr", "mets le store à 50 %"),
        ("es", "enciende la luz y luego apaga el ventilador"),  # "luego": then
        ("nl", "zet de thermostaat om 2 graden hoger"),
    ],
)
def test_a_sentence_without_a_time_is_not_heard_as_later(lang: str, text: str) -> None:
    assert not said_later(text, lang)


# The words the rewrites look for, and some that are near them, to draw sentences from.
_PIECES = [
    *"up down to by a an one notch degree degrees half full at on in into mode set turn".split(),
    *"lock bump nudge crank brighten lower bring nice warm white cool heat auto 22 21.5".split(),
    *"percent % ° twenty hundred the lamp light dreh runter hoch auf mach Prozent".split(),
    *"in for at until tomorrow tonight minutes hours 7 pm o'clock Uhr dans heures".split(),
    "up to",
    "down to",
    "to half",
    "up a degree",
    "on cool at",
    "  ",
    "\u00a0",
    "\u0130",  # a capital dotted I: lower-cases to two characters
    "ß",
]
_SENTENCES = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=120).map(" ".join),
    # any code point: lone surrogates, NUL and other controls included
    st.text(st.characters(codec=None, exclude_categories=()), max_size=500),
).map(lambda s: s[:500])  # what SpokenCommand.CHECK lets through


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_SENTENCES, lang=st.sampled_from(["en", "de", "fr", "es", "nl", "it", ""]))
def test_any_sentence_is_put_plainly_without_failing_or_growing_much(text: str, lang: str) -> None:
    """Never raises; the result is single-spaced and at most about twice the sentence."""
    out = said_plainly(text, lang)
    assert isinstance(out, str)
    assert out == " ".join(out.split())
    assert len(out) <= 2 * len(text) + 20
    assert isinstance(said_later(text, lang), bool)


@pytest.mark.parametrize(
    "text",
    [
        "set " + "the lamp " * 55 + "to",  # a lazy run that never finds its end
        "set " + "x " * 240 + "to cool at",
        "set " + "to " * 165 + "cool at",
        "up to " * 83,
        "down " * 100,
        "to half " * 62,
        "a nice " * 71,
        "in " * 166,
        "at 7" + " pm" * 165,
        "1" * 500,
        "dreh " + "die Lampe " * 49 + "runter auf",
        # the eleventh session's rules: a lazy run before an anchored end
        "warm " + "x " * 247,
        "cool " + "down " * 99,
        "heat " + "up " * 165 + "by",
        "put " + "x " * 247 + "on",
        "are the lights in " + "x " * 239 + "on",
        "raise " + "x " * 245 + "halfway",
        "is " + "x " * 240 + "on or off",
        "ferme " + "x " * 245 + "à clé",
        "21 " + "et demi " * 60,
        "abre " + "la persiana " * 45 + "la mitad",  # the seventeenth session's rewrites
        "Rollo " * 80 + "halb auf",
        "dreh " + "die Heizung " * 40 + "auf 21 Grad",
        "put \ud800 on",  # a lone surrogate
    ],
)
def test_the_worst_sentences_are_put_plainly_quickly(text: str) -> None:
    """Long runs of the rewrites' own words cost well under a frame of speech each."""
    for lang in ("en", "de", "fr", "es", "nl"):
        started = time.perf_counter()
        for _ in range(5):
            said_plainly(text[:500], lang)
            said_later(text[:500], lang)
        assert (time.perf_counter() - started) / 5 < 0.02, lang


def test_a_name_that_holds_its_verb_still_says_what_to_do() -> None:
    """ "lock the front lock" says "lock" once more than the name "Front Lock" does."""
    heard = Reading(
        intent="HassTurnOn", values={"name": "Front Lock"}, texts={"name": "front lock"}, combo=""
    )
    assert not verbless(heard, "lock the front lock")
    assert not verbless(heard, "unlock the front lock")
    assert verbless(heard, "front lock")
    assert verbless(heard, "the front lock please")
    assert verbless(heard, "lock front")  # only the name's own words, in any order
