"""The CLI's one client of a running bridge's HTTP API.

Commands that talk to a running bridge find it (``--url``, else the configured API
address, a wildcard bind reached on loopback), send one JSON request with the bearer
token and get the JSON answer back. A bridge that cannot be reached, or answers
something that is not JSON, is ``BridgeUnreachableError``; an error the API answers is
raised as the ``BridgeError`` it names (``call``) or returned with the status
(``request`` + ``error_of``, for commands that print the answer either way).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from bridge.errors import (
    BridgeError,
    InternalError,
    InvalidRequestError,
    UnauthenticatedError,
    error_from_json,
)

if TYPE_CHECKING:
    from bridge.config import BridgeConfig

TOKEN_ENV = "ATMOSPHERE_BRIDGE_TOKEN"  # noqa: S105 - the variable's name, not a secret
# A tool call may wait for a confirmation (300 s by default) before it answers.
TOOL_CALL_TIMEOUT_S = 330.0


class BridgeUnreachableError(InternalError):
    """The running bridge's API cannot be reached or answered something other than JSON."""


def add_client_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--url`` and ``--token`` (default ``$ATMOSPHERE_BRIDGE_TOKEN``) to ``parser``."""
    parser.add_argument("--url", help="API base URL of the running bridge (default from config)")
    parser.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"agent token for the API (default ${TOKEN_ENV})",
    )


def base_url(args: argparse.Namespace, config: BridgeConfig | None = None) -> str:
    """Return the running bridge's API base URL: ``--url``, else the configured address."""
    if getattr(args, "url", None):
        return str(args.url).rstrip("/")
    # The configuration module loads jsonschema and YAML; only load it when needed.
    from bridge.cli.config import config_of
    from bridge.config import local_url

    if config is None:
        config = config_of(args)
    return local_url(config.api.host, config.api.port)


def token_from(args: argparse.Namespace) -> str:
    """Return the token from ``--token`` or the environment; raise when there is none."""
    token = getattr(args, "token", None) or os.environ.get(TOKEN_ENV)
    if not token:
        raise UnauthenticatedError(f"give a token with --token or ${TOKEN_ENV}")
    return str(token)


def headers(token: str | None) -> dict[str, str]:
    """Return the request headers carrying ``token`` as bearer token."""
    return {"Authorization": f"Bearer {token}"} if token else {}


async def request(
    method: str, url: str, token: str | None, body: Any = None, *, timeout_s: float = 60.0
) -> tuple[int, Any]:
    """Send one API request; return its HTTP status and JSON body."""
    import aiohttp  # only commands that talk to a bridge pay for the client's import

    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session,
            session.request(method, url, headers=headers(token), json=body) as resp,
        ):
            return resp.status, await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as err:
        raise BridgeUnreachableError(f"cannot reach the bridge at {url}: {err}") from err


def error_of(status: int, body: Any) -> BridgeError | None:
    """Return the error an API answer carries (an ``error`` object or an HTTP error), if any."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return error_from_json(body["error"])
    if status >= 400:
        return InvalidRequestError(f"the bridge answered HTTP {status}")
    return None


async def call(
    method: str, url: str, token: str | None, body: Any = None, *, timeout_s: float = 60.0
) -> Any:
    """Send one API request and return its JSON answer; raise the error the API answered."""
    status, answer = await request(method, url, token, body, timeout_s=timeout_s)
    error = error_of(status, answer)
    if error is not None:
        raise error
    return answer
