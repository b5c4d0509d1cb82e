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
from tests.voice.sentence_set import DUMPS, evaluate, furnish, load_sentences


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table(name: str, outcomes: list[Any]) -> None:
    langs = sorted({o.sentence.language for o in outcomes})
    print(f"{name} set")
    print(f"{'lang':<5} {'sentences':>9} {'exact':>6} {'accuracy':>9} {'wrong':>6} "
          f"{'not acted':>10}")
    for lang in [*langs, "all"]:
        chosen = [o for o in outcomes if lang in ("all", o.sentence.language)]
        exact = sum(o.exact for o in chosen)
        wrong = sum(o.wrong_action for o in chosen)
        idle = sum(1 for o in chosen if not o.calls and o.sentence.calls)
        print(f"{lang:<5} {len(chosen):>9} {exact:>6} {exact / len(chosen):>9.1%} {wrong:>6} "
              f"{idle:>10}")
    for o in outcomes:
        if not o.exact:
            what = "WRONG" if o.wrong_action else "not acted"
            print(f"  {what} [{o.sentence.language}] {o.sentence.text!r}"
                  f"{' (area ' + o.sentence.area + ')' if o.sentence.area else ''}"
                  f" -> {o.calls} {o.speech!r}")


async def run(controller_url: str, key_file: str, state_dir: Path, rounds: int) -> None:
    sets = {"development": load_sentences("dev"), "held-out": load_sentences("heldout")}
    async with start_home(controller_url, state_dir, DUMPS, key_file) as home:
        await furnish(home)
        engine = home.service.intents
        assert engine is not None
        assert home.service.invocation is not None
        token = home.service.invocation.verifier.verify(
            home.token("device:control:*", "device:read:*"))
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
    for name, found in outcomes.items():
        table(name, found)
    handle_ms = [o.duration_ms for o in outcomes["development"]]
    p50, p95 = pct(handle_ms, 0.5), pct(handle_ms, 0.95)
    print("handle (recognise + pipeline + controller), development set, last round: "
          f"p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {max(handle_ms):.2f} ms")
    print(f"baseline recognise only ({rounds} rounds): p50 {pct(recognise_ms, 0.5):.2f} ms, "
          f"p95 {pct(recognise_ms, 0.95):.2f} ms")
    print(f"ratio handle/recognise p50: {pct(handle_ms, 0.5) / pct(recognise_ms, 0.5):.2f}x")
    for name, per in cpu_ms.items():
        print(f"bridge CPU per spoken command, {name} set, last round: {per:.2f} ms "
              "(event-loop thread: recognise + pipeline + controller client)")


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
