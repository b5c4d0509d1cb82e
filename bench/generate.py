"""Generation time and memory for 10 / 100 / 1,000 devices, and one-device regeneration.

Run: .venv/bin/python bench/generate.py
Prints wall and CPU (this process's) time: on a busy machine compare the CPU figures.
Dumps from tests/fixtures/nodes are replicated with distinct node ids until the device
count is reached; the full pipeline (device model + tools) is timed and its peak
allocation measured with tracemalloc. Then one attribute of one node changes and that
node's devices and tools are regenerated (what MatterToolSync.refresh_node does).
"""

from __future__ import annotations

import copy
import gc
import json
import statistics
import time
import tracemalloc
from pathlib import Path

from bridge.matter import MatterToolGenerator, build_devices, load_cluster_maps
from bridge.matter.spec.models import NodeData, gc_paused

NODES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "nodes"


def nodes_for(devices_wanted: int) -> list[NodeData]:
    dumps = [json.loads(p.read_text()) for p in sorted(NODES.glob("*/*.json"))]
    out: list[NodeData] = []
    count, next_id = 0, 1000
    while count < devices_wanted:
        for dump in dumps:
            doc = copy.deepcopy(dump)
            doc["node_id"] = next_id
            next_id += 1
            node = NodeData.from_json(doc)
            n = len(build_devices([node]))
            if n == 0:
                continue
            out.append(node)
            count += n
            if count >= devices_wanted:
                break
    return out


def main() -> None:
    generator = MatterToolGenerator(load_cluster_maps(), node_id="bench")
    for size in (10, 100, 1000):
        nodes = nodes_for(size)
        times = []
        cpu = []
        deferred: list[float] = []
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            with gc_paused():  # as MatterToolSync.sync builds both in one burst
                devices = build_devices(nodes)
                tools = generator.generate(devices)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            # The collection the pause put off, counted apart: the young objects scanned
            # once (collections resume after the burst).
            c1 = time.process_time()
            gc.collect(1)
            deferred.append(time.process_time() - c1)
        tracemalloc.start()
        devices = build_devices(nodes)
        tools = generator.generate(devices)
        _cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        median_ms = statistics.median(times) * 1000
        print(
            f"{len(devices):5d} devices {len(tools):6d} tools: median {median_ms:8.1f} ms,"
            f" CPU {statistics.median(cpu) * 1000:8.1f} ms, peak {peak / 1e6:6.1f} MB;"
            f" the put-off collection after it {statistics.median(deferred) * 1000:.1f} ms"
        )
    # One attribute update on one light: rebuild its node and regenerate its tools.
    nodes = nodes_for(1000)
    node = next(n for n in nodes if "1/8/0" in n.attributes)
    regen = []
    regen_cpu = []
    for i in range(50):
        node.attributes["1/8/0"] = 10 + i
        t0, c0 = time.perf_counter(), time.process_time()
        for device in build_devices([node]):
            generator.device_tools(device)
        regen.append(time.perf_counter() - t0)
        regen_cpu.append(time.process_time() - c0)
    print(
        f"regenerate one device's tools after an attribute update: median "
        f"{statistics.median(regen) * 1000:.2f} ms, CPU {statistics.median(regen_cpu) * 1000:.2f}"
        f" ms, max {max(regen) * 1000:.2f} ms (50 runs)"
    )


if __name__ == "__main__":
    main()
