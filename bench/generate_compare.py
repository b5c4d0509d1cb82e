"""Generation time and memory per device: another git ref's code against this checkout, one run.

Run: .venv/bin/python bench/generate_compare.py [--ref main] [--copies 25] [DUMP ...]
Both versions get the same nodes - the dumps given, by default every one under
tests/fixtures/nodes (this checkout's set) - each replicated ``--copies`` times with
distinct node ids, and run the same pipeline (``build_devices`` then
``MatterToolGenerator.generate`` in one collector pause, as the bridge's sync does).
``--ref``'s ``bridge`` and ``cluster_maps`` are exported with ``git archive`` into a
temporary folder and imported first on ``PYTHONPATH``; each version runs in its own
process, one after the other, so the machine's load is alike. Printed per version:
devices and tools made, best-of-5 CPU time, and tracemalloc's peak, each also per device
(the versions may make different numbers of devices from the same nodes: the newer one
makes devices of endpoints the older one skipped).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NODES = ROOT / "tests" / "fixtures" / "nodes"


def measure(copies: int, paths: list[Path]) -> dict[str, Any]:
    """Return devices, tools, best CPU seconds and peak bytes for the replicated dumps."""
    from bridge.matter import MatterToolGenerator, NodeData, build_devices, load_cluster_maps
    from bridge.matter.spec.models import gc_paused

    dumps = [json.loads(p.read_text()) for p in paths]
    nodes = []
    for copy_no in range(copies):
        for index, dump in enumerate(dumps):
            doc = copy.deepcopy(dump)
            doc["node_id"] = 10_000 * (copy_no + 1) + index
            nodes.append(NodeData.from_json(doc))
    generator = MatterToolGenerator(load_cluster_maps(), node_id="bench")
    best = float("inf")
    devices: list[Any] = []
    tools: list[Any] = []
    for _ in range(5):
        start = time.process_time()
        with gc_paused():
            devices = build_devices(nodes)
            tools = generator.generate(devices)
        best = min(best, time.process_time() - start)
    del devices, tools
    generator = MatterToolGenerator(load_cluster_maps(), node_id="bench")
    tracemalloc.start()
    with gc_paused():
        devices = build_devices(nodes)
        tools = generator.generate(devices)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "nodes": len(nodes),
        "devices": len(devices),
        "tools": len(tools),
        "cpu_s": best,
        "peak_bytes": peak,
    }


def run_version(pythonpath: str | None, copies: int, paths: list[Path]) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--copies", str(copies), *map(str, paths)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=pythonpath or ROOT,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="the git ref to compare against")
    parser.add_argument("--copies", type=int, default=25, help="copies of every dump")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "dumps",
        nargs="*",
        type=Path,
        help="node dumps (default: every one under tests/fixtures/nodes)",
    )
    args = parser.parse_args()
    paths = [p.resolve() for p in args.dumps] or sorted(NODES.glob("*/*.json"))
    if args.child:
        print(json.dumps(measure(args.copies, paths)))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.ref, "bridge", "cluster_maps"],
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        before = run_version(folder, args.copies, paths)
    after = run_version(None, args.copies, paths)
    print(
        f"{'':10} {'nodes':>6} {'devices':>8} {'tools':>7} {'CPU ms':>8} {'µs/device':>10} "
        f"{'peak MiB':>9} {'KiB/device':>11}"
    )
    for label, r in ((args.ref, before), ("this", after)):
        print(
            f"{label:10} {r['nodes']:>6} {r['devices']:>8} {r['tools']:>7} "
            f"{r['cpu_s'] * 1000:>8.1f} {r['cpu_s'] * 1e6 / r['devices']:>10.1f} "
            f"{r['peak_bytes'] / 2**20:>9.2f} {r['peak_bytes'] / 1024 / r['devices']:>11.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
