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
import os
import sys
from typing import Any

from bridge.cli.keys import add_api_options, api_url, config_from
from bridge.errors import BridgeError, InvalidRequestError, UnauthenticatedError, error_from_json

TOKEN_ENV = "ATMOSPHERE_BRIDGE_TOKEN"  # noqa: S105 - the variable's name, not a secret


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


def token_from(args: argparse.Namespace) -> str:
    """Return the token from ``--token`` or the environment."""
    token = args.token or os.environ.get(TOKEN_ENV)
    if not token:
        raise UnauthenticatedError(f"give a token with --token or ${TOKEN_ENV}")
    return str(token)


async def request_json(
    method: str, url: str, token: str, body: Any = None, timeout_s: float = 330.0
) -> tuple[int, Any]:
    """Send one API request and return the status and JSON body."""
    import aiohttp  # only commands that talk to a bridge pay for the client's import

    headers = {"Authorization": f"Bearer {token}"}
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.request(method, url, json=body, headers=headers) as resp,
        ):
            return resp.status, await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError) as err:
        raise ConnectionError(f"cannot reach the bridge at {url}: {err}") from err


def api_error(status: int, body: Any) -> BridgeError | None:
    """Return the error in an API answer, if it is one."""
    if status < 400:
        return None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return error_from_json(body["error"])
    return InvalidRequestError(f"the bridge answered HTTP {status}")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``invoke`` command."""
    parser = subparsers.add_parser("invoke", help="call a tool on a running bridge")
    parser.add_argument("tool", metavar="IDENTITY", help="[namespace:]name[@version]")
    parser.add_argument("params", nargs="*", metavar="key=value", help="parameters")
    add_api_options(parser)
    parser.add_argument("--state-dir", help=argparse.SUPPRESS)
    parser.add_argument("--async", dest="run_async", action="store_true", help="start a job")
    parser.add_argument("--wait", action="store_true", help="with --async: poll until done")
    parser.add_argument("--idempotency-key", help="key making retries act once")
    parser.set_defaults(func=invoke_command)


def invoke_command(args: argparse.Namespace) -> int:
    """Call the tool and print the answer."""
    return asyncio.run(_invoke(args))


async def _invoke(args: argparse.Namespace) -> int:
    config = config_from(args)
    base = api_url(args, config)
    token = token_from(args)
    body: dict[str, Any] = {"tool": args.tool, "params": parse_params(args.params)}
    if args.idempotency_key:
        body["idempotency_key"] = args.idempotency_key
    if not args.run_async:
        status, answer = await request_json("POST", f"{base}/v1/invoke", token, body)
    else:
        status, answer = await request_json("POST", f"{base}/v1/jobs", token, body)
        while (
            args.wait and status < 400 and isinstance(answer, dict)
            and answer.get("status") in ("queued", "running")
        ):
            await asyncio.sleep(0.5)
            status, answer = await request_json(
                "GET", f"{base}/v1/jobs/{answer['job_id']}", token
            )
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    if status >= 400:
        print(f"error: HTTP {status}", file=sys.stderr)
        return 1
    return 0 if not isinstance(answer, dict) or answer.get("status") != "error" else 1
