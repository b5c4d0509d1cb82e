"""The generic tool's read mode: one attribute of any cluster a device serves.

``matter:control_matter_device`` with ``access: "read"`` reads one attribute, named as
in the Matter specification (``OnOff`` / ``OnOff``) or by ids (a vendor's cluster the
catalogue does not know, ``{"cluster": 4294048773, "attribute": 0}``). The call needs
``device:read:<device_id>`` like every other read (the permission is
``device:{access}:{device_id}``), so a token that may only read cannot command through
it. Nothing is sent unless the device serves the cluster and lists the attribute (its
AttributeList); every refusal is an ``InvalidParamsError`` saying what was wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.errors import InvalidParamsError
from bridge.matter.home.devices import Device
from bridge.matter.spec.catalogue import ClusterInfo, cluster_info
from bridge.matter.spec.models import ActionKind, MatterAction

CONTROL = "control"
READ = "read"
ACCESS = (CONTROL, READ)
# The generic tool's one permission: device:control:<id> to command, device:read:<id> to read.
DEVICE_ACCESS = "device:{access}:{device_id}"
MAX_ID = 0xFFFF_FFFF  # cluster and attribute ids are 32-bit (spec 7.18.2)
NAME_PATTERN = "^[A-Z][A-Za-z0-9]*$"


def name_or_id_schema(description: str) -> dict[str, Any]:
    """Return the schema of a cluster or attribute: its specification name or its id."""
    return {
        "anyOf": [
            {"type": "string", "pattern": NAME_PATTERN, "maxLength": 64},
            {"type": "integer", "minimum": 0, "maximum": MAX_ID},
        ],
        "description": description,
    }


def resolve_cluster(device: Device, cluster: Any) -> tuple[int, ClusterInfo | None]:
    """Return the id and catalogue entry of a cluster the device serves, by name or id."""
    info = cluster_info(cluster) if isinstance(cluster, str | int) else None
    if isinstance(cluster, int) and not isinstance(cluster, bool):
        cluster_id = cluster
    elif info is not None:
        cluster_id = info.id
    else:
        raise InvalidParamsError(f"unknown Matter cluster '{cluster}'", {"cluster": cluster})
    if not device.has_cluster(cluster_id):
        label = info.name if info is not None else f"0x{cluster_id:04X}"
        raise InvalidParamsError(
            f"{device.name} has no {label} cluster", {"device_id": device.id, "cluster": label}
        )
    return cluster_id, info


def read_action(device: Device, params: Mapping[str, Any]) -> MatterAction:
    """Return the read of ``params['attribute']`` of ``params['cluster']`` on ``device``."""
    unexpected = [k for k in ("command", "payload") if params.get(k) not in (None, {})]
    if unexpected:
        raise InvalidParamsError(
            f"a read takes no {' or '.join(unexpected)} (access 'control' sends commands)",
            {"field": unexpected[0]},
        )
    if "attribute" not in params:
        raise InvalidParamsError(
            "a read needs 'attribute' (its name or id)", {"field": "attribute"}
        )
    cluster_id, info = resolve_cluster(device, params["cluster"])
    cluster_name = info.name if info is not None else f"0x{cluster_id:04X}"
    attribute = params["attribute"]
    if isinstance(attribute, int) and not isinstance(attribute, bool):
        attribute_id = attribute
        name = info.attribute_names.get(attribute_id) if info is not None else None
    else:
        found = info.attributes.get(str(attribute)) if info is not None else None
        if found is None:
            known = sorted(info.attributes) if info is not None else []
            why = "has no attribute" if info is not None else "is unknown: give the id of"
            raise InvalidParamsError(
                f"{cluster_name} {why} '{attribute}'",
                {"cluster": cluster_name, "attribute": attribute, "known": known},
            )
        attribute_id, name = found, str(attribute)
    label = name or f"0x{attribute_id:04X}"
    if not device.has_attr(cluster_id, attribute_id):
        raise InvalidParamsError(
            f"{device.name}'s {cluster_name} cluster has no attribute {label}",
            {"device_id": device.id, "cluster": cluster_name, "attribute": label},
        )
    return MatterAction(
        kind=ActionKind.READ,
        node_id=device.node_id,
        endpoint_id=device.endpoint_id,
        cluster=cluster_name,
        cluster_id=cluster_id,
        name=label,
        attribute_ids=(attribute_id,),
    )


def read_result(device: Device, action: MatterAction, result: Any) -> dict[str, Any]:
    """Return the answer of a read: the attribute's value as the device reported it."""
    (path,) = action.paths
    value = result.get(path) if isinstance(result, Mapping) else None
    return {
        "device_id": device.id,
        "cluster": action.cluster,
        "cluster_id": action.cluster_id,
        "attribute": action.name,
        "attribute_id": action.attribute_ids[0],
        "value": value,
    }
