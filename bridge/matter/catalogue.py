"""The cluster catalogue: what the SDK's ``chip.clusters`` declares, asked by name or id.

``cluster_info`` answers the cluster maps and the generator (ids, attribute and command
names and fields, feature bits); ``device_type_name`` names a device type. It is the
only place besides ``commands`` that loads the SDK's cluster objects.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from chip.clusters import ClusterObjects
from chip.clusters import Objects as Clusters
from matter_server.client.models.device_types import ALL_TYPES as DEVICE_TYPES


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldInfo:
    """One field of a command payload as the SDK declares it."""

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
    """Names and ids of one cluster from ``chip.clusters``."""

    id: int
    name: str
    attributes: Mapping[str, int]
    attribute_names: Mapping[int, str]
    commands: Mapping[str, CommandInfo]
    command_names: Mapping[int, str]
    features: Mapping[str, int]


def _public(namespace: Any) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in vars(namespace).items() if not k.startswith("_")]


def field_optional(hint: Any) -> bool:
    """Return whether a payload field's type hint allows leaving it out."""
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in (
        typing.get_args(hint)
    )


def _make_cluster_info(cls: Any) -> ClusterInfo:
    attributes: dict[str, int] = {}
    for name, attr in _public(getattr(cls, "Attributes", object)):
        attr_id = getattr(attr, "attribute_id", None)
        if isinstance(attr_id, int):
            attributes[name] = attr_id
    commands: dict[str, CommandInfo] = {}
    for name, cmd in _public(getattr(cls, "Commands", object)):
        if not isinstance(cmd, type) or not getattr(cmd, "is_client", False):
            continue
        cmd_any: Any = cmd
        hints = typing.get_type_hints(cmd)
        fields = tuple(
            FieldInfo(
                name=f.Label,
                type=hints.get(f.Label, f.Type),
                optional=field_optional(hints.get(f.Label, f.Type)),
            )
            for f in cmd_any.descriptor.Fields
        )
        commands[name] = CommandInfo(
            name=name,
            id=int(cmd_any.command_id),
            fields=fields,
            timed=bool(getattr(cmd, "must_use_timed_invoke", False)),
        )
    features: dict[str, int] = {}
    bitmaps = getattr(cls, "Bitmaps", None)
    feature_enum = getattr(bitmaps, "Feature", None) if bitmaps is not None else None
    if feature_enum is not None:
        for member in feature_enum:
            features[member.name.removeprefix("k")] = int(member.value)
    return ClusterInfo(
        id=int(cls.id),
        name=cls.__name__,
        attributes=attributes,
        attribute_names={v: k for k, v in attributes.items()},
        commands=commands,
        command_names={c.id: n for n, c in commands.items()},
        features=features,
    )


@lru_cache(maxsize=1)
def _catalogue() -> tuple[dict[int, ClusterInfo], dict[str, ClusterInfo]]:
    by_id: dict[int, ClusterInfo] = {}
    by_name: dict[str, ClusterInfo] = {}
    for cluster_id, cls in ClusterObjects.ALL_CLUSTERS.items():
        if getattr(Clusters, cls.__name__, None) is not cls:
            continue
        info = _make_cluster_info(cls)
        by_id[int(cluster_id)] = info
        by_name[info.name] = info
    return by_id, by_name


def cluster_info(cluster: str | int) -> ClusterInfo | None:
    """Return the catalogue entry for a cluster name or id, or ``None`` if unknown."""
    by_id, by_name = _catalogue()
    if isinstance(cluster, int):
        return by_id.get(cluster)
    return by_name.get(cluster)


def device_type_name(device_type_id: int) -> str | None:
    """Return the SDK's name of a device type id (``DimmableLight``) or ``None``."""
    found = DEVICE_TYPES.get(device_type_id)
    return found.__name__ if found is not None else None


# --- building commands from payloads -----------------------------------------------
