"""``bench/traced_bridge.py`` and ``bench/memory_growth.py``: what grew, and where.

A real ``atmosphere-bridge`` process (``--no-matter``) runs under the traced launcher,
which writes a tracemalloc snapshot every 0.5 s; the comparison script must read them
and name the allocating lines. A second part feeds the comparison two snapshots of this
process with a known growth in between and checks it is the first line reported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parents[2] / "bench"


def compare(snapshots: Path) -> str:
    """Return what ``bench/memory_growth.py`` prints from the first snapshot to the last."""
    return subprocess.run(
        [sys.executable, str(BENCH / "memory_growth.py"), str(snapshots), "--from", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def _grow(n: int) -> list[bytes]:
    return [bytes(200) + str(i).encode() for i in range(n)]  # the line to be found


def _around_growth(n: int) -> tuple[tracemalloc.Snapshot, tracemalloc.Snapshot, list[bytes]]:
    """Return snapshots of this process before and after ``_grow(n)``, and what it kept."""
    tracemalloc.start(4)
    try:
        before = tracemalloc.take_snapshot()
        kept = _grow(n)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    return before, after, kept


def test_the_comparison_names_the_line_that_grew(tmp_path: Path) -> None:
    before, after, kept = _around_growth(5_000)
    for n, snap in enumerate((before, after)):
        snap.dump(str(tmp_path / f"4242-{n:03d}.snap"))
        (tmp_path / f"4242-{n:03d}.rss").write_text("0 0 0 0\n")
    out = compare(tmp_path)
    by_line = out.split("by line", 1)[1].splitlines()[1]
    assert "test_memory_growth.py" in by_line, out
    kib = float(by_line.split()[0])
    assert kib > 5_000 * 200 / 1024, by_line  # at least the bytes kept
    assert len(kept) == 5_000


def test_a_bridge_runs_under_the_traced_launcher(tmp_path: Path) -> None:
    config = tmp_path / "bridge.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(tmp_path / "state"),
                "api": {"host": "127.0.0.1", "port": 0},
                "matter": {"enabled": False},
                "mesh": {"enabled": False},
            }
        )
    )
    snaps = tmp_path / "snaps"
    # Every 0.1 s: a dump takes a good part of that, so the SIGINT below often lands
    # in the middle of one - the case that once left a half-written last snapshot.
    argv = [sys.executable, str(BENCH / "traced_bridge.py"), str(snaps), "0.1", "--"]
    argv += ["--config", str(config), "run", "--no-matter"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ}
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(snaps.glob("*.snap"))) < 3 and time.monotonic() < deadline:
            assert proc.poll() is None, "the bridge stopped"
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    assert len(list(snaps.glob(f"{proc.pid}-*.snap"))) >= 2
    rss = (snaps / f"{proc.pid}-000.rss").read_text().split()
    assert int(rss[1]) > 10_000  # kB: a running interpreter
    for snap in snaps.glob("*.snap"):  # each whole, each with its RSS beside it
        assert snap.with_suffix(".rss").is_file(), snap.name
        tracemalloc.Snapshot.load(str(snap))
    out = compare(snaps)
    assert "by line" in out
    assert "by traceback" in out


def test_a_snapshot_cut_short_by_the_end_of_its_process_is_left_out(tmp_path: Path) -> None:
    first, second, kept = _around_growth(2_000)
    for n, snap in enumerate((first, second, second)):
        snap.dump(str(tmp_path / f"4242-{n:03d}.snap"))
    for n in (0, 1):
        (tmp_path / f"4242-{n:03d}.rss").write_text("0 0 0 0\n")
    cut = tmp_path / "4242-002.snap"  # as an older launcher left it: no .rss, half a file
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    out = compare(tmp_path)
    assert "4242-000.snap -> 4242-001.snap: by line" in out, out
    assert "4242-002" not in out
    assert "test_memory_growth.py" in out.split("by line", 1)[1].splitlines()[1]
    assert len(kept) == 2_000
