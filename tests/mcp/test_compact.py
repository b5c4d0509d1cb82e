"""The compact profile: five capability tools standing for the per-device ones.

Recorded devices (a dimmable light, a thermostat, a door lock, a window covering) are
imported into the real python-matter-server; the SDK's client talks to ``/mcp/compact``
in both protocol eras with narrow and broad signed tokens; ``GET /v1/tools`` answers the
same profile over HTTP. A compact call runs the per-device tool it stands for through
the real invoker: same permission check, same confirmation, audit naming both.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.mcp.test_server_matter import post_decision
from tests.support.auth import bearer
from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

LIGHT, THERMO, LOCK, COVER = (
    "node-2-dimmable",
    "node-4-thermostat",
    "mock_door_lock",
    "mock_window_covering_full",
)
MODES = ["auto", "legacy"]
ALL = ["home__climate", "home__covers", "home__home_state", "home__lights", "home__locks"]

controller, home = home_fixtures("mcp_compact", (LIGHT, THERMO, LOCK, COVER))


@contextlib.asynccontextmanager
async def compact_client(home: Home, token: str, mode: str) -> AsyncIterator[Client]:
    async with (
        create_mcp_http_client(headers=bearer(token)) as http,
        Client(
            streamable_http_client(f"{home.url}/mcp/compact", http_client=http),
            mode=mode,
            cache=None,
        ) as client,
    ):
        yield client


def device(home: Home, stem: str) -> Any:
    assert home.service.matter is not None
    (found,) = [d for d in home.service.matter.bridge.devices() if d.id == home.ids[stem]]
    return found


@pytest.mark.parametrize("mode", MODES)
async def test_compact_listing_narrow_and_broad(home: Home, mode: str) -> None:
    light = device(home, LIGHT)
    broad = home.token("device:control:*", "device:read:*", agent_id="broad")
    narrow = home.token(f"device:control:{light.id}", f"device:read:{light.id}", agent_id="narrow")
    async with compact_client(home, broad, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == ALL
        targets = tools["home__lights"].input_schema["properties"]["target"]["enum"]
        # A name several devices share is listed by id (each test imports the dumps anew).
        assert light.name in targets or light.id in targets
        climate = tools["home__climate"].input_schema["properties"]["target"]["enum"]
        assert device(home, THERMO).name in climate or device(home, THERMO).id in climate
        locks = tools["home__locks"]
        assert locks.annotations is not None
        assert locks.annotations.destructive_hint is True
    async with compact_client(home, narrow, mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == ["home__home_state", "home__lights"]
        props = tools["home__lights"].input_schema["properties"]
        assert props["target"]["enum"] == [light.name]
        assert props["action"]["enum"] == ["on", "off", "brightness"]
        # A per-device tool is not part of this profile.
        refused = await client.call_tool(f"matter__{light.slug}_on", {})
        assert refused.is_error is True
        assert refused.structured_content["error"]["code"] == "TOOL_NOT_FOUND"


@pytest.mark.parametrize("mode", MODES)
async def test_compact_call_runs_the_per_device_tool(home: Home, mode: str) -> None:
    light, lock = device(home, LIGHT), device(home, LOCK)
    narrow = home.token(f"device:control:{light.id}", agent_id=f"lamp-{mode}")
    runtime = home.service.invocation
    assert runtime is not None
    async with compact_client(home, narrow, mode) as client:
        # By name, any case; by id too.
        for target in (light.name.upper(), light.id):
            result = await client.call_tool(
                "home__lights", {"target": target, "action": "brightness", "percent": 30}
            )
            assert result.is_error is False, result
            text = result.content[0].text  # type: ignore[union-attr]
            assert '"command":"MoveToLevelWithOnOff"' in text
            assert '"level":77' in text
        # The lock is out of this token's reach: it answers as a target that does not
        # exist does (no oracle of which devices exist).
        refused = await client.call_tool("home__locks", {"target": lock.id, "action": "lock"})
        assert refused.is_error is True
        error = refused.structured_content["error"]
        absent = await client.call_tool("home__locks", {"target": "lock-x", "action": "lock"})
        unknown = absent.structured_content["error"]
        assert error["code"] == unknown["code"] == "NOT_FOUND"
        assert error["message"] == unknown["message"].replace("lock-x", lock.id)
        assert error["message"].endswith(f"target '{lock.id}'")
        bad = await client.call_tool("home__lights", {"target": "nowhere", "action": "on"})
        assert bad.structured_content["error"]["code"] == "NOT_FOUND"
        bad = await client.call_tool(
            "home__lights", {"target": light.name, "action": "color", "color": "red"}
        )
        assert bad.structured_content["error"]["code"] == "INVALID_PARAMS"
    runtime.audit.flush_sync()
    entries = await runtime.audit.query(agent_id=f"lamp-{mode}", outcome="completed")
    assert len(entries) == 2
    for entry in entries:
        assert entry.tool == f"matter:{light.slug}_brightness@1.0.0"
        assert entry.details["via"] == "home:lights"


async def test_compact_unlock_is_confirmed_like_the_per_device_one(home: Home) -> None:
    lock = device(home, LOCK)
    agent = home.token(f"device:control:{lock.id}", agent_id="door-compact")
    approver = home.token("admin:approve", agent_id="owner")
    runtime = home.service.invocation
    assert runtime is not None
    args = {"target": lock.id, "action": "unlock"}
    async with compact_client(home, agent, "auto") as client:
        first = await client.call_tool("home__locks", args)
        assert first.is_error is True
        error = first.structured_content["error"]
        assert error["code"] == "CONFIRMATION_REQUIRED"
        assert error["details"]["message"] == "Unlock Mock Door Lock?"
        assert error["details"]["tool"] == f"matter:{lock.slug}_unlock@1.0.0"
        await asyncio.sleep(0.2)
        assert await runtime.audit.query(agent_id="door-compact", outcome="success") == []
        status, body = await post_decision(home, error["details"]["approval_id"], approver)
        assert status == 200, body
        async with asyncio.timeout(15):
            while True:
                done = await client.call_tool("home__locks", args)
                if not done.is_error:
                    break
                assert done.structured_content["error"]["code"] == "CONFIRMATION_REQUIRED"
                await asyncio.sleep(0.1)
    assert '"command":"UnlockDoor"' in done.content[0].text  # type: ignore[union-attr]


async def test_home_state_answers_only_what_the_token_may_read(home: Home) -> None:
    light, thermo = device(home, LIGHT), device(home, THERMO)
    await home.patch_device(THERMO, {"room": "Küche"})
    narrow = home.token(f"device:read:{light.id}", agent_id="reader")
    broad = home.token("device:read:*", agent_id="reader-all")
    async with compact_client(home, narrow, "auto") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["home__home_state"]
        result = await client.call_tool("home__home_state", {})
        assert result.is_error is False, result
        doc = result.structured_content or {}
        if not doc:
            import json

            doc = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert doc["count"] == 1
        assert [d["id"] for d in doc["devices"]] == [light.id]
        assert set(doc["devices"][0]) >= {"id", "name", "on"}
        bad = await client.call_tool("home__home_state", {"room": "x"})
        assert bad.structured_content["error"]["code"] == "INVALID_PARAMS"
        missing = await client.call_tool("home__home_state", {"area": "attic"})
        unknown = missing.structured_content["error"]
        assert unknown["code"] == "NOT_FOUND"
        # No room it cannot see is named, and a room that exists but holds nothing it
        # may read answers exactly as one that does not exist.
        assert unknown["details"] == {"room": "attic", "rooms": []}
        assert unknown["message"] == "no room 'attic'"
        hidden = await client.call_tool("home__home_state", {"area": "küche"})
        error = hidden.structured_content["error"]
        assert (error["code"], error["message"], error["details"]) == (
            "NOT_FOUND",
            "no room 'küche'",
            {"room": "küche", "rooms": []},
        )
    async with compact_client(home, broad, "auto") as client:
        import json

        result = await client.call_tool("home__home_state", {})
        doc = json.loads(result.content[0].text)  # type: ignore[union-attr]
        # Every device of the home (earlier tests' imports included), the four dumps too.
        assert {d["id"] for d in doc["devices"]} >= set(home.ids.values())
        assert doc["count"] == len(home.service.matter.bridge.devices())  # type: ignore[union-attr]
        kitchen = await client.call_tool("home__home_state", {"area": "küche"})
        doc = json.loads(kitchen.content[0].text)  # type: ignore[union-attr]
        assert [d["id"] for d in doc["devices"]] == [thermo.id]
        assert doc["devices"][0]["room"] == "Küche"


async def test_http_tools_compact_profile(home: Home) -> None:
    light = device(home, LIGHT)
    narrow = home.token(f"device:control:{light.id}", f"device:read:{light.id}")
    broad = home.token("device:control:*", "device:read:*")
    status, doc = await home.request("GET", "/v1/tools?profile=compact", broad)
    assert status == 200, doc
    assert doc["profile"] == "compact"
    assert sorted(t["identity"] for t in doc["tools"]) == [
        "home:climate@1.0.0",
        "home:covers@1.0.0",
        "home:home_state@1.0.0",
        "home:lights@1.0.0",
        "home:locks@1.0.0",
    ]
    status, doc = await home.request("GET", "/v1/tools?profile=compact&view=flat", narrow)
    assert status == 200, doc
    assert [t["name"] for t in doc["tools"]] == ["home:lights", "home:home_state"]
    status, doc = await home.request("GET", "/v1/tools?profile=tiny", narrow)
    assert (status, doc["error"]["code"]) == (400, "INVALID_REQUEST")
    status, doc = await home.request("GET", "/v1/tools", narrow)
    assert status == 200
    assert doc["count"] > 0
    assert not [t for t in doc["tools"] if t["identity"].startswith("home:")]


async def test_http_compact_calls_narrow_and_broad(home: Home) -> None:
    light, lock = device(home, LIGHT), device(home, LOCK)
    narrow = home.token(
        f"device:control:{light.id}", f"device:read:{light.id}", agent_id="http-lamp"
    )
    runtime = home.service.invocation
    assert runtime is not None
    body = {"target": light.id, "action": "brightness", "percent": 30}
    status, doc = await home.request("POST", "/v1/compact/lights", narrow, body)
    assert status == 200, doc
    assert doc["via"] == "home:lights"
    assert doc["result"]["sent"][0]["command"] == "MoveToLevelWithOnOff"
    assert doc["result"]["sent"][0]["payload"]["level"] == 77
    status, doc = await home.request(
        "POST", "/v1/compact/locks", narrow, {"target": lock.id, "action": "lock"}
    )
    assert (status, doc["error"]["code"]) == (404, "NOT_FOUND")  # as for a lock that is not
    status, doc = await home.request(
        "POST", "/v1/compact/lights", narrow, {"target": light.id, "action": "dance"}
    )
    assert (status, doc["error"]["code"]) == (400, "INVALID_PARAMS")
    status, doc = await home.request("POST", "/v1/compact/sprinklers", narrow, {})
    assert (status, doc["error"]["code"]) == (404, "NOT_FOUND")
    status, doc = await home.request("POST", "/v1/compact/home_state", narrow, {})
    assert status == 200, doc
    assert [d["id"] for d in doc["devices"]] == [light.id]
    status, doc = await home.request("POST", "/v1/compact/home_state", narrow, ["x"])
    assert (status, doc["error"]["code"]) == (400, "INVALID_REQUEST")
    entries = await runtime.audit.query(agent_id="http-lamp", outcome="completed")
    assert [(e.tool, e.details["via"]) for e in entries] == [
        (f"matter:{light.slug}_brightness@1.0.0", "home:lights")
    ]
