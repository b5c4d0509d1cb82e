"""The device model: a node's application endpoints become named, slugged devices.

``build_devices(nodes, names)`` reads raw node attributes (``NodeData``) and returns one
``Device`` per application endpoint (utility endpoints such as the root node or an
aggregator are not devices; an electricity meter or a battery on an endpoint of its own
is). A bridge's bridged endpoints are devices
of their own, named from their BridgedDeviceBasicInformation. Friendly names fall back
in order: user-assigned name → node / bridged label (blank and NUL-filled labels are
ignored) → product name → vendor + device type. Slugs match ``^[a-z][a-z0-9_]*$``; a
persisted slug is kept, new clashes get ``_2``, ``_3`` … in device-id order, so slugs
are stable across restarts and deterministic.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from anyascii import anyascii

from bridge.matter.spec.catalogue import device_type_name
from bridge.matter.spec.models import NodeData, gc_paused

SLUG_RE = re.compile(r"^[a-z][a-z0-9_]*$")
SLUG_MAX = 40

DESCRIPTOR = 0x001D
BASIC_INFORMATION = 0x0028
BRIDGED_BASIC_INFORMATION = 0x0039
ATTRIBUTE_LIST = 0xFFFB
ACCEPTED_COMMANDS = 0xFFF9
FEATURE_MAP = 0xFFFC

# Device types that describe plumbing, not something a person controls.
UTILITY_DEVICE_TYPES = frozenset(
    {
        0x0011,  # Power Source
        0x0012,  # OTA Requestor
        0x0013,  # Bridged Node
        0x0014,  # OTA Provider
        0x000E,  # Aggregator
        0x0016,  # Root Node
        0x0019,  # Secondary Network Interface
        0x050D,  # Device Energy Management
        0x0510,  # Electrical Sensor
    }
)

# Utility types that are still something to read when an endpoint has nothing else: an
# electricity meter (a bridged one, a dishwasher's) or a battery of its own.
MEASURING_DEVICE_TYPES = frozenset({0x0510, 0x0011})

# (kind used in slugs, words shown in names) per application device type.
DEVICE_KINDS: dict[int, tuple[str, str]] = {
    0x0100: ("light", "Light"),
    0x0101: ("light", "Light"),
    0x010C: ("light", "Light"),
    0x010D: ("light", "Light"),
    0x010A: ("plug", "Plug"),
    0x010B: ("plug", "Plug"),
    0x0103: ("switch", "Switch"),
    0x0104: ("switch", "Dimmer Switch"),
    0x0105: ("switch", "Color Dimmer Switch"),
    0x000F: ("switch", "Switch"),
    0x0148: ("doorbell", "Doorbell"),
    0x0146: ("chime", "Chime"),
    0x0022: ("speaker", "Speaker"),
    0x0303: ("pump", "Pump"),
    0x0301: ("thermostat", "Thermostat"),
    0x000A: ("lock", "Lock"),
    0x0202: ("blind", "Blind"),
    0x002B: ("fan", "Fan"),
    0x0302: ("temperature_sensor", "Temperature Sensor"),
    0x0307: ("humidity_sensor", "Humidity Sensor"),
    0x0107: ("occupancy_sensor", "Occupancy Sensor"),
    0x0106: ("light_sensor", "Light Sensor"),
    0x0015: ("contact_sensor", "Contact Sensor"),
    0x0076: ("smoke_alarm", "Smoke Alarm"),
    0x0043: ("leak_sensor", "Leak Sensor"),
    0x0305: ("pressure_sensor", "Pressure Sensor"),
    0x0306: ("flow_sensor", "Flow Sensor"),
    0x002C: ("air_quality_sensor", "Air Quality Sensor"),
    0x0041: ("freeze_sensor", "Freeze Sensor"),
    0x0044: ("rain_sensor", "Rain Sensor"),
    0x0045: ("soil_sensor", "Soil Sensor"),
    0x002D: ("air_purifier", "Air Purifier"),
    0x007A: ("extractor_hood", "Extractor Hood"),
    0x0072: ("air_conditioner", "Air Conditioner"),
    0x0074: ("vacuum", "Robot Vacuum"),
    0x0073: ("washer", "Washer"),
    0x007C: ("dryer", "Dryer"),
    0x0075: ("dishwasher", "Dishwasher"),
    0x0079: ("microwave", "Microwave"),
    0x007B: ("oven", "Oven"),
    0x0070: ("fridge", "Fridge"),
    0x0071: ("cabinet", "Cabinet"),
    0x0042: ("valve", "Water Valve"),
    0x050C: ("ev_charger", "EV Charger"),
    0x050F: ("water_heater", "Water Heater"),
    0x0017: ("solar", "Solar Inverter"),
    0x0018: ("battery", "Home Battery"),
    0x0230: ("closure", "Closure"),
    0x0510: ("energy_meter", "Energy Meter"),
    0x0011: ("battery", "Battery"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class UserNames:
    """What a person assigned to a device, and its persisted slug."""

    name: str | None = None
    room: str | None = None
    slug: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Device:
    """One controllable or readable thing: a node endpoint with a name and a slug."""

    id: str
    node_id: int
    endpoint_id: int
    name: str
    slug: str
    room: str | None
    kind: str
    kind_label: str
    device_types: tuple[int, ...]
    clusters: Mapping[int, Mapping[int, Any]]
    available: bool
    vendor: str | None = None
    product: str | None = None
    bridged: bool = False
    name_source: str = "vendor"
    aliases: tuple[str, ...] = ()

    def has_cluster(self, cluster_id: int) -> bool:
        """Return whether the endpoint serves the cluster and reported data for it."""
        return bool(self.clusters.get(cluster_id))

    def attr(self, cluster_id: int, attribute_id: int) -> Any:
        """Return an attribute value, ``None`` when absent or an error placeholder."""
        value = self.clusters.get(cluster_id, {}).get(attribute_id)
        if isinstance(value, dict) and "TLVValue" in value:
            return None
        return value

    def has_attr(self, cluster_id: int, attribute_id: int) -> bool:
        """Return whether the attribute is known (listed in AttributeList or reported)."""
        data = self.clusters.get(cluster_id, {})
        listed = data.get(ATTRIBUTE_LIST)
        if isinstance(listed, list) and attribute_id in listed:
            return True
        return attribute_id in data and self.attr(cluster_id, attribute_id) is not None

    def features(self, cluster_id: int) -> int:
        """Return the cluster's FeatureMap (0 when unknown)."""
        value = self.attr(cluster_id, FEATURE_MAP)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def accepted_commands(self, cluster_id: int) -> frozenset[int] | None:
        """Return the AcceptedCommandList, ``None`` when the device did not report one."""
        value = self.attr(cluster_id, ACCEPTED_COMMANDS)
        if isinstance(value, list):
            return frozenset(v for v in value if isinstance(v, int))
        return None

    @property
    def where(self) -> str:
        """Return `` (room)`` for descriptions, or an empty string."""
        return f" ({self.room})" if self.room else ""

    def to_json(self) -> dict[str, Any]:
        """Return the summary shown by the CLI and the API."""
        return {
            "id": self.id,
            "node_id": self.node_id,
            "endpoint_id": self.endpoint_id,
            "name": self.name,
            "slug": self.slug,
            "room": self.room,
            "aliases": list(self.aliases),
            "kind": self.kind,
            "device_types": list(self.device_types),
            "clusters": sorted(c for c in self.clusters if self.clusters[c]),
            "available": self.available,
            "bridged": self.bridged,
        }


def device_id(node_id: int, endpoint_id: int) -> str:
    """Return the stable id of a node endpoint (``"<node>-<endpoint>"``)."""
    return f"{node_id}-{endpoint_id}"


def clean_label(value: Any) -> str | None:
    """Return a label with NULs and surrounding blanks removed, ``None`` if nothing is left."""
    if not isinstance(value, str):
        return None
    text = value.replace("\x00", "").strip()
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return text or None


def slugify(text: str) -> str:
    """Return ``text`` as ``[a-z0-9_]`` words joined by ``_`` (may be empty).

    Accents are dropped ("Küche" → ``kuche``); other scripts are transliterated
    ("Кухня" → ``kukhnya``, "客厅" → ``keting``), so a name in any language has a slug.
    """
    ascii_text = anyascii(unicodedata.normalize("NFKC", text))
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "_".join(words)


@dataclass(slots=True)
class _Endpoint:
    endpoint_id: int
    clusters: dict[int, dict[int, Any]] = field(default_factory=dict)

    def attr(self, cluster_id: int, attribute_id: int) -> Any:
        value = self.clusters.get(cluster_id, {}).get(attribute_id)
        if isinstance(value, dict) and "TLVValue" in value:
            return None
        return value

    def device_types(self) -> tuple[int, ...]:
        raw = self.attr(DESCRIPTOR, 0)
        found: list[int] = []
        if isinstance(raw, list):
            for entry in raw:
                if isinstance(entry, dict):
                    value = entry.get("0", entry.get("deviceType"))
                    if isinstance(value, int) and not isinstance(value, bool):
                        found.append(value)
        return tuple(found)

    def parts(self) -> list[int]:
        raw = self.attr(DESCRIPTOR, 3)
        return [p for p in raw if isinstance(p, int)] if isinstance(raw, list) else []


# Parsed attribute paths: every node of a model repeats the same few hundred paths, and
# splitting them was half of building a home's devices. Bounded; cleared when full.
_PATHS: dict[str, tuple[int, int, int] | None] = {}
_PATHS_MAX = 65_536


def _parse_path(path: str) -> tuple[int, int, int] | None:
    """Return ``(endpoint, cluster, attribute)`` of ``"ep/cluster/attribute"``, or None."""
    try:
        ep_text, cl_text, at_text = path.split("/")
        parsed: tuple[int, int, int] | None = (int(ep_text), int(cl_text), int(at_text))
    except ValueError:
        parsed = None
    if len(_PATHS) >= _PATHS_MAX:
        _PATHS.clear()
    _PATHS[path] = parsed
    return parsed


def _endpoints(node: NodeData) -> dict[int, _Endpoint]:
    endpoints: dict[int, _Endpoint] = {}
    paths = _PATHS
    # The per-attribute loop of every node's model: one cached path parse, then a
    # lookup of the (endpoint, cluster) table that the previous attribute usually hit.
    last_key: tuple[int, int] | None = None
    attrs: dict[int, Any] = {}
    for path, value in node.attributes.items():
        parsed = paths.get(path)
        if parsed is None:
            parsed = _parse_path(path)
            if parsed is None:
                continue
        ep, cl, at = parsed
        if (ep, cl) != last_key:
            endpoint = endpoints.get(ep)
            if endpoint is None:
                endpoint = endpoints[ep] = _Endpoint(ep)
            found = endpoint.clusters.get(cl)
            if found is None:
                found = endpoint.clusters[cl] = {}
            attrs, last_key = found, (ep, cl)
        attrs[at] = value
    # Clusters the descriptor lists but that carried no data still exist, empty.
    for endpoint in endpoints.values():
        servers = endpoint.attr(DESCRIPTOR, 1)
        if isinstance(servers, list):
            for cl in servers:
                if isinstance(cl, int):
                    endpoint.clusters.setdefault(cl, {})
    return endpoints


@dataclass(frozen=True, slots=True, kw_only=True)
class _Naming:
    label: str | None
    product: str | None
    vendor: str | None
    group: str
    bridged: bool


def _naming(node: NodeData, endpoints: Mapping[int, _Endpoint], ep: int) -> _Naming:
    """Find the bridged node above ``ep`` (via PartsList) or fall back to the node's info."""
    owner: int | None = None
    candidates = [
        ep,
        *sorted(e for e, endpoint in endpoints.items() if ep in endpoint.parts() and e != ep),
    ]
    for cand in candidates:
        endpoint = endpoints.get(cand)
        if endpoint is not None and (
            0x0013 in endpoint.device_types() or endpoint.clusters.get(BRIDGED_BASIC_INFORMATION)
        ):
            owner = cand
            break
    root = endpoints.get(0, _Endpoint(0))
    node_vendor = clean_label(root.attr(BASIC_INFORMATION, 1))
    if owner is not None:
        info = endpoints[owner]
        return _Naming(
            label=clean_label(info.attr(BRIDGED_BASIC_INFORMATION, 5)),
            product=clean_label(info.attr(BRIDGED_BASIC_INFORMATION, 3)),
            vendor=clean_label(info.attr(BRIDGED_BASIC_INFORMATION, 1)) or node_vendor,
            group=f"{node.node_id}/{owner}",
            bridged=True,
        )
    return _Naming(
        label=clean_label(root.attr(BASIC_INFORMATION, 5)),
        product=clean_label(root.attr(BASIC_INFORMATION, 3)),
        vendor=node_vendor,
        group=str(node.node_id),
        bridged=False,
    )


def _kind(device_types: tuple[int, ...]) -> tuple[str, str]:
    for dt in device_types:
        if dt in DEVICE_KINDS and dt not in UTILITY_DEVICE_TYPES:
            return DEVICE_KINDS[dt]
    for dt in device_types:
        if dt not in UTILITY_DEVICE_TYPES:
            sdk_name = device_type_name(dt)
            if sdk_name:
                words = re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[0-9]+", sdk_name)
                label = " ".join(words) or sdk_name
                return slugify(label) or "device", label
    for dt in device_types:
        if dt in DEVICE_KINDS:
            return DEVICE_KINDS[dt]
    return "device", "Device"


@dataclass(slots=True)
class _Draft:
    node: NodeData
    endpoint: _Endpoint
    device_types: tuple[int, ...]
    naming: _Naming
    kind: str
    kind_label: str
    base_name: str = ""
    name_source: str = ""


def build_devices(
    nodes: Iterable[NodeData], names: Mapping[str, UserNames] | None = None
) -> list[Device]:
    """Return every device of ``nodes``, ordered by (node id, endpoint id).

    ``names`` maps device ids to what a person assigned (name, room) and the slug
    persisted earlier; new slugs are derived from the friendly name and de-duplicated.
    Never raises on odd node data: unreadable parts are skipped.
    """
    with gc_paused():
        return _build_devices(nodes, names or {})


def _build_devices(nodes: Iterable[NodeData], names: Mapping[str, UserNames]) -> list[Device]:
    drafts: list[_Draft] = []
    for node in sorted(nodes, key=lambda n: n.node_id):
        endpoints = _endpoints(node)
        for ep_id in sorted(endpoints):
            if ep_id == 0:
                continue
            endpoint = endpoints[ep_id]
            types = endpoint.device_types()
            if not any(t not in UTILITY_DEVICE_TYPES for t in types) and not (
                MEASURING_DEVICE_TYPES & set(types)
            ):
                continue
            kind, kind_label = _kind(types)
            drafts.append(
                _Draft(
                    node=node,
                    endpoint=endpoint,
                    device_types=types,
                    naming=_naming(node, endpoints, ep_id),
                    kind=kind,
                    kind_label=kind_label,
                )
            )
    _assign_names(drafts)
    devices: list[Device] = []
    taken: set[str] = {n.slug for n in names.values() if n.slug}
    for draft in drafts:
        dev_id = device_id(draft.node.node_id, draft.endpoint.endpoint_id)
        user = names.get(dev_id, UserNames())
        name = clean_label(user.name) or draft.base_name
        slug = user.slug if user.slug and SLUG_RE.match(user.slug) else None
        if slug is None:
            slug = unique_slug(derive_slug(name, draft.kind), taken)
            taken.add(slug)
        devices.append(
            Device(
                id=dev_id,
                node_id=draft.node.node_id,
                endpoint_id=draft.endpoint.endpoint_id,
                name=name,
                slug=slug,
                room=clean_label(user.room),
                kind=draft.kind,
                kind_label=draft.kind_label,
                device_types=draft.device_types,
                clusters={c: dict(a) for c, a in draft.endpoint.clusters.items()},
                available=draft.node.available,
                vendor=draft.naming.vendor,
                product=draft.naming.product,
                bridged=draft.naming.bridged,
                name_source="user" if clean_label(user.name) else draft.name_source,
                aliases=user.aliases,
            )
        )
    return devices


def _assign_names(drafts: list[_Draft]) -> None:
    """Give each draft its fallback name; devices sharing a source get their kind added."""
    groups: dict[str, list[_Draft]] = {}
    for draft in drafts:
        n = draft.naming
        if n.label:
            draft.base_name, draft.name_source = n.label, "label"
        elif n.product:
            draft.base_name, draft.name_source = n.product, "product"
        else:
            vendor = n.vendor or "Matter"
            draft.base_name, draft.name_source = f"{vendor} {draft.kind_label}", "vendor"
        groups.setdefault(draft.naming.group, []).append(draft)
    for group in groups.values():
        if len(group) < 2:
            continue
        for draft in group:
            words = set(slugify(draft.base_name).split("_"))
            if not set(slugify(draft.kind_label).split("_")) <= words:
                draft.base_name = f"{draft.base_name} {draft.kind_label}"
        seen: dict[str, int] = {}
        for draft in group:
            seen[draft.base_name] = seen.get(draft.base_name, 0) + 1
        for draft in group:
            if seen[draft.base_name] > 1:
                draft.base_name = f"{draft.base_name} {draft.endpoint.endpoint_id}"


def derive_slug(name: str, kind: str) -> str:
    """Return the slug for a friendly name: its words, led by the kind if it lacks it."""
    base = slugify(name)
    kind_words = kind.split("_")
    if not base or kind_words[0] not in base.split("_"):
        base = f"{kind}_{base}" if base else kind
    if not base[0].isalpha():
        base = f"{kind}_{base}"
    return base[:SLUG_MAX].rstrip("_")


def unique_slug(base: str, taken: set[str]) -> str:
    """Return ``base`` or the first free ``base_2``, ``base_3`` … not in ``taken``."""
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"
