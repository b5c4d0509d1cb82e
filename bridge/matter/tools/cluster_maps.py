"""Cluster maps: the YAML rows that say which tools a Matter cluster yields.

``load_cluster_maps(directory)`` reads every ``*.yaml`` file (one cluster each), checks it
against ``cluster_map.schema.json`` and then against the cluster catalogue (cluster, command,
attribute and feature names must exist) and the converter registry, and returns frozen
``ClusterMap``s. Any problem raises ``ConfigInvalidError`` naming the file, the row and the
reason, so a bad map fails start-up instead of producing wrong tools.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from bridge.errors import ConfigInvalidError
from bridge.matter.spec.catalogue import ClusterInfo, cluster_info


def _shipped_maps() -> Path:
    """Return the top-level ``cluster_maps/`` folder: the wheel's package data or the checkout's."""
    spec = importlib.util.find_spec("cluster_maps")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    # An editable install made before the folder became package data maps only `bridge`.
    return Path(__file__).resolve().parents[3] / "cluster_maps"


DEFAULT_DIRECTORY = _shipped_maps()
_SCHEMA_PATH = Path(__file__).with_name("cluster_map.schema.json")


@dataclass(frozen=True, slots=True, kw_only=True)
class Requirement:
    """What a device must offer for a row to apply (ids resolved from names)."""

    attributes: tuple[int, ...] = ()
    features: int = 0
    any_features: int = 0
    absent_features: int = 0
    accepted_commands: tuple[int, ...] = ()
    device_types: tuple[int, ...] = ()
    absent_device_types: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MapRow:
    """One tool template: suffix, description, the Matter request and its conversion."""

    file: str
    number: int
    suffix: str
    description: str
    category: str
    command: str | None
    command_id: int | None
    write: str | None
    write_id: int | None
    requires: Requirement
    parameters: Mapping[str, Any]
    convert: str
    payload: Mapping[str, Any]
    dangerous: bool = False
    confirmation: str | None = None
    idempotent: bool = True
    timed: bool = False
    tags: tuple[str, ...] = ()
    secret_params: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StateField:
    """One value the device's state tool reports, read from attributes and converted."""

    file: str
    number: int
    field: str
    attributes: tuple[str, ...]
    attribute_ids: tuple[int, ...]
    convert: str
    sensor: str | None
    requires: Requirement
    description: str = ""
    # Describes a change under way (``moving``, a target): in the state only while the
    # device is moving; several clusters may report the same such field.
    motion: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterMap:
    """Every row and state field of one cluster."""

    file: str
    cluster: ClusterInfo
    rows: tuple[MapRow, ...] = ()
    state: tuple[StateField, ...] = field(default_factory=tuple)


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(_SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _where(path: Any, file: str) -> str:
    parts = list(path)
    if len(parts) >= 2 and parts[0] in ("rows", "state") and isinstance(parts[1], int):
        rest = "/".join(str(p) for p in parts[2:])
        return f"{file} {parts[0][:-1] if parts[0] == 'rows' else 'state'} {parts[1] + 1}" + (
            f" ({rest})" if rest else ""
        )
    return f"{file} ({'/'.join(str(p) for p in parts) or 'top level'})"


def load_cluster_maps(
    directory: Path | str | None = None,
    *,
    converters: frozenset[str] | None = None,
    state_converters: frozenset[str] | None = None,
) -> list[ClusterMap]:
    """Load and check every ``*.yaml`` map in ``directory``; raise ``ConfigInvalidError``."""
    from bridge.matter.tools import kind_actions as actions  # every converter, all kinds

    converters = converters if converters is not None else frozenset(actions.CONVERTERS)
    state_converters = (
        state_converters if state_converters is not None else frozenset(actions.STATE_CONVERTERS)
    )
    folder = Path(directory) if directory is not None else DEFAULT_DIRECTORY
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise ConfigInvalidError(
            f"no cluster maps (*.yaml) in {folder}", {"directory": str(folder)}
        )
    maps: list[ClusterMap] = []
    seen: dict[int, str] = {}
    for path in files:
        cmap = load_cluster_map(path, converters=converters, state_converters=state_converters)
        if cmap.cluster.id in seen:
            raise ConfigInvalidError(
                f"{path.name}: cluster {cmap.cluster.name} is already mapped in "
                f"{seen[cmap.cluster.id]}",
                {"file": path.name},
            )
        seen[cmap.cluster.id] = path.name
        maps.append(cmap)
    return maps


def load_cluster_map(
    path: Path, *, converters: frozenset[str], state_converters: frozenset[str]
) -> ClusterMap:
    """Load one map file; raise ``ConfigInvalidError`` naming the file, row and reason."""
    name = path.name
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigInvalidError(f"{name}: cannot read: {err.strerror}", {"file": name}) from err
    except yaml.YAMLError as err:
        raise ConfigInvalidError(f"{name}: not valid YAML: {err}", {"file": name}) from err
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = _where(first.absolute_path, name)
        raise ConfigInvalidError(
            f"{where}: {first.message}", {"file": name, "path": list(first.absolute_path)}
        )
    info = cluster_info(doc["cluster"])
    if info is None:
        raise ConfigInvalidError(
            f"{name}: unknown Matter cluster '{doc['cluster']}'", {"file": name}
        )
    rows = tuple(
        _row(info, raw, name, i + 1, converters) for i, raw in enumerate(doc.get("rows", []))
    )
    state = tuple(
        _state(info, raw, name, i + 1, state_converters)
        for i, raw in enumerate(doc.get("state", []))
    )
    return ClusterMap(file=name, cluster=info, rows=rows, state=state)


def _fail(file: str, kind: str, number: int, label: str, reason: str) -> ConfigInvalidError:
    return ConfigInvalidError(
        f"{file} {kind} {number} ({label}): {reason}", {"file": file, kind: number}
    )


def _requirement(info: ClusterInfo, raw: Mapping[str, Any], fail: Any) -> Requirement:
    def attrs(names: list[str]) -> tuple[int, ...]:
        out = []
        for n in names:
            if n not in info.attributes:
                raise fail(f"cluster {info.name} has no attribute '{n}'")
            out.append(info.attributes[n])
        return tuple(out)

    def bits(names: list[str]) -> int:
        value = 0
        for n in names:
            if n not in info.features:
                raise fail(
                    f"cluster {info.name} has no feature '{n}' (known: "
                    f"{', '.join(sorted(info.features))})"
                )
            value |= info.features[n]
        return value

    commands = []
    for n in raw.get("accepted_commands", []):
        if n not in info.commands:
            raise fail(f"cluster {info.name} has no command '{n}'")
        commands.append(info.commands[n].id)
    return Requirement(
        attributes=attrs(raw.get("attributes", [])),
        features=bits(raw.get("features", [])),
        any_features=bits(raw.get("any_features", [])),
        absent_features=bits(raw.get("absent_features", [])),
        accepted_commands=tuple(commands),
        device_types=tuple(raw.get("device_types", [])),
        absent_device_types=tuple(raw.get("absent_device_types", [])),
    )


def _row(
    info: ClusterInfo, raw: Mapping[str, Any], file: str, number: int, converters: frozenset[str]
) -> MapRow:
    def fail(reason: str) -> ConfigInvalidError:
        return _fail(file, "row", number, raw["suffix"], reason)

    command = raw.get("command")
    write = raw.get("write")
    command_id = write_id = None
    timed = False
    if command is not None:
        cmd = info.commands.get(command)
        if cmd is None:
            raise fail(f"cluster {info.name} has no command '{command}'")
        command_id, timed = cmd.id, cmd.timed
    if write is not None:
        if write not in info.attributes:
            raise fail(f"cluster {info.name} has no attribute '{write}'")
        write_id = info.attributes[write]
    if raw["convert"] not in converters:
        raise fail(f"unknown convert '{raw['convert']}' (known: {', '.join(sorted(converters))})")
    parameters = raw.get(
        "parameters", {"type": "object", "properties": {}, "additionalProperties": False}
    )
    try:
        jsonschema.Draft202012Validator.check_schema(parameters)
    except jsonschema.SchemaError as err:
        raise fail(f"parameters are not a valid JSON Schema: {err.message}") from err
    if parameters.get("type") != "object":
        raise fail("parameters must be a JSON Schema of type 'object'")
    if raw.get("dangerous") and not raw.get("confirmation"):
        raise fail("a dangerous row needs a confirmation message")
    secret = tuple(raw.get("secret_params", []))
    for name in secret:
        if name not in parameters.get("properties", {}):
            raise fail(f"secret parameter '{name}' is not one of the row's parameters")
    return MapRow(
        file=file,
        number=number,
        suffix=raw["suffix"],
        description=raw["description"],
        category=raw["category"],
        command=command,
        command_id=command_id,
        write=write,
        write_id=write_id,
        requires=_requirement(info, raw.get("requires", {}), fail),
        parameters=parameters,
        convert=raw["convert"],
        payload=dict(raw.get("payload", {})),
        dangerous=bool(raw.get("dangerous", False)),
        confirmation=raw.get("confirmation"),
        idempotent=bool(raw.get("idempotent", True)),
        timed=timed,
        tags=tuple(raw.get("tags", [])),
        secret_params=secret,
    )


def _state(
    info: ClusterInfo, raw: Mapping[str, Any], file: str, number: int, converters: frozenset[str]
) -> StateField:
    def fail(reason: str) -> ConfigInvalidError:
        return _fail(file, "state", number, raw["field"], reason)

    ids = []
    for n in raw["attributes"]:
        if n not in info.attributes:
            raise fail(f"cluster {info.name} has no attribute '{n}'")
        ids.append(info.attributes[n])
    if raw["convert"] not in converters:
        raise fail(f"unknown convert '{raw['convert']}' (known: {', '.join(sorted(converters))})")
    return StateField(
        file=file,
        number=number,
        field=raw["field"],
        attributes=tuple(raw["attributes"]),
        attribute_ids=tuple(ids),
        convert=raw["convert"],
        sensor=raw.get("sensor"),
        requires=_requirement(info, raw.get("requires", {}), fail),
        description=raw.get("description", ""),
        motion=bool(raw.get("motion", False)),
    )
