"""``atmosphere-bridge run``: start the service and its HTTP API until SIGINT/SIGTERM.

Options override the configuration file: ``--state-dir``, ``--host``, ``--port`` and
``--no-matter``. Shutdown on a signal stops every part in reverse order.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bridge.config import BridgeConfig

_LOGGER = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` command."""
    parser = subparsers.add_parser("run", help="run the bridge service and its HTTP API")
    parser.add_argument("--state-dir", type=Path, help="directory for the database and keys")
    parser.add_argument("--host", help="address the HTTP API binds to (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP API port (default 8765; 0 picks one)")
    parser.add_argument(
        "--no-matter", action="store_true", help="do not start the Matter controller layer"
    )
    parser.add_argument(
        "--loop", choices=("auto", "uvloop", "asyncio"),
        help="event loop (default auto: uvloop when installed, or $ATMOSPHERE_EVENT_LOOP)",
    )  # fmt: skip
    parser.set_defaults(func=run_command)


def build_config(args: argparse.Namespace) -> BridgeConfig:
    """Return the configuration from the file (if any) with the command-line overrides."""
    from bridge.config import load_config, resolve_config_path

    config = load_config(resolve_config_path(getattr(args, "config", None)))
    if args.state_dir is not None:
        config = replace(config, state_dir=args.state_dir)
    api = config.api
    if args.host is not None:
        api = replace(api, host=args.host)
    if args.port is not None:
        api = replace(api, port=args.port)
    return replace(config, api=api)


def run_command(args: argparse.Namespace) -> int:
    """Run until a signal arrives; return the exit code."""
    config = build_config(args)
    # Whatever the caller's umask: every file the bridge (or a child) creates is private.
    os.umask(0o077)
    from bridge import eventloop

    return eventloop.run(
        serve(config, enable_matter=not args.no_matter), getattr(args, "loop", None)
    )


async def serve(config: BridgeConfig, *, enable_matter: bool = True) -> int:
    """Start the service and API, wait for SIGINT/SIGTERM, then stop everything."""
    # Imported here so that parsing the command line stays fast (see bridge.cli.main).
    from bridge.service import BridgeService

    loop = asyncio.get_running_loop()
    _LOGGER.info("event loop: %s.%s", type(loop).__module__, type(loop).__qualname__)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    service = BridgeService(config, enable_matter=enable_matter)
    try:
        await service.start()
        port = await service.start_api()
        # Everything alive now (the Matter SDK's cluster classes alone are ~150k objects)
        # lives as long as the process: take it out of the cyclic GC so a full collection
        # scans only what calls create (one was an 84 ms pause in the middle of a call).
        gc.collect()
        gc.freeze()
        # Printed for scripts and tests that start the bridge on port 0.
        print(f"atmosphere-bridge listening on http://{config.api.host}:{port}", flush=True)
        await stop.wait()
        _LOGGER.info("shutting down")
    finally:
        await service.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return 0
