"""``atmosphere-bridge token``: issue and inspect agent tokens with the node key.

``token issue --agent ID --perm P… --ttl 1d [--max-hops N] [--allowed-node N…]
[--rate N]`` prints a token signed by ``<state-dir>/node.key``; ``token inspect TOKEN``
verifies it against the node key and ``auth.trusted_issuers`` and prints its contents
(exit 1 with the reason when it is not valid). Issued tokens are recorded (without the
raw token) in ``<state-dir>/bridge.db``; ``token list`` shows them.
"""

from __future__ import annotations

import argparse
import json
import re
import time

from bridge.api.auth import MAX_AUTH_HEADER
from bridge.auth.tokens import (
    Constraints,
    IssuedTokens,
    TokenVerifier,
    issue_token,
    parse_token,
)
from bridge.cli.keys import add_state_dir, config_from, load_node_key
from bridge.errors import InvalidRequestError
from bridge.storage import Database

DB_FILE_NAME = "bridge.db"

_TTL = re.compile(r"^(\d+(?:\.\d+)?)([smhdw]?)$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_ttl(text: str) -> float:
    """Return seconds for ``30s``, ``15m``, ``2h``, ``1d``, ``1w`` or plain seconds."""
    match = _TTL.match(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise InvalidRequestError(f"invalid ttl {text!r}: use e.g. 30s, 15m, 2h, 1d, 1w")
    return float(match.group(1)) * _UNITS[match.group(2)]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``token`` command group."""
    parser = subparsers.add_parser("token", help="issue and inspect agent tokens")
    sub = parser.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    issue = sub.add_parser("issue", help="issue a token signed by the node key")
    add_state_dir(issue)
    issue.add_argument("--agent", required=True, help="agent id the token is for")
    issue.add_argument(
        "--perm", nargs="+", action="extend", default=[], metavar="P",
        help="permission pattern(s), e.g. device:control:* (repeatable)",
    )
    issue.add_argument("--ttl", default="1d", help="lifetime: 30s, 15m, 2h, 1d, 1w (default 1d)")
    issue.add_argument("--max-hops", type=int, help="most mesh hops a call may take")
    issue.add_argument(
        "--allowed-node", nargs="+", action="extend", default=[], metavar="N",
        help="node id(s) the token is valid on",
    )
    issue.add_argument("--rate", type=int, help="calls per minute")
    issue.set_defaults(func=issue_command)
    inspect = sub.add_parser("inspect", help="verify a token and show its contents")
    add_state_dir(inspect)
    inspect.add_argument("token", help="the token")
    inspect.set_defaults(func=inspect_command)
    listing = sub.add_parser("list", help="list tokens this node issued")
    add_state_dir(listing)
    listing.add_argument("--agent", help="only this agent's tokens")
    listing.add_argument("--limit", type=int, default=100, help="most tokens to show (100)")
    listing.set_defaults(func=list_command)


def issue_command(args: argparse.Namespace) -> int:
    """Print a new token."""
    config = config_from(args)
    key = load_node_key(config)
    raw = issue_token(
        key,
        agent_id=args.agent,
        permissions=args.perm,
        ttl_s=parse_ttl(args.ttl),
        constraints=Constraints(
            max_hops=args.max_hops,
            allowed_nodes=tuple(args.allowed_node),
            rate_limit_per_minute=args.rate,
        ),
    )
    # A token must fit in one Authorization header this bridge accepts, else it is useless.
    fits = min(MAX_AUTH_HEADER, config.api.max_header_bytes) - len("Bearer ")
    if len(raw) > fits:
        raise InvalidRequestError(
            f"this token would be {len(raw)} bytes, more than the {fits} an Authorization "
            "header may carry (api.max_header_bytes); grant fewer, broader permissions "
            "(e.g. 'device:control:*')",
            {"token_bytes": len(raw), "max_bytes": fits},
        )
    db = Database(config.state_dir / DB_FILE_NAME)
    try:
        IssuedTokens(db).record_sync(raw)
    finally:
        db.close()
    print(raw)
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Print the tokens this node issued as JSON lines."""
    config = config_from(args)
    db = Database(config.state_dir / DB_FILE_NAME)
    try:
        for doc in IssuedTokens(db).list_sync(agent_id=args.agent, limit=args.limit):
            print(json.dumps(doc))
    finally:
        db.close()
    return 0


def inspect_command(args: argparse.Namespace) -> int:
    """Verify a token and print it as JSON."""
    config = config_from(args)
    trusted = [*config.auth.trusted_issuers]
    if (config.state_dir / "node.key").exists():
        trusted.append(load_node_key(config).public_key_b64)
    parse_token(args.token)
    token = TokenVerifier(trusted, clock_skew_s=config.auth.clock_skew_s).verify(args.token)
    doc = token.to_json()
    doc["valid"] = True
    doc["expires_in_s"] = round(token.expires_at - time.time(), 1)
    print(json.dumps(doc, indent=2))
    return 0
