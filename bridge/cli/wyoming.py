"""``atmosphere-bridge wyoming``: serve spoken commands to a Wyoming voice pipeline.

Listens on ``--host`` (default 127.0.0.1) and ``--port`` (default 10700) and hands each
transcript to the running bridge (``--url``) with the token from ``--token-file`` (must
be 0600) or ``$ATMOSPHERE_BRIDGE_TOKEN``. See ``bridge.voice.wyoming``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bridge.cli.client import TOKEN_ENV, BridgeUnreachableError, base_url, error_of, request
from bridge.cli.config import add_state_dir
from bridge.cli.keys import config_from
from bridge.errors import InvalidRequestError, UnauthenticatedError

if TYPE_CHECKING:
    from bridge.voice.wyoming import Speak, SpokenAnswer

_LOG = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``wyoming`` command."""
    parser = subparsers.add_parser("wyoming", help="serve spoken commands over Wyoming")
    parser.add_argument("--url", help="bridge API URL (default: from the configuration)")
    parser.add_argument("--token-file", type=Path, help="file holding the token (mode 0600)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=10700, help="port to listen on")
    parser.add_argument("--language", default="en", help="language when a transcript has none")
    parser.add_argument(
        "--area",
        help="the room this satellite is in, when a transcript's "
        "context names none (sentences without a place act there)",
    )
    add_state_dir(parser, argparse.SUPPRESS)
    parser.set_defaults(func=wyoming_command)


def read_token(path: Path | None) -> str:
    """Return the service token from a 0600 file or the environment."""
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
    token = os.environ.get(TOKEN_ENV)
    if not token:
        raise UnauthenticatedError(f"give a token with --token-file or ${TOKEN_ENV}")
    return token


def http_speaker(url: str, token: str, *, timeout_s: float = 30.0) -> Speak:
    """Return a ``speak`` that asks the bridge at ``url`` (``POST /v1/intents/handle``).

    Through the CLI's one API client: the bridge checks the command and answers what to
    say, or its error (kept in the answer, so the satellite sees its stable code).
    """
    from bridge.voice.wyoming import SpokenAnswer

    async def speak(command: dict[str, Any]) -> SpokenAnswer:
        try:
            status, answer = await request(
                "POST", f"{url}/v1/intents/handle", token, command, timeout_s=timeout_s
            )
        except BridgeUnreachableError as err:
            _LOG.warning("the bridge at %s did not answer: %s", url, type(err.__cause__).__name__)
            return SpokenAnswer(False, "Sorry, the home bridge is not reachable.")
        error = error_of(status, answer)
        if error is not None:
            return SpokenAnswer(False, f"Sorry: {error.message}", error.to_json())
        if not isinstance(answer, dict):
            return SpokenAnswer(False, "Sorry, the home bridge gave no answer.")
        return SpokenAnswer(bool(answer.get("handled")), str(answer.get("speech", "")))

    return speak


def wyoming_command(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from bridge.voice.wyoming import WyomingIntentServer

    if not 0 < args.port < 65536:
        raise InvalidRequestError("--port must be 1-65535")
    token = read_token(args.token_file)
    base = base_url(args, config_from(args))

    async def serve() -> None:
        server = WyomingIntentServer(
            http_speaker(base, token),
            host=args.host,
            port=args.port,
            default_language=args.language,
            default_area=args.area,
        )
        port = await server.start()
        print(f"wyoming intent service on {args.host}:{port} -> {base}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    from bridge import eventloop

    try:
        eventloop.run(serve())
    except KeyboardInterrupt:
        return 0
    return 0
