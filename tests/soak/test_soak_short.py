"""The short soak: every fault once under a mixed load, nothing lost, hung, wrong or drifted.

Runs ``bench/soak.py --short`` (its own namespace, four matter.js devices, the bridge
and a mesh peer as real processes, the state directory on a bounded tmpfs) and reads
its last line, the JSON summary. The figures (recovery times, RSS, fds, calls per
kind) are printed for the note, never asserted: timing belongs to the benchmark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fabric import fabric_unavailable_reason

pytestmark = pytest.mark.fabric

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"
FAULTS = {
    "button press", "controller SIGKILL", "device stop+restart", "peer SIGKILL+restart",
    "disk full+freed", "bridge SIGKILL+restart",
}  # fmt: skip
KINDS = {
    "client-tool", "http-device", "http-room", "mcp", "peer-device", "read", "spoken", "store",
}  # fmt: skip


def test_every_fault_once_under_load_loses_and_hangs_nothing() -> None:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    if os.geteuid() != 0:
        pytest.skip("the soak mounts a tmpfs for the state directory (needs root)")
    done = subprocess.run(
        [sys.executable, str(SOAK), "--short", "--minutes", "1"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    print(done.stdout)
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-3000:]
    summary = json.loads(lines[-1])
    assert set(summary["recovery_s"]) == FAULTS, done.stderr[-3000:]
    # Every fault recovered (a first successful call after it).
    assert all(v is not None for v in summary["recovery_s"].values()), summary
    # Every face carried load and had successes (the counts are figures, not checks).
    assert set(summary["ok_by_kind"]) == KINDS, summary
    assert all(n > 0 for n in summary["ok_by_kind"].values()), summary
    assert summary["hung"] == 0, done.stdout
    assert summary["wrong"] == 0, done.stdout
    assert summary["drift"] == 0, done.stdout
    assert summary["lost_effect"] == 0, done.stdout
    assert summary["presses"] == 3
    assert (summary["missed_events"], summary["dup_events"]) == (0, 0), done.stdout
    assert summary["lost_audit"] == 0, done.stdout
    assert summary["lost"] == 0, done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
