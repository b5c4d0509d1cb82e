"""A logger that writes at most one line per cause per interval, so clients cannot flood it.

``RateLimitedLog(logger, interval_s)``: ``log(cause, level, msg, *args)`` writes the line
only when ``cause`` was not logged in the last ``interval_s`` seconds; the next line
written for that cause says how many were held back in between. Never a traceback:
client errors are expected and their cause is in the message (``exc_info=True`` is for
real bugs, whose first occurrence per interval keeps its traceback). The table of causes is
bounded (``max_causes``; the oldest is dropped), so varied causes cannot grow memory.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict


class RateLimitedLog:
    """Log each cause at most once per interval, counting what was held back."""

    def __init__(
        self, logger: logging.Logger, interval_s: float = 60.0, max_causes: int = 256
    ) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self.max_causes = max_causes
        self._last: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def log(self, cause: str, level: int, msg: str, *args: object, exc_info: bool = False) -> bool:
        """Write ``msg`` unless ``cause`` was logged within the interval; return if written."""
        now = time.monotonic()
        seen = self._last.get(cause)
        if seen is not None and now - seen[0] < self.interval_s:
            self._last[cause] = (seen[0], seen[1] + 1)
            return False
        held = seen[1] if seen is not None else 0
        self._last[cause] = (now, 0)
        self._last.move_to_end(cause)
        while len(self._last) > self.max_causes:
            self._last.popitem(last=False)
        if held:
            msg = f"{msg} ({held} more like this in the last %.0f s)"
            args = (*args, self.interval_s)
        self.logger.log(level, msg, *args, exc_info=exc_info)
        return True

    def warning(self, cause: str, msg: str, *args: object) -> bool:
        """Log a warning for ``cause`` (rate-limited)."""
        return self.log(cause, logging.WARNING, msg, *args)

    def info(self, cause: str, msg: str, *args: object) -> bool:
        """Log an info line for ``cause`` (rate-limited)."""
        return self.log(cause, logging.INFO, msg, *args)
