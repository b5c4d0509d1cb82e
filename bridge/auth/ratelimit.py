"""Per-token rate limits: a token bucket per key, refilled continuously.

A token with ``rate_limit.per_minute = N`` may make a burst of ``N`` calls and then one
call every ``60/N`` seconds. Buckets live in memory (a restart refills them) and the
least recently used ones are dropped beyond ``max_keys``.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from bridge.errors import RateLimitedError


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """Token buckets keyed by an arbitrary string (the token's signature)."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 65_536
    ) -> None:
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._max_keys = max_keys

    def acquire(self, key: str, per_minute: int) -> None:
        """Take one call from ``key``'s bucket; raise ``RateLimitedError`` when it is empty."""
        now = self._clock()
        rate = per_minute / 60.0
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(tokens=float(per_minute), updated=now)
            self._buckets[key] = bucket
            if len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
        if bucket.tokens < 1.0:
            retry_after = (1.0 - bucket.tokens) / rate
            raise RateLimitedError(
                f"rate limit of {per_minute} calls per minute exceeded",
                {"per_minute": per_minute, "retry_after_s": round(retry_after, 3)},
            )
        bucket.tokens -= 1.0
