"""Helpers for tests that run real bridge processes: polling and stopping by PID."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from typing import Protocol


class HasPopen(Protocol):
    """Anything that holds the process it started (``None`` once stopped)."""

    popen: subprocess.Popen[bytes] | None


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll ``predicate`` (OSError counts as not yet) and return the seconds it took."""
    start = time.monotonic()
    while True:
        try:
            if predicate():
                return time.monotonic() - start
        except OSError:
            pass
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


def stop(holder: HasPopen, sig: int = signal.SIGINT, grace_s: float = 20.0) -> None:
    """Send ``sig`` to the holder's process, wait ``grace_s``, then kill it; idempotent."""
    popen = holder.popen
    if popen is None:
        return
    if popen.poll() is None:
        popen.send_signal(sig)
        try:
            popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait(timeout=5)
    holder.popen = None
