"""Authority on a real ``atmosphere-bridge run``: checked at use, never grown, bound to its token.

Each test is one "Why" of issue 26 (bullets 2-4 of what to build), as an attacker or a
careless administrator would meet it:

- a dangerous call waiting for approval does not run once its token is revoked or has
  expired (the approval is cancelled, with an event and an audit row naming the token);
  a revoked approver's vote stops counting; a job of a revoked token is cancelled;
- a ``token:manage`` token issues only subsets of itself, named under its own agent, and
  revokes only what it issued; its own rate limit holds on the token routes;
- jobs, call events and client-tool results belong to the token that made them, not
  to whoever holds a token with the same agent name; console links are separate
  subjects; "not your own call" and "N distinct approvers" count subjects.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from bridge.auth.tokens import parse_token
from bridge.cli.console import make_link
from tests.auth.live import BRIDGE, LiveBridge
from tests.support.processes import wait_until

pytestmark = pytest.mark.skipif(not BRIDGE.exists(), reason="needs the atmosphere-bridge script")

UNLOCK = {"tool": "home:door_unlock", "params": {"door": "front"}}
VAULT = {"tool": "home:vault_open", "params": {}}


@pytest.fixture(scope="module")
def live() -> Iterator[LiveBridge]:
    bridge = LiveBridge.start()
    try:
        yield bridge
    finally:
        bridge.stop()


def tid(raw: str) -> str:
    return parse_token(raw)[0].id


def in_thread(
    live: LiveBridge, token: str, body: dict[str, Any]
) -> tuple[threading.Thread, list[Any]]:
    """POST /v1/invoke in a thread (it may wait for an approval); return thread and answer."""
    answer: list[Any] = []
    thread = threading.Thread(
        target=lambda: answer.append(live.http("POST", "/v1/invoke", token, body, timeout=150)),
        daemon=True,
    )
    thread.start()
    return thread, answer


def approval_of(live: LiveBridge, caller: str) -> dict[str, Any]:
    """Wait for the approval of ``caller``'s call and return it as approvers see it."""
    watcher = live.token("watcher", ["admin:approve"])
    found: list[dict[str, Any]] = []

    def listed() -> bool:
        _, body, _ = live.http("GET", "/v1/approvals", watcher)
        # Each test's caller has an agent name of its own.
        agent = parse_token(caller)[0].agent_id
        found[:] = [
            a for a in body["approvals"] if a["agent_id"] == agent and a["status"] == "pending"
        ]
        return bool(found)

    wait_until(listed, 20, "the call's approval")
    return found[0]


def approval(live: LiveBridge, approval_id: str) -> dict[str, Any]:
    _, body, _ = live.http("GET", "/v1/approvals", live.token("watcher", ["admin:approve"]))
    [found] = [a for a in body["approvals"] if a["id"] == approval_id]
    return found


def vote(live: LiveBridge, approver: str, approval_id: str) -> tuple[int, Any]:
    status, body, _ = live.http(
        "POST", f"/v1/approvals/{approval_id}", approver, {"decision": "approve"}
    )
    return status, body


async def collect(
    ws: aiohttp.ClientWebSocketResponse,
    until: Any,
    timeout: float = 20.0,
) -> list[dict[str, Any]]:
    """Read events from ``ws`` until ``until(event)`` is true; return all read."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while True:
        msg = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
        if msg.type is not aiohttp.WSMsgType.TEXT:
            raise AssertionError(f"socket ended: {msg}")
        event = json.loads(msg.data)
        seen.append(event)
        if until(event):
            return seen


# -- 2. authority is re-checked where it is used ---------------------------------------


def test_a_pending_unlock_does_not_run_once_its_token_is_revoked(live: LiveBridge) -> None:
    caller = live.issue("door-agent", ["home:door:unlock"])
    thread, answer = in_thread(live, caller, UNLOCK)
    pending = approval_of(live, caller)
    watcher = live.token("events-watcher", ["admin:approve"])

    async def revoke_and_watch(session: aiohttp.ClientSession) -> list[dict[str, Any]]:
        url = live.url + "/v1/events?types=approval.&" + urllib.parse.urlencode({"token": watcher})
        async with session.ws_connect(url) as ws:
            await asyncio.to_thread(live.revoke, caller)
            return await collect(ws, lambda e: e["type"] == "approval.decided")

    [*_, decided] = live.run(revoke_and_watch)
    assert (
        decided["data"]["id"],
        decided["data"]["status"],
        decided["data"]["reason"],
        decided["data"]["token_state"],
    ) == (pending["id"], "cancelled", "token_revoked", "revoked")
    # An approver who comes late finds nothing to approve, and the door stays shut.
    status, body = vote(live, live.token("late-approver", ["admin:approve"]), pending["id"])
    assert (status, body["error"]["code"]) == (409, "CONFLICT")
    thread.join(30)
    status, body, _ = answer[0]
    assert (status, body["error"]["details"]["reason"]) == (401, "revoked")
    assert [line for line in live.ran() if "door_unlock" in line] == []
    # Approvers see whose token the call was and that it is no longer good.
    shown = approval(live, pending["id"])
    assert (shown["token_id"], shown["token_state"]) == (tid(caller), "revoked")
    [(decision, agent, details)] = live.audit(
        "SELECT decision, agent_id, details_json FROM audit_log WHERE token_id = ?", (tid(caller),)
    )
    assert (decision, agent, json.loads(details)["approval_id"]) == (
        "unauthenticated",
        "door-agent",
        pending["id"],
    )


def test_a_pending_unlock_does_not_run_once_its_token_has_expired(live: LiveBridge) -> None:
    caller = live.issue("short-agent", ["home:door:unlock"], ttl_s=5)
    thread, answer = in_thread(live, caller, UNLOCK)
    pending = approval_of(live, caller)
    expires_at = parse_token(caller)[0].expires_at
    # The approver comes after the token's end: the approval ended with the token.
    time.sleep(max(0.0, expires_at - time.time()) + 0.5)
    status, body = vote(live, live.token("slow-approver", ["admin:approve"]), pending["id"])
    assert (status, body["error"]["code"]) == (409, "CONFLICT"), body
    after = approval(live, pending["id"])
    assert (after["status"], after["reason"], after["token_state"]) == (
        "cancelled",
        "token_expired",
        "expired",
    )
    thread.join(30)
    status, body, _ = answer[0]
    assert (status, body["error"]["details"]["reason"]) == (401, "expired")
    assert [line for line in live.ran() if "short" in line or tid(caller) in line] == []


def test_a_revoked_approvers_vote_stops_counting(live: LiveBridge) -> None:
    caller = live.token("vault-agent", ["home:vault:open"])
    first = live.issue("approver-one", ["admin:approve"])
    second = live.token("approver-two", ["admin:approve"])
    third = live.token("approver-three", ["admin:approve"])
    thread, answer = in_thread(live, caller, VAULT)
    pending = approval_of(live, caller)
    assert vote(live, first, pending["id"])[0] == 200
    live.revoke(first)
    shown = approval(live, pending["id"])
    assert (shown["status"], shown["votes"]) == ("pending", [])
    # One good vote of two is not enough: the vault stays shut until a third approver.
    status, body = vote(live, second, pending["id"])
    assert (status, body["status"], body["approvals"]) == (200, "pending", 1)
    assert [line for line in live.ran() if tid(caller) in line] == []
    status, body = vote(live, third, pending["id"])
    assert (status, body["status"]) == (200, "approved")
    thread.join(30)
    assert answer[0][0] == 200
    assert live.ran().count(f"vault_open by {tid(caller)}") == 1
    [(approvers,)] = live.audit(
        "SELECT json_extract(details_json, '$.approvers') FROM audit_log WHERE token_id = ? "
        "AND decision = 'allowed'",
        (tid(caller),),
    )
    assert json.loads(approvers) == ["approver-two", "approver-three"]


def test_revoking_a_token_cancels_its_jobs(live: LiveBridge) -> None:
    owner = live.issue("job-agent", ["home:echo:run"])
    admin = live.token("job-admin", ["admin:jobs"])

    async def submit_revoke_watch(session: aiohttp.ClientSession) -> Any:
        url = live.url + "/v1/events?types=job.&" + urllib.parse.urlencode({"token": admin})
        async with session.ws_connect(url) as ws:
            status, job, _ = await asyncio.to_thread(
                live.http,
                "POST",
                "/v1/jobs",
                owner,
                {"tool": "home:slow_echo", "params": {"text": "late", "seconds": 20}},
            )
            assert status == 202, job
            await asyncio.to_thread(live.revoke, owner)
            events = await collect(ws, lambda e: e["type"] == "job.cancelled")
            return job, events[-1]

    job, event = live.run(submit_revoke_watch)
    assert (event["data"]["job_id"], event["data"]["reason"]) == (job["job_id"], "token_revoked")

    def ended() -> bool:
        return live.http("GET", f"/v1/jobs/{job['job_id']}", admin)[1]["status"] == "cancelled"

    wait_until(ended, 10, "the job to end")
    _, shown, _ = live.http("GET", f"/v1/jobs/{job['job_id']}", admin)
    assert (shown["error"]["code"], shown["error"]["details"]["reason"]) == (
        "UNAUTHENTICATED",
        "token_revoked",
    )
    [(decision, call_id)] = live.audit(
        "SELECT decision, call_id FROM audit_log WHERE token_id = ? AND decision != 'allowed'",
        (tid(owner),),
    )
    assert (decision, call_id) == ("token_revoked", job["job_id"])
    assert [line for line in live.ran() if "slow_echo late" in line] == []


def test_a_job_ends_when_its_token_expires(live: LiveBridge) -> None:
    owner = live.issue("short-job-agent", ["home:echo:run"], ttl_s=4)
    status, job, _ = live.http(
        "POST",
        "/v1/jobs",
        owner,
        {"tool": "home:slow_echo", "params": {"text": "too-late", "seconds": 20}},
    )
    assert status == 202, job
    admin = live.token("job-admin", ["admin:jobs"])

    def ended() -> bool:
        return live.http("GET", f"/v1/jobs/{job['job_id']}", admin)[1]["status"] == "cancelled"

    wait_until(ended, 15, "the job to end with its token")
    _, shown, _ = live.http("GET", f"/v1/jobs/{job['job_id']}", admin)
    assert (shown["error"]["code"], shown["error"]["details"]["reason"]) == (
        "UNAUTHENTICATED",
        "token_expired",
    )
    assert shown["updated_at"] >= parse_token(owner)[0].expires_at
    # Two rows: the job ended by its token, and its call, cancelled while it ran (it had
    # been allowed, so whether it took effect is unknown to the audit).
    rows = live.audit(
        "SELECT decision, outcome, call_id FROM audit_log WHERE token_id = ? ORDER BY id",
        (tid(owner),),
    )
    assert sorted((decision, outcome) for decision, outcome, _ in rows) == [
        ("allowed", "cancelled"),
        ("token_expired", "error"),
    ]
    assert [c for d, _, c in rows if d == "token_expired"] == [job["job_id"]]
    assert [line for line in live.ran() if "too-late" in line] == []


# -- 3. no privilege grows by itself ---------------------------------------------------


def test_a_token_issues_only_subsets_of_itself(live: LiveBridge) -> None:
    node = socket.gethostname()
    status, body, _ = live.http(
        "POST",
        "/v1/tokens",
        live.root(),
        {
            "agent_id": "manager",
            "permissions": ["token:manage", "home:echo:run"],
            "ttl_s": 600,
            "constraints": {"max_hops": 0, "rate_limit_per_minute": 30, "allowed_nodes": [node]},
        },
    )
    assert status == 201, body
    manager = body["token"]
    refused = {
        "100 years": {"ttl_s": 100 * 365 * 86_400},
        "faster": {"ttl_s": 60, "constraints": {"rate_limit_per_minute": 1000}},
        "more hops": {"ttl_s": 60, "constraints": {"max_hops": 3}},
        "other nodes": {"ttl_s": 60, "constraints": {"allowed_nodes": ["elsewhere"]}},
    }
    for case, extra in refused.items():
        status, body, _ = live.http(
            "POST",
            "/v1/tokens",
            manager,
            {"agent_id": "admin", "permissions": ["home:echo:run"], **extra},
        )
        assert (status, body["error"]["details"].get("reason")) == (403, "beyond_issuer"), case
    status, body, _ = live.http(
        "POST", "/v1/tokens", manager, {"agent_id": "admin", "permissions": ["*"], "ttl_s": 60}
    )
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
    status, body, _ = live.http(
        "POST",
        "/v1/tokens",
        manager,
        {"agent_id": "admin", "permissions": ["home:echo:run"], "ttl_s": 60},
    )
    assert status == 201, body
    child = parse_token(body["token"])[0]
    # Named under its issuer, within its limits (inherited where left out).
    assert (
        child.agent_id,
        child.constraints.max_hops,
        child.constraints.rate_limit_per_minute,
        child.constraints.allowed_nodes,
    ) == ("manager/admin", 0, 30, (node,))
    assert (body["issued_by"], child.expires_at <= parse_token(manager)[0].expires_at) == (
        tid(manager),
        True,
    )

    # It may revoke what it issued, not another agent's token.
    other = live.issue("approver-of-someone", ["admin:approve"])
    status, body, _ = live.http("DELETE", f"/v1/tokens/{tid(other)}", manager)
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert live.http("GET", "/v1/tools", other)[0] == 200
    status, body, _ = live.http("GET", "/v1/tokens", manager)
    assert sorted(t["agent_id"] for t in body["tokens"]) == ["manager", "manager/admin"]
    status, body, _ = live.http("DELETE", f"/v1/tokens/{child.id}", manager)
    assert (status, body["revoked"]) == (200, True)


def test_revoking_an_issuer_revokes_what_it_issued(live: LiveBridge) -> None:
    manager = live.issue("cascade", ["token:manage", "home:echo:run"], ttl_s=600)
    status, body, _ = live.http(
        "POST",
        "/v1/tokens",
        manager,
        {"agent_id": "kid", "permissions": ["home:echo:run"], "ttl_s": 60},
    )
    kid = body["token"]
    assert live.http("GET", "/v1/tools", kid)[0] == 200
    live.revoke(manager)
    status, body, _ = live.http("GET", "/v1/tools", kid)
    assert (status, body["error"]["details"]["reason"]) == (401, "revoked")


def test_a_tokens_rate_limit_holds_on_the_token_routes(live: LiveBridge) -> None:
    manager = live.issue("slow-manager", ["token:manage"], rate=2)
    answers = [live.http("GET", "/v1/tokens", manager)[0] for _ in range(5)]
    assert answers == [200, 200, 429, 429, 429]
    status, body, _ = live.http(
        "POST", "/v1/tokens", manager, {"agent_id": "x", "permissions": [], "ttl_s": 60}
    )
    assert (status, body["error"]["code"]) == (429, "RATE_LIMITED")
    wait_until(
        lambda: live.refusals_of(tid(manager)) == {"rate_limited": 4},
        10,
        "the 4 refusals counted under the token's id",
    )


# -- 4. results belong to the caller who made them ---------------------------------------


def test_a_namesake_token_gets_no_job_call_event_or_client_tool_result(live: LiveBridge) -> None:
    victim = live.token("victim2", ["home:echo:run", "ui:ask"])
    # Any issuer may reuse a name: a token without permissions, named like the victim.
    namesake = live.token("victim2", [])
    status, job, _ = live.http(
        "POST",
        "/v1/jobs",
        victim,
        {"tool": "home:slow_echo", "params": {"text": "secret", "seconds": 0}},
    )
    assert status == 202
    wait_until(
        lambda: live.http("GET", f"/v1/jobs/{job['job_id']}", victim)[1]["status"] == "completed",
        10,
        "the job",
    )
    status, body, _ = live.http("GET", f"/v1/jobs/{job['job_id']}", namesake)
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")

    async def watch(session: aiohttp.ClientSession) -> tuple[list[Any], list[Any], Any]:
        def events_url(token: str, session_id: str) -> str:
            return (
                live.url
                + "/v1/events?"
                + urllib.parse.urlencode(
                    {"types": "tool_call.,tool_use", "token": token, "session": session_id}
                )
            )

        async with (
            session.ws_connect(events_url(namesake, "s1")) as spy,
            session.ws_connect(events_url(victim, "s1")) as own,
        ):
            call = asyncio.ensure_future(
                asyncio.to_thread(
                    live.http,
                    "POST",
                    "/v1/invoke",
                    victim,
                    {
                        "tool": "ui:ask_user",
                        "params": {"question": "PIN?"},
                        "context": {"session_id": "s1"},
                    },
                )
            )
            [*_, use] = await collect(own, lambda e: e["type"] == "tool_use")
            call_id = use["data"]["toolCallId"]
            stolen = await asyncio.to_thread(
                live.http,
                "POST",
                f"/v1/tool-results/{call_id}",
                namesake,
                {"result": {"answer": "attacker"}},
            )
            given = await asyncio.to_thread(
                live.http,
                "POST",
                f"/v1/tool-results/{call_id}",
                victim,
                {"result": {"answer": "1234"}},
            )
            answered = await call
            # The namesake's own call: its events come after the victim's on the bus.
            mine = await asyncio.to_thread(
                live.http,
                "POST",
                "/v1/invoke",
                namesake,
                {"tool": "home:slow_echo", "params": {"text": "x", "seconds": 0}},
            )
            seen = await collect(spy, lambda e: e["data"].get("status") == "error")
            return [stolen[:2], given[:2], answered[1]["result"], mine[0]], seen, call_id

    outcomes, seen, call_id = live.run(watch)
    stolen, given, result, mine = outcomes
    assert (stolen[0], stolen[1]["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert given[0] == 202
    assert result == {"answer": "1234"}
    assert mine == 404  # a tool out of its sight answers TOOL_NOT_FOUND, like an unknown one
    assert [
        e["data"].get("toolCallId") for e in seen if e["data"].get("tokenId") != tid(namesake)
    ] == []
    assert call_id not in json.dumps(seen)


def test_each_console_link_is_its_own_subject(live: LiveBridge) -> None:
    sessions = {}
    for label, perms in (("console", ["*"]), ("console", ["home:echo:run"])):
        link = make_link(live.state, live.url, permissions=perms, label=label)
        code = urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["code"][0]
        status, page, headers = live.http(
            "POST", "/console/link", form={"code": code}, headers={"Origin": live.url}
        )
        assert status == 303, page  # a refusal names its step and reason
        cookie = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
        _, page, _ = live.http("GET", "/console/home", headers={"Cookie": f"atm_session={cookie}"})
        csrf = re.search(r'<meta name="csrf" content="([^"]+)"', page)
        who = re.search(r'<span class="who">([^<]+)</span>', page)
        assert csrf is not None
        assert who is not None
        sessions[perms[0]] = (cookie, csrf.group(1), who.group(1))
    admin, narrow = sessions["*"], sessions["home:echo:run"]
    assert admin[2] != narrow[2]
    assert [admin[2][:16], narrow[2][:16]] == ["console:console:"] * 2

    async def watch(session: aiohttp.ClientSession) -> list[dict[str, Any]]:
        def headers(s: tuple[str, str, str]) -> dict[str, str]:
            return {"Cookie": f"atm_session={s[0]}", "Origin": live.url, "X-CSRF-Token": s[1]}

        async with session.ws_connect(
            live.url + "/v1/events?types=tool_call.", headers=headers(narrow)
        ) as ws:
            for who, text in ((admin, "admin-secret"), (narrow, "narrow-own")):
                status, _, _ = await asyncio.to_thread(
                    live.http,
                    "POST",
                    "/v1/invoke",
                    None,
                    {"tool": "home:slow_echo", "params": {"text": text, "seconds": 0}},
                    headers=headers(who),
                )
                assert status == 200
            return await collect(ws, lambda e: "narrow-own" in (e["data"].get("resultJson") or ""))

    seen = live.run(watch)
    assert "admin-secret" not in json.dumps(seen)


def test_not_your_own_call_and_distinct_approvers_count_subjects(live: LiveBridge) -> None:
    alice = live.issue("alice", ["token:manage", "admin:approve", "home:vault:open"])
    carol = live.issue("carol", ["token:manage", "admin:approve"])

    def mint(issuer: str, name: str) -> str:
        status, body, _ = live.http(
            "POST",
            "/v1/tokens",
            issuer,
            {"agent_id": name, "permissions": ["admin:approve"], "ttl_s": 300},
        )
        assert status == 201, body
        return str(body["token"])

    alices_helper = mint(alice, "helper")
    carols = [mint(carol, "one"), mint(carol, "two")]
    thread, answer = in_thread(live, alice, VAULT)
    pending = approval_of(live, alice)
    status, body = vote(live, alices_helper, pending["id"])
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert vote(live, carols[0], pending["id"])[0] == 200
    status, body = vote(live, carols[1], pending["id"])
    assert (status, body["error"]["code"]) == (409, "CONFLICT")
    assert approval(live, pending["id"])["status"] == "pending"
    assert [line for line in live.ran() if tid(alice) in line] == []
    status, body = vote(live, live.token("dave", ["admin:approve"]), pending["id"])
    assert (status, body["status"]) == (200, "approved")
    thread.join(30)
    assert answer[0][0] == 200


def test_a_result_waited_for_goes_only_to_a_token_still_good(live: LiveBridge) -> None:
    # A read that takes seconds (an event wait, a slow computation): the token is revoked
    # while it runs, so the result is withheld and the caller is told why.
    caller = live.issue("slow-reader", ["home:echo:run"])
    slow = {"tool": "home:slow_echo", "params": {"text": "secret", "seconds": 3}}

    async def start_then_revoke(session: aiohttp.ClientSession) -> list[Any]:
        url = live.url + "/v1/events?types=tool_call.&" + urllib.parse.urlencode({"token": caller})
        async with session.ws_connect(url) as ws:
            thread, answer = in_thread(live, caller, slow)
            await collect(ws, lambda e: e["data"].get("status") == "running")
            await asyncio.to_thread(live.revoke, caller)
            await asyncio.to_thread(thread.join, 30)
            return answer

    [(status, body, _)] = live.run(start_then_revoke)
    assert (status, body["error"]["details"]["reason"]) == (401, "revoked")
    assert "secret" not in json.dumps(body)
    # The same call by a token that stays good gets its result.
    keeper = live.issue("slow-keeper", ["home:echo:run"])
    status, body, _ = live.http(
        "POST", "/v1/invoke", keeper, {**slow, "params": {"text": "kept", "seconds": 1.5}}
    )
    assert (status, body["result"]) == (200, {"text": "kept"})
