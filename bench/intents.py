"""Spoken-command accuracy and latency on the sentence set, against the real controller.

Runs both sentence sets — the development set (tests/voice/sentences/<lang>.yaml) and
the held-out set (tests/voice/sentences/heldout.yaml, written before the domain-aware
engine and never tuned against) — in en, de, fr, es, nl through the bridge's intent
engine with a signed token, on the recorded devices imported into a real
python-matter-server as test nodes, and prints per set and language how many made
exactly their expected calls (exact), how many did something they should not have
(wrong: must be 0) and how many did nothing where a call was expected (not acted);
then the latency of the whole ``handle`` (recognise + invoke through the pipeline +
controller round trip) against the baseline of recognition alone, in the same run.
Sentences that were not exact are listed.

    .venv/bin/python bench/intents.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.voice.intents import normalise_language
from tests.support.fabric import open_fabric, running_controller
from tests.support.home import start_home
from tests.voice.sentence_set import DUMPS, VOICE, evaluate, furnish, load_sentences


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table(name: str, outcomes: list[Any]) -> None:
    langs = sorted({o.sentence.language for o in outcomes})
    print(f"{name} set")
    print(
        f"{'lang':<5} {'sentences':>9} {'exact':>6} {'accuracy':>9} {'wrong':>6} {'not acted':>10}"
    )
    for lang in [*langs, "all"]:
        chosen = [o for o in outcomes if lang in ("all", o.sentence.language)]
        exact = sum(o.exact for o in chosen)
        wrong = sum(o.wrong_action for o in chosen)
        idle = sum(1 for o in chosen if not o.calls and o.sentence.calls)
        print(
            f"{lang:<5} {len(chosen):>9} {exact:>6} {exact / len(chosen):>9.1%} {wrong:>6} "
            f"{idle:>10}"
        )
    for o in outcomes:
        if not o.exact:
            what = "WRONG" if o.wrong_action else "not acted"
            print(
                f"  {what} [{o.sentence.language}] {o.sentence.text!r}"
                f"{' (area ' + o.sentence.area + ')' if o.sentence.area else ''}"
                f" -> {o.calls} {o.speech!r}"
            )


BIG_HOME = 50
_BIG_ROOMS = [
    "Office",
    "Guest Room",
    "Garage",
    "Attic",
    "Basement",
    "Laundry",
    "Dining Room",
    "Study",
    "Nursery",
    "Pantry",
    "Workshop",
    "Den",
]


def fifty_device_recognition(home: Any, sentences: list[Any], rounds: int) -> list[float]:
    """Return recognition times on a home of BIG_HOME devices: the furnished home's own
    devices plus copies of them (same kinds and clusters) named and placed in twelve more
    rooms. Recognition reads only names, rooms and kinds, so the copies need no node."""
    from dataclasses import replace

    from bridge.voice.intents import IntentEngine

    real = list(home.service.matter.bridge.devices())
    devices = list(real)
    for i in range(BIG_HOME - len(real)):
        model = real[i % len(real)]
        room = _BIG_ROOMS[i % len(_BIG_ROOMS)]
        devices.append(
            replace(
                model,
                id=f"bench-{i}",
                slug=f"bench_{i}",
                room=room,
                name=f"{room} {model.kind_label} {i // len(_BIG_ROOMS) + 1}",
                aliases=(),
            )
        )
    assert home.service.invocation is not None
    engine = IntentEngine(
        registry=home.service.registry,
        invoker=home.service.invocation.invoker,
        devices=lambda: devices,
        tool_for=home.service.matter.bridge.tool_for,
        floors=VOICE.floors,
    )
    times = []
    for _ in range(rounds):
        for s in sentences:
            started = time.perf_counter()
            engine.recognize(s.text, normalise_language(s.language))
            times.append((time.perf_counter() - started) * 1000)
    engine.close()
    return times


async def run(controller_url: str, key_file: str, state_dir: Path, rounds: int) -> None:
    sets = {
        "development": load_sentences("dev"),
        "held-out": load_sentences("heldout"),
        "compound": load_sentences("compound"),
        "compound held-out": load_sentences("compound_heldout"),
        "speech": load_sentences("speech"),
        "speech held-out": load_sentences("speech_heldout"),
    }
    async with start_home(controller_url, state_dir, DUMPS, key_file, VOICE) as home:
        await furnish(home)
        engine = home.service.intents
        assert engine is not None
        assert home.service.invocation is not None
        token = home.service.invocation.verifier.verify(
            home.token("device:control:*", "device:read:*")
        )
        outcomes: dict[str, list[Any]] = {}
        cpu_ms: dict[str, float] = {}
        for _ in range(rounds):
            for name, sentences in sets.items():
                # This event-loop thread's CPU: recognition, the pipeline and the Matter
                # client (the controller is a process of its own, not counted).
                cpu0 = time.thread_time()
                outcomes[name] = await evaluate(home, sentences, token)
                cpu_ms[name] = (time.thread_time() - cpu0) * 1000 / max(1, len(sentences))
        recognise_ms = []
        for _ in range(rounds):
            for s in sets["development"]:
                started = time.perf_counter()
                engine.recognize(s.text, normalise_language(s.language))
                recognise_ms.append((time.perf_counter() - started) * 1000)
        big_ms = fifty_device_recognition(home, sets["development"], rounds)
    for name, found in outcomes.items():
        table(name, found)
    handle_ms = [o.duration_ms for o in outcomes["development"]]
    p50, p95 = pct(handle_ms, 0.5), pct(handle_ms, 0.95)
    print(
        "handle (recognise + pipeline + controller), development set, last round: "
        f"p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {max(handle_ms):.2f} ms"
    )
    print(
        f"baseline recognise only ({rounds} rounds): p50 {pct(recognise_ms, 0.5):.2f} ms, "
        f"p95 {pct(recognise_ms, 0.95):.2f} ms"
    )
    print(f"ratio handle/recognise p50: {pct(handle_ms, 0.5) / pct(recognise_ms, 0.5):.2f}x")
    print(
        f"recognise only, {BIG_HOME}-device home ({rounds} rounds, development set): "
        f"p50 {pct(big_ms, 0.5):.2f} ms, p95 {pct(big_ms, 0.95):.2f} ms (budget: p50 <= 10 ms)"
    )
    for name, found in outcomes.items():
        ms = [o.duration_ms for o in found]
        print(
            f"handle, {name} set, last round: p50 {pct(ms, 0.5):.2f} ms, p95 {pct(ms, 0.95):.2f} ms"
        )
    for name, per in cpu_ms.items():
        print(
            f"bridge CPU per spoken command, {name} set, last round: {per:.2f} ms "
            "(event-loop thread: recognise + pipeline + controller client)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="passes over the set (1-20)")
    args = parser.parse_args()
    rounds = max(1, min(20, args.rounds))
    with open_fabric(f"atm-bench-{os.getpid()}") as fab, running_controller(fab, "bench") as ctl:
        with tempfile.TemporaryDirectory(prefix="intents-bench-") as tmp:
            asyncio.run(run(ctl.url, ctl.key_file, Path(tmp) / "state", rounds))


if __name__ == "__main__":
    main()
