"""Benchmark the audit log's group commit: calls/s through the invoker with N callers.

Each call goes through the whole in-process pipeline (replay check, signed token,
validation, permission check, a trivial handler) and is answered only after its audit
row is committed; concurrent calls share commits. Prints calls/s, p50/p99 latency and
rows per commit for 1, 8 and 64 concurrent callers, then checks every call has its row.
Run it with another checkout's interpreter (e.g. one from before group commit, where
rows were written after the answer) to compare.

Usage: .venv/bin/python bench/audit_commit.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from bridge.auth.audit import AuditLog
from bridge.auth.keys import NodeKey
from bridge.auth.tokens import TokenVerifier, issue_token
from bridge.invocation.invoker import Invoker
from bridge.invocation.messages import ToolRequest
from bridge.storage import Database
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from bridge.tools.registry import ToolRegistry

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def trivial(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"n": params["n"]}


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(n: int, concurrency: int, tmp: Path) -> tuple[float, float, float, int, int]:
    db = Database(tmp / f"bench-{concurrency}.db")
    audit = AuditLog(db)
    key = NodeKey.generate()
    registry = ToolRegistry()
    registry.register(
        ToolDefinition(name="echo", namespace="bench", description="Echo", parameters=SCHEMA),
        trivial,
    )
    invoker = Invoker(
        registry=registry,
        verifier=TokenVerifier([key.public_key_b64]),
        node_id="bench",
        audit=audit,
    )
    token = issue_token(key, agent_id="bench", permissions=["*"], ttl_s=3600)
    latencies: list[float] = []
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            t0 = time.perf_counter()
            resp = await invoker.invoke(ToolRequest(tool="echo", params={"n": i}, token=token))
            latencies.append(time.perf_counter() - t0)
            if not resp.ok:
                raise RuntimeError(resp.error)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    await audit.stop()
    rows = db.fetchone_sync("SELECT COUNT(*) AS n FROM audit_log")
    commits = int(getattr(audit, "commits", 0))
    db.close()
    return (
        n / elapsed,
        pct(latencies, 0.5) * 1e3,
        pct(latencies, 0.99) * 1e3,
        commits,
        (rows["n"] if rows else 0),
    )


async def main(n: int) -> None:
    print(
        f"{'callers':>8}{'calls':>8}{'calls/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'commits':>9}{'rows':>7}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 8, 64):
            rate, p50, p99, commits, rows = await run(n, concurrency, Path(tmp))
            print(
                f"{concurrency:>8}{n:>8}{rate:>10.0f}{p50:>9.2f}{p99:>9.2f}"
                f"{commits or '-':>9}{rows:>7}"
            )
            if rows != n:
                raise SystemExit(f"only {rows} of {n} calls have an audit row")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls per run (default 3000)")
    args = parser.parse_args()
    asyncio.run(main(max(100, min(args.calls, 100_000))))
