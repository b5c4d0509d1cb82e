"""The cluster catalogue: what the Matter SDK's cluster objects declare, asked by name or id.

``cluster_info`` answers the cluster maps, the generator and the command checks (ids,
attribute and command names, payload fields and their types, feature bits);
``device_type_name`` names a device type. The catalogue is data: ``data/catalogue.json``,
written from the pinned SDK by ``catalogue_dump`` and checked against it by the tests,
so the bridge never loads ``chip.clusters`` (~42 MB resident) to answer these questions.

A field's ``type`` is the JSON type spec described in ``catalogue_dump``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

CATALOGUE_PATH = Path(__file__).resolve().parent / "data" / "catalogue.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldInfo:
    """One field of a command payload or struct as the SDK declares it."""

    name: str
    type: Any
    optional: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CommandInfo:
    """A client→server command of a cluster."""

    name: str
    id: int
    fields: tuple[FieldInfo, ...]
    timed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterInfo:
    """Names and ids of one cluster."""

    id: int
    name: str
    attributes: Mapping[str, int]
    attribute_names: Mapping[int, str]
    commands: Mapping[str, CommandInfo]
    command_names: Mapping[int, str]
    features: Mapping[str, int]


def _fields(raw: list[Any]) -> tuple[FieldInfo, ...]:
    return tuple(FieldInfo(name=str(n), type=_freeze(t), optional=bool(o)) for n, t, o in raw)


def _freeze(spec: Any) -> Any:
    """Return a type spec with tuples for lists (hashable, never mutated)."""
    if isinstance(spec, list):
        return tuple(_freeze(s) for s in spec)
    return spec


def _make_cluster_info(raw: Mapping[str, Any]) -> ClusterInfo:
    attributes = {str(k): int(v) for k, v in raw["attributes"].items()}
    commands = {
        str(name): CommandInfo(
            name=str(name), id=int(c["id"]), fields=_fields(c["fields"]), timed=bool(c["timed"])
        )
        for name, c in raw["commands"].items()
    }
    return ClusterInfo(
        id=int(raw["id"]),
        name=str(raw["name"]),
        attributes=attributes,
        attribute_names={v: k for k, v in attributes.items()},
        commands=commands,
        command_names={c.id: n for n, c in commands.items()},
        features={str(k): int(v) for k, v in raw["features"].items()},
    )


@dataclass(frozen=True, slots=True)
class _Catalogue:
    by_id: dict[int, ClusterInfo]
    by_name: dict[str, ClusterInfo]
    structs: dict[str, tuple[FieldInfo, ...]]
    device_types: dict[int, str]
    sdk_version: str


@lru_cache(maxsize=1)
def _catalogue() -> _Catalogue:
    doc = orjson.loads(CATALOGUE_PATH.read_bytes())
    by_id: dict[int, ClusterInfo] = {}
    by_name: dict[str, ClusterInfo] = {}
    for raw in doc["clusters"]:
        info = _make_cluster_info(raw)
        by_id[info.id] = info
        by_name[info.name] = info
    return _Catalogue(
        by_id=by_id,
        by_name=by_name,
        structs={str(k): _fields(v) for k, v in doc["structs"].items()},
        device_types={int(k): str(v) for k, v in doc["device_types"].items()},
        sdk_version=str(doc["sdk"]["version"]),
    )


def cluster_info(cluster: str | int) -> ClusterInfo | None:
    """Return the catalogue entry for a cluster name or id, or ``None`` if unknown."""
    found = _catalogue()
    if isinstance(cluster, int):
        return found.by_id.get(cluster)
    return found.by_name.get(cluster)


def struct_fields(name: str) -> tuple[FieldInfo, ...]:
    """Return the fields of a struct named by a ``["struct", name]`` type spec."""
    return _catalogue().structs[name]


def device_type_name(device_type_id: int) -> str | None:
    """Return the SDK's name of a device type id (``DimmableLight``) or ``None``."""
    return _catalogue().device_types.get(device_type_id)


def sdk_version() -> str:
    """Return the version of the SDK package the catalogue was written from."""
    return _catalogue().sdk_version
