"""``atmosphere-bridge tools``: list, show, validate and discover tool definitions.

``list``/``show``/``discover`` work on the tools this node would load (core tools plus
the configured manifest), built against the state directory's database; ``validate``
checks definition files (JSON or YAML) and prints one line per problem.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.cli.config import add_state_dir, resolved_config
from bridge.errors import BridgeError

if TYPE_CHECKING:
    from bridge.service import BridgeService
    from bridge.tools.registry import RegisteredTool


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tools`` command group."""
    parser = subparsers.add_parser("tools", help="list, show, validate and discover tools")
    add_state_dir(parser, "state directory (for the core tools)")
    sub = parser.add_subparsers(dest="tools_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("list", help="list the tools this node loads")
    p.add_argument("--json", action="store_true", help="print JSON (full definitions)")
    p.add_argument("--namespace")
    p.add_argument("--category")
    p.add_argument("--tag")
    p.set_defaults(func=list_command)

    p = sub.add_parser("show", help="print one tool's definition")
    p.add_argument("identity", help="identity or [namespace:]name[@version]")
    p.set_defaults(func=show_command)

    p = sub.add_parser("validate", help="check tool definition files (JSON or YAML)")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    p.set_defaults(func=validate_command)

    p = sub.add_parser("discover", help="rank tools by relevance to a free-text query")
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=discover_command)


def _with_service[T](args: argparse.Namespace, fn: Callable[[BridgeService], T]) -> T:
    """Run ``fn`` on a started service without Matter or the API.

    The state directory is ``--state-dir``, else the configured one if it exists, else
    a temporary directory (so listing tools never creates state as a side effect).
    """
    # Imported here: the service pulls in aiohttp and the tool stack, which every other
    # command (and ``--help``) would otherwise pay for at start-up.
    from bridge.config import Source
    from bridge.service import BridgeService

    resolved = resolved_config(args)
    config = resolved.config
    with tempfile.TemporaryDirectory(prefix="atmosphere-tools-") as scratch:
        if resolved.sources["state_dir"] is not Source.FLAG and not config.state_dir.is_dir():
            config = replace(config, state_dir=Path(scratch))

        async def go() -> T:
            service = BridgeService(config, enable_matter=False)
            await service.start()
            try:
                return fn(service)
            finally:
                await service.stop()

        return asyncio.run(go())


def _line(entry: RegisteredTool) -> str:
    d = entry.definition
    flag = "" if entry.available else "  (unavailable)"
    return f"{d.identity:<48} {d.description}{flag}"


def list_command(args: argparse.Namespace) -> int:
    """Print the tools, one per line or as JSON."""

    def run(service: BridgeService) -> list[RegisteredTool]:
        return service.registry.list(namespace=args.namespace, category=args.category, tag=args.tag)

    entries = _with_service(args, run)
    if args.json:
        print(json.dumps([_entry_json(e) for e in entries], indent=2))
    else:
        for entry in entries:
            print(_line(entry))
    return 0


def _entry_json(entry: RegisteredTool) -> dict[str, Any]:
    return {"identity": entry.identity, "available": entry.available, **entry.definition.to_json()}


def show_command(args: argparse.Namespace) -> int:
    """Print one tool's full definition as JSON."""
    entry = _with_service(args, lambda s: s.registry.resolve(args.identity))
    print(json.dumps(_entry_json(entry), indent=2))
    return 0


def validate_command(args: argparse.Namespace) -> int:
    """Check each file; print ``PATH: ok (identity)`` or ``PATH: problem`` per problem."""
    from bridge.tools.definition import ToolDefinition

    failed = 0
    for path in args.paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            print(f"{path}: cannot read: {err.strerror}", file=sys.stderr)
            failed += 1
            continue
        try:
            defn = ToolDefinition.from_text(text)
        except BridgeError as err:
            failed += 1
            errors = err.details.get("errors")
            if isinstance(errors, list) and errors:
                for problem in errors:
                    print(f"{path}: {problem['path']}: {problem['message']}", file=sys.stderr)
            else:
                print(f"{path}: {err.message}", file=sys.stderr)
            continue
        print(f"{path}: ok ({defn.identity})")
    return 1 if failed else 0


def discover_command(args: argparse.Namespace) -> int:
    """Print the best-matching tools with their scores."""
    query = " ".join(args.query)
    ranked = _with_service(args, lambda s: s.registry.discover(query, limit=args.limit))
    if args.json:
        print(json.dumps([{"score": score, **_entry_json(e)} for e, score in ranked], indent=2))
    else:
        for entry, score in ranked:
            print(f"{score:8.3f}  {_line(entry)}")
    return 0
