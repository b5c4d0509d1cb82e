"""The shipped cluster catalogue is the SDK's, and its command payloads are the SDK client's.

The bridge reads ``bridge/matter/spec/data/catalogue.json`` instead of importing
``chip.clusters``. These tests regenerate it from the installed SDK (it must not drift),
and check, for every client command of every cluster, that a payload ``build_command``
accepts is parsed by the SDK exactly as the controller parses it and is the very payload
the SDK client would have sent for the same command object.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matter_server.common.helpers.json import json_dumps
from matter_server.common.helpers.util import dataclass_to_dict

from bridge.errors import InvalidParamsError
from bridge.matter.spec import catalogue_dump
from bridge.matter.spec.catalogue import (
    CATALOGUE_PATH,
    FieldInfo,
    _catalogue,
    cluster_info,
    device_type_name,
    struct_fields,
)
from bridge.matter.spec.commands import build_command
from tests.matter.sdk import sdk_command

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = sorted(
    (info.name, name) for info in _catalogue().by_id.values() for name in info.commands
)


def test_committed_catalogue_is_the_installed_sdks() -> None:
    fresh = catalogue_dump.render(catalogue_dump.dump())
    assert CATALOGUE_PATH.read_text(encoding="utf-8") == fresh, (
        "bridge/matter/spec/data/catalogue.json is stale: "
        "python -m bridge.matter.spec.catalogue_dump > bridge/matter/spec/data/catalogue.json"
    )


def test_catalogue_answers_like_the_sdk() -> None:
    from chip.clusters import ClusterObjects

    assert len(COMMANDS) > 300
    for cluster_id, cls in ClusterObjects.ALL_CLUSTERS.items():
        info = cluster_info(int(cluster_id))
        if info is None:
            continue
        assert info.name == cls.__name__
        assert cluster_info(info.name) is info
        for name, attr_id in info.attributes.items():
            assert getattr(cls.Attributes, name).attribute_id == attr_id
        for name, command in info.commands.items():
            assert getattr(cls.Commands, name).command_id == command.id
    assert cluster_info("OnOff").commands["Toggle"].id == 2  # type: ignore[union-attr]
    assert cluster_info("DoorLock").commands["UnlockDoor"].timed  # type: ignore[union-attr]
    assert device_type_name(0x0101) == "DimmableLight"
    assert device_type_name(0xFFFF_FFFF) is None


def test_running_bridge_loads_no_sdk() -> None:
    """Building the service, the Matter component and a catalogue answer imports no SDK."""
    code = (
        "import sys, bridge.service, bridge.matter.component, bridge.matter.controller.adapter\n"
        "from bridge.matter.spec.commands import build_command\n"
        "build_command('OnOff', 'Toggle', {})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('chip', 'matter_server')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip() == "[]"


# --- payloads ----------------------------------------------------------------------------


def _value(spec: Any, depth: int) -> st.SearchStrategy[Any]:
    if isinstance(spec, str):
        return {
            "bool": st.booleans(),
            "str": st.text(max_size=6),
            "bytes": st.text(max_size=6),
            "float": st.floats(allow_nan=False, allow_infinity=False, width=32),
            "int": st.integers(-(2**31), 2**31 - 1),
            "uint": st.integers(0, 2**32 - 1),
            "any": st.integers(0, 9),
        }[spec]
    kind = spec[0]
    if kind == "list":
        return st.lists(_value(spec[1], depth + 1), max_size=2 if depth < 2 else 0)
    if kind == "enum":
        return st.sampled_from(spec[2])
    if kind == "range":
        return st.integers(spec[2], spec[3])
    if kind == "flags":
        return st.integers(0, spec[2]).map(lambda v, m=spec[2]: v & m)
    if kind == "struct":
        return _struct(struct_fields(spec[1]), depth + 1)
    if kind == "union":
        _, nullable, optional, options = spec
        choices = [_value(o, depth) for o in options]
        if nullable or optional:
            choices.append(st.none())
        return st.one_of(choices)
    raise AssertionError(f"no strategy for {spec}")


def _struct(fields: tuple[FieldInfo, ...], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    required = {f.name: _value(f.type, depth) for f in fields if not f.optional}
    optional = {f.name: _value(f.type, depth) for f in fields if f.optional and depth < 3}
    return st.fixed_dictionaries(required, optional=optional)


def _sent_by_sdk_client(obj: Any) -> Any:
    """The payload the SDK client sends for a command object (``send_device_command``)."""
    return orjson.loads(json_dumps(dataclass_to_dict(obj)))


def _same(ours: Any, sdk: Any) -> bool:
    if isinstance(ours, dict):
        return (
            isinstance(sdk, dict)
            and all(_same(ours[k], sdk[k]) if k in ours else sdk[k] is None for k in sdk)
            and set(ours) <= set(sdk)
        )
    if isinstance(ours, list):
        return (
            isinstance(sdk, list)
            and len(ours) == len(sdk)
            and all(_same(a, b) for a, b in zip(ours, sdk, strict=True))
        )
    return bool(ours == sdk and type(ours) is type(sdk))


def _payload_strategy(cluster: str, command: str) -> st.SearchStrategy[dict[str, Any]]:
    info = cluster_info(cluster)
    assert info is not None
    return _struct(info.commands[command].fields, 0)


def _sendable(cluster: str, command: str) -> bool:
    info = cluster_info(cluster)
    assert info is not None
    try:
        _smallest(info.commands[command].fields)
    except IndexError:  # a required enum without values
        return False
    return True


def _smallest(fields: tuple[FieldInfo, ...]) -> dict[str, Any]:
    return {f.name: _first(f.type) for f in fields if not f.optional}


def _first(spec: Any) -> Any:
    if isinstance(spec, str):
        return {"bool": False, "str": "", "bytes": "", "float": 0.0, "int": 0, "uint": 0, "any": 0}[
            spec
        ]
    kind = spec[0]
    if kind == "list":
        return []
    if kind == "enum":
        return spec[2][0]
    if kind == "range":
        return spec[2]
    if kind == "flags":
        return 0
    if kind == "struct":
        return _smallest(struct_fields(spec[1]))
    _, nullable, optional, options = spec
    return None if nullable or optional else _first(options[0])


SENDABLE = frozenset(c for c in COMMANDS if _sendable(*c))


@pytest.mark.parametrize("cluster", sorted({c for c, _ in SENDABLE}))
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_accepted_payloads_are_what_the_sdk_client_sends(cluster: str, data: Any) -> None:
    info = cluster_info(cluster)
    assert info is not None
    sendable = [c for c in sorted(info.commands) if (cluster, c) in SENDABLE]
    command = data.draw(st.sampled_from(sendable))
    payload = data.draw(_payload_strategy(cluster, command))
    wire = build_command(cluster, command, payload)
    obj = sdk_command(wire)  # the controller's parse of what the bridge sends
    assert _same(wire.payload, _sent_by_sdk_client(obj)), (payload, wire.payload)


def test_every_command_builds_and_parses_with_its_smallest_payload() -> None:
    """Every command builds, but those with a required member-less enum (never sendable)."""
    assert len(SENDABLE) > 0.9 * len(COMMANDS)
    for cluster, command in COMMANDS:
        info = cluster_info(cluster)
        assert info is not None
        if (cluster, command) not in SENDABLE:
            # The SDK types such a field as a generic ``enum8`` with no member but
            # kUnknownEnumValue; the bridge accepts no value for it (as before).
            with pytest.raises(InvalidParamsError, match=r"must be one of \[\]"):
                build_command(cluster, command, {f.name: 0 for f in info.commands[command].fields})
            continue
        payload = _smallest(info.commands[command].fields)
        wire = build_command(cluster, command, payload)
        assert _same(wire.payload, _sent_by_sdk_client(sdk_command(wire))), (cluster, command)


@pytest.mark.parametrize(
    ("cluster", "command", "payload", "message"),
    [
        ("OnOff", "Toggle", {"x": 1}, "unknown field"),
        (
            "LevelControl",
            "MoveToLevel",
            {"level": -1, "transitionTime": None, "optionsMask": 0, "optionsOverride": 0},
            "level must not be negative",
        ),
        (
            "LevelControl",
            "MoveToLevel",
            {"level": True, "transitionTime": None, "optionsMask": 0, "optionsOverride": 0},
            "level must be an integer",
        ),
        (
            "LevelControl",
            "MoveToLevel",
            {"level": 1, "optionsMask": 0, "optionsOverride": 0},
            "transitionTime is required",
        ),
        (
            "LevelControl",
            "MoveToLevel",
            {"level": 1, "transitionTime": None, "optionsMask": 1 << 20, "optionsOverride": 0},
            "bitmap of OptionsBitmap",
        ),
        ("DoorLock", "UnlockDoor", {"PINCode": 4321}, "PINCode must be a string"),
        ("Thermostat", "SetpointRaiseLower", {"mode": 77, "amount": 1}, "must be one of"),
        ("Identify", "Identify", {"identifyTime": 1.5}, "identifyTime must be an integer"),
        (
            "DoorLock",
            "SetCredential",
            {
                "operationType": 0,
                "credential": [1],
                "credentialData": "",
                "userIndex": None,
                "userStatus": None,
                "userType": None,
            },
            "credential must be an object",
        ),
        (
            "OnOff",
            "OffWithEffect",
            {"effectIdentifier": 0, "effectVariant": 256},
            r"effectVariant must be an integer from 0 to 255 \(enum8\)",
        ),
        ("NoSuchCluster", "On", {}, "unknown Matter cluster"),
        ("OnOff", "Onn", {}, "has no command 'Onn'"),
    ],
)
def test_wrong_payloads_are_invalid_params(
    cluster: str, command: str, payload: Any, message: str
) -> None:
    with pytest.raises(InvalidParamsError, match=message) as err:
        build_command(cluster, command, payload)
    assert err.value.code == "INVALID_PARAMS"


def test_a_generic_enum_takes_any_value_of_its_width() -> None:
    """``OffWithEffect``'s variant is an SDK ``enum8`` without named members."""
    assert len(SENDABLE) == len(COMMANDS)
    wire = build_command("OnOff", "OffWithEffect", {"effectIdentifier": 1, "effectVariant": 7})
    assert sdk_command(wire).effectVariant == 7
