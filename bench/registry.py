"""Registry benchmark: register, lookup and discover times for 100 / 1,000 / 10,000 tools.

Run: ``.venv/bin/python bench/registry.py`` (``--sizes 100,1000`` to choose sizes).
Tools are device-like definitions (rooms x devices x actions) built before timing;
"register" is ``ToolRegistry.register`` (indexes included), "get" the exact-identity
lookup, "resolve" a bare-name resolution with a version constraint, "discover" one
free-text query (mean over a fixed query set).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.definition import Category, Requires, ToolDefinition
from bridge.tools.registry import ToolRegistry

ACTIONS = [
    ("on", "Turn on the {room} {noun}"),
    ("off", "Turn off the {room} {noun}"),
    ("toggle", "Toggle the {room} {noun}"),
    ("level", "Set the {room} {noun} level in percent"),
]
NOUNS = ["light", "plug", "fan", "heater", "led_strip"]
QUERIES = [
    "switch off the hallway lamp",
    "turn on room 17 fan",
    "set the kitchen light level",
    "toggle plug in room 250",
    "remember this for later",
]


async def _handler(params: dict[str, Any], ctx: CallContext) -> Any:
    return None


def definitions(n: int) -> list[ToolDefinition]:
    """Return ``n`` distinct device-like definitions."""
    out: list[ToolDefinition] = []
    room = 0
    while len(out) < n:
        room_name = "hallway" if room == 0 else ("kitchen" if room == 1 else f"room {room}")
        slug_room = room_name.replace(" ", "_")
        for noun in NOUNS:
            for suffix, template in ACTIONS:
                if len(out) == n:
                    break
                out.append(
                    ToolDefinition(
                        name=f"{noun}_{slug_room}_{suffix}",
                        namespace="matter",
                        description=template.format(room=room_name, noun=noun.replace("_", " ")),
                        category=Category.ACTING,
                        requires=Requires(capabilities=("matter_bridge",)),
                        metadata={"tags": [noun, room_name]},
                    )
                )
        room += 1
    return out


def bench(n: int) -> dict[str, float]:
    """Return timings (microseconds) for a registry of ``n`` tools."""
    defs = definitions(n)
    registry = ToolRegistry()
    t0 = time.perf_counter()
    for d in defs:
        registry.register(d, _handler)
    register_total = time.perf_counter() - t0

    identities = [d.identity for d in defs]
    rounds = max(1, 100_000 // n)
    t0 = time.perf_counter()
    for _ in range(rounds):
        for identity in identities:
            registry.get(identity)
    get_each = (time.perf_counter() - t0) / (rounds * n)

    names = [d.name for d in defs[: min(n, 1000)]]
    t0 = time.perf_counter()
    for name in names:
        registry.resolve(name, ">=1.0.0")
    resolve_each = (time.perf_counter() - t0) / len(names)

    per_query: list[float] = []
    for query in QUERIES:
        reps = 20
        t0 = time.perf_counter()
        for _ in range(reps):
            registry.discover(query, limit=10)
        per_query.append((time.perf_counter() - t0) / reps)
    top = registry.discover("switch off the hallway lamp", 1)[0][0].identity
    assert top == "matter:light_hallway_off@1.0.0", top
    return {
        "register_total_ms": register_total * 1e3,
        "register_each_us": register_total / n * 1e6,
        "get_each_us": get_each * 1e6,
        "resolve_each_us": resolve_each * 1e6,
        "discover_mean_ms": statistics.mean(per_query) * 1e3,
        "discover_max_ms": max(per_query) * 1e3,
    }


def main() -> None:
    """Print a table of timings per registry size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    header = (
        f"{'tools':>7} {'register total':>15} {'register/tool':>14} {'get':>9} "
        f"{'resolve':>9} {'discover mean':>14} {'discover max':>13}"
    )
    print(header)
    for n in sizes:
        r = bench(n)
        print(
            f"{n:>7} {r['register_total_ms']:>12.1f} ms {r['register_each_us']:>11.1f} us "
            f"{r['get_each_us']:>6.2f} us {r['resolve_each_us']:>6.1f} us "
            f"{r['discover_mean_ms']:>11.3f} ms {r['discover_max_ms']:>10.3f} ms"
        )


if __name__ == "__main__":
    main()
