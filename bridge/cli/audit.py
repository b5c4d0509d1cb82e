"""``atmosphere-bridge audit``: query the append-only audit log in the state directory.

Reads ``<state-dir>/bridge.db`` directly (a running bridge may hold it; SQLite WAL
allows the concurrent read), newest entries first, filtered by agent, tool, decision,
outcome and age.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime

from bridge.auth.audit import AuditLog
from bridge.cli.config import add_state_dir
from bridge.cli.keys import config_from
from bridge.cli.token import parse_ttl
from bridge.errors import NotFoundError
from bridge.storage import Database

DB_FILE_NAME = "bridge.db"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` command."""
    parser = subparsers.add_parser("audit", help="show the audit log of calls")
    add_state_dir(parser)
    parser.add_argument("--agent", help="only this agent")
    parser.add_argument("--tool", help="only this tool identity")
    parser.add_argument("--decision", help="only this decision (allowed, permission_denied, …)")
    parser.add_argument("--outcome", choices=["completed", "error"], help="only this outcome")
    parser.add_argument("--since", help="only entries newer than this age (e.g. 1h, 2d)")
    parser.add_argument("--limit", type=int, default=50, help="most entries to show (50)")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    parser.add_argument(
        "--rejections",
        action="store_true",
        help="show the per-minute counters of requests refused without a valid token",
    )
    parser.set_defaults(func=audit_command)


def audit_command(args: argparse.Namespace) -> int:
    """Print matching audit entries."""
    config = config_from(args)
    path = config.state_dir / DB_FILE_NAME
    if not path.exists():
        raise NotFoundError(f"no database at {path}")
    db = Database(path)
    if args.rejections:
        try:
            since = time.time() - parse_ttl(args.since) if args.since else None
            counters = AuditLog(db).rejections_sync(since=since)[: max(1, args.limit)]
        finally:
            db.close()
        for row in counters:
            when = datetime.fromtimestamp(row["minute"], tz=UTC).strftime("%Y-%m-%d %H:%M")
            print(
                json.dumps(row)
                if args.json
                else f"{when}  {row['source']:<40} {row['reason']:<16} {row['count']}"
            )
        return 0
    try:
        entries = AuditLog(db).query_sync(
            agent_id=args.agent,
            tool=args.tool,
            decision=args.decision,
            outcome=args.outcome,
            since=time.time() - parse_ttl(args.since) if args.since else None,
            limit=args.limit,
        )
    finally:
        db.close()
    for entry in entries:
        if args.json:
            print(json.dumps(entry.to_json(), ensure_ascii=False))
            continue
        when = datetime.fromtimestamp(entry.ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        print(
            f"{when}  {entry.agent_id or '-':<16} {entry.tool or '-':<36} "
            f"{entry.decision:<22} {entry.outcome:<9} {entry.error_code or '':<20} "
            f"{entry.duration_ms:.1f}ms"
        )
    return 0
