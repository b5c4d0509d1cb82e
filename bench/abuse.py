"""One narrow token tries to exhaust every per-caller resource while another caller works.

``python bench/abuse.py`` starts a real ``atmosphere-bridge run`` (no Matter, API on
127.0.0.1, the tools of ``tests/auth/bounds_tools.py``) and, while a second token calls
``measure_text`` one call after another the whole time, lets one narrow token try in
turn to:

- hold pending approvals (300 dangerous calls at once),
- run background jobs (1,000 submits of a 30 s job),
- open MCP sessions (1,000 ``initialize`` requests),
- open event sockets (100 WebSockets, kept open),
- sign in to the console (300 sign-ins with its token),
- fill the audit log (60 calls with 900 kB of parameters).

It prints what each attempt got (accepted / refused by code), the other caller's
latency p50/p99 before and during the abuse, and the bridge's memory (RSS) and
database (db + WAL) growth, each against the bound stated here; the exit status is 1
when a bound is exceeded. The bounds are sized for a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from benchlib import percentile, rss_mb, stop_process

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tests" / "auth" / "bounds_tools.py"
# Stated bounds: what the other caller and the machine may see at worst.
# The worst phase is the 900 kB one: the narrow token's 32 big bodies in flight are read,
# scanned and parsed on the loop the other caller's calls share (p99 0.3-0.8 s here).
OTHER_P99_MS = 1000.0
RSS_GROWTH_MB = 48.0
DB_GROWTH_MB = 8.0
CONCURRENCY = 32


async def wait_for_line(proc: asyncio.subprocess.Process, prefix: str, timeout_s: float) -> str:
    """Return the first stdout line of ``proc`` starting with ``prefix``."""
    assert proc.stdout is not None
    async with asyncio.timeout(timeout_s):
        while True:
            line = (await proc.stdout.readline()).decode()
            if not line:
                raise RuntimeError("the bridge exited before it was ready")
            if line.startswith(prefix):
                return line.strip()


def db_bytes(state: Path) -> int:
    """Return the size of the bridge database with its WAL and shared memory."""
    return sum(p.stat().st_size for p in state.glob("bridge.db*"))


class Other:
    """The well-behaved caller: one small call after another, latencies kept."""

    def __init__(self, http: aiohttp.ClientSession, url: str, token: str) -> None:
        self.http, self.url, self.token = http, url, token
        self.samples: list[tuple[str, float, int]] = []
        self.phase = "baseline"
        self.stopping = False

    async def run(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        body = {"tool": "measure_text", "params": {"text": "hello"}}
        while not self.stopping:
            started = time.perf_counter()
            try:
                async with self.http.post(
                    f"{self.url}/v1/invoke", json=body, headers=headers
                ) as resp:
                    await resp.read()
                    status = resp.status
            except (aiohttp.ClientError, TimeoutError):
                status = 0
            self.samples.append((self.phase, (time.perf_counter() - started) * 1000, status))
            await asyncio.sleep(0.01)

    def summary(self, phase: str) -> tuple[float, float, int, int]:
        """Return (p50 ms, p99 ms, calls, failed calls) of one phase."""
        times = [ms for p, ms, _ in self.samples if p == phase]
        failed = sum(1 for p, _, s in self.samples if p == phase and s != 200)
        if not times:
            return 0.0, 0.0, 0, failed
        return percentile(times, 0.50), percentile(times, 0.99), len(times), failed


async def warm_mcp(http: aiohttp.ClientSession, url: str, token: str) -> None:
    """Open (and end) one MCP session so the server is built before the measurement."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "warm-up", "version": "1"},
        },
    }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with http.post(f"{url}/mcp", json=body, headers=headers) as resp:
        session = resp.headers.get("mcp-session-id")
        await resp.read()
    if session:
        async with http.delete(f"{url}/mcp", headers={**headers, "mcp-session-id": session}):
            pass


async def bounded(count: int, attempt: Callable[[int], Awaitable[str]]) -> collections.Counter[str]:
    """Run ``attempt(i)`` for ``count`` values, ``CONCURRENCY`` at a time; count outcomes."""
    outcomes: collections.Counter[str] = collections.Counter()
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with gate:
            outcomes[await attempt(i)] += 1

    await asyncio.gather(*(one(i) for i in range(count)))
    return outcomes


async def outcome(resp: aiohttp.ClientResponse) -> str:
    """Return ``"<status>"`` or ``"<status> <error code>/<reason>"`` of an answer."""
    text = await resp.text()
    try:
        error = json.loads(text).get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    if not isinstance(error, dict) or not error:
        return str(resp.status)
    reason = (error.get("details") or {}).get("reason", "")
    return f"{resp.status} {error.get('code')}/{reason}".rstrip("/")


async def abuse(
    http: aiohttp.ClientSession, url: str, caller: Other, narrow: str, admin: str
) -> dict[str, collections.Counter[str]]:
    """Try each resource with the narrow token; return the outcomes per resource."""
    auth = {"Authorization": f"Bearer {narrow}"}
    results: dict[str, collections.Counter[str]] = {}
    # Dangerous calls wait for a person: fire them without waiting for the answers.
    waiting: list[asyncio.Task[Any]] = []

    async def approval(i: int) -> str:
        body = {"tool": "door_unlock", "params": {"door": f"door {i}"}}
        task = asyncio.ensure_future(http.post(f"{url}/v1/invoke", json=body, headers=auth))
        waiting.append(task)
        done, _ = await asyncio.wait({task}, timeout=2.0)
        if task in done:
            resp = task.result()
            return await outcome(resp)
        return "pending"

    caller.phase = "approvals"
    results["approvals"] = await bounded(300, approval)

    async def job(i: int) -> str:
        body = {"tool": "slow_job", "params": {"seconds": 30}}
        async with http.post(f"{url}/v1/jobs", json=body, headers=auth) as resp:
            return await outcome(resp)

    caller.phase = "jobs"
    results["jobs"] = await bounded(1000, job)

    async def mcp(i: int) -> str:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "abuse", "version": "1"},
            },
        }
        headers = {**auth, "Accept": "application/json, text/event-stream"}
        async with http.post(f"{url}/mcp", json=body, headers=headers) as resp:
            return await outcome(resp)

    caller.phase = "mcp_sessions"
    results["mcp_sessions"] = await bounded(1000, mcp)

    sockets: list[aiohttp.ClientWebSocketResponse] = []

    async def socket(i: int) -> str:
        try:
            sockets.append(
                await http.ws_connect(f"{url.replace('http', 'ws', 1)}/v1/events", headers=auth)
            )
        except aiohttp.WSServerHandshakeError as err:
            return str(err.status)
        return "101"

    caller.phase = "event_sockets"
    results["event_sockets"] = await bounded(100, socket)

    async def sign_in(i: int) -> str:
        async with http.post(
            f"{url}/console/signin",
            data={"token": narrow},
            headers={"Origin": url},
            allow_redirects=False,
        ) as resp:
            return await outcome(resp)

    caller.phase = "console_sign_ins"
    results["console_sign_ins"] = await bounded(300, sign_in)

    big = "x" * 900_000

    async def fill(i: int) -> str:
        body = {"tool": "measure_text", "params": {"text": big}}
        async with http.post(f"{url}/v1/invoke", json=body, headers=auth) as resp:
            return await outcome(resp)

    caller.phase = "audit_900kB_calls"
    results["audit_900kB_calls"] = await bounded(60, fill)
    for ws in sockets:
        await ws.close()
    # Deny what is pending so the waiting calls end.
    admin_auth = {"Authorization": f"Bearer {admin}"}
    async with http.get(f"{url}/v1/approvals?status=pending&limit=500", headers=admin_auth) as resp:
        pending = (await resp.json())["approvals"]
    for approval_doc in pending:
        async with http.post(
            f"{url}/v1/approvals/{approval_doc['id']}",
            json={"decision": "deny"},
            headers=admin_auth,
        ) as resp:
            await resp.read()
    for task in waiting:
        if not task.done():
            task.cancel()
        else:
            with_resp = task.result() if not task.cancelled() else None
            if with_resp is not None:
                with_resp.release()
    return results


async def run(keep: bool) -> int:
    base = Path(tempfile.mkdtemp(prefix="atmosphere-abuse-"))
    state = base / "state"
    key = NodeKey.load_or_create(state / KEY_FILE_NAME)
    manifest = base / "tools.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {"source": f"file:{TOOLS}", "entry": name}
                    for name in ("door_unlock", "slow_job", "measure_text")
                ]
            }
        )
    )
    config = base / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(state),
                "tools_manifest": str(manifest),
                "api": {"host": "127.0.0.1", "port": 0},
                "matter": {"enabled": False},
            }
        )
    )
    narrow = issue_token(
        key,
        agent_id="narrow",
        ttl_s=3600,
        permissions=["test:door:open", "test:slow:run", "test:measure:run", "storage:read"],
    )
    other = issue_token(key, agent_id="other", permissions=["test:measure:run"], ttl_s=3600)
    admin = issue_token(key, agent_id="admin", permissions=["*"], ttl_s=3600)
    bridge = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "atmosphere-bridge"),
        "--config",
        str(config),
        "run",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    status = 0
    try:
        url = (await wait_for_line(bridge, "atmosphere-bridge listening on", 60)).rsplit(" ", 1)[1]
        connector = aiohttp.TCPConnector(limit=CONCURRENCY * 4)
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
            caller = Other(http, url, other)
            worker = asyncio.create_task(caller.run())
            # The MCP server is built on its first request (importing the SDK takes ~2 s
            # of the loop): done here, so the abuse measures sessions, not the import.
            await warm_mcp(http, url, admin)
            await asyncio.sleep(3.0)
            rss0, db0 = rss_mb(bridge.pid), db_bytes(state)
            started = time.monotonic()
            results = await abuse(http, url, caller, narrow, admin)
            took = time.monotonic() - started
            rss1, db1 = rss_mb(bridge.pid), db_bytes(state)
            caller.stopping = True
            await worker
        print(
            f"abuse by one narrow token, {took:.1f} s "
            f"(bridge pid {bridge.pid}; {CONCURRENCY} requests in flight at most)"
        )
        for resource, counts in results.items():
            shown = ", ".join(f"{k}: {n}" for k, n in sorted(counts.items()))
            print(f"  {resource:<18} {shown}")
        checks = []
        worst, failures = 0.0, 0
        for phase in ("baseline", *results):
            p50, p99, calls, failed = caller.summary(phase)
            print(
                f"other caller during {phase:<18} p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  "
                f"({calls} calls, {failed} failed)"
            )
            if phase != "baseline":
                worst, failures = max(worst, p99), failures + failed
        checks.append(("other caller p99 during abuse (worst phase)", worst, OTHER_P99_MS, "ms"))
        checks.append(("other caller failed calls", float(failures), 0.0, "calls"))
        checks.append(("bridge RSS growth", rss1 - rss0, RSS_GROWTH_MB, "MB"))
        checks.append(("database growth", (db1 - db0) / 1_048_576, DB_GROWTH_MB, "MiB"))
        for name, value, bound, unit in checks:
            ok = value <= bound
            status |= 0 if ok else 1
            print(f"{'ok  ' if ok else 'OVER'} {name}: {value:.1f} {unit} (bound {bound:g})")
    finally:
        await stop_process(bridge)
        if keep:
            print(f"state kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the state directory")
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.keep)))


if __name__ == "__main__":
    main()
