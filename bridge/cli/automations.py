"""``atmosphere-bridge automations``: create (YAML/JSON files), list, enable, disable, test, delete.

``bindings``, ``bind SWITCH LIGHT`` and ``unbind SWITCH LIGHT`` manage Matter bindings
(a switch sending OnOff to a light by itself), shown beside the rules.

The token (``--token`` or ``$ATMOSPHERE_BRIDGE_TOKEN``) must grant ``automations:create``
to create; a rule runs with its own token, a subset of that one. Details:
docs/automations.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml

from bridge.cli.client import base_url, call, token_from
from bridge.cli.keys import add_api_options, config_from
from bridge.errors import InvalidParamsError

MAX_RULE_FILE_BYTES = 256 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``automations`` command group."""
    parser = subparsers.add_parser("automations", help="rules that run on the bridge")
    sub = parser.add_subparsers(dest="automations_command", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="create rules from a YAML or JSON file")
    create.add_argument("file", type=Path, help="a rule, or a list of rules (YAML or JSON)")
    add_api_options(create)
    create.set_defaults(func=create_command)
    listing = sub.add_parser("list", help="list the rules you may see")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_api_options(listing)
    listing.set_defaults(func=list_command)
    bindings = sub.add_parser("bindings", help="list switch -> light Matter bindings")
    bindings.add_argument("--json", action="store_true", help="print JSON")
    add_api_options(bindings)
    bindings.set_defaults(func=bindings_command)
    for verb, text in (
        ("bind", "bind a switch to a light on the devices (it works without the bridge)"),
        ("unbind", "remove a switch -> light binding"),
    ):
        pair = sub.add_parser(verb, help=text)
        pair.add_argument("switch", help="the switch's device id (node-endpoint)")
        pair.add_argument("light", help="the light's device id (node-endpoint)")
        add_api_options(pair)
        pair.set_defaults(func=bind_command, verb=verb)
    for verb in ("enable", "disable", "test", "delete", "show"):
        one = sub.add_parser(verb, help=f"{verb} a rule")
        one.add_argument("rule_id")
        add_api_options(one)
        one.set_defaults(func=one_command, verb=verb)


def read_rules(path: Path) -> list[Any]:
    """Return the rule documents of a YAML or JSON file; raise ``InvalidParamsError``."""
    try:
        text = path.read_bytes()[: MAX_RULE_FILE_BYTES + 1]
    except OSError as err:
        raise InvalidParamsError(f"cannot read {path}: {err.strerror}") from err
    if len(text) > MAX_RULE_FILE_BYTES:
        raise InvalidParamsError(f"{path} is larger than {MAX_RULE_FILE_BYTES} bytes")
    try:
        doc = yaml.safe_load(text)  # JSON is YAML too
    except yaml.YAMLError as err:
        raise InvalidParamsError(f"{path} is not YAML or JSON: {err}") from err
    return doc if isinstance(doc, list) else [doc]


def create_command(args: argparse.Namespace) -> int:
    """Create each rule of the file; print its id and status."""
    config = config_from(args)
    url = f"{base_url(args, config)}/v1/automations"
    for rule in read_rules(args.file):
        body = asyncio.run(call("POST", url, token_from(args), rule))
        print(
            f"{body['id']}: {body['status']}"
            + (f" ({body['reason']})" if body.get("reason") else "")
        )
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Print the rules."""
    config = config_from(args)
    body = asyncio.run(call("GET", f"{base_url(args, config)}/v1/automations", token_from(args)))
    if args.json:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    if not body["rules"]:
        print("no rules")
    for rule in body["rules"]:
        state = rule["status"] if rule["enabled"] else "disabled"
        print(
            f"{rule['id']}  {state:<17} {rule['trigger']['type']:<12} "
            f"by {rule['creator']}  devices: {', '.join(rule['devices']) or '-'}"
        )
    return 0


def bindings_command(args: argparse.Namespace) -> int:
    """Print the bindings."""
    config = config_from(args)
    url = f"{base_url(args, config)}/v1/automations/bindings"
    body = asyncio.run(call("GET", url, token_from(args)))
    if args.json:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    if not body["bindings"]:
        print("no bindings")
    for binding in body["bindings"]:
        print(f"{binding['switch']} -> {binding['light']}  {binding['status']}")
    return 0


def bind_command(args: argparse.Namespace) -> int:
    """Bind or unbind a switch and a light; print the result."""
    config = config_from(args)
    url = f"{base_url(args, config)}/v1/automations/bindings"
    token = token_from(args)
    if args.verb == "bind":
        body = asyncio.run(call("POST", url, token, {"switch": args.switch, "light": args.light}))
        print(f"{body['switch']} -> {body['light']}: {body['status']}")
    else:
        quoted = f"{url}/{quote(args.switch, safe='')}/{quote(args.light, safe='')}"
        asyncio.run(call("DELETE", quoted, token))
        print(f"{args.switch} -> {args.light}: removed")
    return 0


def one_command(args: argparse.Namespace) -> int:
    """Enable, disable, test, delete or show one rule."""
    config = config_from(args)
    url = f"{base_url(args, config)}/v1/automations/{args.rule_id}"
    token = token_from(args)
    if args.verb in ("enable", "disable"):
        body = asyncio.run(call("PATCH", url, token, {"enabled": args.verb == "enable"}))
    elif args.verb == "test":
        body = asyncio.run(call("POST", f"{url}/test", token))
    elif args.verb == "delete":
        body = asyncio.run(call("DELETE", url, token))
    else:
        body = asyncio.run(call("GET", url, token))
    print(json.dumps(body, indent=2, ensure_ascii=False))
    return 0
