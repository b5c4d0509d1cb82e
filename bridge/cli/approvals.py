"""``atmosphere-bridge approvals``: list, approve and deny confirmations of dangerous calls.

Talks to a running bridge; the token (``--token`` or ``$ATMOSPHERE_BRIDGE_TOKEN``)
must grant ``admin:approve``. Each vote is recorded and signed by the bridge's node key.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from bridge.cli.client import base_url, call, token_from
from bridge.cli.keys import add_api_options, config_from


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``approvals`` command group."""
    parser = subparsers.add_parser("approvals", help="decide confirmations of dangerous calls")
    sub = parser.add_subparsers(dest="approvals_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="list approvals (pending by default)")
    listing.add_argument(
        "--status",
        default="pending",
        choices=["pending", "approved", "denied", "timeout", "interrupted", "all"],
    )
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_api_options(listing)
    listing.set_defaults(func=list_command)
    for verb in ("approve", "deny"):
        decide = sub.add_parser(verb, help=f"{verb} a pending call")
        decide.add_argument("approval_id", help="the approval id (see 'approvals list')")
        add_api_options(decide)
        decide.set_defaults(func=decide_command, decision=verb)


def list_command(args: argparse.Namespace) -> int:
    """Print approvals."""
    config = config_from(args)
    query = "" if args.status == "all" else f"?status={args.status}"
    body = asyncio.run(
        call("GET", f"{base_url(args, config)}/v1/approvals{query}", token_from(args))
    )
    if args.json:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    if not body["approvals"]:
        print("no approvals")
    for item in body["approvals"]:
        left = max(0.0, item["expires_at"] - time.time())
        print(
            f"{item['id']}  {item['status']:<11} {item['approvals']}/{item['required']}  "
            f"{item['tool']}  by {item['agent_id']}  ({left:.0f}s left)\n    {item['message']}"
        )
    return 0


def decide_command(args: argparse.Namespace) -> int:
    """Approve or deny one approval."""
    config = config_from(args)
    body = asyncio.run(
        call(
            "POST",
            f"{base_url(args, config)}/v1/approvals/{args.approval_id}",
            token_from(args),
            {"decision": args.decision},
        )
    )
    print(f"{body['id']}: {body['status']} ({body['approvals']}/{body['required']} approvals)")
    return 0
