"""``atmosphere-bridge generate --node-dump FILE... [--json]``: devices and tools, offline.

Reads node dumps (the controller's ``get_node`` form), builds the device model and prints
what the bridge would offer: every device with its name and slug, and every tool with
its parameters and the Matter request behind it. Nothing connects anywhere.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.cli.config import add_config_flag, config_of
from bridge.errors import ConflictError, InvalidParamsError

if TYPE_CHECKING:
    # bridge.matter.controller.adapter imports the Matter SDK's cluster objects (seconds); the
    # functions import the Matter layer when they run.
    from bridge.matter import GeneratedTool, NodeData


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``generate`` command."""
    p = subparsers.add_parser("generate", help="print the devices and tools node dumps yield")
    p.add_argument(
        "--node-dump",
        dest="node_dumps",
        type=Path,
        nargs="+",
        required=True,
        metavar="FILE",
        help="node dump JSON file(s) (get_node form)",
    )
    p.add_argument("--json", action="store_true", help="print JSON (full tool definitions)")
    add_config_flag(
        p,
        "--unit",
        key="matter.temperature_unit",
        choices=["C", "F"],
        help="temperature unit (default: matter.temperature_unit)",
    )
    p.add_argument("--cluster-maps", type=Path, help="cluster map directory (default: built in)")
    p.set_defaults(func=generate_command)


def read_dumps(paths: list[Path]) -> list[NodeData]:
    """Read node dumps; raise ``InvalidParamsError`` or ``ConflictError`` naming the file."""
    from bridge.matter import NodeData, dump_problem

    nodes: dict[int, Path] = {}
    out: list[NodeData] = []
    for path in paths:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise InvalidParamsError(f"{path}: cannot read: {err.strerror}") from err
        except json.JSONDecodeError as err:
            raise InvalidParamsError(f"{path}: not JSON: {err}") from err
        try:
            node = NodeData.from_json(doc)
        except InvalidParamsError as err:
            raise InvalidParamsError(f"{path}: {err.message}") from err
        problem = dump_problem(doc)
        if problem is not None:
            raise InvalidParamsError(f"{path}: refused: {problem}", {"file": str(path)})
        if node.node_id in nodes:
            raise ConflictError(f"{path}: node id {node.node_id} is also in {nodes[node.node_id]}")
        nodes[node.node_id] = path
        out.append(node)
    return out


def _tool_json(tool: GeneratedTool) -> dict[str, Any]:
    return {
        "definition": tool.definition.to_json()["tool"],
        "kind": tool.kind.value,
        "device_id": tool.device_id,
    }


def generate_command(args: argparse.Namespace) -> int:
    """Print devices and tools for the given dumps; return 0."""
    from bridge.matter import MatterToolGenerator, build_devices, describe, load_cluster_maps

    unit = config_of(args).matter.temperature_unit
    nodes = read_dumps(list(args.node_dumps))
    devices = build_devices(nodes)
    maps = load_cluster_maps(args.cluster_maps)
    tools = MatterToolGenerator(maps, unit=unit).generate(devices)
    mapped = frozenset(m.cluster.id for m in maps)
    acting = frozenset(m.cluster.id for m in maps if m.rows)
    if args.json:
        described = [{**d.to_json(), **describe(d, mapped, acting)} for d in devices]
        print(
            json.dumps(
                {"devices": described, "tools": [_tool_json(t) for t in tools]},
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    for device in devices:
        print(f'{device.id:>10}  {device.slug}  "{device.name}"  ({device.kind})')
        about = describe(device, mapped, acting)
        unknown = [t["name"] for t in about["device_type_info"] if not t["known"]]
        if unknown:
            print(f"            device type not in the device library: {', '.join(unknown)}")
        if about["unmapped_clusters"]:
            names = ", ".join(
                c["name"]
                + (
                    " (commands: matter:control_matter_device)"
                    if c["commands"]
                    else " (no commands known)"
                )
                for c in about["unmapped_clusters"]
            )
            print(f"            no friendly tool for: {names}")
        if about["withheld_clusters"]:
            names = ", ".join(c["name"] for c in about["withheld_clusters"])
            print(
                f"            not a control of its device type: {names} "
                "(commands: matter:control_matter_device)"
            )
        for tool in tools:
            if tool.device_id != device.id:
                continue
            params = ", ".join(tool.definition.parameters.get("properties", {}))
            matter = tool.definition.metadata.get("matter", {})
            target = matter.get("command") or matter.get("attribute")
            flag = "  [dangerous]" if tool.definition.dangerous else ""
            if tool.kind.value == "state":
                what = "reads " + ", ".join(matter.get("attribute", []))
            else:
                what = f"{matter.get('cluster')}.{target}"
            print(f"            {tool.definition.key}({params}) -> {what}{flag}")
    shared = [t for t in tools if t.device_id is None]
    if shared:
        print("shared:")
        for tool in shared:
            print(f"            {tool.definition.key}")
    print(f"{len(devices)} device(s), {len(tools)} tool(s)")
    return 0
