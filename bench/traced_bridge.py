"""Run ``atmosphere-bridge`` with tracemalloc on, to find what grows (``soak.py --trace-memory``).

``python bench/traced_bridge.py DIR EVERY_S -- <atmosphere-bridge arguments>``: the
bridge runs as usual; a thread writes a tracemalloc snapshot (12 frames per
allocation) to ``DIR/<pid>-<n>.snap`` every ``EVERY_S`` seconds, with the process's
RSS in the name's sidecar ``.rss``. ``bench/memory_growth.py`` compares two of them.
Taking a snapshot holds the interpreter for a moment: a diagnostic, not a way to run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import tracemalloc
from pathlib import Path


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


def _dump_every(out: Path, every_s: float) -> None:
    n = 0
    while True:
        time.sleep(every_s)
        snap = tracemalloc.take_snapshot()
        path = out / f"{os.getpid()}-{n:03d}.snap"
        current, peak = tracemalloc.get_traced_memory()
        # The process may end (SIGINT) in the middle of a dump, and this thread is a
        # daemon: both files are written under a temporary name and renamed, the
        # snapshot last, so a ``.snap`` is only ever seen whole and with its ``.rss``.
        part = path.with_name(path.name + ".part")
        rss = path.with_suffix(".rss")
        rss_part = rss.with_name(rss.name + ".part")
        rss_part.write_text(f"{time.time():.0f} {_rss_kb()} {current} {peak}\n")
        os.replace(rss_part, rss)
        snap.dump(str(part))
        os.replace(part, path)
        n += 1


def main() -> int:
    out, every = Path(sys.argv[1]), float(sys.argv[2])
    if sys.argv[3] != "--":
        raise SystemExit("usage: traced_bridge.py DIR EVERY_S -- ARGS")
    out.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(12)
    threading.Thread(target=_dump_every, args=(out, every), daemon=True).start()
    from bridge.cli.main import main as bridge_main

    return bridge_main(sys.argv[4:])


if __name__ == "__main__":
    sys.exit(main())
