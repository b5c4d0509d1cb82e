"""A language's compiled templates are kept out of the cyclic garbage collector.

They live as long as the engine, and there are a lot of them: every full collection
would scan them all, holding the interpreter (the event loop, every caller): ~54,000
objects and a 70 ms pass for English alone, 290-390 ms with five languages compiled.
``IntentEngine.intents_for`` freezes them once compiled. Measured in a child process,
whose heap holds only the engine: a full collection with English compiled and frozen,
against the same collection once they are given back to the collector.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import gc, json, sys, time
from bridge.tools.registry import ToolRegistry
from bridge.voice.intents import IntentEngine

gc.collect()
before = len(gc.get_objects())
engine = IntentEngine(
    registry=ToolRegistry(), invoker=None, devices=lambda: [], tool_for=lambda *a, **k: None
)
served, others = engine.intents_for("en")
visited = {id(o) for o in gc.get_objects()}
found = {
    "frozen": gc.get_freeze_count(),
    "scanned_after": len(visited),
    "scanned_before": before,
    "templates_scanned": id(served) in visited or id(others) in visited,
}
def full():
    t = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - t) * 1000
found["frozen_ms"] = min(full() for _ in range(3))
gc.unfreeze()
found["scanned_ms"] = min(full() for _ in range(3))
print(json.dumps(found))
"""


def _child(code: str) -> Any:
    """Run ``code`` in a fresh interpreter on this checkout; return its last line's JSON."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_compiled_language_is_not_scanned_by_the_collector() -> None:
    found = _child(CHILD)
    assert not found["templates_scanned"], found
    assert found["frozen"] > 20_000, found  # the compiled templates, at least
    # what the collector scans is what was there before the engine, give or take
    assert found["scanned_after"] < found["scanned_before"] + 2_000, found
    # given back to the collector, the same templates make a full pass far dearer
    assert found["scanned_ms"] > 5 * found["frozen_ms"], found


CLOSING = """
import gc, json
from bridge.tools.registry import ToolRegistry
from bridge.voice.intents import IntentEngine

left = []
for _ in range(4):
    engine = IntentEngine(
        registry=ToolRegistry(), invoker=None, devices=lambda: [], tool_for=lambda *a, **k: None
    )
    engine.intents_for("en")
    engine.close()
    del engine
    gc.collect()
    left.append((gc.get_freeze_count(), len(gc.get_objects())))
print(json.dumps(left))
"""


def test_a_closed_engine_gives_its_templates_back() -> None:
    """The templates hold reference cycles: frozen for good, every engine would stay."""
    left = _child(CLOSING)
    assert all(frozen == 0 for frozen, _ in left), left
    objects = [n for _, n in left]
    # an engine left behind would be ~54,000 objects more each time
    assert max(objects) - min(objects) < 5_000, left
