"""Command-line entry point: one sub-command module per group, errors shown without tracebacks.

Each module listed in ``COMMAND_MODULES`` exposes ``register(subparsers)``, which adds its
parsers and sets ``func`` (``(argparse.Namespace) -> int``) on each of them.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from bridge.errors import BridgeError

COMMAND_MODULES: tuple[str, ...] = (
    "bridge.cli.run",
    "bridge.cli.config",
    "bridge.cli.tools",
    "bridge.cli.doctor",
    "bridge.cli.mesh",
    "bridge.cli.sites",
    "bridge.cli.generate",
    "bridge.cli.devices",
    "bridge.cli.rooms",
    "bridge.cli.floors",
    "bridge.cli.commission",
    "bridge.cli.demo",
    "bridge.cli.say",
    "bridge.cli.wyoming",
    "bridge.cli.keys",
    "bridge.cli.token",
    "bridge.cli.invoke",
    "bridge.cli.audit",
    "bridge.cli.approvals",
    "bridge.cli.automations",
    "bridge.cli.mcp",
    "bridge.cli.console",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the parser with every command group registered."""
    parser = argparse.ArgumentParser(
        prog="atmosphere-bridge",
        description="Atmosphere Matter Bridge: Matter devices as tools for agents and mesh peers.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _add_config_option(parser, top=True)
    return parser


def _add_config_option(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """Accept ``--config PATH`` before or after any (sub)command name.

    Sub-parsers use ``SUPPRESS`` so a value given before the command is not reset;
    ``args.config`` is ``None`` when absent (see ``bridge.config.resolve_config_path``).
    """
    if "--config" not in parser._option_string_actions:
        parser.add_argument(
            "--config",
            type=Path,
            metavar="PATH",
            default=None if top else argparse.SUPPRESS,
            help="configuration file (default: $ATMOSPHERE_BRIDGE_CONFIG, "
            "then /etc/atmosphere-bridge/config.yaml if present)",
        )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_config_option(child, top=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        code: int = func(args)
    except BridgeError as err:
        print(f"error [{err.code.value}]: {err.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
