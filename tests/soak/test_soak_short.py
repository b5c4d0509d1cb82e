"""The short soak: every fault once under a mixed load, nothing lost, hung, wrong or drifted.

Runs ``bench/soak.py --short`` (its own namespace, four matter.js devices, the bridge
and a mesh peer as real processes, the state directory on a bounded tmpfs) and reads
its last line, the JSON summary. Recovery times are held to their bounds (issue 34:
a device back on the network is usable within 10 s; docs/faults.md states the others) -
there the timing is the point; the other figures (RSS, fds, calls per kind) are printed
for the note, never asserted.
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
BOUNDS_S = {
    "button press": 5.0,
    "controller SIGKILL": 30.0,
    "device stop+restart": 10.0,
    "peer SIGKILL+restart": 30.0,
    "disk full+freed": 10.0,
    "bridge SIGKILL+restart": 45.0,
}
FAULTS = set(BOUNDS_S)
KINDS = {
    "client-tool",
    "http-device",
    "http-room",
    "mcp",
    "peer-device",
    "read",
    "spoken",
    "store",
}


def test_every_fault_once_under_load_loses_and_hangs_nothing() -> None:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    if os.geteuid() != 0:
        pytest.skip("the soak mounts a tmpfs for the state directory (needs root)")
    done = subprocess.run(
        [sys.executable, str(SOAK), "--short", "--minutes", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    print(done.stdout)
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-3000:]
    summary = json.loads(lines[-1])
    assert set(summary["recovery_s"]) == FAULTS, done.stderr[-3000:]
    # Every fault recovered (a first successful call after it) within its bound: the
    # device back on the network within 10 s (issue 34) like the others.
    over = {k: v for k, v in summary["recovery_s"].items() if v is None or v > BOUNDS_S[k]}
    assert over == {}, summary
    # A traceback in either bridge's log is a bug (expected faults are one line each).
    assert summary["tracebacks"] == {"main": 0, "peer": 0}, done.stdout
    # Every success was read back from the device; none stayed unreadable.
    assert summary["unread"] == 0, done.stdout
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
    assert summary["over_bound"] == 0, summary
    assert done.returncode == 0, done.stderr[-3000:]
