"""The managed controller's log stays small while the server runs, and a full disk does
not keep it from doing so.

The soak found it: the log was rotated only when the server started, so a server that
ran on grew its log by ~1 MB a minute under load (the SDK's "progress" level logs every
message exchange) until it filled the state disk, and the audit log with it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridge.matter.controller import managed
from bridge.matter.controller.managed import ManagedController, rotate_log
from tests.support.fabric import Fabric
from tests.support.real import require, root_reason

# Writes numbered lines to its stdout as fast as it can until its stdin closes; its
# stdout is the log, opened the way the supervisor opens it for the server.
_WRITER = """
import sys, threading
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
n = 0
while not done.is_set():
    sys.stdout.write(f"line {n:08d} " + "x" * 100 + "\\n")
    sys.stdout.flush()
    n += 1
"""


def _start_writer(log: Path) -> subprocess.Popen[bytes]:
    out = managed._open_log(log)
    try:
        return subprocess.Popen([sys.executable, "-c", _WRITER], stdin=subprocess.PIPE, stdout=out)
    finally:
        out.close()


def _stop_writer(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)


def _wait_for_size(path: Path, size: int) -> None:
    deadline = time.monotonic() + 20
    while path.stat().st_size <= size:
        assert time.monotonic() < deadline, f"{path} stayed at {path.stat().st_size} bytes"
        time.sleep(0.01)


def test_a_log_over_its_size_starts_over_and_its_writer_goes_on_at_the_start(
    tmp_path: Path,
) -> None:
    log = tmp_path / "matter-server.log"
    writer = _start_writer(log)
    try:
        _wait_for_size(log, 200_000)
        assert rotate_log(log, 200_000) is True
        _wait_for_size(log, 20_000)  # the writer goes on after the cut
    finally:
        _stop_writer(writer)
    old = tmp_path / "matter-server.log.1"
    kept = old.read_bytes()
    assert len(kept) > 200_000
    assert stat.S_IMODE(old.stat().st_mode) == 0o600
    now = log.read_bytes()
    # Its writer appends: after the cut its lines start at the start of the file. A
    # writer at its own offset would leave the cut bytes as a hole of zeros.
    assert b"\0" not in now
    assert now.startswith(b"line ")
    first = int(now.split(b" ", 2)[1])
    last_kept = int(kept.rstrip(b"\n").rsplit(b"\n", 1)[-1].split(b" ", 2)[1])
    assert first > last_kept  # newer lines only, and in order
    assert rotate_log(log, 10_000_000) is False  # under its size: left alone


@pytest.mark.namespaces
def test_on_a_full_disk_the_log_is_cut_even_when_no_copy_fits(tmp_path: Path) -> None:
    require(root_reason("a tmpfs mount"))
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "atm-log", str(disk)], check=True)
    try:
        log = disk / "matter-server.log"
        with log.open("wb") as fh:  # fills the disk: no room for a copy of it
            try:
                while True:
                    fh.write(b"x" * 4096)
                    fh.flush()
            except OSError:
                pass
        with pytest.raises(OSError, match="No space left"):
            rotate_log(log, 100_000)
        assert log.stat().st_size == 0  # cut all the same: the disk has room again
        assert not (disk / "matter-server.log.1").exists()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.fabric
async def test_a_running_server_keeps_its_log_under_its_size(
    fabric: Fabric, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(managed, "LOG_CHECK_S", 0.2)
    settings = fabric.controller_settings("log-size")
    # Its start alone writes more than this (the SDK's storage and stack set-up).
    small = dataclasses.replace(settings, log_max_bytes=4096)
    ctl = ManagedController(small)
    await ctl.start()
    try:
        pid = ctl.pid
        old = small.log_path.with_name(small.log_path.name + ".1")
        async with asyncio.timeout(30):
            while not old.exists():
                await asyncio.sleep(0.1)
        assert old.stat().st_size > 4096
        await asyncio.sleep(0.5)
        assert small.log_path.stat().st_size <= 4096 + 64 * 1024  # what 0.2 s can add
        assert ctl.pid == pid  # the same server, still running
        assert os.path.exists(f"/proc/{pid}")
    finally:
        await ctl.stop()
