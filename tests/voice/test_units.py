"""The home's units: configured, else from the thermostats' display mode, else the locale."""

from __future__ import annotations

from bridge.matter import Device
from bridge.voice.units import explicit_unit, home_units, to_celsius


def thermostat(display_mode: int | None) -> Device:
    # Thermostat User Interface Configuration 0x0204, TemperatureDisplayMode 0x0000:
    # 0 Celsius, 1 Fahrenheit (Matter 1.4 application clusters 4.5.6.1).
    clusters = {
        0x0201: {0: 2100},
        **({0x0204: {0: display_mode}} if display_mode is not None else {}),
    }
    return Device(
        id="1-1",
        node_id=1,
        endpoint_id=1,
        name="T",
        slug="t",
        room=None,
        kind="thermostat",
        kind_label="Thermostat",
        device_types=(0x0301,),
        clusters=clusters,
        available=True,
    )


def test_configured_units_win() -> None:
    assert home_units("metric", [thermostat(1)], {"LANG": "en_US.UTF-8"}) == "metric"
    assert home_units("imperial", [thermostat(0)], {}) == "imperial"


def test_auto_reads_the_thermostats_then_the_locale() -> None:
    assert home_units("auto", [thermostat(0), thermostat(1)], {}) == "imperial"
    assert home_units("auto", [thermostat(0)], {"LANG": "en_US.UTF-8"}) == "metric"
    assert home_units("auto", [thermostat(None)], {"LANG": "en_US.UTF-8"}) == "imperial"
    assert home_units("auto", [], {"LC_ALL": "de_DE.UTF-8", "LANG": "en_US"}) == "metric"
    assert home_units("auto", [], {"LANG": "C.UTF-8"}) == "metric"


def test_a_said_unit_is_taken_out() -> None:
    assert explicit_unit("set it to 68 degrees fahrenheit") == ("set it to 68 degrees", "imperial")
    assert explicit_unit("stelle es auf 21 Grad Celsius") == ("stelle es auf 21 Grad", "metric")
    assert explicit_unit("set it to 72°F") == ("set it to 72", "imperial")
    assert explicit_unit("turn on the fan") == ("turn on the fan", None)
    # one letter after the number or after the word for degrees
    assert explicit_unit("set it to 68 F") == ("set it to 68", "imperial")
    assert explicit_unit("set it to 68f please") == ("set it to 68 please", "imperial")
    assert explicit_unit("set it to 68 degrees F") == ("set it to 68 degrees", "imperial")
    assert explicit_unit("stelle es auf 21 Grad C") == ("stelle es auf 21 Grad", "metric")
    assert explicit_unit("pon 20 grados c") == ("pon 20 grados", "metric")
    # but not a word that starts with the letter, nor a letter that is not after a number
    assert explicit_unit("il fait 20 c'est bien") == ("il fait 20 c'est bien", None)
    assert explicit_unit("set 3 cups") == ("set 3 cups", None)
    assert explicit_unit("turn the f light on") == ("turn the f light on", None)
    # the unit an answer is asked in: "in fahrenheit" goes, "in" and all
    assert explicit_unit("how warm is it in the hall in fahrenheit") == (
        "how warm is it in the hall",
        "imperial",
    )
    assert explicit_unit("what's the temperature in degrees celsius") == (
        "what's the temperature",
        "metric",
    )
    assert explicit_unit("wie warm ist es im Bad in Fahrenheit") == (
        "wie warm ist es im Bad",
        "imperial",
    )
    assert explicit_unit("quelle température fait-il en degrés Fahrenheit") == (
        "quelle température fait-il",
        "imperial",
    )
    # a room or a word that only starts like a unit stays
    assert explicit_unit("make it 68 fahrenheit in the hall") == (
        "make it 68 in the hall",
        "imperial",
    )
    assert explicit_unit("turn on the lights in celsiusstraat") == (
        "turn on the lights in celsiusstraat",
        None,
    )
    assert to_celsius(72, "imperial") == 22.2  # (72 - 32) x 5/9
