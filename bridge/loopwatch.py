"""A watch on the event loop: one log line when it was held up long enough to delay calls.

Every call, report and socket of the bridge shares one event loop, so anything that holds
it (a synchronous database wait, a long computation) delays every caller at once, past
their deadlines. ``LoopWatch`` wakes every ``tick_s`` and, when a wake-up comes over
``threshold_s`` late, logs one warning per minute (``bridge.ratelog``) with the longest
delay and how many there were. It costs one timer per tick (0.25 s: under 0.1 ms of CPU
per second) and counts what it saw for ``/healthz``-style status and tests.
"""

from __future__ import annotations

import asyncio
import logging
import time

from bridge.ratelog import RateLimitedLog

_LOG = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOG)


class LoopWatch:
    """Measure how late the event loop runs a timer; log the delays that matter."""

    def __init__(self, tick_s: float = 0.25, threshold_s: float = 1.0) -> None:
        self.tick_s = tick_s
        self.threshold_s = threshold_s
        self.stalls = 0  # wake-ups later than the threshold
        self.longest_s = 0.0  # the latest wake-up seen, in seconds late
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching the running loop (idempotent)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="loopwatch")

    async def stop(self) -> None:
        """Stop watching."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    def saw(self, late_s: float) -> None:
        """Count one wake-up ``late_s`` seconds late; log it when over the threshold."""
        self.longest_s = max(self.longest_s, late_s)
        if late_s < self.threshold_s:
            return
        self.stalls += 1
        _RATE_LOG.warning(
            "stall",
            "the event loop was held up for %.2f s: every call and report waited meanwhile",
            late_s,
        )

    async def _run(self) -> None:
        while True:
            due = time.monotonic() + self.tick_s
            await asyncio.sleep(self.tick_s)
            self.saw(max(0.0, time.monotonic() - due))
