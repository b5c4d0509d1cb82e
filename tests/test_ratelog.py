"""RateLimitedLog: one line per cause per interval, the held-back count on the next."""

from __future__ import annotations

import logging

import pytest

from bridge.ratelog import RateLimitedLog


def test_one_line_per_cause_per_interval(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [100.0]
    monkeypatch.setattr("bridge.ratelog.time.monotonic", lambda: now[0])
    log = RateLimitedLog(logging.getLogger("test.ratelog"), interval_s=60, max_causes=2)
    with caplog.at_level(logging.INFO, logger="test.ratelog"):
        assert [log.warning("a", "bad %s", i) for i in range(1000)] == [True] + [False] * 999
        assert log.warning("b", "other") is True
        now[0] += 61
        assert log.warning("a", "bad %s", "again") is True
    assert [r.getMessage() for r in caplog.records] == [
        "bad 0",
        "other",
        "bad again (999 more like this in the last 60 s)",
    ]
    log.warning("c", "third")  # the table keeps two causes: "b" is dropped
    assert log.warning("b", "other") is True
