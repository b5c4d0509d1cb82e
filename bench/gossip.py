"""Gossip convergence benchmark: N simulated mesh nodes in one process, before -> after.

The simulation is ``tests/mesh/gossip_sim.py``: real ed25519 keys, real signed
announcements (a dimmable light's four tools), a real ``GossipState`` per node, real
signed envelopes and answers verified on the other side, one push-pull exchange per node
and round with ``--fanout`` random peers. By default every simulated node verifies each
distinct announcement it receives itself, as a real node does; ``--shared-verification``
(sim-only) verifies each distinct announcement once for the whole process.

Each node count runs in its own child process, so peak RSS is that size's own. Per N:
rounds until every node holds every announcement, rounds for one node's change to reach
everybody, bytes sent, an idle round's bytes, wall and CPU seconds of the whole run,
CPU per exchange, peak RSS and the announcement verifications made. ``--before REV``
also runs the benchmark of an older commit (exported with ``git archive``) for
``--before-nodes`` (the sizes the old code can do: it kept every node's own decoded
copy of every announcement, N² of them), so one run shows before -> after.

Usage: python bench/gossip.py [--nodes 100 300 1000] [--before 553ad1c]
       [--before-nodes 100 300] [--fanout 1] [--seed 1] [--answers signed|unsigned]
       [--shared-verification] [--no-envelopes]
Run it under ``prlimit --as=6000000000`` on a shared machine (children inherit it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def measure(n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run one simulation of ``n`` nodes in this process; return its figures."""
    import resource

    from tests.mesh.gossip_sim import Simulation

    wall0, cpu0 = time.perf_counter(), time.process_time()
    sim = Simulation.build(
        n,
        seed=args.seed,
        envelopes=not args.no_envelopes,
        signed_answers=args.answers == "signed",
        shared_verification=args.shared_verification,
    )
    setup_s, cpu1 = time.perf_counter() - wall0, time.process_time()
    rounds = sim.run_until(sim.converged, fanout=args.fanout)
    sent = [x.sent_bytes for x in sim.nodes]
    for x in sim.nodes:
        x.sent_bytes = 0
    changer = sim.nodes[0]
    changer.version = 2
    changer.announce(time.time())
    change_rounds = sim.run_until(
        lambda: sim.holds_everywhere(changer.identity.node_id, 2), fanout=args.fanout
    )
    change_sent = [x.sent_bytes for x in sim.nodes]
    for x in sim.nodes:
        x.sent_bytes = 0
    sim.one_round(args.fanout)
    idle = statistics.mean(x.sent_bytes for x in sim.nodes)
    rounds_cpu = time.process_time() - cpu1  # every round: convergence, change, idle
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "n": n,
        "rounds": rounds,
        "change_rounds": change_rounds,
        "sent_kib_mean": statistics.mean(sent) / 1024,
        "sent_mib_total": sum(sent) / 2**20,
        "change_sent_kib_mean": statistics.mean(change_sent) / 1024,
        "idle_bytes": idle,
        "setup_s": setup_s,
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": time.process_time() - cpu0,
        "cpu_us_per_exchange": rounds_cpu * 1e6 / sim.exchanges,
        "exchanges": sim.exchanges,
        "verifications": sim.verifications(),
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def run_child(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[str, dict[str, float]]:
    """Run ``cmd``; return its stdout and its wall, CPU seconds and peak RSS (MB)."""
    wall0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[-4:]} ended with {proc.returncode} (memory limit?)\n{text}")
    return text, {
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def before(rev: str, n: int, args: argparse.Namespace, tree: Path) -> dict[str, Any]:
    """Run the benchmark of commit ``rev`` (exported into ``tree``) for ``n`` nodes."""
    cmd = [sys.executable, str(tree / "bench" / "gossip.py"), "--nodes", str(n)]
    cmd += ["--fanout", str(args.fanout), "--seed", str(args.seed), "--answers", args.answers]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    text, usage = run_child(cmd, env, tree)
    row: dict[str, Any] = {"n": n, **usage}
    for key, pattern in {
        "rounds": r"full convergence: (\d+) rounds",
        "change_rounds": r"one node's change: (\d+) rounds",
        "cpu_us_per_exchange": r"CPU (\d+) us per exchange",
        "idle_bytes": r"idle round \(all in sync\): (\d+) B",
        "sent_kib_mean": r"full convergence: .*?mean ([\d.]+) KiB",
    }.items():
        found = re.search(pattern, text)
        row[key] = float(found.group(1)) if found else float("nan")
    return row


def after(n: int, args: argparse.Namespace) -> dict[str, Any]:
    """Run this checkout's simulation of ``n`` nodes in a child process."""
    cmd = [sys.executable, __file__, "--child", str(n), "--fanout", str(args.fanout)]
    cmd += ["--seed", str(args.seed), "--answers", args.answers]
    if args.shared_verification:
        cmd.append("--shared-verification")
    if args.no_envelopes:
        cmd.append("--no-envelopes")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    text, usage = run_child(cmd, env, REPO)
    row: dict[str, Any] = json.loads(text.splitlines()[-1])
    row["peak_rss_mb"] = usage["peak_rss_mb"]  # the child's own figure, from the kernel
    return row


def show(label: str, row: dict[str, Any]) -> None:
    """Print one result line."""
    extra = f", {row['verifications']} verifications" if "verifications" in row else ""
    print(
        f"{label:<7} N={row['n']:5d}: converged in {row['rounds']:.0f} rounds, one change in "
        f"{row['change_rounds']:.0f}; wall {row['wall_s']:.1f} s, CPU {row['cpu_s']:.1f} s "
        f"({row['cpu_us_per_exchange']:.0f} us per exchange), peak RSS "
        f"{row['peak_rss_mb']:.0f} MB; sent per node {row['sent_kib_mean']:.1f} KiB, "
        f"idle round {row['idle_bytes']:.0f} B{extra}",
        flush=True,
    )


def main() -> None:
    """Parse arguments, run the sizes (before, then after), print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--before", metavar="REV", help="also run this commit's benchmark")
    parser.add_argument("--before-nodes", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--fanout", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--answers", choices=["signed", "unsigned"], default="signed")
    parser.add_argument(
        "--shared-verification",
        action="store_true",
        help="sim-only: verify each distinct announcement once for all simulated nodes",
    )
    parser.add_argument(
        "--no-envelopes",
        action="store_true",
        help="sim-only: send the gossip messages without envelopes and answers (as the test)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args)))
        return
    verification = "shared (sim-only)" if args.shared_verification else "per node"
    transport = (
        "messages without envelopes (sim-only)"
        if args.no_envelopes
        else f"signed envelopes, answers {args.answers}"
    )
    print(
        f"hashed push-pull, fanout {args.fanout}, seed {args.seed}, {transport}, "
        f"announcement verification {verification}",
        flush=True,
    )
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp)
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.before],
                capture_output=True,
                check=True,
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            for n in args.before_nodes:
                show("before", before(args.before, n, args, tree))
    for n in args.nodes:
        show("after", after(n, args))


if __name__ == "__main__":
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    main()
