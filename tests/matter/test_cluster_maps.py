"""Cluster maps: the shipped ones load; bad files fail naming file, row and reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bridge.errors import ConfigInvalidError
from bridge.matter.tools.cluster_maps import DEFAULT_DIRECTORY, load_cluster_maps


def test_shipped_maps_load() -> None:
    maps = {m.cluster.name: m for m in load_cluster_maps()}
    assert sorted(maps) == [
        "ActivatedCarbonFilterMonitoring",
        "AirQuality",
        "BooleanState",
        "CarbonDioxideConcentrationMeasurement",
        "CarbonMonoxideConcentrationMeasurement",
        "Chime",
        "ClosureControl",
        "ClosureDimension",
        "ColorControl",
        "DishwasherMode",
        "DoorLock",
        "ElectricalEnergyMeasurement",
        "ElectricalPowerMeasurement",
        "EnergyEvse",
        "EnergyEvseMode",
        "FanControl",
        "FlowMeasurement",
        "FormaldehydeConcentrationMeasurement",
        "HepaFilterMonitoring",
        "IlluminanceMeasurement",
        "LaundryWasherMode",
        "LevelControl",
        "MicrowaveOvenControl",
        "MicrowaveOvenMode",
        "ModeSelect",
        "NitrogenDioxideConcentrationMeasurement",
        "OccupancySensing",
        "OnOff",
        "OperationalState",
        "OvenCavityOperationalState",
        "OvenMode",
        "OzoneConcentrationMeasurement",
        "Pm10ConcentrationMeasurement",
        "Pm1ConcentrationMeasurement",
        "Pm25ConcentrationMeasurement",
        "PowerSource",
        "PressureMeasurement",
        "PumpConfigurationAndControl",
        "RadonConcentrationMeasurement",
        "RefrigeratorAndTemperatureControlledCabinetMode",
        "RelativeHumidityMeasurement",
        "RvcCleanMode",
        "RvcOperationalState",
        "RvcRunMode",
        "ServiceArea",
        "SmokeCoAlarm",
        "SoilMeasurement",
        "TemperatureControl",
        "TemperatureMeasurement",
        "Thermostat",
        "TotalVolatileOrganicCompoundsConcentrationMeasurement",
        "ValveConfigurationAndControl",
        "WaterHeaterManagement",
        "WaterHeaterMode",
        "WindowCovering",
    ]
    unlock = next(r for r in maps["DoorLock"].rows if r.suffix == "unlock")
    assert (unlock.dangerous, unlock.timed, unlock.command_id) == (True, True, 1)
    # Opening a garage door or gate lets people in, like unlocking; Matter times MoveTo
    # (ClosureControl command 1) and EnableCharging (EnergyEvse command 2).
    opening = next(r for r in maps["ClosureControl"].rows if r.suffix == "open")
    assert (opening.dangerous, opening.timed, opening.command_id) == (True, True, 1)
    charging = next(r for r in maps["EnergyEvse"].rows if r.suffix == "enable_charging")
    assert (charging.dangerous, charging.timed, charging.command_id) == (False, True, 2)


def write_map(tmp_path: Path, text: str) -> Path:
    shutil.copy(DEFAULT_DIRECTORY / "on_off.yaml", tmp_path / "on_off.yaml")
    (tmp_path / "zz_bad.yaml").write_text(text)
    return tmp_path


ROW = """cluster: LevelControl
rows:
  - suffix: ok_row
    description: "Set the brightness of {name}."
    category: acting
    command: MoveToLevelWithOnOff
    convert: level_percent
  - suffix: bad
    description: "Set the brightness of {name}."
    category: acting
"""


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (
            "    command: MoveToLevl\n    convert: none\n",
            "zz_bad.yaml row 2 (bad): cluster LevelControl has no command 'MoveToLevl'",
        ),
        (
            "    command: MoveToLevel\n    convert: magic\n",
            "zz_bad.yaml row 2 (bad): unknown convert 'magic'",
        ),
        (
            "    command: MoveToLevel\n    convert: none\n    requires: {features: [Sparkle]}\n",
            "zz_bad.yaml row 2 (bad): cluster LevelControl has no feature 'Sparkle'",
        ),
        ("    convert: none\n", "zz_bad.yaml row 2: "),
        (
            "    command: MoveToLevel\n    convert: none\n    dangerous: true\n",
            "zz_bad.yaml row 2 (bad): a dangerous row needs a confirmation message",
        ),
        ("    command: MoveToLevel\n    convert: none\n    category: maybe\n", "zz_bad.yaml"),
    ],
)
def test_bad_rows_name_file_row_and_reason(tmp_path: Path, tail: str, message: str) -> None:
    folder = write_map(tmp_path, ROW + tail)
    with pytest.raises(ConfigInvalidError) as info:
        load_cluster_maps(folder)
    assert info.value.message.startswith(message)
    assert info.value.details["file"] == "zz_bad.yaml"


def test_unknown_cluster_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigInvalidError, match=r"zz_bad\.yaml: unknown Matter cluster 'Nope'"):
        load_cluster_maps(write_map(tmp_path, "cluster: Nope\n"))
    with pytest.raises(ConfigInvalidError, match=r"zz_bad\.yaml: not valid YAML"):
        load_cluster_maps(write_map(tmp_path, "cluster: [\n"))
