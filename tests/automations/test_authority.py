"""A rule acts only while the token that made it does: revoked or expired, the rule stops.

On a real service (SQLite, HTTP API on loopback, the real pipeline): the creator's token
is issued through ``POST /v1/tokens`` (the node's ledger) and revoked through
``DELETE /v1/tokens/{id}``, as a person would. Triggers are ``core:get_data`` calls,
actions ``core:store_data`` calls read back from the store. The migration test builds a
database of the rules table's first version and opens it with today's store.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bridge.auth.tokens import IssuedTokens, Revocations
from bridge.automations.store import _MIGRATION, UNBOUND_REASON, RuleStore
from bridge.events import Event
from bridge.storage import Database
from bridge.tools.context import CallContext
from bridge.tools.definition import Requires, ToolDefinition
from tests.automations.test_runner import audit_rows, call, invoke, on_read, token
from tests.support.server import BridgeServer

ADMIN = ("*",)


async def issued(
    server: BridgeServer, agent: str, *permissions: str, ttl_s: float = 600
) -> tuple[str, str]:
    """Issue a ledger token through the API; return it and its id."""
    status, answer = await call(
        server,
        "POST",
        "/v1/tokens",
        token(server, *ADMIN, agent="adm"),
        {"agent_id": agent, "permissions": list(permissions), "ttl_s": ttl_s},
    )
    assert status == 201, answer
    return answer["token"], answer["id"]


async def stored_value(server: BridgeServer, key: str) -> Any:
    answer = await invoke(server, "core:get_data", {"key": key}, token(server, *ADMIN, agent="x"))
    return answer["result"]


async def next_stop(sub: Any, rule_id: str, timeout_s: float = 15) -> Event:
    async with asyncio.timeout(timeout_s):
        while True:
            event = await sub.get()
            if event.data["rule"] == rule_id:
                return event  # type: ignore[no-any-return]


async def test_revoking_the_creators_token_stops_its_rule_and_revokes_the_rules_token(
    bridge_server: BridgeServer,
) -> None:
    creator, creator_id = await issued(
        bridge_server, "rule-maker", "automations:create", "storage:*"
    )
    status, made = await call(bridge_server, "POST", "/v1/automations", creator, on_read("bound"))
    assert status == 201, made
    assert made["creator_token_id"] == creator_id
    service = bridge_server.service
    assert service.invocation is not None
    assert service.automations is not None
    rule_token = service.automations._rules["bound"].token
    assert rule_token is not None
    # The rule's token is recorded as issued by its creator's, and never outlives it.
    assert service.invocation.token_view(rule_token.id)["issued_by"] == creator_id
    assert rule_token.expires_at <= service.invocation.token_view(creator_id)["expires_at"]
    trigger = token(bridge_server, "storage:*", agent="reader")
    await invoke(bridge_server, "core:get_data", {"key": "k"}, trigger)
    (row,) = await audit_rows(service, "bound", 1)
    assert (row["decision"], row["outcome"]) == ("allowed", "completed")
    assert (await stored_value(bridge_server, "bound-ran"))["value"] is True
    # Reading the store back is a trigger too: its run ends before the revocation.
    assert [r["decision"] for r in await audit_rows(service, "bound", 2)] == ["allowed"] * 2

    async with service.events.subscription("automation.stopped") as sub:
        status, answer = await call(
            bridge_server,
            "DELETE",
            f"/v1/tokens/{creator_id}",
            token(bridge_server, *ADMIN, agent="adm"),
        )
        assert status == 200, answer
        stopped = await next_stop(sub, "bound")
    assert stopped.data["reason"] == f"its creator's token {creator_id} is revoked"
    assert stopped.data["status"] == "revoked"
    assert rule_token.id in service.invocation.verifier.revocations
    rows = await audit_rows(service, "bound", 3)
    assert [r["decision"] for r in rows] == ["allowed", "allowed", "revoked"]
    assert rows[-1]["details"]["creator_token_id"] == creator_id

    # The trigger again: nothing acts (the key stays as a person left it), no new run.
    await invoke(
        bridge_server,
        "core:store_data",
        {"key": "bound-ran", "value": False},
        token(bridge_server, *ADMIN, agent="x"),
    )
    await invoke(bridge_server, "core:get_data", {"key": "k"}, trigger)
    await asyncio.sleep(0.5)
    assert (await stored_value(bridge_server, "bound-ran"))["value"] is False
    assert len(await audit_rows(service, "bound", 3)) == 3
    admin = token(bridge_server, *ADMIN, agent="adm")
    status, shown = await call(bridge_server, "GET", "/v1/automations/bound", admin)
    assert (shown["status"], shown["enabled"]) == ("revoked", False)
    # Enabling it again cannot bring the authority back.
    status, answer = await call(
        bridge_server, "PATCH", "/v1/automations/bound", admin, {"enabled": True}
    )
    assert status == 409, answer
    assert answer["error"]["code"] == "CONFLICT"


async def test_a_creator_token_revoked_by_an_administrator_token_stops_the_rule(
    bridge_server: BridgeServer,
) -> None:
    # An administrator's tokens are not revoked with it (pipeline.revoke's orphans): the
    # runner itself must see that its rule's creator is gone.
    creator, creator_id = await issued(bridge_server, "wide-maker", *ADMIN)
    status, made = await call(bridge_server, "POST", "/v1/automations", creator, on_read("wide"))
    assert status == 201, made
    service = bridge_server.service
    assert service.invocation is not None
    async with service.events.subscription("automation.stopped") as sub:
        service.invocation.revoke(creator_id)
        stopped = await next_stop(sub, "wide")
    assert stopped.data["reason"] == f"its creator's token {creator_id} is revoked"


async def test_an_expired_creator_token_stops_its_rule(bridge_server: BridgeServer) -> None:
    creator, creator_id = await issued(
        bridge_server, "brief-maker", "automations:create", "storage:*", ttl_s=1.0
    )
    status, made = await call(bridge_server, "POST", "/v1/automations", creator, on_read("brief"))
    assert status == 201, made
    service = bridge_server.service
    assert service.invocation is not None
    # The node refuses the creator's token expiry_skew_s (5 s) past its expiry; the
    # runner's clock tick (1 s) then stops the rule without any trigger.
    async with service.events.subscription("automation.stopped") as sub:
        stopped = await next_stop(sub, "brief", timeout_s=20)
    assert stopped.data["reason"] == f"its creator's token {creator_id} is expired"
    await invoke(bridge_server, "core:get_data", {"key": "k"}, token(bridge_server, "storage:*"))
    await asyncio.sleep(0.5)
    assert (await stored_value(bridge_server, "brief-ran"))["exists"] is False
    assert [r["decision"] for r in await audit_rows(service, "brief", 1)] == ["revoked"]


async def test_a_creator_revoked_while_its_run_waits_stops_the_next_call(
    bridge_server: BridgeServer,
) -> None:
    creator, creator_id = await issued(
        bridge_server, "slow-maker", "automations:create", "storage:*"
    )
    doc = on_read(
        "slow",
        actions=[
            {"type": "delay", "seconds": 1.5},
            {"type": "call", "tool": "core:store_data", "params": {"key": "slow-ran", "value": 1}},
        ],
    )
    status, made = await call(bridge_server, "POST", "/v1/automations", creator, doc)
    assert status == 201, made
    service = bridge_server.service
    assert service.invocation is not None
    async with service.events.subscription("automation.run") as runs:
        await invoke(
            bridge_server, "core:get_data", {"key": "k"}, token(bridge_server, "storage:*")
        )
        await asyncio.sleep(0.3)  # the run is in its delay
        status, _ = await call(
            bridge_server,
            "DELETE",
            f"/v1/tokens/{creator_id}",
            token(bridge_server, *ADMIN, agent="adm"),
        )
        assert status == 200
        run = await asyncio.wait_for(runs.get(), 10)
    assert run.data["outcome"] == "error"
    assert run.data["actions"][0] == {"type": "delay", "seconds": 1.5, "ok": True}
    assert run.data["actions"][1]["ok"] is False
    assert run.data["actions"][1]["error"] == "AUTHORITY_REVOKED"
    assert (await stored_value(bridge_server, "slow-ran"))["exists"] is False


async def test_a_revoked_creator_ends_its_rules_pending_approval(
    bridge_server: BridgeServer,
) -> None:
    service = bridge_server.service
    assert service.invocation is not None

    async def open_door(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        return {"opened": True}

    service.registry.register(
        ToolDefinition(
            name="front_door_open",
            namespace="home",
            description="Open the front door",
            requires=Requires(permissions=("door:open",)),
        ),
        open_door,
    )
    creator, creator_id = await issued(
        bridge_server, "door-maker", "automations:create", "door:open", "storage:*"
    )
    status, made = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        creator,
        on_read("door", actions=[{"type": "call", "tool": "home:front_door_open"}]),
    )
    assert status == 201, made
    assert made["status"] == "awaiting_approval"
    status, _ = await call(
        bridge_server,
        "DELETE",
        f"/v1/tokens/{creator_id}",
        token(bridge_server, *ADMIN, agent="adm"),
    )
    assert status == 200
    # The person is no longer asked: the request ended with its creator's token.
    asked = await service.invocation.approvals.get(made["approval_id"])
    assert (asked.status.value, asked.reason) == ("cancelled", "token_revoked")
    status, rule = await call(
        bridge_server, "GET", "/v1/automations/door", token(bridge_server, *ADMIN, agent="adm")
    )
    assert (rule["status"], rule["reason"]) == (
        "revoked",
        f"its creator's token {creator_id} is revoked",
    )


def _v1_rule(db: Database, rule_id: str, creator: str, created_at: float) -> None:
    doc = on_read(rule_id)
    db.execute_sync(
        "INSERT INTO automation_rules VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            rule_id,
            json.dumps(
                {
                    **doc,
                    "name": rule_id,
                    "enabled": True,
                    "conditions": [],
                    "rate_limit_per_minute": 10,
                }
            ),
            "active",
            creator,
            f"automation:{rule_id}",
            json.dumps(["storage:*"]),
            created_at,
            3600.0,
            None,
            None,
            None,
            created_at,
        ),
    )


def _ledger(
    db: Database,
    token_id: str,
    agent: str,
    issued_at: float,
    expires_at: float,
    permissions: list[str],
) -> None:
    db.execute_sync(
        "INSERT INTO issued_tokens (id, token_sha256, agent_id, permissions_json, issued_at, "
        "expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (token_id, "0" * 64, agent, json.dumps(permissions), issued_at, expires_at),
    )


def test_the_migration_binds_old_rules_to_their_one_creator_token_or_stops_them(
    tmp_path: Path,
) -> None:
    db = Database(tmp_path / "bridge.db")
    IssuedTokens(db)
    Revocations(db)
    db.migrate("automation_rules_v1", _MIGRATION)  # the first version, as a v1 bridge left it
    now = time.time()
    made = now - 100
    # one: a single token valid when the rule was made (an older, expired one does not count)
    _ledger(db, "a" * 32, "one", made - 10, now + 500, ["automations:create", "storage:*"])
    _ledger(db, "b" * 32, "one", made - 900, made - 800, ["*"])
    # two: two tokens valid then - which one made it cannot be told
    _ledger(db, "c" * 32, "two", made - 10, now + 500, ["storage:*"])
    _ledger(db, "d" * 32, "two", made - 20, now + 500, ["storage:*"])
    # gone: its one token valid then was revoked since
    _ledger(db, "e" * 32, "gone", made - 10, now + 500, ["storage:*"])
    db.execute_sync(
        "INSERT INTO revoked_tokens VALUES (?, ?, ?, ?, ?)",
        ("e" * 32, "issuer", now + 500, now - 1, "{}"),
    )
    for rule_id, creator in (
        ("r-one", "one"),
        ("r-two", "two"),
        ("r-gone", "gone"),
        ("r-none", "nobody"),
    ):
        _v1_rule(db, rule_id, creator, made)

    rules = {s.rule.id: s for s in RuleStore(db).all()}
    one = rules["r-one"]
    assert (one.status, one.creator_token_id, one.creator_expires_at) == (
        "active",
        "a" * 32,
        now + 500,
    )
    assert one.creator_permissions == ("automations:create", "storage:*")
    for rule_id in ("r-two", "r-gone", "r-none"):
        assert (rules[rule_id].status, rules[rule_id].reason) == ("revoked", UNBOUND_REASON)
        assert rules[rule_id].creator_token_id is None
    # Run once: opening the store again changes nothing.
    again = {s.rule.id: s for s in RuleStore(db).all()}
    assert again == rules


async def test_a_token_inside_its_expiry_skew_makes_no_rule(bridge_server: BridgeServer) -> None:
    # Expired 2 s ago: still accepted for calls (expiry_skew_s, 5 s), but a rule would
    # outlive it at once.
    from bridge.auth.keys import KEY_FILE_NAME, NodeKey
    from bridge.auth.tokens import issue_token

    key = NodeKey.load_or_create(bridge_server.service.state_dir / KEY_FILE_NAME)
    late = issue_token(
        key,
        agent_id="late",
        permissions=["automations:create", "storage:*"],
        ttl_s=8,
        now=time.time() - 10,
    )
    status, answer = await call(bridge_server, "POST", "/v1/automations", late, on_read("late"))
    assert (status, answer["error"]["code"]) == (401, "UNAUTHENTICATED"), answer
    status, answer = await call(bridge_server, "GET", "/v1/automations", late)
    assert status == 200, answer
    assert answer["rules"] == []
