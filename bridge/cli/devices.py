"""``atmosphere-bridge devices ...``: name Matter devices, put them in rooms, give aliases.

Details: docs/modules.md, ``bridge.cli.devices``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from bridge.cli.config import add_state_dir, config_of
from bridge.errors import InvalidParamsError, NotFoundError

if TYPE_CHECKING:
    from bridge.storage import Database

DB_FILE_NAME = "bridge.db"
API_FILE_NAME = "api.json"  # bridge.service.API_FILE_NAME (not imported: it is heavy)
_DEVICE_ID_RE = re.compile(r"^\d+-\d+$")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``devices`` command group."""
    parser = subparsers.add_parser("devices", help="name Matter devices and assign rooms")
    add_state_dir(parser)
    sub = parser.add_subparsers(dest="devices_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("rename", help="give a device a friendly name and/or a room")
    p.add_argument("device", help="device id (<node>-<endpoint>) or current slug")
    p.add_argument("name", nargs="?", help="the new friendly name (omit to change only the room)")
    p.add_argument("--room", help="the room it is in ('' removes it)")
    # list / remove talk to the running bridge through the CLI's API client.
    from bridge.cli.client import add_client_args

    add_client_args(p)
    p.set_defaults(func=rename_command)
    add_alias_parser(sub, "device", "device id (<node>-<endpoint>) or current slug", alias_command)
    p = sub.add_parser("list", help="list devices of the running bridge with their tools")
    p.add_argument("--json", action="store_true", help="print the raw JSON answer")
    add_client_args(p)
    p.set_defaults(func=list_command)
    p = sub.add_parser("remove", help="remove a device from the fabric (and its tools)")
    p.add_argument("device", help="device id (<node>-<endpoint>), slug or name")
    add_client_args(p)
    p.set_defaults(func=remove_command)
    p = sub.add_parser(
        "share",
        help="open a commissioning window so another ecosystem can "
        "add the device (Matter multi-admin)",
    )
    p.add_argument("device", help="device id (<node>-<endpoint>), slug or name")
    p.add_argument(
        "--window",
        type=int,
        default=300,
        help="seconds the window stays open (180-900, default 300)",
    )
    add_client_args(p)
    p.set_defaults(func=share_command)


def add_alias_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    owner: str,
    target_help: str,
    func: Callable[[argparse.Namespace], int],
) -> None:
    """Add ``alias <owner> add|remove|list [ALIAS ...]`` (devices and rooms share it)."""
    from bridge.cli.client import add_client_args

    p = sub.add_parser("alias", help=f"add, remove or list a {owner}'s aliases")
    p.add_argument(owner, help=target_help)
    p.add_argument("action", choices=("add", "remove", "list"), help="what to do")
    p.add_argument("aliases", nargs="*", metavar="ALIAS", help="aliases to add or remove")
    add_client_args(p)
    p.set_defaults(func=func)


def check_alias_args(args: argparse.Namespace, command: str) -> None:
    """Refuse ``add``/``remove`` without an ALIAS and ``list`` with one."""
    if args.action in ("add", "remove") and not args.aliases:
        raise InvalidParamsError(f"'{command} alias {args.action}' needs at least one ALIAS")
    if args.action == "list" and args.aliases:
        raise InvalidParamsError(f"'{command} alias list' takes no ALIAS")


def _state_dir(args: argparse.Namespace) -> Path:
    return config_of(args).state_dir


async def _stored_device_id(store: Any, device: str) -> str:
    if _DEVICE_ID_RE.match(device):
        return device
    known = await store.load()
    matches = [dev_id for dev_id, names in known.items() if names.slug == device]
    if not matches:
        raise NotFoundError(
            f"no device with slug '{device}'; use its id (<node>-<endpoint>)", {"device": device}
        )
    return str(matches[0])


async def rename_device(
    db: Database,
    device: str,
    name: str | None,
    room: str | None,
    aliases: list[str] | None = None,
) -> str:
    """Store a device's new name/room/aliases by id or slug; return its id."""
    # bridge.matter.home.naming reaches the Matter SDK through bridge.matter.home.devices (seconds).
    from bridge.matter import DeviceNameStore

    store = DeviceNameStore(db)
    device_id = await _stored_device_id(store, device)
    await store.rename(device_id, name, room=room, aliases=aliases)
    return device_id


async def stored_aliases(db: Database, device: str) -> list[str]:
    """Return the aliases stored for a device (by id or slug)."""
    from bridge.matter import DeviceNameStore

    store = DeviceNameStore(db)
    device_id = await _stored_device_id(store, device)
    entry = (await store.load()).get(device_id)
    return list(entry.aliases) if entry is not None else []


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
    url: str, token: str | None, device: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Change a device through the running bridge (``PATCH /v1/devices/{device}``)."""
    from bridge.cli.client import call

    answer: dict[str, Any] = asyncio.run(
        call("PATCH", f"{url}/v1/devices/{quote(device, safe='')}", token, body)
    )
    return answer


def _bridge_url(args: argparse.Namespace, state_dir: Path) -> str | None:
    return str(args.url).rstrip("/") if args.url else running_bridge_url(state_dir)


def _print_change(answer: dict[str, Any], url: str) -> None:
    dev = answer["device"]
    room = f" in {dev['room']}" if dev.get("room") else ""
    aliases = dev.get("aliases") or []
    also = f", also called {', '.join(aliases)}" if aliases else ""
    print(f'device {dev["id"]} is now "{dev["name"]}"{room}{also} (live on {url})')
    for tool in answer.get("removed_tools") or []:
        print(f"  - {tool}")
    for tool in answer.get("added_tools") or []:
        print(f"  + {tool}")


def _change(args: argparse.Namespace, body: dict[str, Any]) -> str | None:
    """Apply ``body`` on the running bridge; return its URL, or None when none runs."""
    from bridge.cli.client import BridgeUnreachableError

    url = _bridge_url(args, _state_dir(args))
    if url is None:
        return None
    try:
        answer = rename_via_bridge(url, args.token, args.device, body)
    except BridgeUnreachableError:
        if args.url:
            raise
        return None
    _print_change(answer, url)
    return url


def _offline_db(args: argparse.Namespace) -> tuple[Database, Path]:
    from bridge.storage import Database

    state_dir = _state_dir(args)
    return Database(state_dir / DB_FILE_NAME), state_dir


def rename_command(args: argparse.Namespace) -> int:
    """Rename a device / set its room live on the running bridge, else in the database."""
    if args.name is None and args.room is None:
        raise InvalidParamsError("give a new NAME, --room ROOM or both")
    if args.name is not None and not args.name.strip():
        raise InvalidParamsError("the new name must not be empty")
    body: dict[str, Any] = {}
    if args.name is not None:
        body["name"] = args.name
    if args.room is not None:
        body["room"] = args.room
    if _change(args, body) is not None:
        return 0
    db, state_dir = _offline_db(args)
    try:
        device_id = asyncio.run(rename_device(db, args.device, args.name, args.room))
    finally:
        db.close()
    what = f'"{args.name.strip()}"' if args.name is not None else "unchanged in name"
    room = f" in {args.room}" if args.room else ""
    print(f"device {device_id} is now {what}{room}")
    print(
        f"no running bridge found for {state_dir}: stored in {db.path}; "
        "the new tool names appear when the bridge starts"
    )
    return 0


def edited_aliases(
    current: list[str], action: str, given: list[str], owner: str = "device"
) -> list[str]:
    """Return ``current`` with ``given`` added or removed (case-insensitively)."""
    if action == "add":
        return current + [
            a for a in given if a.strip().casefold() not in {c.casefold() for c in current}
        ]
    wanted = {a.strip().casefold() for a in given}
    missing = sorted(wanted - {c.casefold() for c in current})
    if missing:
        raise NotFoundError(
            f"the {owner} has no alias {', '.join(repr(m) for m in missing)}", {"aliases": missing}
        )
    return [c for c in current if c.casefold() not in wanted]


def alias_command(args: argparse.Namespace) -> int:
    """Add, remove or list a device's aliases (live when a bridge runs, else stored)."""
    check_alias_args(args, "devices")
    from bridge.cli.client import BridgeUnreachableError
    from bridge.cli.commission import list_devices

    url = _bridge_url(args, _state_dir(args))
    current: list[str] | None = None
    if url is not None:
        try:
            listing = list_devices(url, args.token)
        except BridgeUnreachableError:
            if args.url:
                raise
            url = None
        else:
            ref = args.device.casefold()
            found = [
                d
                for d in listing.get("devices") or []
                if ref
                in (
                    str(d.get("id")).casefold(),
                    str(d.get("slug")).casefold(),
                    str(d.get("name")).casefold(),
                )
            ]
            if not found:
                raise NotFoundError(f"no Matter device '{args.device}'", {"device": args.device})
            current = list(found[0].get("aliases") or [])
    if url is not None and current is not None:
        if args.action == "list":
            print("\n".join(current) if current else "no aliases")
            return 0
        _change(args, {"aliases": edited_aliases(current, args.action, args.aliases)})
        return 0
    db, state_dir = _offline_db(args)
    try:
        current = asyncio.run(stored_aliases(db, args.device))
        if args.action == "list":
            print("\n".join(current) if current else "no aliases")
            return 0
        new = edited_aliases(current, args.action, args.aliases)
        device_id = asyncio.run(rename_device(db, args.device, None, None, new))
    finally:
        db.close()
    print(f"device {device_id} aliases: {', '.join(new) or 'none'}")
    print(f"no running bridge found for {state_dir}: stored in {db.path}")
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Print the running bridge's devices."""
    from bridge.cli.client import base_url
    from bridge.cli.commission import format_devices, list_devices

    answer = list_devices(base_url(args), args.token)
    print(json.dumps(answer, indent=2) if args.json else "\n".join(format_devices(answer)))
    return 0


def remove_command(args: argparse.Namespace) -> int:
    """Remove a device through the running bridge and print what went with it."""
    from bridge.cli.client import base_url
    from bridge.cli.commission import remove_device

    answer = remove_device(base_url(args), args.token, args.device)
    tools = answer.get("removed_tools") or []
    node, device = answer.get("node_id"), answer.get("device_id")
    print(f"removed node {node} ({device}); {len(tools)} tools gone")
    return 0


def share_command(args: argparse.Namespace) -> int:
    """Open a commissioning window on a device and print the codes another app needs."""
    from urllib.parse import quote

    from bridge.cli.client import base_url, call

    url = f"{base_url(args)}/v1/devices/{quote(args.device, safe='')}/share"
    answer = asyncio.run(call("POST", url, args.token, {"window_s": args.window}))
    print(
        f"{answer['name']} ({answer['device_id']}) can be added by another Matter app "
        f"for {answer['window_s']} s:"
    )
    print(f"  manual code: {answer['manual_code']}")
    print(f"  QR code:     {answer['qr_code']}")
    return 0
