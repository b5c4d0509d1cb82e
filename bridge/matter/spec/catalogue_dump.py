"""Write the cluster catalogue (``data/catalogue.json``) from the Matter SDK's cluster objects.

A maintainer's tool, never imported by the running bridge: the bridge reads the JSON
file and so never loads ``chip.clusters`` (~42 MB resident). Run it after changing the
pinned ``matter-python-client``::

    python -m bridge.matter.spec.catalogue_dump > bridge/matter/spec/data/catalogue.json

``tests/matter/test_catalogue_data.py`` regenerates the catalogue from the installed SDK
and fails when the committed file differs, so the two cannot drift apart.

A field type is written as a JSON value ``catalogue.py`` interprets:
``"bool" | "str" | "bytes" | "float" | "int" | "uint" | "any"``,
``["list", T]``, ``["enum", name, [values]]``, ``["flags", name, mask]``,
``["range", name, low, high]`` (a generic ``enum8``/``enum16`` without named members),
``["struct", qualified name]`` (fields in the file's ``structs`` table),
``["union", nullable, optional, [T, ...]]`` and ``["unsupported", text]``.
"""

from __future__ import annotations

import enum
import importlib.metadata
import json
import re
import sys
import types
import typing
from typing import Any

SDK_DISTRIBUTION = "matter-python-client"


def _public(namespace: Any) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in vars(namespace).items() if not k.startswith("_")]


class _Dumper:
    def __init__(self) -> None:
        from chip.clusters.Types import Nullable

        self._nullable = Nullable
        self.structs: dict[str, list[Any]] = {}
        self._struct_classes: dict[str, Any] = {}

    def type_spec(self, hint: Any) -> Any:
        origin = typing.get_origin(hint)
        if origin in (typing.Union, types.UnionType):
            args = typing.get_args(hint)
            rest = [self.type_spec(a) for a in args if a not in (self._nullable, type(None))]
            return ["union", self._nullable in args, type(None) in args, rest]
        if origin is list:
            (item,) = typing.get_args(hint) or (Any,)
            return ["list", self.type_spec(item)]
        if hint is Any:
            return "any"
        if isinstance(hint, type):
            if issubclass(hint, enum.IntFlag):
                mask = 0
                for member in hint:
                    mask |= int(member.value)
                return ["flags", hint.__name__, mask]
            if issubclass(hint, enum.IntEnum):
                values = sorted(int(m.value) for m in hint if m.name != "kUnknownEnumValue")
                width = re.fullmatch(r"enum(8|16|32)", hint.__name__)
                if not values and width is not None:
                    # A generic enumN with no named member: any value of that width.
                    return ["range", hint.__name__, 0, 2 ** int(width.group(1)) - 1]
                return ["enum", hint.__name__, values]
            for plain in (bool, str, bytes):
                if hint is plain:
                    return plain.__name__
            if issubclass(hint, float):
                return "float"
            if issubclass(hint, int):
                return "uint" if hint.__name__ == "uint" else "int"
            if hasattr(hint, "descriptor") and hasattr(hint, "__dataclass_fields__"):
                return ["struct", self.struct(hint)]
        return ["unsupported", str(hint)]

    def fields(self, cls: Any) -> list[Any]:
        hints = typing.get_type_hints(cls)
        out = []
        for f in cls.descriptor.Fields:
            hint = hints.get(f.Label, f.Type)
            optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and (
                type(None) in typing.get_args(hint)
            )
            out.append([f.Label, self.type_spec(hint), optional])
        return out

    def struct(self, cls: Any) -> str:
        name = str(cls.__qualname__)
        known = self._struct_classes.get(name)
        if known is not None:
            if known is not cls:
                raise ValueError(f"two SDK structs are both called {name}")
            return name
        self._struct_classes[name] = cls
        self.structs[name] = []  # a placeholder first: a struct may refer to itself
        self.structs[name] = self.fields(cls)
        return name

    def cluster(self, cls: Any) -> dict[str, Any]:
        attributes: dict[str, int] = {}
        for name, attr in _public(getattr(cls, "Attributes", object)):
            attr_id = getattr(attr, "attribute_id", None)
            if isinstance(attr_id, int):
                attributes[name] = attr_id
        commands: dict[str, Any] = {}
        for name, cmd in _public(getattr(cls, "Commands", object)):
            if not isinstance(cmd, type) or not getattr(cmd, "is_client", False):
                continue
            cmd_any: Any = cmd
            commands[name] = {
                "id": int(cmd_any.command_id),
                "timed": bool(getattr(cmd, "must_use_timed_invoke", False)),
                "fields": self.fields(cmd),
            }
        features: dict[str, int] = {}
        bitmaps = getattr(cls, "Bitmaps", None)
        feature_enum = getattr(bitmaps, "Feature", None) if bitmaps is not None else None
        if feature_enum is not None:
            for member in feature_enum:
                features[member.name.removeprefix("k")] = int(member.value)
        return {
            "id": int(cls.id),
            "name": cls.__name__,
            "attributes": attributes,
            "commands": commands,
            "features": features,
        }


def dump() -> dict[str, Any]:
    """Return the catalogue document for the installed SDK."""
    from chip.clusters import ClusterObjects
    from chip.clusters import Objects as Clusters
    from matter_server.client.models.device_types import ALL_TYPES

    dumper = _Dumper()
    clusters = []
    for cluster_id, found in sorted(ClusterObjects.ALL_CLUSTERS.items()):
        cls: Any = found
        if cls is None or getattr(Clusters, cls.__name__, None) is not cls:
            continue
        entry = dumper.cluster(cls)
        if entry["id"] != int(cluster_id):
            raise ValueError(f"cluster {entry['name']} is listed under id {cluster_id}")
        clusters.append(entry)
    device_types = {str(k): str(getattr(v, "__name__", v)) for k, v in sorted(ALL_TYPES.items())}
    return {
        "sdk": {
            "distribution": SDK_DISTRIBUTION,
            "version": importlib.metadata.version(SDK_DISTRIBUTION),
        },
        "clusters": clusters,
        "structs": dict(sorted(dumper.structs.items())),
        "device_types": device_types,
    }


def render(doc: dict[str, Any]) -> str:
    """Return the file's text: compact, one cluster or struct per line (reviewable diffs)."""
    lines = ["{", f'"sdk": {json.dumps(doc["sdk"])},', '"clusters": [']
    clusters = doc["clusters"]
    for i, entry in enumerate(clusters):
        comma = "," if i < len(clusters) - 1 else ""
        lines.append(json.dumps(entry, separators=(",", ":")) + comma)
    lines.append("],")
    lines.append('"structs": {')
    structs = list(doc["structs"].items())
    for i, (name, fields) in enumerate(structs):
        comma = "," if i < len(structs) - 1 else ""
        lines.append(f"{json.dumps(name)}:{json.dumps(fields, separators=(',', ':'))}{comma}")
    lines.append("},")
    lines.append(f'"device_types": {json.dumps(doc["device_types"], separators=(",", ":"))}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print the catalogue of the installed SDK."""
    sys.stdout.write(render(dump()))


if __name__ == "__main__":
    main()
