"""The keys/token/audit/invoke/approvals commands, run through ``main`` against real state."""

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import TokenVerifier
from bridge.cli.invoke import parse_params
from bridge.cli.main import main
from bridge.cli.token import parse_ttl
from bridge.tools.context import CallContext
from bridge.tools.definition import Confirmation, Execution, ToolDefinition
from tests.support.auth import service_token
from tests.support.server import BridgeServer


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_keys_and_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "state")
    code, out, _ = run(capsys, "keys", "init", "--state-dir", state, "--json")
    assert code == 0
    created = json.loads(out)
    key_file = Path(created["path"])
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    code, _, err = run(capsys, "keys", "init", "--state-dir", state)
    assert code == 1
    assert err.startswith("error [CONFLICT]: key file")
    assert NodeKey.load(key_file).public_key_b64 == created["public_key"]
    code, out, _ = run(capsys, "keys", "show", "--state-dir", state, "--json")
    assert json.loads(out)["public_key"] == created["public_key"]

    code, out, _ = run(
        capsys,
        "token",
        "issue",
        "--state-dir",
        state,
        "--agent",
        "voice",
        "--perm",
        "device:control:*",
        "--perm",
        "tool:read:*",
        "--ttl",
        "2h",
        "--max-hops",
        "1",
        "--allowed-node",
        "n1",
        "n2",
        "--rate",
        "30",
    )
    assert code == 0
    raw = out.strip()
    token = TokenVerifier([created["public_key"]]).verify(raw)
    assert token.agent_id == "voice"
    assert token.permissions == ("device:control:*", "tool:read:*")
    assert token.expires_at - token.issued_at == pytest.approx(7200, abs=0.01)
    assert (
        token.constraints.max_hops,
        token.constraints.allowed_nodes,
        token.constraints.rate_limit_per_minute,
    ) == (1, ("n1", "n2"), 30)
    code, out, _ = run(capsys, "token", "list", "--state-dir", state)
    assert code == 0
    [listed] = [json.loads(line) for line in out.splitlines()]
    assert listed == {
        "id": token.id,
        "agent_id": "voice",
        "permissions": ["device:control:*", "tool:read:*"],
        "issued_at": token.issued_at,
        "expires_at": token.expires_at,
        "revoked": False,
        "issued_by": None,
    }
    assert raw not in out
    assert raw.split(".")[1] not in out
    code, out, _ = run(capsys, "token", "inspect", "--state-dir", state, raw)
    assert code == 0
    assert json.loads(out)["agent_id"] == "voice"
    # No bridge runs on this state directory: the revocation goes to its database.
    code, out, _ = run(capsys, "token", "revoke", "--state-dir", state, token.id)
    assert (code, json.loads(out)["revoked"]) == (0, True)
    code, out, _ = run(capsys, "token", "list", "--state-dir", state)
    assert json.loads(out)["revoked"] is True
    code, _, err = run(capsys, "token", "inspect", "--state-dir", state, raw)
    assert (code, err.strip()) == (1, "error [UNAUTHENTICATED]: token has been revoked")
    code, _, err = run(capsys, "token", "revoke", "--state-dir", state, "0" * 32)
    assert (code, err.split("]")[0]) == (1, "error [NOT_FOUND")
    code, _, err = run(capsys, "token", "inspect", "--state-dir", state, raw[:-2] + "xx")
    assert code == 1
    assert err.startswith("error [UNAUTHENTICATED]")
    code, _, err = run(
        capsys, "token", "issue", "--state-dir", state, "--agent", "a", "--perm", "bad::perm"
    )
    assert code == 1
    assert err.startswith("error [INVALID_REQUEST]")
    code, _, err = run(
        capsys, "token", "issue", "--state-dir", str(tmp_path / "none"), "--agent", "a"
    )
    assert (code, err.split("]")[0]) == (1, "error [NOT_FOUND")


def test_parsers() -> None:
    assert [parse_ttl(t) for t in ("30s", "15m", "2h", "1d", "1w", "90")] == [
        30,
        900,
        7200,
        86400,
        604800,
        90,
    ]
    assert parse_params(["a=5", "b=true", "c=hello", "d=[1,2]", 'e="5"', "f=a=b"]) == {
        "a": 5,
        "b": True,
        "c": "hello",
        "d": [1, 2],
        "e": "5",
        "f": "a=b",
    }


async def test_invoke_approvals_and_audit_commands(
    bridge_server: BridgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    svc = bridge_server.service
    done: list[dict[str, Any]] = []

    async def handler(params: dict[str, Any], ctx: CallContext) -> Any:
        done.append(params)
        return {"ok": params}

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    svc.registry.register(
        ToolDefinition(
            name="count",
            description="Count",
            parameters=schema,
            execution=Execution(async_allowed=True),
        ),
        handler,
    )
    svc.registry.register(
        ToolDefinition(
            name="purge",
            description="Purge",
            parameters=schema,
            dangerous=True,
            confirmation=Confirmation(message="Purge {n}?", timeout_s=10),
        ),
        handler,
    )
    url = bridge_server.url
    caller = service_token(svc, "agent", ["*"])
    admin = service_token(svc, "admin", ["admin:approve"])

    def cli(*argv: str) -> int:
        return main(list(argv))

    code = await asyncio.to_thread(cli, "invoke", "count", "n=3", "--url", url, "--token", caller)
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(out)["result"] == {"ok": {"n": 3}}
    code = await asyncio.to_thread(cli, "invoke", "count", "n=x", "--url", url, "--token", caller)
    out = capsys.readouterr().out
    assert code == 1
    assert json.loads(out)["error"]["code"] == "INVALID_PARAMS"
    code = await asyncio.to_thread(
        cli, "invoke", "count", "n=4", "--async", "--wait", "--url", url, "--token", caller
    )
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(out)["response"]["result"] == {"ok": {"n": 4}}

    purge = asyncio.create_task(
        asyncio.to_thread(cli, "invoke", "purge", "n=9", "--url", url, "--token", caller)
    )
    pending: list[Any] = []
    for _ in range(200):
        pending = await svc.invocation.approvals.list(status="pending")
        if pending:
            break
        await asyncio.sleep(0.02)
    code = await asyncio.to_thread(cli, "approvals", "list", "--url", url, "--token", admin)
    out = capsys.readouterr().out
    assert code == 0
    assert pending[0].id in out
    assert "Purge 9?" in out
    code = await asyncio.to_thread(
        cli, "approvals", "approve", pending[0].id, "--url", url, "--token", admin
    )
    assert code == 0
    assert await purge == 0
    capsys.readouterr()
    assert done == [{"n": 3}, {"n": 4}, {"n": 9}]

    await svc.invocation.audit.flush()
    code = await asyncio.to_thread(
        cli, "audit", "--state-dir", str(svc.state_dir), "--json", "--tool", "core:purge@1.0.0"
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [(e["agent_id"], e["decision"], e["outcome"]) for e in lines] == [
        ("agent", "allowed", "completed")
    ]
    assert lines[0]["details"]["approvers"] == ["admin"]
    # Requests without a valid token are counters, shown with --rejections.
    for bad in ("garbage", caller[:-4] + "AAAA"):
        async with bridge_server.client.get(
            f"{url}/v1/tools", headers={"Authorization": f"Bearer {bad}"}
        ) as resp:
            assert resp.status == 401
    await svc.invocation.audit.flush()
    code = await asyncio.to_thread(
        cli, "audit", "--state-dir", str(svc.state_dir), "--json", "--rejections"
    )
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert sorted((r["source"], r["reason"], r["count"]) for r in rows) == [
        ("127.0.0.1", "bad_signature", 1),
        ("127.0.0.1", "malformed", 1),
    ]
