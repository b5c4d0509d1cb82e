"""``atmosphere-bridge mesh``: this node's mesh identity and the peers a running bridge knows.

``mesh id`` reads (or creates) the node key in the state directory and prints the node
id and key fingerprint to put in other nodes' ``mesh.trusted_nodes``. ``mesh peers``
asks the running bridge (``--url``, default the configured API address; ``--token`` or
``$ATMOSPHERE_BRIDGE_TOKEN`` as bearer token) for ``GET /v1/mesh/peers`` and prints one
line per peer, untrusted ones included so their fingerprints can be checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from bridge.cli.client import BridgeUnreachableError, add_client_args, base_url, call
from bridge.cli.config import add_state_dir, config_of
from bridge.errors import BridgeError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mesh`` command group."""
    parser = subparsers.add_parser("mesh", help="mesh identity and peers")
    sub = parser.add_subparsers(dest="mesh_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("peers", help="list the peers the running bridge knows")
    add_client_args(p)
    p.add_argument("--json", action="store_true", help="print the raw JSON answer")
    p.set_defaults(func=peers_command)

    p = sub.add_parser("id", help="print this node's mesh id and key fingerprint")
    add_state_dir(p, "state directory holding the node key")
    p.set_defaults(func=id_command)


async def fetch_peers(url: str, token: str | None = None) -> dict[str, Any]:
    """Return the running bridge's ``/v1/mesh/peers`` answer (raise ``BridgeError``)."""
    body = await call("GET", f"{url}/v1/mesh/peers", token, timeout_s=5)
    if not isinstance(body, dict):
        raise BridgeUnreachableError(f"the bridge at {url} answered something else")
    return body


def format_peers(body: dict[str, Any]) -> list[str]:
    """Return the printable lines of a peers answer."""
    me = body.get("self", {})
    lines = [
        f"this node  {me.get('name')}  id {me.get('node_id')}  trust {me.get('trust')}",
        f"           fingerprint {me.get('fingerprint')}",
    ]
    peers = body.get("peers", [])
    if not peers:
        lines.append("no peers known")
        return lines
    lines.append(f"{'NAME':<20} {'NODE ID':<27} {'TRUSTED':<8} {'REACH':<6} {'TOOLS':>5}  URLS")
    for peer in peers:
        ann = peer.get("announcement") or {}
        lines.append(
            f"{peer.get('name') or '?'!s:<20} {peer.get('node_id', ''):<27} "
            f"{'yes' if peer.get('trusted') else 'NO':<8} "
            f"{'yes' if peer.get('reachable') else 'no':<6} {ann.get('tools', '-'):>5}  "
            f"{' '.join(peer.get('urls') or [])}"
        )
        if not peer.get("trusted"):
            lines.append(f"{'':<20} fingerprint {peer.get('fingerprint')}")
    return lines


def peers_command(args: argparse.Namespace) -> int:
    """Print the running bridge's peers."""
    body = asyncio.run(fetch_peers(base_url(args), args.token))
    if args.json:
        print(json.dumps(body, indent=2))
    else:
        print("\n".join(format_peers(body)))
    return 0


def id_command(args: argparse.Namespace) -> int:
    """Print this node's mesh id and fingerprint."""
    from bridge.auth.keys import KEY_FILE_NAME, NodeKey
    from bridge.mesh.node_id import NodeIdentity

    config = config_of(args)
    state_dir = config.state_dir
    try:
        key = NodeKey.load_or_create(state_dir / KEY_FILE_NAME)
    except OSError as err:
        raise BridgeError(f"cannot read or create the node key in {state_dir}: {err}") from err
    ident = NodeIdentity.from_key(key, config.mesh.node_name)
    print(f"name        {ident.name}")
    print(f"node id     {ident.node_id}")
    print(f"fingerprint {ident.fingerprint}")
    print(f"public key  {ident.public_key_b64}")
    return 0
