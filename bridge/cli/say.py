"""``atmosphere-bridge say "turn off the kitchen lights" [--language de]``: a spoken command.

Sends the sentence to a running bridge (``POST /v1/intents/handle``) with the token from
``--token`` or ``$ATMOSPHERE_BRIDGE_TOKEN`` and prints the sentence to speak back; with
``--json`` the whole answer (calls made, suggestions). Exits 0 when the sentence was
carried out, 1 when it was not understood, was ambiguous or failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from bridge.cli.client import TOOL_CALL_TIMEOUT_S, base_url, error_of, request, token_from
from bridge.cli.config import add_state_dir
from bridge.cli.keys import add_api_options, config_from


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``say`` command."""
    parser = subparsers.add_parser("say", help="run a spoken sentence on a running bridge")
    parser.add_argument("text", help="what was said, e.g. 'turn off the kitchen lights'")
    parser.add_argument("--language", default="en", help="en, de, fr, es or nl (default en)")
    parser.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    add_api_options(parser)
    add_state_dir(parser, argparse.SUPPRESS)
    parser.set_defaults(func=say_command)


def say_command(args: argparse.Namespace) -> int:
    """Send the sentence and print what to say back."""
    base = base_url(args, config_from(args))
    token = token_from(args)
    body = {"text": args.text, "language": args.language}
    status, answer = asyncio.run(
        request("POST", f"{base}/v1/intents/handle", token, body, timeout_s=TOOL_CALL_TIMEOUT_S)
    )
    error = error_of(status, answer)
    if error is not None:
        raise error
    if args.json:
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        print(answer.get("speech", ""))
    return 0 if answer.get("handled") else 1
