import asyncio
import sqlite3
import time
from typing import Any

import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token, parse_token
from bridge.errors import DeviceUnavailableError
from bridge.invocation.invoker import RemoteOutcome
from bridge.invocation.messages import (
    ExecutionInfo,
    RequestContext,
    RequestRouting,
    ResponseStatus,
    ToolRequest,
    ToolResponse,
)
from bridge.tools.context import CallContext
from bridge.tools.definition import Audit, Confirmation, Execution, Requires, ToolDefinition
from bridge.tools.registry import RegisteredTool
from tests.invocation.helpers import NODE_ID, Env

ECHO_PARAMS = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "times": {"type": "integer", "default": 1}},
    "required": ["text"],
    "additionalProperties": False,
}


def echo_tool(**kw: Any) -> ToolDefinition:
    return ToolDefinition(
        name=kw.pop("name", "echo"), description="Repeat text", parameters=ECHO_PARAMS, **kw
    )


class Counter:
    def __init__(self, fail_first: int = 0, error: Exception | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.contexts: list[CallContext] = []
        self.fail_first = fail_first
        self.error = error or DeviceUnavailableError("device asleep")

    async def __call__(self, params: dict[str, Any], ctx: CallContext) -> Any:
        self.calls.append(params)
        self.contexts.append(ctx)
        if len(self.calls) <= self.fail_first:
            raise self.error
        return {"echo": params.get("text", "") * params.get("times", 1)}


def code(resp: Any) -> str:
    assert resp.status is ResponseStatus.ERROR, resp
    return str(resp.error["code"])


async def test_status_events_are_built_only_for_subscribers(env: Env) -> None:
    env.registry.register(echo_tool(), Counter())
    assert not env.events.wanted("tool_call.status")
    assert (await env.invoker.invoke(env.request("echo", {"text": "a"}))).ok
    other = env.events.subscribe("device.")
    assert not env.events.wanted("tool_call.status")
    assert (await env.invoker.invoke(env.request("echo", {"text": "b"}))).ok
    assert other.queue.qsize() == 0
    sub = env.events.subscribe("tool_call.")
    assert env.events.wanted("tool_call.status")
    resp = await env.invoker.invoke(env.request("echo", {"text": "é"}))
    assert resp.ok
    statuses = [sub.queue.get_nowait().data for _ in range(sub.queue.qsize())]
    assert [s["status"] for s in statuses] == ["initiated", "running", "completed"]
    assert statuses[-1]["resultJson"] == '{"echo": "é"}'


async def test_allowed_call_runs_records_and_publishes(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(audit=Audit(log_params=True, log_result=True)), handler)
    sub = env.events.subscribe("tool_call.")
    resp = await env.invoker.invoke(env.request("echo", {"text": "hi"}))
    assert resp.ok
    assert resp.result == {"echo": "hi"}
    assert resp.tool == "core:echo@1.0.0"
    assert resp.node_id == NODE_ID
    assert handler.calls == [{"text": "hi", "times": 1}]
    ctx = handler.contexts[0]
    assert (ctx.agent_id, ctx.node_id, ctx.call_id) == ("agent-1", NODE_ID, resp.call_id)
    assert ctx.deadline is not None
    statuses = [sub.queue.get_nowait().data for _ in range(sub.queue.qsize())]
    assert [s["status"] for s in statuses] == ["initiated", "running", "completed"]
    assert {s["toolCallId"] for s in statuses} == {resp.call_id}
    assert statuses[-1]["resultJson"] == '{"echo": "hi"}'
    [entry] = await env.runtime.audit.query()
    assert (entry.agent_id, entry.tool, entry.decision, entry.outcome) == (
        "agent-1",
        "core:echo@1.0.0",
        "allowed",
        "completed",
    )
    assert entry.params == {"text": "hi", "times": 1}
    assert entry.result == {"echo": "hi"}


async def test_a_call_is_answered_after_its_audit_row_is_committed(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(), handler)
    resp = await env.invoker.invoke(
        env.request("echo", {"text": "\udead"}, context=RequestContext(trace_id="\udead"))
    )
    assert resp.ok
    # Committed before the answer: another connection sees the row right away.
    other = sqlite3.connect(env.state / "bridge.db")
    rows = other.execute("SELECT call_id, trace_id, params_json FROM audit_log").fetchall()
    assert rows == [(resp.call_id, "\\udead", '{"text": "\\\\udead", "times": 1}')]
    other.close()
    # When the row cannot be committed, the caller is told so (the effect is not hidden).
    env.db.execute_sync("ALTER TABLE audit_log RENAME TO audit_log_moved")
    resp = await env.invoker.invoke(env.request("echo", {"text": "x"}))
    assert resp.error is not None
    assert (resp.error["code"], resp.error["details"]["reason"]) == (
        "INTERNAL",
        "audit_unavailable",
    )
    assert len(handler.calls) == 2


async def test_a_lone_call_waits_out_a_held_database_and_many_calls_share_commits(
    env: Env,
) -> None:
    # A call that waited (here for its handler) and runs alone commits its own row at
    # once - unless the database is held (here by another process's writer): then the
    # writer commits it when it can, and the answer waits for that.
    async def slow(params: dict[str, Any], ctx: CallContext) -> Any:
        await asyncio.sleep(0.01)
        return {"echo": params["text"]}

    env.registry.register(echo_tool(name="slow"), slow)
    env.registry.register(echo_tool(), Counter())
    other = sqlite3.connect(env.state / "bridge.db", isolation_level=None, check_same_thread=False)
    first = await env.invoker.invoke(env.request("slow", {"text": "alone"}))
    assert other.execute("SELECT call_id FROM audit_log").fetchall() == [(first.call_id,)]
    other.execute("BEGIN IMMEDIATE")
    call = asyncio.ensure_future(env.invoker.invoke(env.request("slow", {"text": "held"})))
    await asyncio.sleep(0.3)
    assert not call.done()  # ran, but not acknowledged before its row is in
    other.execute("COMMIT")
    resp = await asyncio.wait_for(call, 15)
    assert resp.ok
    rows = other.execute("SELECT call_id FROM audit_log ORDER BY id").fetchall()
    assert rows == [(first.call_id,), (resp.call_id,)]
    # Calls in flight together still share group commits.
    audit = env.runtime.audit
    before = audit.commits
    answers = await asyncio.gather(
        *(env.invoker.invoke(env.request("echo", {"text": str(i)})) for i in range(64))
    )
    assert all(a.ok for a in answers)
    assert other.execute("SELECT count(*) FROM audit_log").fetchone() == (66,)
    assert 1 <= audit.commits - before <= 8
    other.close()


async def test_audit_settings_hide_params(env: Env) -> None:
    env.registry.register(echo_tool(audit=Audit(log_params=False, log_result=False)), Counter())
    await env.invoker.invoke(env.request("echo", {"text": "secret"}))
    [entry] = await env.runtime.audit.query()
    assert (entry.params, entry.result) == (None, None)


async def test_rejections_have_codes_and_are_audited(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(requires=Requires(permissions=("tool:echo:run",))), handler)
    stranger = NodeKey.generate()
    now = time.time()
    cases = [
        # A tool the token may not see answers as an unknown one (no oracle of names);
        # the audit still records the denial.
        ("TOOL_NOT_FOUND", env.request("echo", {"text": "x"}, token=env.token(perms=["tool:x:*"]))),
        (
            "UNAUTHENTICATED",
            env.request(
                "echo",
                {"text": "x"},
                token=issue_token(stranger, agent_id="a", permissions=["*"], ttl_s=60),
            ),
        ),
        ("INVALID_PARAMS", env.request("echo", {"text": 5})),
        ("TOOL_NOT_FOUND", env.request("nope")),
    ]
    answers = []
    for expected, request in cases:
        resp = await env.invoker.invoke(request)
        assert code(resp) == expected
        answers.append(resp.error)
    hidden, unknown = answers[0], answers[3]
    assert hidden is not None
    assert unknown is not None
    assert hidden["message"] == "no tool named 'echo'"
    assert unknown["message"] == "no tool named 'nope'"
    expired = issue_token(env.key, agent_id="a", permissions=["*"], ttl_s=10, now=now - 4000)
    resp = await env.invoker.invoke(env.request("echo", {"text": "x"}, token=expired))
    assert resp.error is not None
    assert resp.error["details"]["reason"] == "expired"
    good = env.token(perms=["tool:echo:run"])
    forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
    resp = await env.invoker.invoke(env.request("echo", {"text": "x"}, token=forged))
    assert resp.error is not None
    assert (resp.error["code"], resp.error["details"]["reason"]) == (
        "UNAUTHENTICATED",
        "bad_signature",
    )
    missing = ToolRequest(tool="echo", params={"text": "x"})
    assert code(await env.invoker.invoke(missing)) == "UNAUTHENTICATED"
    assert handler.calls == []
    decisions = sorted(e.decision for e in await env.runtime.audit.query())
    assert decisions == ["invalid_params", "permission_denied", "tool_not_found"]
    # Calls without a verified token are counted per source, minute and reason.
    counted = {(r["source"], r["reason"]): r["count"] for r in env.runtime.audit.rejections_sync()}
    # A genuine token refused (here: expired) is counted under its id.
    expired_id = parse_token(expired)[0].id
    assert counted == {
        ("call", "unknown_issuer"): 1,
        (f"token:{expired_id}", "expired"): 1,
        ("call", "bad_signature"): 1,
        ("call", "missing"): 1,
    }


async def test_replay_and_clock_skew(env: Env) -> None:
    env.registry.register(echo_tool(), Counter())
    request = env.request("echo", {"text": "x"})
    assert (await env.invoker.invoke(request)).ok
    again = await env.invoker.invoke(request)
    assert again.error is not None
    assert again.error["details"]["reason"] == "replayed"
    stale = env.request("echo", {"text": "x"}, timestamp=time.time() - 3600)
    resp = await env.invoker.invoke(stale)
    assert resp.error is not None
    assert (resp.error["code"], resp.error["details"]["reason"]) == (
        "UNAUTHENTICATED",
        "clock_skew",
    )


async def test_templated_permission(env: Env) -> None:
    handler = Counter()
    params = {
        "type": "object",
        "properties": {"device_id": {"type": "string"}},
        "required": ["device_id"],
    }
    env.registry.register(
        ToolDefinition(
            name="toggle",
            description="Toggle",
            parameters=params,
            requires=Requires(permissions=("device:control:{device_id}",)),
        ),
        handler,
    )
    token = env.token(perms=["device:control:light-1"])
    ok = await env.invoker.invoke(env.request("toggle", {"device_id": "light-1"}, token=token))
    assert ok.ok
    resp = await env.invoker.invoke(env.request("toggle", {"device_id": "light-2"}, token=token))
    assert resp.error is not None
    assert resp.error["details"]["required"] == "device:control:light-2"
    wide = env.token(perms=["device:control:*"])
    ok = await env.invoker.invoke(env.request("toggle", {"device_id": "light-2"}, token=wide))
    assert ok.ok
    assert len(handler.calls) == 2


async def test_rate_limit_per_token(env: Env) -> None:
    env.registry.register(echo_tool(), Counter())
    limited = env.token(rate_limit_per_minute=2)
    results = [
        (await env.invoker.invoke(env.request("echo", {"text": "x"}, token=limited))).ok
        for _ in range(3)
    ]
    assert results == [True, True, False]
    resp = await env.invoker.invoke(env.request("echo", {"text": "x"}, token=limited))
    assert code(resp) == "RATE_LIMITED"
    assert resp.error is not None
    assert resp.error["retryable"] is True
    assert (await env.invoker.invoke(env.request("echo", {"text": "x"}))).ok


async def test_token_constraints(env: Env) -> None:
    env.registry.register(echo_tool(), Counter())
    elsewhere = env.token(allowed_nodes=("node-b",))
    assert code(await env.invoker.invoke(env.request("echo", {"text": "x"}, token=elsewhere))) == (
        "PERMISSION_DENIED"
    )
    here = env.token(allowed_nodes=(NODE_ID,), max_hops=1)
    assert (await env.invoker.invoke(env.request("echo", {"text": "x"}, token=here))).ok
    far = env.request("echo", {"text": "x"}, token=here, routing=RequestRouting(path=("n1", "n2")))
    assert code(await env.invoker.invoke(far)) == "HOP_LIMIT_EXCEEDED"


async def test_idempotent_retry_acts_once(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(), handler)
    first = await env.invoker.invoke(env.request("echo", {"text": "a"}, idempotency_key="k1"))
    second = await env.invoker.invoke(env.request("echo", {"text": "a"}, idempotency_key="k1"))
    assert first.ok
    assert second.ok
    assert second.result == first.result
    assert second.call_id == first.call_id
    assert len(handler.calls) == 1
    clash = await env.invoker.invoke(env.request("echo", {"text": "b"}, idempotency_key="k1"))
    assert code(clash) == "CONFLICT"
    other_agent = env.token(agent="agent-2")
    third = await env.invoker.invoke(
        env.request("echo", {"text": "a"}, token=other_agent, idempotency_key="k1")
    )
    assert third.ok
    assert len(handler.calls) == 2
    concurrent = await asyncio.gather(
        *[
            env.invoker.invoke(env.request("echo", {"text": "c"}, idempotency_key="k2"))
            for _ in range(5)
        ]
    )
    assert {r.call_id for r in concurrent} == {concurrent[0].call_id}
    assert len(handler.calls) == 3
    decisions = [e.decision for e in await env.runtime.audit.query()]
    assert decisions.count("idempotent_replay") == 5


async def test_idempotency_survives_restart(tmp_path: Any) -> None:
    env = Env(tmp_path)
    await env.runtime.start()
    handler = Counter()
    env.registry.register(echo_tool(), handler)
    token = env.token()
    first = await env.invoker.invoke(
        env.request("echo", {"text": "a"}, token=token, idempotency_key="persist")
    )
    await env.runtime.stop()
    await asyncio.sleep(0.05)
    env.db.close()
    again = Env(tmp_path)
    await again.runtime.start()
    handler2 = Counter()
    again.registry.register(echo_tool(), handler2)
    second = await again.invoker.invoke(
        again.request("echo", {"text": "a"}, token=token, idempotency_key="persist")
    )
    assert second.result == first.result
    assert second.call_id == first.call_id
    assert handler2.calls == []
    await again.runtime.stop()


async def test_retry_only_when_safe(env: Env) -> None:
    fast = Execution(retries=3, idempotent=True, timeout_ms=1000)
    safe = Counter(fail_first=2)
    env.registry.register(echo_tool(name="safe", execution=fast), safe)
    resp = await env.invoker.invoke(env.request("safe", {"text": "x"}))
    assert resp.ok
    assert len(safe.calls) == 3

    unsafe = Counter(fail_first=2)
    env.registry.register(
        echo_tool(name="unsafe", execution=Execution(retries=3, idempotent=False)), unsafe
    )
    assert code(await env.invoker.invoke(env.request("unsafe", {"text": "x"}))) == (
        "DEVICE_UNAVAILABLE"
    )
    assert len(unsafe.calls) == 1
    keyed = await env.invoker.invoke(env.request("unsafe", {"text": "x"}, idempotency_key="r1"))
    assert keyed.ok
    assert len(unsafe.calls) == 3

    broken = Counter(fail_first=10, error=RuntimeError("bug"))
    env.registry.register(echo_tool(name="broken", execution=fast), broken)
    resp = await env.invoker.invoke(env.request("broken", {"text": "x"}))
    assert code(resp) == "TOOL_FAILED"
    assert resp.error is not None
    assert "bug" not in resp.error["message"]
    assert len(broken.calls) == 1

    always = Counter(fail_first=10)
    env.registry.register(echo_tool(name="always", execution=fast), always)
    assert code(await env.invoker.invoke(env.request("always", {"text": "x"}))) == (
        "DEVICE_UNAVAILABLE"
    )
    assert len(always.calls) == 4


async def test_timeout(env: Env) -> None:
    async def slow(params: dict[str, Any], ctx: CallContext) -> Any:
        await asyncio.sleep(5)

    env.registry.register(echo_tool(name="slow", execution=Execution(timeout_ms=50)), slow)
    started = time.monotonic()
    resp = await env.invoker.invoke(env.request("slow", {"text": "x"}))
    assert code(resp) == "TIMEOUT"
    assert time.monotonic() - started < 2
    short = await env.invoker.invoke(
        env.request("echo2", {}, routing=RequestRouting(timeout_ms=10))
    )
    assert code(short) == "TOOL_NOT_FOUND"


async def test_remote_executor(env: Env) -> None:
    env.registry.register(echo_tool(name="far", server_name="node-b"), None)
    assert code(await env.invoker.invoke(env.request("far", {"text": "x"}))) == "NO_CAPABLE_NODE"

    there = ExecutionInfo(
        node_id="node-b",
        hops=1,
        duration_ms=4.5,
        path=(env.invoker.node_id, "node-b"),
        attempts=("node-b",),
    )

    class Router:
        async def execute(
            self,
            tool: RegisteredTool,
            params: dict[str, Any],
            context: CallContext,
            request: ToolRequest,
        ) -> RemoteOutcome:
            if params["text"] == "fail":
                return RemoteOutcome(error=DeviceUnavailableError("lamp is off"), execution=there)
            return RemoteOutcome(
                result={
                    "ran_on": tool.definition.server_name,
                    "params": params,
                    "agent": context.agent_id,
                },
                execution=there,
            )

    env.invoker.set_remote_executor(Router())
    resp = await env.invoker.invoke(env.request("far", {"text": "x"}))
    assert resp.result == {
        "ran_on": "node-b",
        "params": {"text": "x", "times": 1},
        "agent": "agent-1",
    }
    assert resp.execution == there
    assert resp.node_id == env.invoker.node_id
    failed = await env.invoker.invoke(env.request("far", {"text": "fail"}))
    assert code(failed) == "DEVICE_UNAVAILABLE"
    assert failed.execution == there


async def test_local_execution_is_reported(env: Env) -> None:
    async def slow(params: dict[str, Any], ctx: CallContext) -> Any:
        await asyncio.sleep(0.02)
        return {"echo": params["text"]}

    env.registry.register(echo_tool(), slow)
    resp = await env.invoker.invoke(env.request("echo", {"text": "x"}))
    assert resp.ok, resp.error
    execution = resp.execution
    assert execution is not None
    assert (execution.node_id, execution.hops, execution.path, execution.attempts) == (
        env.invoker.node_id,
        0,
        (env.invoker.node_id,),
        (),
    )
    assert 20.0 <= execution.duration_ms <= resp.duration_ms
    assert ToolResponse.from_json(resp.to_json()).execution == execution
    # Refused before execution: it ran nowhere.
    denied = await env.invoker.invoke(env.request("nope", {"text": "x"}))
    assert (code(denied), denied.execution) == ("TOOL_NOT_FOUND", None)


async def test_unavailable_tool(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(), handler, available=False)
    assert code(await env.invoker.invoke(env.request("echo", {"text": "x"}))) == (
        "DEVICE_UNAVAILABLE"
    )
    assert handler.calls == []


@pytest.fixture(name="unlock")
def unlock_fixture(env: Env) -> Counter:
    handler = Counter()
    params = {
        "type": "object",
        "properties": {
            "door": {"type": "string"},
            "text": {"type": "string", "default": "open"},
            "times": {"type": "integer", "default": 1},
        },
    }
    env.registry.register(
        ToolDefinition(
            name="unlock",
            namespace="matter",
            description="Unlock a door",
            parameters=params,
            dangerous=True,
            confirmation=Confirmation(
                mode="when",
                when={"properties": {"door": {"const": "front"}}, "required": ["door"]},
                message="Unlock the {door} door for {agent}?",
                multi_party=2,
                timeout_s=5,
            ),
        ),
        handler,
    )
    return handler


async def _pending(env: Env) -> str:
    for _ in range(200):
        pending = await env.runtime.approvals.list(status="pending")
        if pending:
            return pending[0].id
        await asyncio.sleep(0.01)
    raise AssertionError("no pending approval")


def approver(env: Env, name: str) -> Any:
    return env.runtime.verifier.verify(env.token(agent=name, perms=["admin:approve"]))


async def test_two_of_n_approval_executes(env: Env, unlock: Counter) -> None:
    env.registry.register(echo_tool(), Counter())
    call = asyncio.create_task(env.invoker.invoke(env.request("unlock", {"door": "front"})))
    approval_id = await _pending(env)
    approval = await env.runtime.approvals.get(approval_id)
    assert approval.message == 'Unlock the "front" door for {agent}?'
    assert approval.required == 2
    # Other calls keep running while this one waits.
    assert (await env.invoker.invoke(env.request("echo", {"text": "x"}))).ok
    await env.runtime.approvals.decide(approval_id, approver(env, "alice"), "approve")
    assert not call.done()
    assert unlock.calls == []
    await env.runtime.approvals.decide(approval_id, approver(env, "bob"), "approve")
    resp = await call
    assert resp.ok
    assert len(unlock.calls) == 1
    entries = await env.runtime.audit.query(tool="matter:unlock@1.0.0")
    assert entries[0].details["approvers"] == ["alice", "bob"]
    assert entries[0].details["approval_id"] == approval_id


async def test_approval_deny_and_timeout(env: Env, unlock: Counter) -> None:
    call = asyncio.create_task(env.invoker.invoke(env.request("unlock", {"door": "front"})))
    approval_id = await _pending(env)
    alice = approver(env, "alice")
    await env.runtime.approvals.decide(approval_id, alice, "deny")
    resp = await call
    assert code(resp) == "CONFIRMATION_DENIED"
    assert resp.error is not None
    assert resp.error["details"]["approval_id"] == approval_id
    assert unlock.calls == []
    [entry] = await env.runtime.audit.query(decision="confirmation_denied")
    assert entry.details["votes"] == [
        {"approver": "alice", "token_id": alice.id, "decision": "deny"}
    ]
    # The condition does not match: no confirmation needed.
    assert (await env.invoker.invoke(env.request("unlock", {"door": "garage"}))).ok
    assert len(unlock.calls) == 1


async def test_confirmation_timeout(env: Env) -> None:
    handler = Counter()
    env.registry.register(
        echo_tool(
            name="wipe",
            dangerous=True,
            confirmation=Confirmation(mode="always", message="Wipe {text}?", timeout_s=0.1),
        ),
        handler,
    )
    resp = await env.invoker.invoke(env.request("wipe", {"text": "disk"}))
    assert code(resp) == "CONFIRMATION_TIMEOUT"
    assert resp.error is not None
    assert resp.error["details"]["message"] == 'Wipe "disk"?'
    assert handler.calls == []
    [entry] = await env.runtime.audit.query()
    assert entry.decision == "confirmation_timeout"


async def test_status_events_carry_the_verified_agent(env: Env) -> None:
    env.registry.register(echo_tool(), Counter())
    sub = env.events.subscribe("tool_call.")
    claimed = env.request(
        "echo",
        {"text": "x"},
        token=env.token(agent="real"),
        context=RequestContext(agent_id="someone-else"),
    )
    assert (await env.invoker.invoke(claimed)).ok
    bad = env.request("echo", {"text": 5}, token=env.token(agent="real"))
    await env.invoker.invoke(bad)
    anon = ToolRequest(tool="echo", params={"text": "x"}, context=RequestContext(agent_id="fake"))
    await env.invoker.invoke(anon)
    events = [sub.queue.get_nowait().data for _ in range(sub.queue.qsize())]
    assert [(e["status"], e["agentId"]) for e in events] == [
        ("initiated", None),
        ("running", "real"),
        ("completed", "real"),
        ("initiated", None),
        ("error", "real"),
        ("initiated", None),
        ("error", None),
    ]


async def test_confirmation_required_without_approvals(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(name="risky", dangerous=True), handler)
    env.invoker.approvals = None
    resp = await env.invoker.invoke(env.request("risky", {"text": "x"}))
    assert code(resp) == "CONFIRMATION_REQUIRED"
    assert resp.error is not None
    assert resp.error["details"] == {"message": "Allow core:risky?"}
    assert handler.calls == []


async def test_a_full_disk_answers_storage_full_and_acknowledges_nothing(env: Env) -> None:
    handler = Counter()
    env.registry.register(echo_tool(), handler)
    assert (await env.invoker.invoke(env.request("echo", {"text": "before"}))).ok
    env.runtime.audit.max_value_bytes = 1_000_000  # the row below must need new pages
    # SQLite's own page limit makes the next audit commit fail as a full disk does.
    pages = env.db.fetchall_sync("PRAGMA page_count")[0][0]
    env.db.execute_sync(f"PRAGMA max_page_count = {pages}")
    resp = await env.invoker.invoke(env.request("echo", {"text": "x" * 20_000}))
    assert resp.error is not None
    assert (resp.error["code"], resp.error["retryable"], resp.error["details"]["reason"]) == (
        "STORAGE_FULL",
        True,
        "audit_unavailable",
    )
    env.db.execute_sync("PRAGMA max_page_count = 1073741823")
    assert (await env.invoker.invoke(env.request("echo", {"text": "after"}))).ok


async def test_a_cancelled_call_ends_cancelled_and_leaves_an_audit_row(
    env: Env, unlock: Counter
) -> None:
    """A call whose task is cancelled (its client hung up) is audited and ends on the bus.

    Without the cancellation branch the call stayed ``running`` for every subscriber and
    left no audit row, though its command may have reached the device.
    """
    started = asyncio.Event()

    async def slow(params: dict[str, Any], ctx: CallContext) -> Any:
        started.set()
        await asyncio.sleep(60)

    env.registry.register(
        echo_tool(name="slow", audit=Audit(log_params=True, log_result=True)), slow
    )
    sub = env.events.subscribe("tool_call.")
    task = asyncio.create_task(env.invoker.invoke(env.request("slow", {"text": "x"})))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    statuses = [sub.queue.get_nowait().data for _ in range(sub.queue.qsize())]
    assert [s["status"] for s in statuses] == ["initiated", "running", "cancelled"]
    assert statuses[-1]["tool"] == "core:slow@1.0.0"
    assert statuses[-1]["agentId"] == "agent-1"
    # a call waiting for its approval, cancelled: audited as cancelled before it ran
    waiting = asyncio.create_task(env.invoker.invoke(env.request("unlock", {"door": "front"})))
    approval_id = await _pending(env)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert unlock.calls == []
    await env.runtime.audit.flush()
    ran, before = sorted(await env.runtime.audit.query(outcome="cancelled"), key=lambda e: e.tool)
    assert (ran.tool, ran.decision, ran.agent_id, ran.error_code) == (
        "core:slow@1.0.0",
        "allowed",
        "agent-1",
        None,
    )
    assert "whether it took effect is unknown" in ran.details["message"]
    assert ran.params == {"text": "x", "times": 1}
    assert (before.tool, before.decision) == ("matter:unlock@1.0.0", "cancelled")
    assert before.details["approval_id"] == approval_id
    assert "before it ran" in before.details["message"]
    assert env.invoker.in_flight.total == 0  # both seats given back
