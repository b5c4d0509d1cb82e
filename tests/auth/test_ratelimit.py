import pytest

from bridge.auth.ratelimit import RateLimiter
from bridge.errors import RateLimitedError


def test_bucket_burst_then_refill() -> None:
    now = [100.0]
    limiter = RateLimiter(clock=lambda: now[0])
    for _ in range(3):
        limiter.acquire("t1", 3)
    with pytest.raises(RateLimitedError) as info:
        limiter.acquire("t1", 3)
    assert info.value.details == {"per_minute": 3, "retry_after_s": 20.0}
    assert info.value.retryable
    limiter.acquire("t2", 3)
    now[0] += 20.0
    limiter.acquire("t1", 3)
    with pytest.raises(RateLimitedError):
        limiter.acquire("t1", 3)
