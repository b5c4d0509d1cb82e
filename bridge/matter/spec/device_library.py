"""The one rule for which acting tools a device gets: the clusters its device types control.

``data/device_library.yaml`` lists, per Matter device type, the clusters a device of that
type is controlled through. ``controlled_clusters(device_types)`` answers the union for
an endpoint's types, or ``None`` when one of them is not listed (an unknown or newer type
is not limited). The generator gives a cluster's acting rows - and the state of a
cluster that has acting rows - only to devices whose types control it, so a door lock's
stray OnOff or an air-quality monitor's display switch makes no on/off tool. Read-only
clusters (sensors, energy, battery) are read on any device. The file is checked against
the cluster catalogue when first read; a bad entry raises ``ConfigInvalidError``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from bridge.errors import ConfigInvalidError
from bridge.matter.spec.catalogue import cluster_info, device_type_name

LIBRARY_PATH = Path(__file__).resolve().parent / "data" / "device_library.yaml"

# Types that say how an endpoint is wired or powered, not what it is for: they add no
# controls and do not make the endpoint "unknown".
UTILITY_TYPES = frozenset({0x0011, 0x0012, 0x0013, 0x0014, 0x000E, 0x0016, 0x0019, 0x050D, 0x0510})


@lru_cache(maxsize=1)
def library() -> dict[int, frozenset[int]]:
    """Return device type → the cluster ids it is controlled through."""
    try:
        doc: Any = yaml.safe_load(LIBRARY_PATH.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigInvalidError(f"{LIBRARY_PATH.name}: cannot read: {err}") from err
    if not isinstance(doc, list):
        raise ConfigInvalidError(f"{LIBRARY_PATH.name}: must be a list of device types")
    out: dict[int, frozenset[int]] = {}
    for number, entry in enumerate(doc, 1):
        where = f"{LIBRARY_PATH.name} entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), int):
            raise ConfigInvalidError(f"{where}: needs an integer 'type'")
        kind = int(entry["type"])
        if device_type_name(kind) is None:
            raise ConfigInvalidError(f"{where}: device type 0x{kind:04X} is not in the SDK")
        if kind in out:
            raise ConfigInvalidError(f"{where}: device type 0x{kind:04X} is listed twice")
        ids: set[int] = set()
        for name in entry.get("controls") or []:
            info = cluster_info(str(name))
            if info is None:
                raise ConfigInvalidError(f"{where}: unknown Matter cluster '{name}'")
            ids.add(info.id)
        out[kind] = frozenset(ids)
    return out


@lru_cache(maxsize=512)
def controlled_clusters(device_types: tuple[int, ...]) -> frozenset[int] | None:
    """Return the clusters ``device_types`` are controlled through; ``None`` if one is unknown."""
    table = library()
    found: set[int] = set()
    for kind in device_types:
        if kind in UTILITY_TYPES:
            continue
        clusters = table.get(kind)
        if clusters is None:
            return None
        found |= clusters
    return frozenset(found)


# Clusters any device may carry for what it does beside its type: Mode Select names its
# own modes (a light's effects, a purifier's programmes) and changes nothing else.
ANY_DEVICE = frozenset({0x0050})  # ModeSelect


def offers(cluster_id: int, acting: bool, controlled: frozenset[int] | None) -> bool:
    """Return whether a mapped cluster yields tools: read-only always, acting if controlled."""
    return not acting or controlled is None or cluster_id in controlled or cluster_id in ANY_DEVICE
