"""``atmosphere-bridge token``: issue and inspect agent tokens with the node key.

``token issue --agent ID --perm P… --ttl 1d [--max-hops N] [--allowed-node N…]
[--rate N]`` prints a token signed by ``<state-dir>/node.key``; ``token inspect TOKEN``
verifies it against the node key and ``auth.trusted_issuers`` and prints its contents
(exit 1 with the reason when it is not valid). Issued tokens are recorded in
``<state-dir>/bridge.db`` by id and hash only (never enough to rebuild one); ``token
list`` shows ``{id, agent_id, permissions, issued_at, expires_at, issued_by, revoked}``
per line and ``token revoke ID`` revokes one: through the running bridge when there is one (at once,
and gossiped to mesh peers), else in the database (the bridge loads it when it starts).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from urllib.parse import quote

from bridge.api.bearer import MAX_AUTH_HEADER
from bridge.auth.tokens import (
    Constraints,
    IssuedTokens,
    Revocations,
    TokenVerifier,
    issue_token,
    parse_token,
)
from bridge.cli.config import add_state_dir
from bridge.cli.keys import config_from, load_node_key
from bridge.errors import InvalidRequestError, NotFoundError
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
        "--perm",
        nargs="+",
        action="extend",
        default=[],
        metavar="P",
        help="permission pattern(s), e.g. device:control:* (repeatable)",
    )
    issue.add_argument("--ttl", default="1d", help="lifetime: 30s, 15m, 2h, 1d, 1w (default 1d)")
    issue.add_argument("--max-hops", type=int, help="most mesh hops a call may take")
    issue.add_argument(
        "--allowed-node",
        nargs="+",
        action="extend",
        default=[],
        metavar="N",
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
    revoke = sub.add_parser("revoke", help="revoke a token this node issued (by its id)")
    add_state_dir(revoke)
    revoke.add_argument("id", help="the token's id (see 'token list')")
    revoke.set_defaults(func=revoke_command)


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
        revoked = Revocations(db)
        for doc in IssuedTokens(db).list_sync(agent_id=args.agent, limit=args.limit):
            print(json.dumps({**doc, "revoked": doc["id"] in revoked}))
    finally:
        db.close()
    return 0


def revoke_command(args: argparse.Namespace) -> int:
    """Revoke a token by id; print its entry."""
    from bridge.cli.client import BridgeUnreachableError, call
    from bridge.cli.devices import running_bridge_url

    config = config_from(args)
    key = load_node_key(config)
    url = running_bridge_url(config.state_dir)
    if url is not None:
        # A one-minute token of our own, so the running bridge revokes (and gossips) it.
        admin = issue_token(
            key, agent_id="cli", permissions=["token:manage", "admin:tokens"], ttl_s=60
        )
        try:
            entry = asyncio.run(call("DELETE", f"{url}/v1/tokens/{quote(args.id, safe='')}", admin))
        except BridgeUnreachableError:
            url = None
        else:
            print(json.dumps(entry))
            return 0
    db = Database(config.state_dir / DB_FILE_NAME)
    try:
        entry = IssuedTokens(db).get_sync(args.id)
        if entry is None:
            raise NotFoundError(f"no token '{args.id[:64]}' was issued here", {"id": args.id[:64]})
        revocations = Revocations(db)
        if args.id not in revocations:
            revocations.revoke(key, args.id, entry["expires_at"])
    finally:
        db.close()
    print(json.dumps({**entry, "revoked": True}))
    return 0


def inspect_command(args: argparse.Namespace) -> int:
    """Verify a token and print it as JSON."""
    config = config_from(args)
    trusted = [*config.auth.trusted_issuers]
    if (config.state_dir / "node.key").exists():
        trusted.append(load_node_key(config).public_key_b64)
    parse_token(args.token)
    db = Database(config.state_dir / DB_FILE_NAME)
    try:
        revocations = Revocations(db)
    finally:
        db.close()
    token = TokenVerifier(
        trusted, clock_skew_s=config.auth.expiry_skew_s, revocations=revocations
    ).verify(args.token)
    doc = token.to_json()
    doc["valid"] = True
    doc["expires_in_s"] = round(token.expires_at - time.time(), 1)
    print(json.dumps(doc, indent=2))
    return 0
