"""``atmosphere-bridge mcp``: a stdio MCP server for desktop agent clients.

``atmosphere-bridge mcp --url URL`` speaks MCP on stdin/stdout and relays to the running
bridge at ``URL`` (default: from the configuration) — its ``/mcp`` endpoint, so the
tool list is filtered for the token and calls pass the bridge's pipeline (see
``bridge.mcp.proxy``). The token comes from ``--token-file`` (owner-only file),
``$ATMOSPHERE_BRIDGE_TOKEN`` or ``--token`` (visible in ``ps``; avoid on shared
machines). Before serving, the bridge is asked once (``GET /v1/openapi.json`` with the
token): an unreachable bridge or a refused token ends the command with one line on
stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import stat
from pathlib import Path

from bridge.cli.client import TOKEN_ENV, base_url, call
from bridge.errors import InvalidRequestError, UnauthenticatedError

PREFLIGHT_TIMEOUT_S = 10.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` command."""
    parser = subparsers.add_parser(
        "mcp", help="serve the bridge's tools to a desktop agent over MCP on stdio"
    )
    parser.add_argument("--url", help="API base URL of the running bridge (default from config)")
    parser.add_argument(
        "--token-file", type=Path, help="file holding the agent token (readable by its owner only)"
    )
    parser.add_argument(
        "--token",
        help=f"agent token (default ${TOKEN_ENV}; prefer --token-file: arguments show in ps)",
    )
    parser.set_defaults(func=mcp_command)


def token_from(args: argparse.Namespace) -> str:
    """Return the token from ``--token-file``, ``--token`` or the environment."""
    path: Path | None = args.token_file
    if path is not None:
        try:
            mode = path.stat().st_mode
            text = path.read_text().strip()
        except OSError as err:
            raise InvalidRequestError(f"cannot read the token file {path}: {err.strerror}") from err
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise InvalidRequestError(f"{path} must be readable by its owner only (chmod 600)")
        if not text:
            raise UnauthenticatedError(f"the token file {path} is empty")
        return text
    token = args.token or os.environ.get(TOKEN_ENV)
    if not token:
        raise UnauthenticatedError(f"give a token with --token-file, ${TOKEN_ENV} or --token")
    return str(token).strip()


def mcp_command(args: argparse.Namespace) -> int:
    """Check the bridge and the token, then serve MCP on stdio until stdin closes."""
    from bridge.mcp.proxy import mcp_endpoint, serve_stdio

    if not getattr(args, "verbose", False):
        # stderr is the desktop client's log: one line per relayed HTTP request is noise.
        logging.getLogger("httpx2").setLevel(logging.WARNING)
    token = token_from(args)
    endpoint = mcp_endpoint(base_url(args))
    base = endpoint.removesuffix("/mcp")
    asyncio.run(call("GET", f"{base}/v1/openapi.json", token, timeout_s=PREFLIGHT_TIMEOUT_S))
    asyncio.run(serve_stdio(endpoint, token))
    return 0
