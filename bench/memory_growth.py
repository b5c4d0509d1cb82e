"""What grew between two tracemalloc snapshots of one process (``traced_bridge.py``).

``python bench/memory_growth.py DIR [--pid PID] [--from N] [--to M] [--top 25]``:
compares snapshot N (default: the second, after warm-up) with M (default: the last),
grouped by the allocating line and, for the largest, by their whole traceback; prints
each group's growth in KiB and in blocks, and the RSS beside it.
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--pid", default=None)
    parser.add_argument("--from", dest="first", type=int, default=1)
    parser.add_argument("--to", dest="last", type=int, default=-1)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    # A snapshot without its ``.rss`` is one whose writer was stopped mid-way (an
    # older launcher wrote the snapshot first): it is left out, never half-read.
    snaps = [
        s
        for s in sorted(args.dir.glob(f"{args.pid or '*'}-*.snap"))
        if s.with_suffix(".rss").is_file()
    ]
    if args.pid is None and snaps:
        pid = snaps[-1].name.split("-")[0]
        snaps = [s for s in snaps if s.name.startswith(pid + "-")]
    if len(snaps) < 2:
        print("fewer than two snapshots", file=sys.stderr)
        return 2
    a, b = snaps[args.first], snaps[args.last]
    for s in snaps:
        print(s.name, s.with_suffix(".rss").read_text().strip())
    old = tracemalloc.Snapshot.load(str(a))
    new = tracemalloc.Snapshot.load(str(b))
    skip = [tracemalloc.Filter(False, tracemalloc.__file__)]
    old, new = old.filter_traces(skip), new.filter_traces(skip)
    print(f"\n{a.name} -> {b.name}: by line")
    for stat in new.compare_to(old, "lineno")[: args.top]:
        print(f"{stat.size_diff / 1024:9.1f} KiB {stat.count_diff:+8d} blocks  {stat.traceback[0]}")
    print("\nby traceback (largest 8)")
    for stat in new.compare_to(old, "traceback")[:8]:
        print(f"\n{stat.size_diff / 1024:9.1f} KiB {stat.count_diff:+8d} blocks")
        for line in stat.traceback.format()[-16:]:
            print("   ", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
