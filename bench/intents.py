"""Spoken-command accuracy and latency on the sentence set, against the real controller.

Runs every utterance of tests/voice/sentences/*.yaml (en, de, fr, es, nl) through the
bridge's intent engine with a signed token, on the eight recorded devices imported
into a real python-matter-server as test nodes, and prints per language how many made
exactly their expected calls, how many did something they should not have (must be 0),
and the latency of the whole ``handle`` (recognise + invoke through the pipeline +
controller round trip) against the baseline of recognition alone, in the same run.
Sentences that were not understood are listed.

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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge.voice.intents import normalise_language
from tests.support.fabric import open_fabric, running_controller
from tests.support.home import start_home
from tests.voice.sentence_set import DUMPS, evaluate, furnish, load_sentences


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(controller_url: str, state_dir: Path, rounds: int) -> None:
    sentences = load_sentences()
    async with start_home(controller_url, state_dir, DUMPS) as home:
        await furnish(home)
        engine = home.service.intents
        assert engine is not None
        assert home.service.invocation is not None
        token = home.service.invocation.verifier.verify(
            home.token("device:control:*", "device:read:*"))
        outcomes = []
        for _ in range(rounds):
            outcomes = await evaluate(home, sentences, token)
        recognise_ms = []
        for _ in range(rounds):
            for s in sentences:
                started = time.perf_counter()
                engine.recognize(s.text, normalise_language(s.language))
                recognise_ms.append((time.perf_counter() - started) * 1000)
    langs = sorted({s.language for s in sentences})
    print(f"{'lang':<5} {'sentences':>9} {'exact':>6} {'accuracy':>9} {'wrong actions':>14}")
    for lang in [*langs, "all"]:
        chosen = [o for o in outcomes if lang in ("all", o.sentence.language)]
        exact = sum(o.exact for o in chosen)
        wrong = sum(o.wrong_action for o in chosen)
        print(f"{lang:<5} {len(chosen):>9} {exact:>6} {exact / len(chosen):>9.1%} {wrong:>14}")
    handle_ms = [o.duration_ms for o in outcomes]
    p50, p95 = pct(handle_ms, 0.5), pct(handle_ms, 0.95)
    print("handle (recognise + pipeline + controller), last round: "
          f"p50 {p50:.2f} ms, p95 {p95:.2f} ms, max {max(handle_ms):.2f} ms")
    print(f"baseline recognise only ({rounds} rounds): p50 {pct(recognise_ms, 0.5):.2f} ms, "
          f"p95 {pct(recognise_ms, 0.95):.2f} ms")
    print(f"ratio handle/recognise p50: {pct(handle_ms, 0.5) / pct(recognise_ms, 0.5):.2f}x")
    missed = [o for o in outcomes if not o.exact]
    if missed:
        print("not understood (nothing done):")
        for o in missed:
            print(f"  [{o.sentence.language}] {o.sentence.text!r} -> {o.speech!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="passes over the set (1-20)")
    args = parser.parse_args()
    rounds = max(1, min(20, args.rounds))
    with open_fabric(f"atm-bench-{os.getpid()}") as fab, running_controller(fab, "bench") as ctl:
        with tempfile.TemporaryDirectory(prefix="intents-bench-") as tmp:
            asyncio.run(run(ctl.url, Path(tmp) / "state", rounds))


if __name__ == "__main__":
    main()
