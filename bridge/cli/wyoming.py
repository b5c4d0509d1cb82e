"""``atmosphere-bridge wyoming``: serve spoken commands to a Wyoming voice pipeline.

Listens on ``--host`` (default 127.0.0.1) and ``--port`` (default 10700) and hands each
transcript to the running bridge (``--url``) with the token from ``--token-file`` (must
be 0600) or ``$ATMOSPHERE_BRIDGE_TOKEN``. See ``bridge.voice.wyoming``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import stat
from pathlib import Path

from bridge.cli.client import TOKEN_ENV, base_url
from bridge.cli.config import add_state_dir
from bridge.cli.keys import config_from
from bridge.errors import InvalidRequestError, UnauthenticatedError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``wyoming`` command."""
    parser = subparsers.add_parser("wyoming", help="serve spoken commands over Wyoming")
    parser.add_argument("--url", help="bridge API URL (default: from the configuration)")
    parser.add_argument("--token-file", type=Path, help="file holding the token (mode 0600)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=10700, help="port to listen on")
    parser.add_argument("--language", default="en", help="language when a transcript has none")
    parser.add_argument("--area", help="the room this satellite is in, when a transcript's "
                        "context names none (sentences without a place act there)")
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


def wyoming_command(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from bridge.voice.wyoming import WyomingIntentServer, http_speaker

    if not 0 < args.port < 65536:
        raise InvalidRequestError("--port must be 1-65535")
    token = read_token(args.token_file)
    base = base_url(args, config_from(args))

    async def serve() -> None:
        server = WyomingIntentServer(http_speaker(base, token), host=args.host, port=args.port,
                                     default_language=args.language,
                                     default_area=args.area)  # fmt: skip
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
