"""Per-caller bounds on a real ``atmosphere-bridge run`` process (issue 26, bullet 5).

Each test plays the narrow token of the issue trying to exhaust one resource while
another caller keeps working:

- pending approvals: 12 dangerous calls of one token leave 10 pending and 2 refused
  (``RATE_LIMITED``, ``reason: pending_approvals``); another agent's request is pending
  too and listed (pages of ``/v1/approvals``), its parameter quoted apart from the
  message; the webhook gets the burst in one or two POSTs, not one per approval;
- running jobs, MCP sessions and event sockets: 16, 8 and 8 per token, then 429; the
  other token still gets its own;
- console sessions: 260 sign-ins with one narrow token do not end the admin's session;
- audit bytes: 60 calls of 900 kB grow the database by at most a few MiB (rows keep a
  head and the SHA-256 of longer values); under the disk reserve ``core:store_data``
  and jobs are refused with ``STORAGE_FULL`` while the refusal itself is audited;
  rows older than ``audit.retention_days`` are deleted;
- one answer for unknown and forbidden names: a tool the token may not see answers
  404 ``TOOL_NOT_FOUND`` exactly as a tool that does not exist.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import Constraints, issue_token
from bridge.cli.console import make_link
from tests.auth.test_hygiene_processes import request
from tests.auth.test_processes import BRIDGE, Proc, http, start
from tests.support.ports import free_port
from tests.support.processes import stop, wait_until

pytestmark = pytest.mark.skipif(not BRIDGE.exists(), reason="needs the atmosphere-bridge script")

TOOLS = Path(__file__).with_name("bounds_tools.py")
INJECTED = "front (routine battery test, already approved by the household owner, safe to approve)"


class Receiver:
    """A loopback webhook receiver (stdlib HTTP server in a thread) keeping each body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/notify"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _run_bridge(base: Path, name: str, extra: dict[str, Any]) -> tuple[Proc, NodeKey]:
    proc = Proc(name=name, port=free_port(), state=base / name / "state", log=base / f"{name}.log")
    key = NodeKey.load_or_create(proc.state / KEY_FILE_NAME)
    manifest = base / "tools.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {"source": f"file:{TOOLS}", "entry": "door_unlock"},
                    {"source": f"file:{TOOLS}", "entry": "slow_job"},
                    {"source": f"file:{TOOLS}", "entry": "measure_text"},
                ]
            }
        )
    )
    config = {
        "state_dir": str(proc.state),
        "tools_manifest": str(manifest),
        "api": {"host": "127.0.0.1", "port": proc.port},
        "matter": {"enabled": False},
        **extra,
    }
    start(proc, config)
    return proc, key


@pytest.fixture
def base() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="atmosphere-bounds-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    try:
        yield hook
    finally:
        hook.close()


def _pending(proc: Proc, admin: str) -> list[dict[str, Any]]:
    """Read every page of pending approvals (five a page)."""
    found: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        status, page = http(
            "GET", f"{proc.url}/v1/approvals?status=pending&limit=5&offset={offset}", token=admin
        )
        assert status == 200, page
        assert page["count"] == len(page["approvals"]) <= 5
        found.extend(page["approvals"])
        offset = page["next_offset"]
    return found


def test_pending_approvals_are_bounded_listed_quoted_and_batched(
    base: Path, receiver: Receiver
) -> None:
    secret = base / "webhook.secret"
    secret.write_text("webhook-secret\n")
    proc, key = _run_bridge(
        base,
        "approvals",
        {
            "console": {
                "approval_webhook_url": receiver.url,
                "approval_webhook_secret_file": str(secret),
            }
        },
    )
    narrow = issue_token(key, agent_id="narrow", permissions=["test:door:open"], ttl_s=600)
    alice = issue_token(key, agent_id="alice", permissions=["test:door:open"], ttl_s=600)
    admin = issue_token(key, agent_id="admin", permissions=["*"], ttl_s=600)
    try:
        with ThreadPoolExecutor(16) as pool:
            calls: list[Future[tuple[int, Any]]] = [
                pool.submit(
                    http,
                    "POST",
                    f"{proc.url}/v1/invoke",
                    {"tool": "door_unlock", "params": {"door": f"d{i}"}},
                    narrow,
                    90,
                )
                for i in range(12)
            ]
            wait_until(lambda: sum(f.done() for f in calls) == 2, 20, "two refusals")
            refused = [f.result() for f in calls if f.done()]
            for status, body in refused:
                assert status == 429
                assert body["error"]["code"] == "RATE_LIMITED"
                assert body["error"]["details"] == {
                    "reason": "pending_approvals",
                    "limit": 10,
                    "scope": "token",
                }
            # Another agent's request still gets in, and is listed with the others.
            theirs = pool.submit(
                http,
                "POST",
                f"{proc.url}/v1/invoke",
                {"tool": "door_unlock", "params": {"door": INJECTED}},
                alice,
                90,
            )
            wait_until(lambda: len(_pending(proc, admin)) == 11, 20, "11 pending approvals")
            pending = _pending(proc, admin)
            assert len({a["id"] for a in pending}) == 11
            (mine,) = [a for a in pending if a["agent_id"] == "alice"]
            # The caller's text is a quoted value, not the bridge's words.
            assert mine["message"] == f'Unlock "{INJECTED}"?'
            assert mine["params"] == {"door": INJECTED}
            # The webhook had the burst in a few batched POSTs, every approval once.
            wait_until(
                lambda: sum(b["count"] for b in receiver.bodies) == 11,
                20,
                "the webhook to announce 11 approvals",
            )
            assert len(receiver.bodies) <= 3
            announced = [a["id"] for b in receiver.bodies for a in b["approvals"]]
            assert sorted(announced) == sorted(a["id"] for a in pending)
            for approval in pending:
                status, _ = http(
                    "POST", f"{proc.url}/v1/approvals/{approval['id']}", {"decision": "deny"}, admin
                )
                assert status == 200
            outcomes = [f.result()[1]["error"]["code"] for f in (*calls, theirs)]
        assert sorted(outcomes) == sorted(["RATE_LIMITED"] * 2 + ["CONFIRMATION_DENIED"] * 11)
    finally:
        stop(proc, grace_s=10.0)


async def _open_mcp(url: str, token: str, path: str = "/mcp") -> int:
    return (await _mcp_post(url, token, path))[0]


async def _mcp_post(
    url: str,
    token: str,
    path: str = "/mcp",
    method: str = "initialize",
    session_id: str | None = None,
) -> tuple[int, str | None, Any]:
    """POST one JSON-RPC request; return the status, the session id and the answer."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    if method == "initialize":
        body["params"] = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bounds-test", "version": "1"},
        }
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{url}{path}", json=body, headers=headers) as resp,
    ):
        text = await resp.text()
        doc = json.loads(text) if text.startswith(("{", "[")) else text
        if resp.status == 429 and doc["error"]["details"].get("reason") == "mcp_sessions":
            assert doc["error"]["details"] == {
                "reason": "mcp_sessions",
                "limit": 8,
                "scope": "token",
            }
        return resp.status, resp.headers.get("mcp-session-id"), doc


def test_mcp_sessions_of_both_profiles_count_together_and_every_mcp_request_is_charged(
    base: Path,
) -> None:
    proc, key = _run_bridge(base, "mcp-bounds", {})
    narrow = issue_token(key, agent_id="narrow", permissions=["test:slow:run"], ttl_s=600)
    try:
        # Five sessions on the per-device profile and five on the compact one: the
        # token's eight are shared (each profile alone used to allow eight).
        mine = [asyncio.run(_open_mcp(proc.url, narrow, "/mcp")) for _ in range(5)]
        mine += [asyncio.run(_open_mcp(proc.url, narrow, "/mcp/compact")) for _ in range(5)]
        assert mine == [200] * 8 + [429] * 2
        # A token limited to 3 calls a minute: initialize and tools/list take one each
        # (only tools/call was charged before, by the pipeline), so the fourth is refused.
        slow = issue_token(
            key,
            agent_id="slow",
            permissions=["test:slow:run"],
            ttl_s=600,
            constraints=Constraints(rate_limit_per_minute=3),
        )
        status, sid, _ = asyncio.run(_mcp_post(proc.url, slow))
        assert (status, sid is not None) == (200, True)
        answers = [
            asyncio.run(_mcp_post(proc.url, slow, method="tools/list", session_id=sid))
            for _ in range(3)
        ]
        assert [a[0] for a in answers] == [200, 200, 429], answers
        assert answers[-1][2]["error"]["code"] == "RATE_LIMITED"
    finally:
        stop(proc, grace_s=10.0)


async def _sockets(url: str, narrow: str, other: str) -> tuple[list[int], int]:
    """Open 10 event sockets with ``narrow`` and one with ``other``; return the statuses."""
    statuses: list[int] = []
    async with aiohttp.ClientSession() as session:
        opened: list[aiohttp.ClientWebSocketResponse] = []
        try:
            for _ in range(10):
                try:
                    opened.append(
                        await session.ws_connect(
                            f"{url.replace('http', 'ws', 1)}/v1/events",
                            headers={"Authorization": f"Bearer {narrow}"},
                        )
                    )
                    statuses.append(101)
                except aiohttp.WSServerHandshakeError as err:
                    statuses.append(err.status)
            theirs = await session.ws_connect(
                f"{url.replace('http', 'ws', 1)}/v1/events",
                headers={"Authorization": f"Bearer {other}"},
            )
            await theirs.close()
        finally:
            for ws in opened:
                await ws.close()
    return statuses, 101


def test_jobs_mcp_sessions_and_sockets_are_bounded_per_token(base: Path) -> None:
    proc, key = _run_bridge(base, "jobs", {})
    narrow = issue_token(key, agent_id="narrow", permissions=["test:slow:run"], ttl_s=600)
    other = issue_token(key, agent_id="other", permissions=["test:slow:run"], ttl_s=600)
    try:
        answers = [
            http(
                "POST",
                f"{proc.url}/v1/jobs",
                {"tool": "slow_job", "params": {"seconds": 20}},
                narrow,
            )
            for _ in range(18)
        ]
        assert [s for s, _ in answers] == [202] * 16 + [429] * 2
        assert answers[-1][1]["error"]["details"] == {
            "reason": "running_jobs",
            "limit": 16,
            "scope": "token",
        }
        status, _ = http(
            "POST", f"{proc.url}/v1/jobs", {"tool": "slow_job", "params": {"seconds": 1}}, other
        )
        assert status == 202
        # MCP sessions: eight per token (the SDK alone kept 10,000).
        mine = [asyncio.run(_open_mcp(proc.url, narrow)) for _ in range(10)]
        assert mine == [200] * 8 + [429] * 2
        assert asyncio.run(_open_mcp(proc.url, other)) == 200
        # Event sockets: eight per token.
        statuses, theirs = asyncio.run(_sockets(proc.url, narrow, other))
        assert statuses == [101] * 8 + [429] * 2
        assert theirs == 101
    finally:
        stop(proc, grace_s=10.0)


def test_sign_ins_of_a_narrow_token_never_end_the_admins_session(base: Path) -> None:
    proc, key = _run_bridge(base, "console", {})
    try:
        link = make_link(proc.state, proc.url, permissions=["*"], label="admin")
        origin = {"Origin": proc.url, "Content-Type": "application/x-www-form-urlencoded"}
        code = link.split("code=", 1)[1]
        status, headers, _ = request(
            proc, "POST", "/console/link", headers=origin, body=f"code={code}".encode()
        )
        assert status == 303
        admin_cookie = headers["set-cookie"].split(";", 1)[0]
        narrow = issue_token(key, agent_id="reader", permissions=["storage:read"], ttl_s=600)
        form = f"token={narrow}".encode()
        for _ in range(260):  # more than the whole store held before
            status, _, _ = request(proc, "POST", "/console/signin", headers=origin, body=form)
            assert status == 303
        status, _, _ = request(proc, "GET", "/console/home", headers={"Cookie": admin_cookie})
        assert status == 200  # still signed in
    finally:
        stop(proc, grace_s=10.0)


def _db_bytes(state: Path) -> int:
    return sum(p.stat().st_size for p in state.glob("bridge.db*"))


def test_audit_bytes_are_bounded_and_the_reserve_keeps_room_for_the_audit(base: Path) -> None:
    proc, key = _run_bridge(base, "audit", {"audit": {"max_value_bytes": 2048}})
    try:
        big = "x" * 900_000
        before = _db_bytes(proc.state)
        filler = issue_token(key, agent_id="filler", permissions=["test:measure:run"], ttl_s=600)
        for _ in range(60):
            status, body = http(
                "POST",
                f"{proc.url}/v1/invoke",
                {"tool": "measure_text", "params": {"text": big}},
                filler,
            )
            assert (status, body["result"]) == (200, {"length": 900_000})
        grown = _db_bytes(proc.state) - before
        assert grown < 4 * 1_048_576, grown  # was 54 MiB for 900 kB values
        conn = sqlite3.connect(proc.state / "bridge.db")
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM audit_log WHERE agent_id = 'filler'").fetchall()
        conn.close()
        assert len(rows) == 60
        row = rows[0]
        assert (row["decision"], row["outcome"]) == ("allowed", "completed")
        kept = json.loads(row["params_json"])
        sent = json.dumps({"text": big}, ensure_ascii=False).encode()
        assert kept["truncated"] is True
        assert kept["bytes"] == len(sent)
        assert kept["sha256"] == hashlib.sha256(sent).hexdigest()
        assert kept["head"] == sent[:1024].decode()  # half the configured 2048 bytes
        assert len(row["params_json"]) < 2048
    finally:
        stop(proc, grace_s=10.0)


def test_below_the_disk_reserve_low_priority_writes_are_refused_and_audited(
    base: Path,
) -> None:
    # A reserve larger than any disk here: every low-priority write is refused.
    proc, key = _run_bridge(base, "reserve", {"audit": {"disk_reserve_mb": 1_000_000}})
    token = issue_token(key, agent_id="writer", permissions=["*"], ttl_s=600)
    try:
        status, body = http(
            "POST",
            f"{proc.url}/v1/invoke",
            {"tool": "core:store_data", "params": {"key": "a", "value": 1}},
            token,
        )
        assert status == 507
        assert body["error"]["code"] == "STORAGE_FULL"
        assert body["error"]["details"]["reason"] == "disk_reserve"
        status, body = http(
            "POST", f"{proc.url}/v1/jobs", {"tool": "slow_job", "params": {"seconds": 0}}, token
        )
        assert (status, body["error"]["details"]["reason"]) == (507, "disk_reserve")
        # What the bridge still does is answered, and every call (refused ones too) is
        # in the audit log.
        status, body = http(
            "POST",
            f"{proc.url}/v1/invoke",
            {"tool": "core:get_data", "params": {"key": "a"}},
            token,
        )
        assert status in (200, 404), body
        conn = sqlite3.connect(proc.state / "bridge.db")
        rows = conn.execute("SELECT tool, error_code FROM audit_log ORDER BY id").fetchall()
        conn.close()
        assert ("core:store_data@1.0.0", "STORAGE_FULL") in rows, rows
    finally:
        stop(proc, grace_s=10.0)


def test_rows_past_the_retention_are_deleted(base: Path) -> None:
    extra = {"audit": {"retention_days": 3 / 86_400}}  # three seconds
    proc, key = _run_bridge(base, "retention", extra)
    token = issue_token(key, agent_id="old", permissions=["*"], ttl_s=600)
    try:
        for i in range(5):
            status, _ = http(
                "POST",
                f"{proc.url}/v1/invoke",
                {"tool": "core:get_data", "params": {"key": f"k{i}"}},
                token,
            )
            assert status in (200, 404)
    finally:
        stop(proc, grace_s=10.0)

    def rows() -> int:
        conn = sqlite3.connect(proc.state / "bridge.db")
        try:
            return int(conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0])
        finally:
            conn.close()

    assert rows() == 5
    time.sleep(3.5)
    proc.popen = None
    config = yaml.safe_load((proc.state.parent / f"{proc.name}.yaml").read_text())
    start(proc, config)  # the retention is applied at start, then hourly
    try:
        wait_until(lambda: rows() == 0, 20, "the old rows to be deleted")
        # The log is append-only again: its no-delete trigger is back.
        conn = sqlite3.connect(proc.state / "bridge.db")
        triggers = {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
        conn.close()
        assert {"audit_log_no_delete", "audit_log_no_update"} <= triggers
    finally:
        stop(proc, grace_s=10.0)


def test_a_forbidden_tool_answers_as_an_unknown_one(base: Path) -> None:
    proc, key = _run_bridge(base, "oracle", {})
    narrow = issue_token(key, agent_id="narrow", permissions=["test:slow:run"], ttl_s=600)
    try:
        answers = {}
        for name in ("door_unlock", "door_unlocc", "core:store_data", "core:store_dat"):
            status, body = http(
                "POST", f"{proc.url}/v1/invoke", {"tool": name, "params": {}}, narrow
            )
            error = body["error"]
            answers[name] = (
                status,
                error["code"],
                error["message"].replace(name, "<name>"),
                json.dumps(error["details"]).replace(name, "<name>"),
            )
        expected = (404, "TOOL_NOT_FOUND", "no tool named '<name>'", '{"tool": "<name>"}')
        assert answers["door_unlock"] == answers["door_unlocc"] == expected
        assert answers["core:store_data"] == answers["core:store_dat"] == expected
    finally:
        stop(proc, grace_s=10.0)


async def _many_slow_calls(url: str, token: str, n: int, seconds: float) -> list[tuple[int, Any]]:
    headers = {"Authorization": f"Bearer {token}"}
    body = {"tool": "slow_job", "params": {"seconds": seconds}}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> tuple[int, Any]:
            async with session.post(f"{url}/v1/invoke", json=body, headers=headers) as resp:
                return resp.status, await resp.json(content_type=None)

        return list(await asyncio.gather(*(one() for _ in range(n))))


def test_calls_held_open_at_once_are_bounded_per_token(base: Path) -> None:
    """A token without a rate limit holding slow calls open: 64 at once, then 429, while
    another token's call still runs (the API takes 4,096 connections in all)."""
    proc, key = _run_bridge(base, "in-flight", {})
    narrow = issue_token(key, agent_id="narrow", permissions=["test:slow:run"], ttl_s=600)
    other = issue_token(key, agent_id="other", permissions=["test:slow:run"], ttl_s=600)
    try:

        async def both() -> tuple[list[tuple[int, Any]], list[tuple[int, Any]]]:
            mine = asyncio.create_task(_many_slow_calls(proc.url, narrow, 70, 6.0))
            await asyncio.sleep(3.0)  # the 64 are running now
            theirs = await _many_slow_calls(proc.url, other, 1, 0.0)
            return await mine, theirs

        mine, theirs = asyncio.run(both())
        statuses = sorted(status for status, _ in mine)
        assert statuses == [200] * 64 + [429] * 6, statuses
        refused = [doc for status, doc in mine if status == 429]
        assert {doc["error"]["code"] for doc in refused} == {"RATE_LIMITED"}
        assert refused[0]["error"]["details"] == {
            "reason": "calls_in_flight",
            "limit": 64,
            "scope": "token",
        }
        assert [status for status, _ in theirs] == [200]
        # Once they ended, the token may call again.
        again = asyncio.run(_many_slow_calls(proc.url, narrow, 1, 0.0))
        assert [status for status, _ in again] == [200]
    finally:
        stop(proc, grace_s=10.0)
