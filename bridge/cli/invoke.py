"""``atmosphere-bridge invoke IDENTITY key=value… [--token T] [--async]``: call a tool.

Talks to a running bridge over its HTTP API. Each ``key=value`` becomes a parameter; a
value that parses as JSON (``5``, ``true``, ``[1,2]``, ``{"a":1}``, ``"text"``) is used
as such, anything else as a string. ``--async`` starts a job and prints it (``--wait``
polls until it ends). The token comes from ``--token`` or ``$ATMOSPHERE_BRIDGE_TOKEN``.
Prints the ``tool_response`` (or job) as JSON; exits 1 when the call failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from bridge.cli.client import TOOL_CALL_TIMEOUT_S, base_url, request, token_from
from bridge.cli.config import add_state_dir
from bridge.cli.keys import add_api_options, config_from
from bridge.errors import InvalidRequestError


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """Turn ``key=value`` strings into parameters (JSON values where they parse)."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise InvalidRequestError(f"parameter {pair!r} is not key=value")
        try:
            params[key] = json.loads(text)
        except json.JSONDecodeError:
            params[key] = text
    return params


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``invoke`` command."""
    parser = subparsers.add_parser("invoke", help="call a tool on a running bridge")
    parser.add_argument("tool", metavar="IDENTITY", help="[namespace:]name[@version]")
    parser.add_argument("params", nargs="*", metavar="key=value", help="parameters")
    add_api_options(parser)
    add_state_dir(parser, argparse.SUPPRESS)
    parser.add_argument("--async", dest="run_async", action="store_true", help="start a job")
    parser.add_argument("--wait", action="store_true", help="with --async: poll until done")
    parser.add_argument("--idempotency-key", help="key making retries act once")
    parser.set_defaults(func=invoke_command)


def invoke_command(args: argparse.Namespace) -> int:
    """Call the tool and print the answer."""
    return asyncio.run(_invoke(args))


async def _invoke(args: argparse.Namespace) -> int:
    config = config_from(args)
    base = base_url(args, config)
    token = token_from(args)
    body: dict[str, Any] = {"tool": args.tool, "params": parse_params(args.params)}
    if args.idempotency_key:
        body["idempotency_key"] = args.idempotency_key
    if not args.run_async:
        status, answer = await request(
            "POST", f"{base}/v1/invoke", token, body, timeout_s=TOOL_CALL_TIMEOUT_S
        )
    else:
        status, answer = await request(
            "POST", f"{base}/v1/jobs", token, body, timeout_s=TOOL_CALL_TIMEOUT_S
        )
        while (
            args.wait
            and status < 400
            and isinstance(answer, dict)
            and answer.get("status") in ("queued", "running")
        ):
            await asyncio.sleep(0.5)
            status, answer = await request(
                "GET", f"{base}/v1/jobs/{answer['job_id']}", token, timeout_s=TOOL_CALL_TIMEOUT_S
            )
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    if status >= 400:
        print(f"error: HTTP {status}", file=sys.stderr)
        return 1
    return 0 if not isinstance(answer, dict) or answer.get("status") != "error" else 1
