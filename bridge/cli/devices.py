"""``atmosphere-bridge devices ...``: name Matter devices and put them in rooms.

``devices rename DEVICE NAME [--room ROOM]`` stores the name in the state directory's
database; DEVICE is a device id (``<node>-<endpoint>``) or its current slug. The bridge
derives the device's new slug (and so its tool names) from the new name on its next sync.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from bridge.errors import InvalidParamsError, NotFoundError

if TYPE_CHECKING:
    from bridge.storage import Database

DB_FILE_NAME = "bridge.db"
_DEVICE_ID_RE = re.compile(r"^\d+-\d+$")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``devices`` command group."""
    parser = subparsers.add_parser("devices", help="name Matter devices and assign rooms")
    parser.add_argument("--state-dir", type=Path, help="state directory (default: configured)")
    sub = parser.add_subparsers(dest="devices_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("rename", help="give a device a friendly name (and room)")
    p.add_argument("device", help="device id (<node>-<endpoint>) or current slug")
    p.add_argument("name", help="the new friendly name")
    p.add_argument("--room", help="the room it is in")
    p.set_defaults(func=rename_command)
    # list / remove talk to the running bridge (bridge.cli.commission holds the client).
    from bridge.cli.commission import add_client_args

    p = sub.add_parser("list", help="list devices of the running bridge with their tools")
    p.add_argument("--json", action="store_true", help="print the raw JSON answer")
    add_client_args(p)
    p.set_defaults(func=list_command)
    p = sub.add_parser("remove", help="remove a device from the fabric (and its tools)")
    p.add_argument("device", help="device id (<node>-<endpoint>), slug or name")
    add_client_args(p)
    p.set_defaults(func=remove_command)


def _state_dir(args: argparse.Namespace) -> Path:
    if args.state_dir is not None:
        return Path(args.state_dir)
    from bridge.config import load_config, resolve_config_path

    return load_config(resolve_config_path(getattr(args, "config", None))).state_dir


async def rename_device(db: Database, device: str, name: str, room: str | None) -> str:
    """Rename a device by id or slug and return its id; raise ``NotFoundError`` if unknown."""
    # bridge.matter.names reaches the Matter SDK through bridge.matter.devices (seconds).
    from bridge.matter.names import DeviceNameStore

    store = DeviceNameStore(db)
    device_id = device
    if not _DEVICE_ID_RE.match(device):
        known = await store.load()
        matches = [dev_id for dev_id, names in known.items() if names.slug == device]
        if not matches:
            raise NotFoundError(
                f"no device with slug '{device}'; use its id (<node>-<endpoint>)",
                {"device": device})
        device_id = matches[0]
    await store.rename(device_id, name, room=room)
    return device_id


def rename_command(args: argparse.Namespace) -> int:
    """Store a device's new name and room; return 0."""
    if not args.name.strip():
        raise InvalidParamsError("the new name must not be empty")
    from bridge.storage import Database

    db = Database(_state_dir(args) / DB_FILE_NAME)
    try:
        device_id = asyncio.run(rename_device(db, args.device, args.name, args.room))
    finally:
        db.close()
    room = f" in {args.room}" if args.room else ""
    print(f"device {device_id} is now \"{args.name.strip()}\"{room}")
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Print the running bridge's devices."""
    from bridge.cli.commission import base_url, format_devices, list_devices

    answer = list_devices(base_url(args), args.token)
    print(json.dumps(answer, indent=2) if args.json else "\n".join(format_devices(answer)))
    return 0


def remove_command(args: argparse.Namespace) -> int:
    """Remove a device through the running bridge and print what went with it."""
    from bridge.cli.commission import base_url, remove_device

    answer = remove_device(base_url(args), args.token, args.device)
    tools = answer.get("removed_tools") or []
    node, device = answer.get("node_id"), answer.get("device_id")
    print(f"removed node {node} ({device}); {len(tools)} tools gone")
    return 0
