"""Benchmark the call pipeline against calling the handler directly.

One run measures, for a trivial handler:
  direct      await handler(params, ctx)
  pipeline    Invoker.invoke in-process (replay check, signed token, schema validation,
              templated permission check, events, buffered audit), token cache on
  pipeline/nc the same with signature verification on every call (token cache off)
  pipeline x64 the in-process pipeline with 64 callers at once: group commit puts many
              calls' audit rows in one transaction, each answered only after it commits
  http        POST /v1/invoke over loopback to a real bridge (keep-alive, sequential)
  http x8     the same with 8 concurrent clients
  http own    POST /v1/invoke from a client in a process of its own (as an agent is):
              the client's rate and latency; CPU per call is then the bridge's alone
  ws          tool_invoke / tool_response over one GET /v1/calls/ws socket, one at a time
  ws x8       the same socket with 8 calls in flight
and prints calls/s, p50 and p99 latency, CPU per call (this one process's user + system
time over the timed calls: bridge and client together, since both run here), and
ratios against the direct call. CPU per call is the figure to compare on a busy machine.

``--other PYTHON`` (another checkout's venv interpreter, for a before) runs this same
script under both interpreters, alternating, ``--rounds`` times each (each run a process
of its own, importing its own checkout's ``bridge``), and prints before -> after per mode
from the best round of each side (lowest CPU per call, highest rate) with the ratios.

Usage: .venv/bin/python bench/invoke.py [--calls N] [--other PATH/.venv/bin/python [--rounds 3]]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
from benchlib import self_cpu_seconds

from bridge import eventloop
from bridge.auth.tokens import issue_token
from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.invocation.messages import ToolRequest
from bridge.service import BridgeService
from bridge.tools.context import CallContext
from bridge.tools.definition import Requires, ToolDefinition

SCHEMA = {
    "type": "object",
    "properties": {"device_id": {"type": "string"}, "level": {"type": "integer", "default": 50}},
    "required": ["device_id"],
    "additionalProperties": False,
}


async def trivial(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"ok": True, "level": params.get("level")}


# A client of its own (an agent is another process): sequential POST /v1/invoke calls,
# printing its rate, latencies and its own CPU per call as one JSON line.
OWN_PROCESS_CLIENT = """
import asyncio, json, sys, time
import aiohttp
url, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = {"tool": "dim", "params": {"device_id": "lamp-1"}}
async def main():
    lat = []
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer " + token}) as s:
        async def one():
            async with s.post(url, json=body) as resp:
                await resp.read()
                if resp.status != 200:
                    raise RuntimeError(resp.status)
        for _ in range(min(50, n)):
            await one()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            t = time.perf_counter()
            await one()
            lat.append(time.perf_counter() - t)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    lat.sort()
    print(json.dumps({"rate": n / elapsed, "p50": lat[n // 2] * 1e6,
                      "p99": lat[min(n - 1, int(n * 0.99))] * 1e6,
                      "mean": sum(lat) / n * 1e6, "client_cpu": cpu / n * 1e6}))
asyncio.run(main())
"""


async def own_process_client(label: str, url: str, token: str, n: int) -> dict[str, Any]:
    """Run the client in a process of its own; CPU is this (the bridge's) process's."""
    cpu_before = self_cpu_seconds()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OWN_PROCESS_CLIENT, url, token, str(n), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"the client process failed ({proc.returncode})")
    cpu = self_cpu_seconds() - cpu_before
    doc = json.loads(out)
    # The bridge's CPU includes its 50 warm-up calls; spread over all of them.
    return {
        "label": label,
        "calls": n,
        "rate": doc["rate"],
        "p50": doc["p50"],
        "p99": doc["p99"],
        "mean": doc["mean"],
        "cpu": cpu / (n + min(50, n)) * 1e6,
        "client_cpu": doc["client_cpu"],
    }


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(
    label: str, n: int, one: Callable[[], Awaitable[None]], concurrency: int = 1
) -> dict[str, Any]:
    for _ in range(min(50, n)):
        await one()
    lat: list[float] = []

    async def worker(count: int) -> None:
        for _ in range(count):
            t0 = time.perf_counter()
            await one()
            lat.append(time.perf_counter() - t0)

    started = time.perf_counter()
    cpu_before = self_cpu_seconds()
    await asyncio.gather(*(worker(n // concurrency) for _ in range(concurrency)))
    cpu = self_cpu_seconds() - cpu_before
    elapsed = time.perf_counter() - started
    return {
        "label": label,
        "calls": len(lat),
        "rate": len(lat) / elapsed,
        "p50": pct(lat, 0.50) * 1e6,
        "p99": pct(lat, 0.99) * 1e6,
        "mean": statistics.fmean(lat) * 1e6,
        "cpu": cpu / len(lat) * 1e6,
    }


async def main(n: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        config = BridgeConfig(
            state_dir=Path(tmp) / "state",
            api=ApiConfig(host="127.0.0.1", port=0),
            matter=replace(MatterConfig(), enabled=False),
        )
        service = BridgeService(config, enable_matter=False)
        await service.start()
        try:
            defn = ToolDefinition(
                name="dim",
                namespace="bench",
                description="Trivial handler",
                parameters=SCHEMA,
                requires=Requires(permissions=("device:control:{device_id}",)),
            )
            service.registry.register(defn, trivial)
            runtime = service.invocation
            assert runtime is not None
            token = issue_token(
                runtime.key, agent_id="bench", ttl_s=3600, permissions=["device:control:*"]
            )
            params = {"device_id": "lamp-1"}
            ctx = CallContext(agent_id="bench")
            invoker = runtime.invoker

            async def direct() -> None:
                await trivial(dict(params), ctx)

            async def pipeline() -> None:
                resp = await invoker.invoke(ToolRequest(tool="dim", params=params, token=token))
                if not resp.ok:
                    raise RuntimeError(resp.error)

            async def pipeline_nocache() -> None:
                invoker.verifier._cache.clear()
                await pipeline()

            port = await service.start_api("127.0.0.1", 0)
            url = f"http://127.0.0.1:{port}/v1/invoke"
            headers = {"Authorization": f"Bearer {token}"}
            body = {"tool": "dim", "params": params}
            connector = aiohttp.TCPConnector(limit=16)
            async with aiohttp.ClientSession(connector=connector) as session:

                async def http() -> None:
                    async with session.post(url, json=body, headers=headers) as resp:
                        await resp.read()
                        if resp.status != 200:
                            raise RuntimeError(resp.status)

                ws = await session.ws_connect(
                    f"ws://127.0.0.1:{port}/v1/calls/ws", headers=headers, compress=0
                )
                waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}

                async def read_answers() -> None:
                    async for msg in ws:
                        doc = json.loads(msg.data)
                        waiting.pop(doc["request_id"]).set_result(doc)

                reader = asyncio.create_task(read_answers())
                ids = itertools.count()

                async def channel() -> None:
                    call_id = f"w{next(ids)}"
                    answer = asyncio.get_running_loop().create_future()
                    waiting[call_id] = answer
                    await ws.send_str(
                        json.dumps(
                            {"type": "tool_invoke", "id": call_id, "tool": "dim", "params": params}
                        )
                    )
                    if (await answer)["status"] != "success":
                        raise RuntimeError(answer.result())

                results = [
                    await measure("direct handler", n, direct),
                    await measure("pipeline in-process", n, pipeline),
                    await measure("pipeline, verify every call", n, pipeline_nocache),
                    await measure("pipeline, 64 callers", n, pipeline, concurrency=64),
                    await measure("HTTP POST /v1/invoke", n, http),
                    await measure("HTTP, 8 concurrent clients", n, http, concurrency=8),
                    await own_process_client("HTTP, client in own process", url, token, n),
                    await measure("WS /v1/calls/ws", n, channel),
                    await measure("WS, 8 calls in flight", n, channel, concurrency=8),
                ]
                await ws.close()
                reader.cancel()
            await runtime.audit.flush()
            audited = len(await runtime.audit.query(limit=1_000_000))
        finally:
            await service.stop()
    print(f"audit rows written: {audited}", file=sys.stderr)
    return results


def report(results: list[dict[str, Any]]) -> None:
    """Print one run's table and the derived figures."""
    base = results[0]
    print(
        f"{'mode':<30}{'calls':>7}{'calls/s':>11}{'p50 us':>10}{'p99 us':>10}"
        f"{'cpu us':>9}{'x p50':>8}{'x rate':>9}"
    )
    for r in results:
        print(
            f"{r['label']:<30}{r['calls']:>7}{r['rate']:>11.0f}{r['p50']:>10.1f}"
            f"{r['p99']:>10.1f}{r['cpu']:>9.1f}{r['p50'] / base['p50']:>8.1f}"
            f"{base['rate'] / r['rate']:>9.1f}"
        )
    own = by_label(results, "HTTP, client in own process")
    print(
        f"client in its own process: the bridge's CPU {own['cpu']:.1f} us per call (above), "
        f"the client's own {own['client_cpu']:.1f} us per call"
    )
    by = {r["label"]: r for r in results}
    pipe, ws1, http1 = by["pipeline in-process"], by["WS /v1/calls/ws"], by["HTTP POST /v1/invoke"]
    print(
        f"channel overhead over the in-process pipeline: p50 "
        f"{(ws1['p50'] - pipe['p50']) / 1000:.3f} ms, CPU {(ws1['cpu'] - pipe['cpu']) / 1000:.3f}"
        f" ms per call; HTTP's: p50 {(http1['p50'] - pipe['p50']) / 1000:.3f} ms, CPU "
        f"{(http1['cpu'] - pipe['cpu']) / 1000:.3f} ms per call"
    )


def by_label(results: list[dict[str, Any]], label: str) -> dict[str, Any]:
    return next(r for r in results if r["label"] == label)


def run_side(python: str, n: int, loop: str) -> list[dict[str, Any]]:
    """Run this script under ``python`` (a checkout's venv) and return its results."""
    out = subprocess.run(
        [python, __file__, "--calls", str(n), "--loop", loop, "--json"],
        check=True,
        capture_output=True,
        text=True,
        timeout=1800,
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def compare(other: str, n: int, rounds: int, loop: str) -> None:
    """Print before (``other``) -> after (this checkout) per mode, best round of each."""
    runs: dict[str, list[list[dict[str, Any]]]] = {"before": [], "after": []}
    for i in range(rounds):
        order = [("before", other), ("after", sys.executable)]
        for side, python in order if i % 2 == 0 else order[::-1]:
            runs[side].append(run_side(python, n, loop))
            print(f"round {i + 1} {side} done", file=sys.stderr, flush=True)
    best: dict[str, dict[str, dict[str, float]]] = {"before": {}, "after": {}}
    for side, results in runs.items():
        for result in results:
            for r in result:
                kept = best[side].setdefault(r["label"], dict(r))
                kept["cpu"] = min(kept["cpu"], r["cpu"])
                kept["rate"] = max(kept["rate"], r["rate"])
                kept["p50"] = min(kept["p50"], r["p50"])
    print(f"best of {rounds} alternating rounds each, {n} calls per mode")
    print(
        f"{'mode':<30}{'CPU us/call before -> after':>30}{'ratio':>7}"
        f"{'calls/s before -> after':>27}{'ratio':>7}"
    )
    doc = {}
    for label, a in best["after"].items():
        b = best["before"].get(label)
        if b is None:
            continue
        print(
            f"{label:<30}{b['cpu']:>14.1f} -> {a['cpu']:>8.1f}{a['cpu'] / b['cpu']:>11.2f}"
            f"{b['rate']:>14.0f} -> {a['rate']:>7.0f}{a['rate'] / b['rate']:>10.2f}"
        )
        doc[label] = {
            "cpu_us_before": round(b["cpu"], 1),
            "cpu_us_after": round(a["cpu"], 1),
            "rate_before": round(b["rate"]),
            "rate_after": round(a["rate"]),
        }
    print(json.dumps(doc))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per mode (default 2000)")
    parser.add_argument(
        "--loop",
        choices=("auto", "uvloop", "asyncio"),
        default="auto",
        help="event loop for the bridge and client (auto: the bridge's default)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the results as one JSON line (for --other)"
    )
    parser.add_argument(
        "--other", default=None, help="another checkout's venv python: before -> after in one run"
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating runs per side with --other (default 3)"
    )
    args = parser.parse_args()
    calls = max(100, min(args.calls, 100_000))
    if args.other:
        compare(args.other, calls, max(1, min(args.rounds, 20)), args.loop)
        sys.exit(0)
    print(f"event loop: {eventloop.resolve(args.loop)}", file=sys.stderr, flush=True)
    results = eventloop.run(main(calls), args.loop)
    if args.json:
        print(json.dumps(results), flush=True)
    else:
        report(results)
