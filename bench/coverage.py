"""How much of each recorded Matter device the bridge makes usable, by primary function.

Run: .venv/bin/python bench/coverage.py [--list] [--json] [DUMP_OR_FOLDER ...]
(default: every ``*.json`` under tests/fixtures/nodes, sub-folders included).

Each dump goes through the bridge's own pipeline, as ``atmosphere-bridge generate
--node-dump`` runs it (``read_dumps`` → ``build_devices`` → ``MatterToolGenerator``
with the built-in cluster maps). Every application endpoint of the dump is classified by
the primary function of its device type, from ``PRIMARY`` below (written from the Matter
1.4 Device Library, and 1.5 for closures). Not counted: the root endpoint 0, aggregators,
composed parents whose function lives in child endpoints (an oven; a fridge without modes
of its own), binding-only controllers such as a light switch.

- ``friendly``: per-device tools (or ``core:query_sensor``) control, or for a sensor read,
  every primary cluster the endpoint has;
- ``partial``: some of them, or only a read of something that should be controlled;
- ``generic``: only ``matter:control_matter_device`` can send a primary cluster's command;
- ``nothing``: no tool reaches the primary function.

A cluster the device accepts no command of (an empty AcceptedCommandList, e.g. a
microwave's fixed modes) counts as controlled when a tool reads it: there is nothing to
send. A switch's presses reach ``/v1/events`` (and automations) as ``device.event``, and
``core:wait_for_event`` waits for the next one: a switch the bridge makes a device of,
whose events it words (``bridge.matter.spec.events``), is ``friendly``.

Prints one row per device type and the overall share of ``friendly`` endpoints.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridge.cli.generate import read_dumps
from bridge.errors import BridgeError
from bridge.matter import Device, build_devices, load_cluster_maps
from bridge.matter.spec.catalogue import cluster_info
from bridge.matter.spec.events import described_clusters
from bridge.matter.tools.generator import GeneratedTool, MatterToolGenerator, ToolKind

NODES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "nodes"

# Cluster ids (Matter 1.4 Application Cluster Specification; 1.5 for closures).
ON_OFF, LEVEL, COLOR, MODE_SELECT = 6, 8, 768, 80
DOOR_LOCK, WINDOW_COVERING, CLOSURE_CONTROL, CLOSURE_DIMENSION = 257, 258, 260, 261
PUMP, THERMOSTAT, FAN = 512, 513, 514
SWITCH, BOOLEAN_STATE, POWER_SOURCE = 59, 69, 47
AIR_QUALITY, SMOKE_CO = 91, 92
ILLUMINANCE, TEMPERATURE, PRESSURE, FLOW, HUMIDITY, OCCUPANCY = 1024, 1026, 1027, 1028, 1029, 1030
SOIL = 1072
CONCENTRATIONS = (1036, 1037, 1043, 1045, 1066, 1067, 1068, 1069, 1070, 1071)
OVEN_CAVITY_STATE, OVEN_MODE, LAUNDRY_WASHER_MODE, REFRIGERATOR_MODE = 72, 73, 81, 82
RVC_RUN, RVC_CLEAN, DISHWASHER_MODE, TEMPERATURE_CONTROL = 84, 85, 89, 86
MICROWAVE_MODE, MICROWAVE_CONTROL, OPERATIONAL_STATE, RVC_STATE = 94, 95, 96, 97
VALVE, ELECTRICAL_POWER, ELECTRICAL_ENERGY, WATER_HEATER, EVSE = 129, 144, 145, 148, 153
SERVICE_AREA, MEDIA_PLAYBACK = 336, 1286
CAMERA_AV_STREAMS, WEBRTC_PROVIDER, CHIME = 1361, 1363, 1366


@dataclass(frozen=True)
class Primary:
    """A device type's primary function: control or read (or events) of these clusters.

    ``required`` count whenever the endpoint has them; ``optional`` also count when present
    (a dimmable light's level is part of its function, an air-quality sensor's CO2 too).
    """

    name: str
    mode: str  # "control", "read" or "event"
    required: tuple[int, ...]
    optional: tuple[int, ...] = ()


PRIMARY: dict[int, Primary] = {
    0x0100: Primary("On/Off Light", "control", (ON_OFF,)),
    0x0101: Primary("Dimmable Light", "control", (ON_OFF, LEVEL)),
    0x010C: Primary("Color Temperature Light", "control", (ON_OFF, LEVEL, COLOR)),
    0x010D: Primary("Extended Color Light", "control", (ON_OFF, LEVEL, COLOR)),
    0x010A: Primary("On/Off Plug-in Unit", "control", (ON_OFF,)),
    0x010B: Primary("Dimmable Plug-In Unit", "control", (ON_OFF, LEVEL)),
    0x010F: Primary("Mounted On/Off Control", "control", (ON_OFF,)),
    0x0110: Primary("Mounted Dimmable Load Control", "control", (ON_OFF, LEVEL)),
    0x0303: Primary("Pump", "control", (ON_OFF, PUMP), (LEVEL,)),
    0x0022: Primary("Speaker", "control", (ON_OFF, LEVEL)),
    0x0028: Primary("Basic Video Player", "control", (MEDIA_PLAYBACK,)),
    0x0027: Primary("Mode Select", "control", (MODE_SELECT,)),
    0x000A: Primary("Door Lock", "control", (DOOR_LOCK,)),
    0x0202: Primary("Window Covering", "control", (WINDOW_COVERING,)),
    0x0230: Primary("Closure", "control", (CLOSURE_CONTROL,)),
    0x0231: Primary("Closure Panel", "control", (CLOSURE_DIMENSION,)),
    0x0301: Primary("Thermostat", "control", (THERMOSTAT,)),
    0x0309: Primary("Heat Pump", "control", (THERMOSTAT,)),
    0x0072: Primary("Room Air Conditioner", "control", (ON_OFF, THERMOSTAT), (FAN,)),
    0x002B: Primary("Fan", "control", (FAN,)),
    0x002D: Primary("Air Purifier", "control", (FAN,)),
    0x007A: Primary("Extractor Hood", "control", (FAN,)),
    0x0302: Primary("Temperature Sensor", "read", (TEMPERATURE,)),
    0x0307: Primary("Humidity Sensor", "read", (HUMIDITY,)),
    0x0106: Primary("Light Sensor", "read", (ILLUMINANCE,)),
    0x0305: Primary("Pressure Sensor", "read", (PRESSURE,)),
    0x0306: Primary("Flow Sensor", "read", (FLOW,)),
    0x0107: Primary("Occupancy Sensor", "read", (OCCUPANCY,)),
    0x0015: Primary("Contact Sensor", "read", (BOOLEAN_STATE,)),
    0x0043: Primary("Water Leak Detector", "read", (BOOLEAN_STATE,)),
    0x0041: Primary("Water Freeze Detector", "read", (BOOLEAN_STATE,)),
    0x0044: Primary("Rain Sensor", "read", (BOOLEAN_STATE,)),
    0x002C: Primary("Air Quality Sensor", "read", (AIR_QUALITY,), CONCENTRATIONS),
    0x0076: Primary("Smoke CO Alarm", "read", (SMOKE_CO,)),
    0x0045: Primary("Soil Sensor", "read", (SOIL,)),
    0x000F: Primary("Generic Switch", "event", (SWITCH,)),
    0x0148: Primary("Doorbell", "event", (SWITCH,)),
    0x0146: Primary("Chime", "control", (CHIME,)),
    0x0142: Primary("Camera", "control", (CAMERA_AV_STREAMS, WEBRTC_PROVIDER)),
    0x0074: Primary(
        "Robotic Vacuum Cleaner", "control", (RVC_RUN, RVC_STATE), (RVC_CLEAN, SERVICE_AREA)
    ),
    0x0073: Primary("Laundry Washer", "control", (OPERATIONAL_STATE,), (LAUNDRY_WASHER_MODE,)),
    0x007C: Primary("Laundry Dryer", "control", (OPERATIONAL_STATE,)),
    0x0075: Primary("Dishwasher", "control", (OPERATIONAL_STATE,), (DISHWASHER_MODE,)),
    0x0079: Primary(
        "Microwave Oven", "control", (OPERATIONAL_STATE, MICROWAVE_CONTROL), (MICROWAVE_MODE,)
    ),
    0x0078: Primary("Cooktop", "control", (ON_OFF,)),
    0x0077: Primary("Cook Surface", "control", (TEMPERATURE_CONTROL,)),
    # Composed parents: their function mostly lives in child cabinets; counted only when
    # the parent endpoint itself serves one of these (a fridge's own modes).
    0x0070: Primary("Refrigerator", "control", (), (REFRIGERATOR_MODE,)),
    0x007B: Primary("Oven", "control", (), (OVEN_MODE, OVEN_CAVITY_STATE)),
    0x0071: Primary(
        "Temperature Controlled Cabinet",
        "control",
        (TEMPERATURE_CONTROL,),
        (OVEN_CAVITY_STATE, OVEN_MODE, REFRIGERATOR_MODE),
    ),
    0x0042: Primary("Water Valve", "control", (VALVE,)),
    0x050C: Primary("EVSE", "control", (EVSE,)),
    0x050F: Primary("Water Heater", "control", (WATER_HEATER, THERMOSTAT)),
    0x0510: Primary("Electrical Sensor", "read", (), (ELECTRICAL_POWER, ELECTRICAL_ENERGY)),
    0x0017: Primary("Solar Power", "read", (), (ELECTRICAL_POWER, ELECTRICAL_ENERGY)),
    0x0018: Primary(
        "Battery Storage", "read", (), (ELECTRICAL_POWER, ELECTRICAL_ENERGY, POWER_SOURCE)
    ),
    0x0011: Primary("Power Source", "read", (POWER_SOURCE,)),
}

# Device types that describe an endpoint beside its application type (utility types),
# used as its primary only when nothing else is there.
UTILITY = {0x0011, 0x0012, 0x0013, 0x0014, 0x0016, 0x0019, 0x050D, 0x0510}
# Not application endpoints of their own: the aggregator and the root node.
SKIPPED = {0x000E: "Aggregator", 0x0016: "Root Node"}
# Controllers: they bind to and command other devices; nothing to act on in themselves.
CONTROLLERS = {
    0x0103: "On/Off Light Switch",
    0x0104: "Dimmer Switch",
    0x0105: "Color Dimmer Switch",
    0x0840: "Control Bridge",
    0x0850: "On/Off Sensor",
    0x000B: "Door Lock Controller",
    0x0203: "Window Covering Controller",
    0x0304: "Pump Controller",
    0x030A: "Thermostat Controller",
}
OUTCOMES = ("friendly", "partial", "generic", "nothing")
# Clusters controlled by attribute writes, not commands (an empty command list is normal).
WRITTEN = {FAN, THERMOSTAT, PUMP}


@dataclass(frozen=True)
class Endpoint:
    """One application endpoint's classification."""

    dump: str
    endpoint: int
    device_type: int
    type_name: str
    outcome: str
    why: str


def dump_files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        out.extend(sorted(path.rglob("*.json")) if path.is_dir() else [path])
    return out


def _entry_type(entry: Any) -> int | None:
    if isinstance(entry, Mapping):
        # Numeric tags; some old recordings key the struct by field name.
        value = entry.get("0", entry.get("deviceType", entry.get("type")))
        return int(value) if isinstance(value, int) else None
    return None


def endpoints_of(doc: Mapping[str, Any]) -> dict[int, tuple[list[int], set[int]]]:
    """Return endpoint → (device types, server clusters): the Descriptor's server list,
    plus clusters the dump holds data for (some recorded mocks leave them out of it)."""
    out: dict[int, tuple[list[int], set[int]]] = {}
    for path, value in (doc.get("attributes") or {}).items():
        parts = str(path).split("/")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            continue
        endpoint, cluster = int(parts[0]), int(parts[1])
        types, servers = out.setdefault(endpoint, ([], set()))
        if cluster != 29:
            servers.add(cluster)
        elif parts[2] == "0" and isinstance(value, list):
            types.extend(t for t in map(_entry_type, value) if t is not None)
        elif parts[2] == "1" and isinstance(value, list):
            servers.update(int(c) for c in value if isinstance(c, int))
    return out


def primary_type(types: list[int]) -> int | None:
    """Return the endpoint's primary device type (its first application type)."""
    for kind in types:
        if kind not in UTILITY:
            return kind
    for kind in (0x0510, 0x0011):  # an electrical sensor or a battery on its own
        if kind in types:
            return kind
    return None


def reach(device: Device, tools: list[GeneratedTool]) -> tuple[set[int], set[int], set[int]]:
    """Return the clusters per-device tools control, those any tool reads, and those
    the generic tool can command on ``device``."""
    controlled: set[int] = set()
    read: set[int] = set()
    generic: set[int] = set()
    for tool in tools:
        if tool.kind is ToolKind.ACTION and tool.device_id == device.id and tool.context:
            controlled.add(tool.context.cluster.id)
        elif tool.kind is ToolKind.STATE and tool.device_id == device.id:
            read.update(part.cluster.id for part in tool.state)
        elif tool.kind is ToolKind.SENSOR:
            read.update(part.cluster.id for part in tool.sensors.get(device.id, {}).values())
        elif tool.kind is ToolKind.GENERIC and device.id in tool.devices:
            for cluster_id in device.clusters:
                info = cluster_info(cluster_id)
                accepted = device.accepted_commands(cluster_id)
                if info is not None and info.commands and (accepted is None or accepted):
                    generic.add(cluster_id)
    return controlled, read, generic


def classify(
    primary: Primary, servers: set[int], device: Device | None, tools: list[GeneratedTool]
) -> tuple[str, str]:
    """Return (outcome, why) for one endpoint."""
    wanted = [c for c in (*primary.required, *primary.optional) if c in servers]
    if not wanted:
        return "nothing", "serves none of its primary clusters"
    if device is None:
        return "nothing", "the generator made no device for it"
    controlled, read, generic = reach(device, tools)
    if primary.mode == "read":
        got = [c for c in wanted if c in read or c in controlled]
        if len(got) == len(wanted):
            return "friendly", "reads " + _names(wanted)
        if got:
            return "partial", f"reads {_names(got)}, not {_names(set(wanted) - set(got))}"
        return "nothing", "no tool reads " + _names(wanted)
    if primary.mode == "event":
        # core:wait_for_event answers with the next such event of the device; the events
        # also reach /v1/events and automations. Events the bridge cannot word do not count.
        if all(c in described_clusters() for c in wanted):
            return "friendly", "core:wait_for_event waits for its " + _names(wanted) + " events"
        return "partial", "its events reach /v1/events unworded; no tool waits for one"
    # Nothing to send to a cluster whose device accepts no command of it: reading it is all.
    fixed = {c for c in wanted if c not in WRITTEN and device.accepted_commands(c) == frozenset()}
    got = [c for c in wanted if c in controlled or (c in fixed and c in read)]
    if len(got) == len(wanted):
        return "friendly", "controls " + _names(wanted)
    if got or any(c in read for c in wanted):
        return "partial", (
            f"controls {_names(got) or 'nothing'}, reads "
            f"{_names([c for c in wanted if c in read]) or 'nothing'} of {_names(wanted)}"
        )
    if any(c in generic for c in wanted):
        return "generic", "only matter:control_matter_device sends " + _names(
            [c for c in wanted if c in generic]
        )
    return "nothing", "no tool reaches " + _names(wanted)


def _names(clusters: Iterable[int]) -> str:
    out = []
    for cluster_id in sorted(clusters):
        info = cluster_info(cluster_id)
        out.append(info.name if info else str(cluster_id))
    return ", ".join(out)


def run(files: list[Path], root: Path) -> tuple[list[Endpoint], list[str]]:
    generator = MatterToolGenerator(load_cluster_maps(None), unit="C")
    results: list[Endpoint] = []
    notes: list[str] = []
    for path in files:
        name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            notes.append(f"{name}: not read: {err}")  # one stray file does not end the run
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("attributes"), dict):
            notes.append(f"{name}: not a node dump (no 'attributes' object)")
            continue
        try:
            nodes = read_dumps([path])
            devices = build_devices(nodes)
            tools = generator.generate(devices)
        except BridgeError as err:
            notes.append(f"{name}: refused: {err.message}")
            nodes, devices, tools = [], [], []
        by_endpoint = {(d.node_id, d.endpoint_id): d for d in devices}
        node_id = int(doc.get("node_id", 0))
        for endpoint, (types, servers) in sorted(endpoints_of(doc).items()):
            if endpoint == 0:
                continue
            kind = primary_type(types)
            if kind is None or kind in SKIPPED:
                continue
            if kind in CONTROLLERS:
                notes.append(
                    f"{name} ep{endpoint}: {CONTROLLERS[kind]} (binding controller) skipped"
                )
                continue
            primary = PRIMARY.get(kind)
            if primary is None:
                results.append(
                    Endpoint(
                        name,
                        endpoint,
                        kind,
                        f"unknown 0x{kind:04X}",
                        "nothing",
                        "device type not in PRIMARY",
                    )
                )
                continue
            if not primary.required and not servers & set(primary.optional):
                notes.append(f"{name} ep{endpoint}: {primary.name} composed parent skipped")
                continue
            device = by_endpoint.get((node_id, endpoint))
            outcome, why = classify(primary, servers, device, tools)
            results.append(Endpoint(name, endpoint, kind, primary.name, outcome, why))
    return results, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[NODES])
    parser.add_argument("--list", action="store_true", help="print every endpoint's verdict")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    files = dump_files(args.paths)
    results, notes = run(files, NODES)
    by_type: dict[tuple[int, str], Counter[str]] = defaultdict(Counter)
    for r in results:
        by_type[(r.device_type, r.type_name)][r.outcome] += 1
    total = Counter(r.outcome for r in results)
    n = len(results)
    share = total["friendly"] / n if n else 0.0
    if args.json:
        print(
            json.dumps(
                {
                    "dumps": len(files),
                    "endpoints": n,
                    "friendly_share": round(share, 4),
                    "totals": {o: total[o] for o in OUTCOMES},
                    "by_device_type": {
                        f"0x{k:04X} {name}": {o: c[o] for o in OUTCOMES}
                        for (k, name), c in sorted(by_type.items())
                    },
                    "endpoints_detail": [r.__dict__ for r in results],
                    "notes": notes,
                },
                indent=2,
            )
        )
        return 0
    if args.list:
        for r in results:
            print(f"{r.outcome:9} {r.dump} ep{r.endpoint} {r.type_name}: {r.why}")
        for note in notes:
            print(f"note: {note}")
        print()
    print(f"{'device type':42} {'n':>3} " + " ".join(f"{o:>8}" for o in OUTCOMES))
    for (kind, name), counts in sorted(
        by_type.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])
    ):
        print(
            f"0x{kind:04X} {name:35} {sum(counts.values()):>3} "
            + " ".join(f"{counts[o]:>8}" for o in OUTCOMES)
        )
    print(f"{'all':42} {n:>3} " + " ".join(f"{total[o]:>8}" for o in OUTCOMES))
    print(
        f"{len(files)} dumps, {n} application endpoints: friendly tool for the primary "
        f"function of {total['friendly']} ({share:.0%}), partial {total['partial']}, "
        f"only the generic tool {total['generic']}, nothing {total['nothing']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
