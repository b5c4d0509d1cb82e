"""``atmosphere-bridge console link``: print a one-time sign-in link for the web console.

The link's code is stored hashed in ``<state-dir>/bridge.db`` (see
``bridge.console.sessions``) with the permissions the browser's session will get
(``--perm``, default ``*``) and a short lifetime (``--ttl``, default 10 minutes). The
URL is the running bridge's (its ``api.json``), else the configured API address.
"""

from __future__ import annotations

import argparse

from bridge.cli.client import base_url as bridge_url
from bridge.cli.config import add_state_dir
from bridge.cli.keys import config_from

DB_FILE_NAME = "bridge.db"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``console`` command group."""
    parser = subparsers.add_parser("console", help="the web console: sign-in links")
    sub = parser.add_subparsers(dest="console_command", metavar="ACTION", required=True)
    link = sub.add_parser("link", help="print a one-time link that signs a browser in")
    add_state_dir(link)
    link.add_argument(
        "--perm",
        nargs="+",
        action="extend",
        default=[],
        metavar="P",
        help="permissions of the console session (default: *, everything)",
    )
    link.add_argument("--ttl", default="10m", help="how long the link works (default 10m)")
    link.add_argument("--label", default="admin", help="names the session: agent console:LABEL")
    link.add_argument("--url", help="the bridge's base URL (default: the running bridge's)")
    link.set_defaults(func=link_command)


def make_link(
    state_dir: object,
    base_url: str,
    *,
    permissions: list[str] | None = None,
    ttl_s: float = 600.0,
    label: str = "admin",
) -> str:
    """Store a new one-time code for the bridge at ``state_dir``; return the sign-in URL."""
    from pathlib import Path

    from bridge.console.sessions import DEFAULT_PERMISSIONS, LinkStore
    from bridge.storage import Database

    db = Database(Path(str(state_dir)) / DB_FILE_NAME)
    try:
        code = LinkStore(db).create_sync(
            permissions=permissions or list(DEFAULT_PERMISSIONS), ttl_s=ttl_s, label=label
        )
    finally:
        db.close()
    return f"{base_url.rstrip('/')}/console/link?code={code}"


def link_command(args: argparse.Namespace) -> int:
    """Print a one-time sign-in link."""
    from bridge.cli.devices import running_bridge_url
    from bridge.cli.token import parse_ttl

    config = config_from(args)
    base = args.url or running_bridge_url(config.state_dir) or bridge_url(args, config)
    url = make_link(
        config.state_dir, base, permissions=args.perm, ttl_s=parse_ttl(args.ttl), label=args.label
    )
    print(url)
    return 0
