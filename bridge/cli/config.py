"""``atmosphere-bridge config show``, and how every command gets its configuration.

A flag that stands for a configuration key is declared with ``add_config_flag``: its
default is ``SUPPRESS``, so it reaches the namespace only when it was given, under
``config:<key>``. ``resolved_config(args)`` is the single resolution step every command
uses: the file (``--config``, ``$ATMOSPHERE_BRIDGE_CONFIG`` or the system file), then
the environment, then those flags (see ``bridge.config.resolve_config``).
``config show`` prints the result with each key's source and secrets redacted.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.config import BridgeConfig, ResolvedConfig

FLAG_PREFIX = "config:"


def add_config_flag(parser: argparse.ArgumentParser, *names: str, key: str, **kwargs: Any) -> None:
    """Add an option that sets configuration ``key`` only when it is given."""
    if "choices" not in kwargs and kwargs.get("action") not in ("store_true", "store_false"):
        kwargs.setdefault("metavar", names[0].lstrip("-").replace("-", "_").upper())
    parser.add_argument(*names, dest=FLAG_PREFIX + key, default=argparse.SUPPRESS, **kwargs)


def add_state_dir(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """Add ``--state-dir`` (key ``state_dir``) to ``parser``."""
    add_config_flag(
        parser,
        "--state-dir",
        key="state_dir",
        type=Path,
        help=help or "state directory (default: from the configuration)",
    )


def add_service_flags(parser: argparse.ArgumentParser) -> None:
    """Add the flags of ``run``: ``--state-dir``, ``--host``, ``--port``, ``--[no-]matter``."""
    add_state_dir(parser, "directory for the database and keys (key state_dir)")
    add_config_flag(
        parser,
        "--host",
        key="api.host",
        help="address the HTTP API binds to (key api.host, default 127.0.0.1)",
    )
    add_config_flag(
        parser,
        "--port",
        key="api.port",
        type=int,
        help="HTTP API port (key api.port, default 8765; 0 picks one)",
    )
    add_config_flag(
        parser,
        "--no-matter",
        key="matter.enabled",
        action="store_false",
        help="do not start the Matter layer (key matter.enabled: false)",
    )
    add_config_flag(
        parser,
        "--matter",
        key="matter.enabled",
        action="store_true",
        help="start the Matter layer even if the file turns it off",
    )


def flags_of(args: argparse.Namespace) -> dict[str, Any]:
    """Return ``{key: value}`` of the configuration flags given on the command line."""
    return {
        name.removeprefix(FLAG_PREFIX): value
        for name, value in vars(args).items()
        if name.startswith(FLAG_PREFIX)
    }


def resolved_config(args: argparse.Namespace) -> ResolvedConfig:
    """Return the configuration of this command line, with each key's source."""
    # The configuration module loads jsonschema and YAML; keep it out of start-up.
    from dataclasses import replace

    from bridge.config import CONFIG_ENV_VAR, Source, resolve_config, resolve_config_path

    explicit = getattr(args, "config", None)
    path = resolve_config_path(explicit)
    resolved = resolve_config(path, flags=flags_of(args))
    if path is None:
        return resolved
    if explicit:
        how = Source.FLAG
    elif os.environ.get(CONFIG_ENV_VAR):
        how = Source.ENVIRONMENT
    else:
        how = Source.DEFAULT
    return replace(resolved, path_source=how)


def config_of(args: argparse.Namespace) -> BridgeConfig:
    """Return the configuration of this command line."""
    return resolved_config(args).config


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``config`` command group."""
    parser = subparsers.add_parser("config", help="show the configuration in effect")
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = sub.add_parser(
        "show",
        help="print every key's value and where it came from (secrets redacted)",
        description="Print the configuration `run` would use with these flags: each key, its "
        "value and its source (default, file, environment, flag). Secrets are redacted.",
    )
    add_service_flags(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=show_command)


def render_text(doc: dict[str, Any]) -> str:
    """Return the ``config show`` text: the file, then one line per key."""
    how = {
        "flag": "--config",
        "environment": "$ATMOSPHERE_BRIDGE_CONFIG",
        "default": "the system file",
    }.get(doc.get("file_source") or "", "")
    lines = [f"file: {doc['file']} ({how})" if doc["file"] else "file: (none: defaults)"]
    width = max(len(key) for key in doc["keys"])
    for key, entry in doc["keys"].items():
        source = entry["source"]
        if "variable" in entry:
            source += f" ${entry['variable']}"
        value = json.dumps(entry["value"], ensure_ascii=False)
        lines.append(f"{key:<{width}}  {value}  ({source})")
    return "\n".join(lines)


def show_command(args: argparse.Namespace) -> int:
    """Print the resolved configuration."""
    doc = resolved_config(args).to_json()
    print(json.dumps(doc, indent=2, ensure_ascii=False) if args.json else render_text(doc))
    return 0
