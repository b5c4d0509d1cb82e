"""The approval webhook: a real receiver on loopback gets a signed, redacted body."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from bridge.config import BridgeConfig, ConsoleConfig
from bridge.service import BridgeService
from bridge.tools.definition import Audit, Confirmation, ToolDefinition
from tests.support.auth import service_token

SECRET = b"webhook-secret-for-tests"
# The secret a call carries, which the webhook must never send. Not a short string of
# digits: "1234" turned up by chance in a call id or a timestamp of the body (seen once
# in CI), which made the check fail on a body that held no secret.
PIN = "pin-Zq7v"


async def test_each_new_approval_is_posted_signed_with_secrets_redacted(
    bridge_config: BridgeConfig, tmp_path: Path
) -> None:
    received: list[tuple[CIMultiDict[str], bytes]] = []
    got = asyncio.Event()

    async def hook(request: web.Request) -> web.Response:
        received.append((CIMultiDict(request.headers), await request.read()))
        got.set()
        return web.Response(status=204)

    receiver = web.Application()
    receiver.router.add_post("/notify", hook)
    runner = web.AppRunner(receiver)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    secret_file = tmp_path / "webhook.secret"
    secret_file.write_bytes(SECRET + b"\n")
    config = replace(
        bridge_config,
        console=ConsoleConfig(
            approval_webhook_url=f"http://127.0.0.1:{port}/notify",
            approval_webhook_secret_file=str(secret_file),
        ),
    )
    service = BridgeService(config, enable_matter=False)
    await service.start()
    try:
        bridge_port = await service.start_api("127.0.0.1", 0)

        async def unlock(params: dict[str, Any], ctx: Any) -> dict[str, Any]:
            return {"ok": True}

        service.registry.register(
            ToolDefinition(
                name="gate_unlock",
                namespace="test",
                description="Unlock the gate",
                parameters={
                    "type": "object",
                    "properties": {
                        "gate": {"type": "string"},
                        "pin_code": {"type": "string"},
                        "note": {"type": "string"},
                    },
                },
                dangerous=True,
                confirmation=Confirmation(
                    mode="always", message="Unlock the {gate} gate?", timeout_s=30
                ),
                audit=Audit(extra={"secret_params": ["note"]}),
            ),
            unlock,
        )
        token = service_token(service, "garden-agent", ["*"])
        import aiohttp

        async with aiohttp.ClientSession() as client:
            call = asyncio.create_task(
                client.post(
                    f"http://127.0.0.1:{bridge_port}/v1/invoke",
                    json={
                        "tool": "gate_unlock",
                        "params": {"gate": "garden", "pin_code": PIN, "note": "x"},
                    },
                    headers={"Authorization": f"Bearer {token}"},
                )
            )
            await asyncio.wait_for(got.wait(), 10)
            headers, body = received[0]
            # docs/configuration.md: X-Atmosphere-Timestamp and
            # X-Atmosphere-Signature: sha256=<HMAC-SHA256 of "<timestamp>.<body>">,
            # keyed with the secret file's content (its trailing newline is not part of it).
            timestamp = headers["X-Atmosphere-Timestamp"]
            assert timestamp.isdigit()
            assert abs(int(timestamp) - time.time()) < 300
            expected = hmac.new(
                SECRET, timestamp.encode("ascii") + b"." + body, hashlib.sha256
            ).hexdigest()
            assert headers["X-Atmosphere-Signature"] == f"sha256={expected}"
            doc = json.loads(body)
            assert doc["type"] == "approval.pending"
            assert doc["console_url"] == "/console/approvals"
            approval = doc["approval"]
            assert approval["tool"] == "test:gate_unlock@1.0.0"
            assert approval["agent_id"] == "garden-agent"
            assert approval["message"] == 'Unlock the "garden" gate?'
            assert approval["params"] == {
                "gate": "garden",
                "pin_code": "[redacted]",
                "note": "[redacted]",
            }
            assert approval["status"] == "pending"
            assert PIN.encode() not in body
            admin = service_token(service, "alice", ["admin:approve"])
            async with client.post(
                f"http://127.0.0.1:{bridge_port}/v1/approvals/{approval['id']}",
                json={"decision": "deny"},
                headers={"Authorization": f"Bearer {admin}"},
            ) as res:
                assert res.status == 200
            res = await call
            assert res.status == 403
            res.release()
        assert len(received) == 1  # decisions are not posted, only new approvals
    finally:
        await service.stop()
        await runner.cleanup()
