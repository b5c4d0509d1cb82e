"""Routed-call benchmark: what a forwarded call costs, and what its signing costs.

Two in-process mesh nodes (``tests/mesh/harness.py``: real keys, registries, invokers,
aiohttp on 127.0.0.1): node A offers a tool, node C calls it ``--calls`` times in a row;
each call is forwarded by C to A over HTTP. Printed: CPU time per call (both nodes run
in this one process, so it is the whole cost of a forwarded call: C's pipeline, the
signed envelope, A's checks and pipeline, the answer) and wall time per call.

``--base DIR`` also runs the same benchmark against another checkout in a subprocess
whose ``PYTHONPATH`` is DIR; ``--base-rev REV ...`` exports each commit with ``git
archive`` and does the same, so one run shows before -> after. Signing of forwarded
calls (delegations, signed answers, peer proofs) landed in 7a37927; its parent 23e74dc
is the mesh without it, so ``--base-rev 23e74dc 7a37927`` puts the cost of signing alone
(two adjacent commits) beside this checkout. The signing steps this checkout makes per
call are also timed alone, in CPU (delegation made + checked, answer signed + verified).

Usage: python bench/mesh_call.py [--calls 300] [--base DIR] [--base-rev 23e74dc 7a37927]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


async def measure(calls: int) -> dict[str, Any]:
    """Run ``calls`` routed calls C -> A; return CPU and wall milliseconds per call."""
    from bridge.auth.keys import NodeKey
    from tests.mesh.harness import build_nodes, token, wait_for, whoami, whoami_definition

    issuer = NodeKey.generate()
    with tempfile.TemporaryDirectory() as tmp:
        # Slow gossip: the loop must not weigh on the calls measured.
        a, c = build_nodes(
            ["a", "c"],
            Path(tmp),
            issuer,
            gossip_interval_s=0.2,
            announce_interval_s=60.0,
            announcement_ttl_s=120.0,
        )
        a.registry.register(whoami_definition("whoami_a"), whoami)
        for node in (a, c):
            await node.start()
        try:
            tool = "core:whoami_a@1.0.0"
            await wait_for(lambda: c.registry.get(tool) is not None, 10.0)
            bearer = token(issuer)
            for _ in range(20):  # warm-up: connections, proofs, caches
                response = await c.call(tool, bearer)
                assert response.ok, response.error
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(calls):
                response = await c.call(tool, bearer)
                assert response.ok, response.error
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        finally:
            for node in (a, c):
                await node.stop()
    return {"cpu_ms": cpu * 1000 / calls, "wall_ms": wall * 1000 / calls}


def signing_steps(n: int = 2000) -> dict[str, float]:
    """Return microseconds per delegation made+checked and per answer signed+verified."""
    from bridge.auth.keys import NodeKey
    from bridge.auth.tokens import issue_token, parse_token
    from bridge.invocation.messages import RequestRouting, ToolRequest
    from bridge.mesh.delegation import Grant, check_delegation, delegate
    from bridge.mesh.envelope import open_answer, seal_answer
    from bridge.mesh.node_id import NodeIdentity
    from bridge.mesh.trust import TrustPolicy

    c = NodeIdentity.from_key(NodeKey.generate(), "c")
    a = NodeIdentity.from_key(NodeKey.generate(), "a")
    trust = TrustPolicy("allowlist", (c.node_id,), a.public_key_b64)
    caller = parse_token(
        issue_token(NodeKey.generate(), agent_id="x", permissions=["t:*"], ttl_s=600)
    )[0]
    grant = Grant.of_token(caller, ("t:run:x",))
    request = ToolRequest(
        tool="core:t@1.0.0",
        params={"text": "hi"},
        routing=RequestRouting(hop_budget=2, path=(c.node_id,)),
    )
    t0 = time.process_time()
    for _ in range(n):
        doc = delegate(c, grant, request, to=a.node_id)
        check_delegation(doc, request=request, sender_id=c.node_id, own_id=a.node_id, trust=trust)
    t1 = time.process_time()
    body = {"response": {"result": {"text": "hi"}, "status": "success"}}
    for i in range(n):
        answer = seal_answer(a, to=c.node_id, nonce=f"{i:032x}", status=200, body=body)
        open_answer(
            answer,
            peer_id=a.node_id,
            public_key=a.public_key_b64,
            own_id=c.node_id,
            nonce=f"{i:032x}",
        )
    t2 = time.process_time()
    return {"delegation_us": (t1 - t0) * 1e6 / n, "answer_us": (t2 - t1) * 1e6 / n}


def run_base(tree: Path, calls: int) -> dict[str, Any]:
    """Run this benchmark's measurement with another checkout's code; return its figures."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    out = subprocess.run(
        [sys.executable, __file__, "--json", "--calls", str(calls)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    ).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def main() -> None:
    """Parse arguments, run here (and at ``--base``), print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--base", help="another checkout to measure first (the 'before')")
    parser.add_argument(
        "--base-rev", nargs="+", default=[], help="commits to export and measure first"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line (internal)")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(asyncio.run(measure(args.calls))))
        return
    rows: list[tuple[str, dict[str, Any]]] = []
    if args.base:
        rows.append((f"before ({args.base})", run_base(Path(args.base), args.calls)))
    for rev in args.base_rev:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            rows.append((f"commit {rev}", run_base(Path(tmp), args.calls)))
    rows.append(("after (this checkout)", asyncio.run(measure(args.calls))))
    for label, row in rows:
        print(
            f"{label:<40} CPU {row['cpu_ms']:.3f} ms/call, wall {row['wall_ms']:.3f} ms/call "
            f"({args.calls} routed calls C -> A)"
        )
    for (label, before), (later, after) in itertools.pairwise(rows):
        print(
            f"{label} -> {later}: CPU {before['cpu_ms']:.3f} -> {after['cpu_ms']:.3f} ms per "
            f"forwarded call ({after['cpu_ms'] - before['cpu_ms']:+.3f} ms)"
        )
    steps = signing_steps()
    print(
        f"alone (CPU, this checkout): delegation made + checked {steps['delegation_us']:.0f} us, "
        f"answer signed + verified {steps['answer_us']:.0f} us"
    )


if __name__ == "__main__":
    if "PYTHONPATH" not in os.environ:  # this checkout's tests.mesh.harness
        sys.path.insert(0, str(REPO))
    main()
