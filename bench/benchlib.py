"""Small helpers the benchmarks share: process CPU from /proc, percentiles, paired tails.

CPU figures come from ``/proc/<pid>/stat`` (user + system ticks, Linux only) so a bench
can charge the bridge process and its controller separately, whatever else the machine
runs: on a busy machine wall-clock latencies are noisy, CPU per call much less so.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """Return the CPU time a process has used so far, its threads included.

    Summed from each thread's ``schedstat`` (nanoseconds); ``stat``'s user + system
    ticks (10 ms steps) where schedstat is missing.
    """
    total_ns = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total_ns += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # a thread that just ended
    except OSError:
        total_ns = 0
    if total_ns:
        return total_ns / 1e9
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def user_system_seconds(pid: int) -> tuple[float, float]:
    """Return a process's (user, system) CPU seconds so far (``stat``, 10 ms ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / _TICK, int(fields[12]) / _TICK


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """Return each live thread's CPU time so far (``schedstat``), keyed ``name/tid``."""
    out: dict[str, float] = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            name = (task / "comm").read_text().strip()
            out[f"{name}/{task.name}"] = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue  # a thread that just ended
    return out


def self_cpu_seconds() -> float:
    """Return this process's user + system CPU time (finer grained than /proc ticks)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def descendants(pid: int) -> list[int]:
    """Return every living descendant of ``pid`` (children, grandchildren, ...)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(children.get(child, ()))
    return out


def tree_cpu_seconds(pids: Sequence[int]) -> float:
    """Return the summed CPU time of ``pids`` (a process that exited counts as 0)."""
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except (OSError, ValueError, IndexError):
            continue
    return total


async def settle(
    pids: Sequence[int],
    *,
    quiet_pct: float = 5.0,
    window_s: float = 0.5,
    quiet_windows: int = 3,
    max_s: float = 60.0,
) -> dict[str, float]:
    """Wait until ``pids`` together use < ``quiet_pct`` % of a core for ``quiet_windows``
    windows in a row (at most ``max_s``); return the seconds waited and the last load.

    A device just commissioned keeps its controller (subscriptions, interview, storage)
    and the bridge (tool generation, first reports) busy for seconds; a phase measured
    during that mixes their work into its latencies and CPU figures, and whichever phase
    runs first pays it (seen: a first phase's direct p99 of 13 ms against 6 ms later).
    """
    import asyncio
    import time

    started = time.perf_counter()
    quiet = 0
    load = 100.0
    while quiet < quiet_windows and time.perf_counter() - started < max_s:
        c0, t0 = tree_cpu_seconds(pids), time.perf_counter()
        await asyncio.sleep(window_s)
        load = 100 * (tree_cpu_seconds(pids) - c0) / (time.perf_counter() - t0)
        quiet = quiet + 1 if load < quiet_pct else 0
    return {"settle_s": round(time.perf_counter() - started, 1), "settle_load_pct": round(load, 2)}


async def stop_process(proc: Any, timeout_s: float = 20.0) -> None:
    """SIGINT ``proc`` (an asyncio subprocess) if it runs; wait, and kill it past ``timeout_s``."""
    import asyncio
    import signal

    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(proc.wait(), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()


def controller_headers(state_dir: Path) -> dict[str, str]:
    """Return the key header of the controller a bridge with ``state_dir`` manages.

    The bridge writes a fresh key (0600) at each start; the controller refuses a client
    without it (bridge/matter/controller/guard.py), so a bench that talks to it directly
    for a baseline reads it the way the bridge's own user can.
    """
    key = (state_dir / "controller" / "controller.key").read_text(encoding="ascii").strip()
    return {"X-Atmosphere-Controller-Key": key}


def rss_mb(pid: int) -> float:
    """Return a process's resident set size in MB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(samples: Sequence[float], q: float) -> float:
    """Return the ``q`` quantile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def paired(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """Return ``a[i] - b[i]`` for interleaved samples: each pair saw the same machine."""
    return [x - y for x, y in zip(a, b, strict=True)]


def start_profile(pid: int, out: Path, rate: int = 1000) -> subprocess.Popen[bytes]:
    """Start py-spy sampling ``pid`` into ``out`` (collapsed stacks); SIGINT it to stop."""
    spy = Path(sys.executable).parent / "py-spy"
    return subprocess.Popen(
        [
            str(spy),
            "record",
            "--pid",
            str(pid),
            "--rate",
            str(rate),
            "--format",
            "raw",
            "--nolineno",
            "--nonblocking",
            "--output",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def summarize_profile(path: Path, top: int = 30) -> str:
    """Return the functions with the most samples on their stack (inclusive) and on top.

    Only the event loop thread's busy samples count (not its waits in ``select``). On
    uvloop the loop is C code: its thread is the one whose stacks pass ``Runner.run``
    (py-spy leaves idle samples out), and samples with no Python frame above that are
    the loop's own work (socket reads and writes, polling, callbacks).
    """
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = stack.split(";")
        on_loop = any("_run_once" in f or f.startswith("Runner.run ") for f in frames)
        if not on_loop or "select" in frames[-1]:
            continue  # only the event loop's thread, and not while it waits
        count = int(count_text)
        total += count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count
    if not total:
        return "no samples"
    lines = [f"{total} samples; inclusive % (function) / own %:"]
    for frame, count in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{100 * count / total:6.1f}  {100 * own.get(frame, 0) / total:5.1f}  {frame}")
    lines.append("top own time:")
    for frame, count in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{100 * count / total:6.1f}  {frame}")
    return "\n".join(lines)
