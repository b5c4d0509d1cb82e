"""``atmosphere-bridge keys``: create and show the node's ed25519 key.

``keys init`` writes ``<state-dir>/node.key`` (mode 0600) and refuses to replace an
existing key unless ``--force`` is given; ``keys show`` prints the public key. The
helpers here (configuration with ``--state-dir``, the node key path) are shared by the
other auth and invocation commands.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.cli.config import add_state_dir, config_of
from bridge.errors import NotFoundError

if TYPE_CHECKING:
    from bridge.config import BridgeConfig


def add_api_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--url`` and ``--token`` for commands that talk to a running bridge."""
    parser.add_argument("--url", help="bridge API URL (default: from the configuration)")
    parser.add_argument(
        "--token", help="bearer token (default: $ATMOSPHERE_BRIDGE_TOKEN)", default=None
    )


def config_from(args: argparse.Namespace) -> BridgeConfig:
    """Return the resolved configuration of this command line (``--state-dir`` included)."""
    return config_of(args)


def key_path(config: BridgeConfig) -> Path:
    """Return the node key file of ``config``."""
    return config.state_dir / KEY_FILE_NAME


def load_node_key(config: BridgeConfig) -> NodeKey:
    """Load the node key; raise ``NotFoundError`` telling how to create it."""
    path = key_path(config)
    if not path.exists():
        raise NotFoundError(
            f"no node key at {path}; create one with 'atmosphere-bridge keys init'",
            {"path": str(path)},
        )
    return NodeKey.load(path)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``keys`` command group."""
    parser = subparsers.add_parser("keys", help="manage the node's signing key")
    sub = parser.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    init = sub.add_parser("init", help="create the node key (0600)")
    add_state_dir(init)
    init.add_argument("--force", action="store_true", help="replace an existing key")
    init.add_argument("--json", action="store_true", help="print JSON")
    init.set_defaults(func=init_command)
    show = sub.add_parser("show", help="print the node's public key")
    add_state_dir(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=show_command)


def _print(args: argparse.Namespace, path: Path, key: NodeKey, verb: str) -> None:
    if args.json:
        print(json.dumps({"path": str(path), "public_key": key.public_key_b64}))
    else:
        print(f"{verb} {path}")
        print(f"public key: {key.public_key_b64}")


def init_command(args: argparse.Namespace) -> int:
    """Create the node key."""
    config = config_from(args)
    path = key_path(config)
    key = NodeKey.create(path, force=args.force)
    _print(args, path, key, "created")
    return 0


def show_command(args: argparse.Namespace) -> int:
    """Print the node's public key."""
    config = config_from(args)
    _print(args, key_path(config), load_node_key(config), "key")
    return 0
