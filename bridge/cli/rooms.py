"""``atmosphere-bridge rooms ...``: list rooms, give them aliases ("Küche" for the Kitchen).

A room is the devices that share a ``room`` (set with ``devices rename --room``).
``rooms list`` prints every room with its devices, aliases and room tools;
``rooms alias ROOM add|remove|list [ALIAS ...]`` edits the other names spoken commands and
tool search know the room by. Both talk to the running bridge (``GET /v1/rooms``,
``PATCH /v1/rooms/{room}``; ``--url`` or the configured API address, ``--token`` or
``$ATMOSPHERE_BRIDGE_TOKEN``). ROOM is the room's name, slug or one of its aliases.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any
from urllib.parse import quote

from bridge.errors import NotFoundError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``rooms`` command group."""
    from bridge.cli.client import add_client_args
    from bridge.cli.devices import add_alias_parser

    parser = subparsers.add_parser("rooms", help="list rooms and give them aliases")
    sub = parser.add_subparsers(dest="rooms_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("list", help="list rooms with their devices, aliases and room tools")
    p.add_argument("--json", action="store_true", help="print the raw JSON answer")
    add_client_args(p)
    p.set_defaults(func=list_command)
    add_alias_parser(sub, "room", "the room's name, slug or one of its aliases", alias_command)


def _rooms(url: str, token: str | None) -> list[dict[str, Any]]:
    from bridge.cli.client import call

    answer = asyncio.run(call("GET", f"{url}/v1/rooms", token))
    return list(answer.get("rooms") or [])


def format_room(room: dict[str, Any]) -> list[str]:
    """Return the lines ``rooms list`` prints for one room."""
    names = ", ".join(d["name"] for d in room.get("devices") or [])
    also = f"; also called {', '.join(room['aliases'])}" if room.get("aliases") else ""
    lines = [f"{room['room']} ({room['slug']}): {names}{also}"]
    lines.extend(f"  {tool}" for tool in room.get("tools") or [])
    return lines


def list_command(args: argparse.Namespace) -> int:
    """Print the running bridge's rooms."""
    from bridge.cli.client import base_url

    rooms = _rooms(base_url(args), args.token)
    if args.json:
        print(json.dumps({"rooms": rooms, "count": len(rooms)}, indent=2))
    else:
        print("\n".join(line for room in rooms for line in format_room(room)) or "no rooms yet")
    return 0


def alias_command(args: argparse.Namespace) -> int:
    """Add, remove or list a room's aliases on the running bridge."""
    from bridge.cli.client import base_url, call
    from bridge.cli.devices import check_alias_args, edited_aliases

    check_alias_args(args, "rooms")

    url = base_url(args)
    rooms = _rooms(url, args.token)
    ref = args.room.strip().casefold()
    found = [
        r
        for r in rooms
        if ref in {r["slug"], *(label.casefold() for label in [r["room"], *r["aliases"]])}
    ]
    if not found:
        known = ", ".join(r["room"] for r in rooms) or "none yet"
        raise NotFoundError(f"no room '{args.room}' (rooms: {known})", {"room": args.room})
    current = list(found[0]["aliases"])
    if args.action == "list":
        print("\n".join(current) if current else "no aliases")
        return 0
    body = {"aliases": edited_aliases(current, args.action, args.aliases, owner="room")}
    room = asyncio.run(
        call("PATCH", f"{url}/v1/rooms/{quote(found[0]['slug'], safe='')}", args.token, body)
    )
    also = ", ".join(room["aliases"]) or "no aliases"
    print(f"room {room['room']} ({room['slug']}): {also} (live on {url})")
    return 0
