"""``atmosphere-bridge floors ...``: the home's floors and which rooms are on them.

``floors list`` prints every floor (by level) with its rooms, and the rooms on no floor;
``floors add NAME [--level N] [--alias WORD ...]`` adds one; ``floors change FLOOR
[--name NEW] [--level N] [--alias WORD ...|--no-aliases]`` renames, re-levels or
re-aliases one; ``floors delete FLOOR`` deletes one (its rooms are then on no floor);
``floors room ROOM FLOOR`` puts a room on a floor (``--none``: on no floor). All talk
to the running bridge through its API (``/v1/floors``, ``PATCH /v1/rooms/{room}``;
``--url`` or the configured API address, ``--token`` or ``$ATMOSPHERE_BRIDGE_TOKEN``).
FLOOR and ROOM are a name, slug or alias.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any
from urllib.parse import quote

from bridge.errors import InvalidParamsError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``floors`` command group."""
    from bridge.cli.client import add_client_args

    parser = subparsers.add_parser("floors", help="list floors and put rooms on them")
    sub = parser.add_subparsers(dest="floors_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("list", help="list floors with their rooms")
    p.add_argument("--json", action="store_true", help="print the raw JSON answer")
    add_client_args(p)
    p.set_defaults(func=list_command)

    p = sub.add_parser("add", help="add a floor")
    p.add_argument("name", help="the floor's name, e.g. 'First Floor'")
    p.add_argument("--level", type=int, help="0 the ground floor (default), 1 above, -1 below")
    p.add_argument("--alias", action="append", dest="aliases", metavar="WORD", help="repeatable")
    add_client_args(p)
    p.set_defaults(func=add_command)

    p = sub.add_parser("change", help="rename a floor, change its level or its aliases")
    p.add_argument("floor", help="the floor's name, slug or alias")
    p.add_argument("--name", help="its new name")
    p.add_argument("--level", type=int, help="its new level")
    p.add_argument("--alias", action="append", dest="aliases", metavar="WORD", help="repeatable")
    p.add_argument("--no-aliases", action="store_true", help="remove every alias")
    add_client_args(p)
    p.set_defaults(func=change_command)

    p = sub.add_parser("delete", help="delete a floor (its rooms are then on no floor)")
    p.add_argument("floor", help="the floor's name, slug or alias")
    add_client_args(p)
    p.set_defaults(func=delete_command)

    p = sub.add_parser("room", help="put a room on a floor")
    p.add_argument("room", help="the room's name, slug or alias")
    p.add_argument("floor", nargs="?", help="the floor's name, slug or alias")
    p.add_argument("--none", action="store_true", help="take the room off its floor")
    add_client_args(p)
    p.set_defaults(func=room_command)


def _call(args: argparse.Namespace, method: str, path: str, body: Any = None) -> Any:
    from bridge.cli.client import base_url, call

    return asyncio.run(call(method, f"{base_url(args)}{path}", args.token, body))


def format_floors(answer: dict[str, Any]) -> list[str]:
    """Return the lines ``floors list`` prints."""
    lines = []
    for floor in sorted(answer.get("floors") or [], key=lambda f: -int(f["level"])):
        rooms = ", ".join(r["room"] for r in floor.get("rooms") or []) or "no rooms"
        also = f"; also called {', '.join(floor['aliases'])}" if floor.get("aliases") else ""
        lines.append(f"{floor['floor']} ({floor['slug']}, level {floor['level']}): {rooms}{also}")
        if floor.get("waiting_rooms"):
            lines.append(f"  waiting for devices: {', '.join(floor['waiting_rooms'])}")
    loose = answer.get("rooms_without_floor") or []
    if loose:
        lines.append(f"on no floor: {', '.join(r['room'] for r in loose)}")
    return lines or ["no floors yet"]


def _said(floor: dict[str, Any]) -> str:
    rooms = ", ".join(r["room"] for r in floor.get("rooms") or []) or "no rooms"
    return f"floor {floor['floor']} ({floor['slug']}, level {floor['level']}): {rooms}"


def list_command(args: argparse.Namespace) -> int:
    """Print the running bridge's floors."""
    answer = _call(args, "GET", "/v1/floors")
    print(json.dumps(answer, indent=2) if args.json else "\n".join(format_floors(answer)))
    return 0


def add_command(args: argparse.Namespace) -> int:
    """Add a floor on the running bridge."""
    body: dict[str, Any] = {"name": args.name}
    if args.level is not None:
        body["level"] = args.level
    if args.aliases:
        body["aliases"] = args.aliases
    print(_said(_call(args, "POST", "/v1/floors", body)))
    return 0


def change_command(args: argparse.Namespace) -> int:
    """Rename, re-level or re-alias a floor on the running bridge."""
    body: dict[str, Any] = {}
    if args.name is not None:
        body["name"] = args.name
    if args.level is not None:
        body["level"] = args.level
    if args.aliases and args.no_aliases:
        raise InvalidParamsError("give --alias or --no-aliases, not both")
    if args.aliases or args.no_aliases:
        body["aliases"] = args.aliases or []
    if not body:
        raise InvalidParamsError("give --name, --level, --alias or --no-aliases")
    floor = _call(args, "PATCH", f"/v1/floors/{quote(args.floor, safe='')}", body)
    print(_said(floor))
    return 0


def delete_command(args: argparse.Namespace) -> int:
    """Delete a floor on the running bridge."""
    answer = _call(args, "DELETE", f"/v1/floors/{quote(args.floor, safe='')}")
    print(f"deleted floor {answer['deleted']['floor']}")
    return 0


def room_command(args: argparse.Namespace) -> int:
    """Put a room on a floor (or on none) on the running bridge."""
    if (args.floor is None) == (not args.none):
        raise InvalidParamsError("give a FLOOR or --none")
    body = {"floor": None if args.none else args.floor}
    room = _call(args, "PATCH", f"/v1/rooms/{quote(args.room, safe='')}", body)
    where = f"on {room['floor']}" if room.get("floor") else "on no floor"
    print(f"room {room['room']} ({room['slug']}) is {where}")
    return 0
