"""The runner on a real service (SQLite, HTTP API on loopback), with the core tools as actions.

No Matter here: triggers are tool calls (``core:get_data`` completed), actions are
``core:store_data`` calls, so each effect is read back from the store. Covers the rule
tools through ``/v1/invoke`` (the path MCP uses), rate limits, a self-cycle through a
tool-call trigger, hostile bodies, and rules kept across a restart with the same token.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.cli.main import main
from bridge.config import BridgeConfig
from bridge.service import BridgeService
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from tests.support.server import BridgeServer

AGENT = "rules-agent"


def token(server: BridgeServer, *permissions: str, agent: str = AGENT) -> str:
    key = NodeKey.load_or_create(server.service.state_dir / KEY_FILE_NAME)
    return issue_token(key, agent_id=agent, permissions=list(permissions), ttl_s=600)


async def call(
    server: BridgeServer, method: str, path: str, tok: str, body: Any = None
) -> tuple[int, Any]:
    async with server.client.request(
        method, f"{server.url}{path}", json=body, headers={"Authorization": f"Bearer {tok}"}
    ) as resp:
        return resp.status, await resp.json()


async def invoke(server: BridgeServer, tool: str, params: dict[str, Any], tok: str) -> Any:
    status, answer = await call(server, "POST", "/v1/invoke", tok, {"tool": tool, "params": params})
    assert status == 200, answer
    return answer


def on_read(rule_id: str, **over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": rule_id,
        "trigger": {"type": "tool_call", "tool": "core:get_data"},
        "actions": [
            {
                "type": "call",
                "tool": "core:store_data",
                "params": {"key": f"{rule_id}-ran", "value": True},
            }
        ],
    }
    doc.update(over)
    return doc


async def audit_rows(service: BridgeService, rule_id: str, count: int) -> list[dict[str, Any]]:
    assert service.invocation is not None
    async with asyncio.timeout(10):
        while True:
            await service.invocation.audit.flush()
            rows = service.invocation.audit.query_sync(tool=f"automation:{rule_id}")
            if len(rows) >= count:
                return [r.to_json() for r in reversed(rows)]
            await asyncio.sleep(0.02)


async def test_rule_tools_run_through_the_pipeline(bridge_server: BridgeServer) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    made = await invoke(bridge_server, "automations:create_rule", {"rule": on_read("r1")}, agent)
    assert made["status"] == "success", made
    assert made["result"]["token_permissions"] == ["storage:*"]
    await invoke(bridge_server, "core:get_data", {"key": "anything"}, agent)
    (row,) = await audit_rows(bridge_server.service, "r1", 1)
    assert row["outcome"] == "completed"
    assert row["details"]["trigger"]["tool"] == "core:get_data@1.0.0"
    assert row["details"]["trigger"]["agent_id"] == AGENT
    stored = await invoke(bridge_server, "core:get_data", {"key": "r1-ran"}, agent)
    assert stored["result"] == {"value": True, "exists": True}
    listed = await invoke(bridge_server, "automations:list_rules", {}, agent)
    assert [r["id"] for r in listed["result"]["rules"]] == ["r1"]
    # A token without automations:create sees none of the rule tools.
    status, tools = await call(bridge_server, "GET", "/v1/tools", token(bridge_server, "storage:*"))
    assert status == 200
    names = [t["identity"].split("@")[0] for t in tools["tools"]]
    assert "core:get_data" in names
    assert not [n for n in names if n.startswith("automations:")]


async def test_rate_limit_per_rule(bridge_server: BridgeServer) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    status, made = await call(
        bridge_server, "POST", "/v1/automations", agent, on_read("limited", rate_limit_per_minute=2)
    )
    assert status == 201, made
    for _ in range(4):
        await invoke(bridge_server, "core:get_data", {"key": "k"}, agent)
        await asyncio.sleep(0.2)  # the previous run is done: 'busy' is not what limits
    rows = await audit_rows(bridge_server.service, "limited", 4)
    assert [r["decision"] for r in rows] == ["allowed", "allowed", "rate_limited", "rate_limited"]


async def test_a_rule_calling_its_own_trigger_stops(bridge_server: BridgeServer) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    doc = on_read(
        "loop", actions=[{"type": "call", "tool": "core:get_data", "params": {"key": "x"}}]
    )
    status, made = await call(bridge_server, "POST", "/v1/automations", agent, doc)
    assert status == 201, made
    async with bridge_server.service.events.subscription("automation.stopped") as sub:
        await invoke(bridge_server, "core:get_data", {"key": "k"}, agent)
        stopped = await asyncio.wait_for(sub.get(), 10)
    assert stopped.data["rule"] == "loop"
    assert stopped.data["reason"] == (
        "cycle: its own actions triggered it again (1 in a row, last trigger tool_call)"
    )
    # Its own call is a certain cycle: stopped at the first, while that run finishes.
    rows = await audit_rows(bridge_server.service, "loop", 2)
    assert sorted(r["decision"] for r in rows) == ["allowed", "cycle_stopped"]
    status, shown = await call(bridge_server, "GET", "/v1/automations/loop", agent)
    assert shown["status"] == "stopped"
    # Enabling it again restarts it.
    status, shown = await call(
        bridge_server, "PATCH", "/v1/automations/loop", agent, {"enabled": True}
    )
    assert status == 200, shown
    assert shown["status"] == "active"


async def test_two_rules_triggering_each_other_stop(bridge_server: BridgeServer) -> None:
    # ping acts on the store, which is pong's trigger; pong reads the store, ping's trigger.
    agent = token(bridge_server, "automations:create", "storage:*")
    ping = on_read("ping")
    pong = on_read(
        "pong",
        trigger={"type": "tool_call", "tool": "core:store_data"},
        actions=[{"type": "call", "tool": "core:get_data", "params": {"key": "x"}}],
    )
    for doc in (ping, pong):
        status, made = await call(bridge_server, "POST", "/v1/automations", agent, doc)
        assert status == 201, made
    async with bridge_server.service.events.subscription("automation.stopped") as sub:
        await invoke(bridge_server, "core:get_data", {"key": "k"}, agent)  # a person's read
        stopped = await asyncio.wait_for(sub.get(), 10)
    assert stopped.data["rule"] == "ping"
    assert stopped.data["reason"] == (
        "cycle: its own actions triggered it again through rule "
        "pong (1 in a row, last trigger tool_call)"
    )
    assert stopped.data["lineage"] == ["ping", "pong", "ping"]
    # ping ran once (the person's read), pong once (ping's write); then ping stopped.
    pings = await audit_rows(bridge_server.service, "ping", 2)
    assert sorted(r["decision"] for r in pings) == ["allowed", "cycle_stopped"]
    (stop,) = [r for r in pings if r["decision"] == "cycle_stopped"]
    assert stop["details"]["trigger"]["agent_id"] == "automation:pong"
    await asyncio.sleep(0.3)
    assert [r["decision"] for r in await audit_rows(bridge_server.service, "pong", 1)] == [
        "allowed"
    ]
    status, shown = await call(bridge_server, "GET", "/v1/automations/ping", agent)
    assert (shown["status"], shown["reason"]) == ("stopped", stopped.data["reason"])
    status, shown = await call(bridge_server, "GET", "/v1/automations/pong", agent)
    assert shown["status"] == "active"  # the loop is broken at ping; pong is not at fault


async def test_every_trigger_of_a_busy_rule_has_an_audit_row(bridge_server: BridgeServer) -> None:
    # While a run acts on a device, that device's reports are judged when the run ends
    # (the latest one); the ones it replaced are audited 'busy', not lost.
    agent = token(bridge_server, "automations:create", "storage:*", "device:read:7-1")
    status, made = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        agent,
        on_read(
            "watch",
            trigger={"type": "state", "device_id": "7-1", "path": "1/6/0"},
            actions=[{"type": "delay", "seconds": 1.0}],
        ),
    )
    assert status == 201, made
    runner = bridge_server.service.automations
    assert runner is not None
    live = runner._rules["watch"]
    for value in (True, False, True):  # the first starts the run, the others come during it
        bridge_server.service.events.publish(
            "device.state", {"device_id": "7-1", "path": "1/6/0", "value": value}
        )
        await asyncio.sleep(0.05)
        runner._acted("7-1", live.lineage)  # as if the run had acted on the device
    rows = await audit_rows(bridge_server.service, "watch", 3)
    assert [(r["decision"], r["details"]["trigger"]["value"]) for r in rows] == [
        ("busy", False),
        ("allowed", True),
        ("allowed", True),
    ]


def _flip_tool(
    service: BridgeService, name: str, device: str, *, on: bool, report_s: float, answer_s: float
) -> None:
    """Register a tool toggling ``device`` (now ``on``), which reports its new value.

    The report comes inside the call, as a Matter device's does before the bridge's
    read-back answers: ``report_s`` after the call starts; the call answers ``answer_s``
    after that (a slow device or a loaded controller).
    """
    state = {"on": on}

    async def flip(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        await asyncio.sleep(report_s)
        state["on"] = not state["on"]
        service.events.publish(
            "device.state", {"device_id": device, "path": "1/6/0", "value": state["on"]}
        )
        await asyncio.sleep(answer_s)
        return {"on": state["on"]}

    service.registry.register(
        ToolDefinition(
            name=name,
            namespace="test",
            description=f"Toggle {device}",
            metadata={"device": {"id": device}},
        ),
        flip,
    )


def _follow(rule_id: str, watched: str, tool: str) -> dict[str, Any]:
    return on_read(
        rule_id,
        trigger={"type": "state", "device_id": watched, "path": "1/6/0"},
        actions=[{"type": "call", "tool": tool}],
    )


# The cycle window scaled down from 3 s to 0.2 s: the calls below outlast it as a Matter
# call (command, then the read-back) outlasts 3 s on a loaded controller.
WINDOW_S = 0.2


async def test_a_report_late_in_a_slow_call_is_still_the_runs_own_effect(
    bridge_server: BridgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The device reports 0.5 s into a call that started it (past the window) and the call
    # answers 0.3 s later: still the rule's own doing, so the rule re-triggering itself
    # this way stops.
    from bridge.automations import runner as runner_module

    monkeypatch.setattr(runner_module, "CYCLE_WINDOW_S", WINDOW_S)
    service = bridge_server.service
    _flip_tool(service, "slow_flip", "8-1", on=True, report_s=0.5, answer_s=0.3)
    agent = token(bridge_server, "automations:create", "storage:*", "device:read:8-1")
    status, made = await call(
        bridge_server, "POST", "/v1/automations", agent, _follow("flicker", "8-1", "test:slow_flip")
    )
    assert status == 201, made
    async with service.events.subscription("automation.stopped") as sub:
        # A person switches the light on.
        service.events.publish("device.state", {"device_id": "8-1", "path": "1/6/0", "value": True})
        stopped = await asyncio.wait_for(sub.get(), 20)
    assert stopped.data["rule"] == "flicker"
    assert stopped.data["reason"] == (
        "cycle: its own actions triggered it again (3 in a row, last trigger state)"
    )
    rows = await audit_rows(service, "flicker", 4)
    assert [r["decision"] for r in rows] == ["allowed", "allowed", "allowed", "cycle_stopped"]


async def test_a_trigger_waiting_for_a_slow_run_is_judged_as_it_came(
    bridge_server: BridgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # follow-a's call on light B is slow; follow-b's quick call on light A reports while
    # follow-a still runs, so follow-a judges that report when its run ends - after the
    # window of follow-b's effect. It is still follow-b's doing (a re-trigger of
    # follow-a through it), and the loop stops after 3 in a row.
    from bridge.automations import runner as runner_module

    monkeypatch.setattr(runner_module, "CYCLE_WINDOW_S", WINDOW_S)
    service = bridge_server.service
    _flip_tool(service, "act_b", "9-2", on=False, report_s=0.0, answer_s=0.5)
    _flip_tool(service, "act_a", "9-1", on=True, report_s=0.0, answer_s=0.0)
    agent = token(bridge_server, "automations:create", "storage:*", "device:read:*")
    for doc in (_follow("follow-a", "9-1", "test:act_b"), _follow("follow-b", "9-2", "test:act_a")):
        status, made = await call(bridge_server, "POST", "/v1/automations", agent, doc)
        assert status == 201, made
    async with service.events.subscription("automation.stopped") as sub:
        # A person switches light A on.
        service.events.publish("device.state", {"device_id": "9-1", "path": "1/6/0", "value": True})
        stopped = await asyncio.wait_for(sub.get(), 20)
    assert stopped.data["rule"] == "follow-a"
    assert stopped.data["reason"] == (
        "cycle: its own actions triggered it again through rule follow-b "
        "(3 in a row, last trigger state)"
    )
    assert stopped.data["lineage"] == ["follow-a", "follow-b", "follow-a"]
    rows = await audit_rows(service, "follow-a", 4)
    assert [r["decision"] for r in rows] == ["allowed", "allowed", "allowed", "cycle_stopped"]
    assert [r["decision"] for r in await audit_rows(service, "follow-b", 3)] == ["allowed"] * 3


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("POST", "/v1/automations", {"id": "x"}, 400, "INVALID_PARAMS"),
        ("POST", "/v1/automations", [1, 2], 400, "INVALID_PARAMS"),
        (
            "POST",
            "/v1/automations",
            on_read("x", actions=[{"type": "call", "tool": "no:such"}]),
            404,
            "TOOL_NOT_FOUND",
        ),
        ("PATCH", "/v1/automations/nope", {"enabled": True}, 404, "NOT_FOUND"),
        ("PATCH", "/v1/automations/nope", {"enabled": "yes"}, 400, "INVALID_REQUEST"),
        ("DELETE", "/v1/automations/nope", None, 404, "NOT_FOUND"),
        (
            "POST",
            "/v1/automations",
            on_read("many", actions=[{"type": "delay", "seconds": 0}] * 33),
            400,
            "INVALID_PARAMS",
        ),
        ("POST", "/v1/automations", on_read("é中🙂"), 400, "INVALID_PARAMS"),
        ("POST", "/v1/automations", on_read("presence"), 400, "INVALID_PARAMS"),
        # /v1/automations/bindings is the bindings' route: no rule may be named so.
        ("POST", "/v1/automations", on_read("bindings"), 400, "INVALID_PARAMS"),
        (
            "POST",
            "/v1/automations",
            on_read("tz", trigger={"type": "time", "at": "07:30", "timezone": "../../etc/passwd"}),
            400,
            "INVALID_PARAMS",
        ),
        (
            "POST",
            "/v1/automations",
            on_read("tz", trigger={"type": "time", "at": "07:30", "timezone": "UTC\u0000"}),
            400,
            "INVALID_PARAMS",
        ),
        (
            "POST",
            "/v1/automations",
            on_read("at", trigger={"type": "time", "at": 730}),
            400,
            "INVALID_PARAMS",
        ),
        (
            "POST",
            "/v1/automations",
            on_read(
                "sun", trigger={"type": "sun", "event": "sunset", "latitude": 91, "longitude": 0}
            ),
            400,
            "INVALID_PARAMS",
        ),
        (
            "POST",
            "/v1/automations",
            on_read(
                "sun", trigger={"type": "sun", "event": "sunset", "latitude": 1e308, "longitude": 0}
            ),
            400,
            "INVALID_REQUEST",
        ),
        (
            "POST",
            "/v1/automations",
            on_read(
                "deep",
                actions=[{"type": "call", "tool": "core:x", "params": {"a": "x" * 2_000_000}}],
            ),
            413,
            "PAYLOAD_TOO_LARGE",
        ),
        ("PUT", "/v1/automations/presence/anna", {"home": "yes"}, 400, "INVALID_REQUEST"),
        ("PUT", "/v1/automations/presence/anna", [True], 400, "INVALID_REQUEST"),
        ("PUT", "/v1/automations/presence/%F0%9F%99%82", {"home": True}, 404, "NOT_FOUND"),
    ],
)
async def test_hostile_requests_get_stable_errors(
    bridge_server: BridgeServer, method: str, path: str, body: Any, status: int, code: str
) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    got, answer = await call(bridge_server, method, path, agent, body)
    assert (got, answer["error"]["code"]) == (status, code), answer


async def test_deeply_nested_rules_get_a_stable_error(bridge_server: BridgeServer) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    nested = "[" * 10_000 + "]" * 10_000
    body = json.dumps(on_read("deep")).replace('"value": true', f'"value": {nested}')
    async with bridge_server.client.post(
        f"{bridge_server.url}/v1/automations",
        data=body,
        headers={"Authorization": f"Bearer {agent}", "Content-Type": "application/json"},
    ) as resp:
        answer = await resp.json()
    assert (resp.status, answer["error"]["code"]) == (400, "INVALID_REQUEST"), answer


async def test_a_narrow_token_makes_at_most_its_share_of_rules(
    bridge_server: BridgeServer,
) -> None:
    from bridge.limits import RULES_PER_TOKEN

    narrow = token(bridge_server, "automations:create", "storage:k", agent="greedy")
    doc = on_read("x", actions=[{"type": "delay", "seconds": 0}])

    async def make(i: int) -> tuple[int, Any]:
        return await call(
            bridge_server, "POST", "/v1/automations", narrow, {**doc, "id": f"greedy-{i}"}
        )

    answers: list[tuple[int, Any]] = []
    for start in range(0, 1000, 25):  # a thousand tries, 25 at a time
        answers += await asyncio.gather(*(make(i) for i in range(start, start + 25)))
    made = [a for s, a in answers if s == 201]
    refused = [a for s, a in answers if s != 201]
    assert len(made) == RULES_PER_TOKEN == 50
    assert {json.dumps(a["error"]["details"], sort_keys=True) for a in refused} == {
        json.dumps({"reason": "automation_rules", "limit": 50, "scope": "token"}, sort_keys=True)
    }
    assert {a["error"]["code"] for a in refused} == {"RATE_LIMITED"}
    # Another caller keeps its share; deleting one of its own frees a place.
    status, answer = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        token(bridge_server, "automations:create", "storage:*", agent="other"),
        {**doc, "id": "other-1"},
    )
    assert status == 201, answer
    status, _ = await call(bridge_server, "DELETE", f"/v1/automations/{made[0]['id']}", narrow)
    assert status == 200
    status, answer = await make(5000)
    assert status == 201, answer


async def test_rules_survive_a_restart_with_the_same_token(
    bridge_server: BridgeServer, bridge_config: BridgeConfig
) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    status, made = await call(bridge_server, "POST", "/v1/automations", agent, on_read("kept"))
    assert status == 201, made
    service = bridge_server.service
    assert service.invocation is not None
    ledger = service.invocation.list_tokens(agent_id="automation:kept")
    await service.stop()
    again = BridgeService(bridge_config, enable_matter=False)
    await again.start()
    try:
        assert again.automations is not None
        assert again.invocation is not None
        key = NodeKey.load_or_create(again.state_dir / KEY_FILE_NAME)
        me = again.invocation.verifier.verify(
            issue_token(
                key, agent_id=AGENT, permissions=["automations:create", "storage:*"], ttl_s=600
            )
        )
        assert [r["id"] for r in again.automations.rules(me)] == ["kept"]
        assert again.invocation.list_tokens(agent_id="automation:kept") == ledger
        live = again.automations._rules["kept"]
        assert live.token is not None
        assert live.token.id == ledger[0]["id"]
        # Deleting it revokes that token.
        again.automations.delete(me, "kept")
        assert ledger[0]["id"] in again.invocation.verifier.revocations
    finally:
        await again.stop()


async def test_cli_creates_rules_from_yaml_and_manages_them(
    bridge_server: BridgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "- id: from-yaml\n"
        "  trigger: {type: tool_call, tool: 'core:get_data'}\n"
        "  actions:\n"
        "    - {type: call, tool: 'core:store_data', params: {key: yaml-ran, value: 1}}\n"
        "- id: bad rule\n"
        "  trigger: {type: tool_call, tool: 'core:get_data'}\n"
        "  actions: [{type: delay, seconds: 1}]\n"
    )
    api = ("--url", bridge_server.url, "--token", agent)

    def cli(*argv: str) -> int:
        return main(list(argv))

    code = await asyncio.to_thread(cli, "automations", "create", str(rules), *api)
    out, err = capsys.readouterr()
    assert code == 1  # the second rule is refused with the schema's place
    assert "from-yaml: active" in out
    assert "invalid rule at id" in out + err
    code = await asyncio.to_thread(cli, "automations", "disable", "from-yaml", *api)
    assert code == 0
    assert json.loads(capsys.readouterr().out)["enabled"] is False
    await invoke(bridge_server, "core:get_data", {"key": "k"}, agent)
    await asyncio.sleep(0.3)
    stored = await invoke(bridge_server, "core:get_data", {"key": "yaml-ran"}, agent)
    assert stored["result"]["exists"] is False  # disabled: it did not act
    code = await asyncio.to_thread(cli, "automations", "list", *api)
    assert code == 0
    assert capsys.readouterr().out.startswith("from-yaml  disabled")
    code = await asyncio.to_thread(cli, "automations", "delete", "from-yaml", *api)
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {"id": "from-yaml", "deleted": True}


async def test_a_rule_may_watch_only_devices_its_creator_may_read(
    bridge_server: BridgeServer,
) -> None:
    agent = token(bridge_server, "automations:create", "storage:*", "device:read:2-1")
    doc = on_read(
        "peek", conditions=[{"type": "state", "device_id": "9-1", "path": "1/6/0", "equals": True}]
    )
    status, answer = await call(bridge_server, "POST", "/v1/automations", agent, doc)
    assert status == 403, answer
    assert answer["error"]["details"] == {"required": "device:read:9-1"}
    doc["conditions"][0]["device_id"] = "2-1"
    status, answer = await call(bridge_server, "POST", "/v1/automations", agent, doc)
    assert status == 201, answer


async def test_notify_posts_to_the_webhook_and_needs_its_permission(
    bridge_server: BridgeServer,
) -> None:
    from aiohttp import web

    got: list[dict[str, Any]] = []

    async def hook(request: web.Request) -> web.Response:
        got.append(await request.json())
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        doc = on_read(
            "tell",
            actions=[
                {
                    "type": "notify",
                    "url": f"http://127.0.0.1:{port}/hook",
                    "message": "someone read the store",
                }
            ],
        )
        plain = token(bridge_server, "automations:create", "storage:*")
        status, answer = await call(bridge_server, "POST", "/v1/automations", plain, doc)
        assert status == 403, answer
        assert answer["error"]["details"] == {"required": "automations:notify"}
        allowed = token(bridge_server, "automations:create", "automations:notify", "storage:*")
        status, answer = await call(bridge_server, "POST", "/v1/automations", allowed, doc)
        assert status == 201, answer
        await invoke(bridge_server, "core:get_data", {"key": "k"}, allowed)
        (row,) = await audit_rows(bridge_server.service, "tell", 1)
        assert row["details"]["actions"] == [{"type": "notify", "ok": True, "status": 200}]
        assert [(g["rule"], g["message"]) for g in got] == [("tell", "someone read the store")]
        assert got[0]["run_id"] == row["call_id"]
    finally:
        await runner.cleanup()


async def test_test_says_why_a_rule_would_not_act_and_acts_on_nothing(
    bridge_server: BridgeServer,
) -> None:
    agent = token(bridge_server, "automations:create", "storage:*")
    never = [
        {"type": "time_window", "after": "03:00", "before": "03:00", "timezone": "Europe/Berlin"}
    ]
    for rule_id, conditions in (("quiet", never), ("ready", [])):
        status, made = await call(
            bridge_server, "POST", "/v1/automations", agent, on_read(rule_id, conditions=conditions)
        )
        assert status == 201, made
    status, quiet = await call(bridge_server, "POST", "/v1/automations/quiet/test", agent)
    assert status == 200, quiet
    assert quiet["would_act"] is False
    assert quiet["blocked_by"]["why"] == "outside the time window"
    status, ready = await call(bridge_server, "POST", "/v1/automations/ready/test", agent)
    assert (ready["would_act"], ready["blocked_by"]) == (True, None)
    stored = await invoke(bridge_server, "core:get_data", {"key": "ready-ran"}, agent)
    assert stored["result"]["exists"] is False  # testing acted on nothing


async def test_device_state_is_watched_only_while_a_state_rule_exists(
    bridge_server: BridgeServer,
) -> None:
    # A watched device.state makes every Matter call read its device back before
    # answering (read after write): nobody should pay for it without a state rule.
    events = bridge_server.service.events
    agent = token(bridge_server, "automations:create", "storage:*", "device:read:*")
    status, made = await call(bridge_server, "POST", "/v1/automations", agent, on_read("calls"))
    assert status == 201, made
    assert events.wanted("device.state") is False
    status, made = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        agent,
        on_read("watcher", trigger={"type": "state", "device_id": "7-1", "path": "1/6/0"}),
    )
    assert status == 201, made
    assert events.wanted("device.state") is True
    status, _ = await call(bridge_server, "DELETE", "/v1/automations/watcher", agent)
    assert status == 200
    assert events.wanted("device.state") is False


async def test_call_events_are_built_only_while_a_tool_call_rule_exists(
    bridge_server: BridgeServer,
) -> None:
    # Every call publishes three tool_call.status events; with nobody listening none is
    # built. A tool-call rule listens from its creation (it fires) until its deletion.
    events = bridge_server.service.events
    agent = token(bridge_server, "automations:create", "storage:*", "device:read:*")
    assert events.wanted("tool_call.status") is False
    status, made = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        agent,
        on_read("watcher", trigger={"type": "state", "device_id": "7-1", "path": "1/6/0"}),
    )
    assert status == 201, made
    assert events.wanted("tool_call.status") is False
    status, made = await call(bridge_server, "POST", "/v1/automations", agent, on_read("calls"))
    assert status == 201, made
    assert events.wanted("tool_call.status") is True
    await invoke(bridge_server, "core:get_data", {"key": "x"}, agent)
    (run,) = await audit_rows(bridge_server.service, "calls", 1)
    assert run["decision"] == "allowed", run
    status, _ = await call(bridge_server, "DELETE", "/v1/automations/calls", agent)
    assert status == 200
    assert events.wanted("tool_call.status") is False
