"""``atmosphere-bridge run``: start the service and its HTTP API until SIGINT/SIGTERM.

Its configuration is the resolved one (``bridge.cli.config``): ``--state-dir``,
``--host``, ``--port`` and ``--no-matter`` / ``--matter`` override the file only when
they are given. Shutdown on a signal stops every part in reverse order.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import signal
from typing import TYPE_CHECKING

from bridge.cli.config import add_service_flags, config_of

if TYPE_CHECKING:
    from bridge.config import BridgeConfig

_LOGGER = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` command."""
    parser = subparsers.add_parser("run", help="run the bridge service and its HTTP API")
    add_service_flags(parser)
    parser.add_argument(
        "--loop",
        choices=("auto", "uvloop", "asyncio"),
        help="event loop (default auto: uvloop when installed, or $ATMOSPHERE_EVENT_LOOP)",
    )
    parser.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run until a signal arrives; return the exit code."""
    config = config_of(args)
    # Whatever the caller's umask: every file the bridge (or a child) creates is private.
    os.umask(0o077)
    from bridge import eventloop

    return eventloop.run(serve(config), getattr(args, "loop", None))


async def serve(config: BridgeConfig) -> int:
    """Start the service and API, wait for SIGINT/SIGTERM, then stop everything."""
    # Imported here so that parsing the command line stays fast (see bridge.cli.main).
    from bridge.loopwatch import LoopWatch
    from bridge.service import BridgeService

    loop = asyncio.get_running_loop()
    _LOGGER.info("event loop: %s.%s", type(loop).__module__, type(loop).__qualname__)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    service = BridgeService(config)
    watch = LoopWatch()
    watch.start()
    try:
        # A signal during the start (a controller that does not come up can take a
        # minute) cuts it short: what already started is stopped, nothing is left behind.
        starting = asyncio.create_task(service.start())
        signalled = asyncio.create_task(stop.wait())
        await asyncio.wait({starting, signalled}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            _LOGGER.info("stopped while starting")
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            return 0
        signalled.cancel()
        starting.result()
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
        await watch.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return 0
