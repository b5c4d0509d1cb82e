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

    .venv/bin/python bench/intents.py [--rounds 3] [--before CHECKOUT]

``--before CHECKOUT`` (another checkout of the bridge, e.g. a worktree of an older
commit) also prints recognition on the 50-device home before -> after: the same devices
and sentences are recognised in child processes, one importing ``bridge`` from
CHECKOUT and one from this checkout, taking turns round by round, so both meet the
same machine (wall-clock and CPU time of the recognising thread), with the garbage
collector's passes while recognising and what one full collection costs afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The checkout whose bridge is measured: this one, or (child processes of --before) the
# one named by INTENTS_BENCH_ROOT.
sys.path.insert(
    0, os.environ.get("INTENTS_BENCH_ROOT") or str(Path(__file__).resolve().parent.parent)
)

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


def fifty_devices(home: Any) -> list[Any]:
    """Return a home of BIG_HOME devices: the furnished home's own devices plus copies of
    them (same kinds and clusters) named and placed in twelve more rooms. Recognition
    reads only names, rooms and kinds, so the copies need no node."""
    from dataclasses import replace

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
    return devices


def fifty_device_recognition(home: Any, sentences: list[Any], rounds: int) -> list[float]:
    """Return recognition times (ms) on the BIG_HOME-device home (``fifty_devices``)."""
    from bridge.voice.intents import IntentEngine

    devices = fifty_devices(home)
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


async def run(
    controller_url: str, key_file: str, state_dir: Path, rounds: int, before: str | None = None
) -> None:
    sets = {
        "development": load_sentences("dev"),
        "held-out": load_sentences("heldout"),
        "compound": load_sentences("compound"),
        "compound held-out": load_sentences("compound_heldout"),
        "speech": load_sentences("speech"),
        "speech held-out": load_sentences("speech_heldout"),
        "everyday": load_sentences("everyday"),
        "wording": load_sentences("wording"),
        "wording held-out": load_sentences("wording_heldout"),
        "wording7": load_sentences("wording7"),
        "wording7 held-out": load_sentences("wording7_heldout"),
        "wording8": load_sentences("wording8"),
        "wording8 held-out": load_sentences("wording8_heldout"),
        "wording9": load_sentences("wording9"),
        "wording9 held-out": load_sentences("wording9_heldout"),
        "wording9b held-out": load_sentences("wording9b_heldout"),
        "wording9c held-out": load_sentences("wording9c_heldout"),
        "wording10": load_sentences("wording10"),
        "wording10 held-out": load_sentences("wording10_heldout"),
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
        big_home = fifty_devices(home)
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
    if before is not None:
        before_after(big_home, sets["development"], before, rounds)
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


def recognition_child(devices_file: str, rounds: int) -> None:
    """Recognise the pickled sentences on the pickled devices; print times as JSON.

    Runs with ``bridge`` imported from whichever checkout is first on ``sys.path``.
    """
    import json
    import pickle

    from bridge.tools.registry import ToolRegistry
    from bridge.voice.intents import IntentEngine

    with open(devices_file, "rb") as f:
        devices, sentences, floors, hostile = pickle.load(f)
    engine = IntentEngine(
        registry=ToolRegistry(),
        invoker=None,  # type: ignore[arg-type]  # recognition never calls
        devices=lambda: devices,
        tool_for=lambda *a, **k: None,
        floors=floors,
    )
    spoken = asyncio.run(_spoken_costs(engine, hostile))
    for text, lang in sentences:  # first pass compiles every language's templates
        engine.recognize(text, lang)
    collector = _Collector()
    gc.callbacks.append(collector.phase)
    wall, cpu = [], []
    for _ in range(rounds):
        for text, lang in sentences:
            w0, c0 = time.perf_counter(), time.thread_time()
            engine.recognize(text, lang)
            cpu.append((time.thread_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)
    gc.callbacks.remove(collector.phase)
    c0 = time.perf_counter()
    gc.collect()  # what a full collection costs once every language has compiled
    full = [(time.perf_counter() - c0) * 1000]
    print(json.dumps({"wall": wall, "cpu": cpu, "full": full, **collector.figures(), **spoken}))


class _Collector:
    """The garbage collector's passes while sentences are recognised (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.started = 0.0
        self.ms = [0.0, 0.0, 0.0]  # per generation
        self.passes = [0, 0, 0]

    def phase(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            generation = info["generation"]
            self.ms[generation] += (time.perf_counter() - self.started) * 1000
            self.passes[generation] += 1

    def figures(self) -> dict[str, list[float]]:
        return {"gc_ms": self.ms, "gc_passes": [float(n) for n in self.passes]}


LANGUAGES = ("en", "de", "fr", "es", "nl")


async def _spoken_costs(engine: Any, hostile: list[str]) -> dict[str, list[float]]:
    """Return the event loop's CPU (ms) for a language's first sentence and hostile ones.

    ``first``: a fresh engine's first sentence in each language (compiling its templates,
    on the loop or not); ``hostile``: each 500-character sentence of
    ``sentence_set.hostile_sentences`` in each language, none of which is understood (no
    call is made, so no invoker is needed).
    """
    first, costs = [], []
    for lang in LANGUAGES:
        c0 = time.thread_time()
        await engine.handle("hello there", lang, token=None)
        first.append((time.thread_time() - c0) * 1000)
    for lang in LANGUAGES:
        for text in hostile:
            c0 = time.thread_time()
            await engine.handle(text, lang, token=None)
            costs.append((time.thread_time() - c0) * 1000)
    return {"first": first, "hostile": costs}


def before_after(devices: list[Any], sentences: list[Any], before: str, rounds: int) -> None:
    """Print recognition on the 50-device home before -> after (child processes in turn)."""
    import json
    import pickle
    import subprocess

    here = str(Path(__file__).resolve().parent.parent)
    texts = [(s.text, normalise_language(s.language)) for s in sentences]
    found: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    with tempfile.TemporaryDirectory(prefix="intents-before-") as tmp:
        pickled = Path(tmp) / "home.pickle"
        # (imported here: a child imports the tests of the checkout it measures)
        from tests.voice.sentence_set import hostile_sentences

        names = [d.name for d in devices]
        words = sorted({w for d in devices for w in (d.room or "", *d.aliases) if w})
        hostile = hostile_sentences(names, [*words, "the", "and", "please", "30", "kitchn"])
        pickled.write_bytes(pickle.dumps((devices, texts, VOICE.floors, hostile)))
        for _ in range(rounds):
            for name, root in (("before", before), ("after", here)):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(pickled), "--rounds", "1"],
                    env={**os.environ, "INTENTS_BENCH_ROOT": root},
                    capture_output=True,
                    text=True,
                    check=False,
                    timeout=300,
                )
                if out.returncode != 0:
                    raise SystemExit(f"the {name} child failed:\n{out.stderr[-3000:]}")
                times = json.loads(out.stdout.strip().splitlines()[-1])
                for kind, values in times.items():
                    if kind.startswith("gc_"):  # per generation: summed over the rounds
                        kept = found[name].setdefault(kind, [0.0] * len(values))
                        found[name][kind] = [x + y for x, y in zip(kept, values, strict=True)]
                    else:
                        found[name].setdefault(kind, []).extend(values)
    for kind, label in (("wall", "wall clock"), ("cpu", "CPU of the recognising thread")):
        b, a = found["before"][kind], found["after"][kind]
        print(
            f"recognise only, {BIG_HOME}-device home, {label} ({rounds} rounds, development "
            f"set): before p50 {pct(b, 0.5):.2f} ms, p95 {pct(b, 0.95):.2f} ms -> after "
            f"p50 {pct(a, 0.5):.2f} ms, p95 {pct(a, 0.95):.2f} ms "
            f"({pct(b, 0.5) / pct(a, 0.5):.1f}x at p50; budget: p50 <= 10 ms)"
        )
    n = len(sentences) * rounds
    b, a = found["before"], found["after"]
    print(
        f"of which in the garbage collector ({n} sentences): before "
        f"{sum(b['gc_ms']) / n:.2f} ms per sentence, passes by generation "
        f"{_listed(b['gc_passes'])} -> after {sum(a['gc_ms']) / n:.2f} ms per sentence, "
        f"passes {_listed(a['gc_passes'])}; full passes take before "
        f"{b['gc_ms'][2] / max(1.0, b['gc_passes'][2]):.1f} ms -> after "
        f"{a['gc_ms'][2] / max(1.0, a['gc_passes'][2]):.1f} ms each"
    )
    print(
        "a full collection afterwards (gc.collect(), five languages compiled), ms: before "
        f"{_listed(b['full'])} -> after {_listed(a['full'])}"
    )
    b, a = found["before"]["first"], found["after"]["first"]
    print(
        "a fresh engine's first sentence per language, event-loop CPU (ms, "
        f"{'/'.join(LANGUAGES)}, last round): before {_listed(b[-5:])} -> after {_listed(a[-5:])}"
    )
    b, a = found["before"]["hostile"], found["after"]["hostile"]
    print(
        f"a 500-character sentence not understood ({len(a) // rounds} per round: "
        f"{len(a) // rounds // len(LANGUAGES)} shapes x {len(LANGUAGES)} languages), "
        f"event-loop CPU: before p50 {pct(b, 0.5):.1f} ms, max {max(b):.1f} ms -> after "
        f"p50 {pct(a, 0.5):.1f} ms, max {max(a):.1f} ms ({max(b) / max(a):.1f}x at the max)"
    )


def _listed(values: list[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="passes over the set (1-20)")
    parser.add_argument("--before", help="another checkout: recognition before -> after")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    rounds = max(1, min(20, args.rounds))
    if args.child:
        recognition_child(args.child, rounds)
        return
    with open_fabric(f"atm-bench-{os.getpid()}") as fab, running_controller(fab, "bench") as ctl:
        with tempfile.TemporaryDirectory(prefix="intents-bench-") as tmp:
            asyncio.run(run(ctl.url, ctl.key_file, Path(tmp) / "state", rounds, args.before))


if __name__ == "__main__":
    main()
