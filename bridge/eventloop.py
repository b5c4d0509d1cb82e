"""The event loop the long-running commands run on: uvloop where it is installed.

A call through the bridge is partly event-loop work (socket reads and writes, callbacks,
timers); uvloop does that in C on libuv: 5-12 % less CPU per call in the pipeline, over
HTTP and over the call channel (docs/performance.md; a state report costs the same on
either, its wake-up from idle dominates). The standard loop stays one setting away
(``ATMOSPHERE_EVENT_LOOP=asyncio`` or ``atmosphere-bridge run --loop asyncio``), for a
platform without a uvloop wheel and for benchmarks that compare the two in one run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable, Coroutine
from typing import Any, Final

from bridge.errors import ConfigInvalidError

LOOP_ENV: Final = "ATMOSPHERE_EVENT_LOOP"
CHOICES: Final = ("auto", "uvloop", "asyncio")


class EventLoopError(ConfigInvalidError):
    """The event loop asked for is unknown or not installed."""


def resolve(name: str | None = None) -> str:
    """Return ``"uvloop"`` or ``"asyncio"`` for ``name`` (or ``$ATMOSPHERE_EVENT_LOOP``).

    ``auto`` (the default) takes uvloop when it can be imported. Raises
    ``EventLoopError`` for an unknown name or for ``uvloop`` when it is not installed.
    """
    # A blank value counts as unset, from the command line or the environment.
    choice = ((name or "").strip() or os.environ.get(LOOP_ENV, "").strip() or "auto").lower()
    if choice not in CHOICES:
        raise EventLoopError(
            f"unknown event loop {choice[:40]!r}; use one of {', '.join(CHOICES)}",
            {"variable": LOOP_ENV},
        )
    available = importlib.util.find_spec("uvloop") is not None
    if choice == "uvloop" and not available:
        raise EventLoopError(
            "the uvloop event loop was asked for but is not installed", {"variable": LOOP_ENV}
        )
    if choice == "auto":
        return "uvloop" if available else "asyncio"
    return choice


def loop_factory(name: str | None = None) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """Return a factory for the loop ``resolve(name)`` names (``None``: asyncio's own)."""
    if resolve(name) == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None


def run[T](main: Coroutine[Any, Any, T], name: str | None = None) -> T:
    """Run ``main`` to completion on the loop ``resolve(name)`` names; return its result."""
    try:
        factory = loop_factory(name)
    except EventLoopError:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
