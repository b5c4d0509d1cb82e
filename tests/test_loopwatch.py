"""The event loop watch: a loop held up past the threshold is one log line a minute."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from bridge.loopwatch import LoopWatch


async def test_a_held_up_loop_is_counted_and_logged_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = LoopWatch(tick_s=0.05, threshold_s=0.3)
    watch.start()
    try:
        await asyncio.sleep(0.2)
        assert (watch.stalls, watch.longest_s < 0.3) == (0, True)  # a free loop: nothing
        with caplog.at_level(logging.WARNING, logger="bridge.loopwatch"):
            for _ in range(2):
                time.sleep(0.6)  # holds the loop, as a synchronous wait in a handler would
                await asyncio.sleep(0.2)
        assert watch.stalls == 2
        assert watch.longest_s >= 0.5
        lines = [r.getMessage() for r in caplog.records if r.name == "bridge.loopwatch"]
        assert len(lines) == 1, lines  # the second within the minute is only counted
        assert lines[0].startswith("the event loop was held up for 0.")
    finally:
        await watch.stop()
    assert watch._task is None
