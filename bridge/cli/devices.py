"""``atmosphere-bridge devices ...``: name Matter devices and put them in rooms.

``devices rename DEVICE NAME [--room ROOM]`` renames through the running bridge's API
(``PATCH /v1/devices/{device}``) when one serves this state directory (its ``api.json``
tells the URL; ``--url`` names one explicitly; ``--token`` or ``$ATMOSPHERE_BRIDGE_TOKEN``
authorizes): the tools get their new names at once. With no bridge running it stores
the name in the state directory's database, and the bridge derives the device's new
slug (and so its tool names) from it when it starts. DEVICE is a device id
(``<node>-<endpoint>``) or its current slug (the running bridge also takes its name).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from bridge.errors import InvalidParamsError, NotFoundError

if TYPE_CHECKING:
    from bridge.storage import Database

DB_FILE_NAME = "bridge.db"
API_FILE_NAME = "api.json"  # bridge.service.API_FILE_NAME (not imported: it is heavy)
_DEVICE_ID_RE = re.compile(r"^\d+-\d+$")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``devices`` command group."""
    parser = subparsers.add_parser("devices", help="name Matter devices and assign rooms")
    parser.add_argument("--state-dir", type=Path, help="state directory (default: configured)")
    sub = parser.add_subparsers(dest="devices_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("rename", help="give a device a friendly name (and room)")
    p.add_argument("device", help="device id (<node>-<endpoint>) or current slug")
    p.add_argument("name", help="the new friendly name")
    p.add_argument("--room", help="the room it is in ('' removes it)")
    # list / remove talk to the running bridge (bridge.cli.commission holds the client).
    from bridge.cli.commission import add_client_args

    add_client_args(p)
    p.set_defaults(func=rename_command)
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


def running_bridge_url(state_dir: Path) -> str | None:
    """Return the API URL of the bridge serving ``state_dir``, or None when none runs."""
    try:
        doc = json.loads((state_dir / API_FILE_NAME).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("url"), str):
        return None
    pid = doc.get("pid")
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None  # left behind by a bridge that was killed
        except PermissionError:
            pass
    return str(doc["url"]).rstrip("/")


def rename_via_bridge(
    url: str, token: str | None, device: str, name: str, room: str | None
) -> dict[str, Any]:
    """Rename through the running bridge (``PATCH /v1/devices/{device}``); return its answer."""
    from bridge.cli.commission import api_call

    body: dict[str, Any] = {"name": name}
    if room is not None:
        body["room"] = room
    answer: dict[str, Any] = asyncio.run(
        api_call("PATCH", f"{url}/v1/devices/{quote(device, safe='')}", token, body)
    )
    return answer


def rename_command(args: argparse.Namespace) -> int:
    """Rename a device live on the running bridge, or in the database when none runs."""
    if not args.name.strip():
        raise InvalidParamsError("the new name must not be empty")
    from bridge.cli.commission import BridgeUnreachableError

    state_dir = _state_dir(args)
    url = args.url.rstrip("/") if args.url else running_bridge_url(state_dir)
    if url is not None:
        try:
            answer = rename_via_bridge(url, args.token, args.device, args.name, args.room)
        except BridgeUnreachableError:
            if args.url:
                raise
        else:
            dev = answer["device"]
            room = f" in {dev['room']}" if dev.get("room") else ""
            print(f"device {dev['id']} is now \"{dev['name']}\"{room} (live on {url})")
            for tool in answer.get("removed_tools") or []:
                print(f"  - {tool}")
            for tool in answer.get("added_tools") or []:
                print(f"  + {tool}")
            return 0
    from bridge.storage import Database

    db_path = state_dir / DB_FILE_NAME
    db = Database(db_path)
    try:
        device_id = asyncio.run(rename_device(db, args.device, args.name, args.room))
    finally:
        db.close()
    room = f" in {args.room}" if args.room else ""
    print(f"device {device_id} is now \"{args.name.strip()}\"{room}")
    print(f"no running bridge found for {state_dir}: stored in {db_path}; "
          "the new tool names appear when the bridge starts")
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
