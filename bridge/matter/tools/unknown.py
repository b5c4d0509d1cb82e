"""Unknown is not silent: what a device carries that the bridge has no friendly tool for.

``describe(device, mapped)`` lists a device's types by the SDK's names (and whether the
device library knows them) and the application clusters it serves with data that no
cluster map covers: their commands are reachable through ``matter:control_matter_device``
and their events reach ``/v1/events`` like every device event. The
``generate`` command and the devices API show it. ``dump_problem(doc)`` says why a
recorded node cannot become devices (an old recording whose Descriptor structs are keyed
by field name, no device type list at all), so such a dump is refused with a message
instead of yielding nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.matter.home.devices import Device
from bridge.matter.spec.catalogue import cluster_info, device_type_name
from bridge.matter.spec.device_library import (
    UTILITY_TYPES,
    controlled_clusters,
    library,
    offers,
)

# Clusters that describe or wire an endpoint, not something a person uses.
PLUMBING = frozenset(
    {
        0x0003,  # Identify
        0x0004,  # Groups
        0x0005,  # Scenes
        0x001D,  # Descriptor
        0x001E,  # Binding
        0x0039,  # Bridged Device Basic Information
        0x0040,  # Fixed Label
        0x0041,  # User Label
        0x0062,  # Scenes Management
        0x009C,  # Power Topology
    }
)


def describe(
    device: Device, mapped: frozenset[int], acting: frozenset[int] = frozenset()
) -> dict[str, Any]:
    """Return the device's types by name and the clusters no map covers (generic tool only).

    ``acting`` are the mapped clusters with acting rows: one the device's types are not
    controlled through (a lock's OnOff) is listed as ``withheld_clusters``.
    """
    known = library()
    types = [
        {
            "id": t,
            "name": device_type_name(t) or f"0x{t:04X}",
            "known": t in known or t in UTILITY_TYPES,
        }
        for t in device.device_types
    ]
    unmapped = []
    for cluster_id in sorted(device.clusters):
        if cluster_id in mapped or cluster_id in PLUMBING or not device.has_cluster(cluster_id):
            continue
        info = cluster_info(cluster_id)
        if info is None and cluster_id >= 0xFC00:
            name = f"vendor 0x{cluster_id:04X}"
        else:
            name = info.name if info is not None else f"0x{cluster_id:04X}"
        commands = bool(info.commands) if info is not None else False
        unmapped.append({"id": cluster_id, "name": name, "commands": commands})
    controlled = controlled_clusters(device.device_types)
    withheld = [
        {"id": c, "name": info.name}
        for c in sorted(device.clusters)
        if c in acting
        and device.has_cluster(c)
        and not offers(c, True, controlled)
        and (info := cluster_info(c)) is not None
    ]
    return {"device_type_info": types, "unmapped_clusters": unmapped, "withheld_clusters": withheld}


def dump_problem(doc: Mapping[str, Any]) -> str | None:
    """Return why a node dump cannot become devices, or ``None`` when it can be read."""
    attributes = doc.get("attributes")
    if not isinstance(attributes, Mapping) or not attributes:
        return "it holds no attributes"
    type_lists = {p: v for p, v in attributes.items() if str(p).endswith("/29/0")}
    if not type_lists:
        return (
            "no endpoint has a Descriptor device type list ('<endpoint>/29/0'): "
            "not a node as python-matter-server records it"
        )
    for path, value in sorted(type_lists.items()):
        if not isinstance(value, list):
            return f"{path} (the Descriptor's device type list) is not a list"
        for entry in value:
            if (
                isinstance(entry, Mapping)
                and "0" not in entry
                and ("type" in entry or "deviceType" in entry)
            ):
                return (
                    f"an old-format recording: {path} keys its device types by field "
                    f"name ({dict(entry)}), not by the numeric tags python-matter-server "
                    "uses today; record the node again"
                )
            if not isinstance(entry, Mapping) or not isinstance(entry.get("0"), int):
                return f"{path} holds a device type entry without a numeric type: {entry!r}"
    return None
