"""Who is home and where the home is: presence triggers and conditions, the home's zone and place.

A real service (SQLite, HTTP API on loopback) configured with ``automations.people``,
``.timezone``, ``.latitude`` and ``.longitude``; presence is reported over
``PUT /v1/automations/presence/{person}`` as a phone's agent would. Actions are
``core:store_data`` calls read back from the store.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from bridge.config import AutomationsConfig, BridgeConfig
from tests.automations.test_runner import audit_rows, call, invoke, on_read, token
from tests.support.server import BridgeServer

BERLIN = (52.52, 13.405)


@pytest.fixture
def bridge_config(bridge_config: BridgeConfig) -> BridgeConfig:
    return replace(
        bridge_config,
        automations=AutomationsConfig(
            latitude=BERLIN[0],
            longitude=BERLIN[1],
            timezone="Europe/Berlin",
            people=("anna", "ben"),
        ),
    )


async def report(
    server: BridgeServer, person: str, home: bool, *permissions: str
) -> tuple[int, Any]:
    tok = token(server, *(permissions or (f"presence:report:{person}",)), agent="phone")
    return await call(server, "PUT", f"/v1/automations/presence/{person}", tok, {"home": home})


async def stored(server: BridgeServer, key: str) -> bool:
    answer = await invoke(server, "core:get_data", {"key": key}, token(server, "storage:*"))
    return answer["result"]["exists"]  # type: ignore[no-any-return]


async def test_presence_triggers_and_conditions(bridge_server: BridgeServer) -> None:
    maker = token(bridge_server, "automations:create", "storage:*", "presence:read:*")
    store = {"type": "call", "tool": "core:store_data"}
    docs = [
        on_read(
            "welcome",
            trigger={"type": "presence", "person": "anna", "home": True},
            actions=[{**store, "params": {"key": "welcome", "value": 1}}],
        ),
        on_read(
            "all-out",
            trigger={"type": "presence", "home": False},
            actions=[{**store, "params": {"key": "all-out", "value": 1}}],
        ),
        on_read("if-home", conditions=[{"type": "presence", "home": True}]),
    ]
    for doc in docs:
        status, made = await call(bridge_server, "POST", "/v1/automations", maker, doc)
        assert status == 201, made
    service = bridge_server.service
    reader = token(bridge_server, "storage:*", agent="reader")

    # Nobody has reported yet: "anyone home" is unknown, the condition does not hold.
    await invoke(bridge_server, "core:get_data", {"key": "k"}, reader)
    (row,) = await audit_rows(service, "if-home", 1)
    assert row["decision"] == "conditions_not_met"
    assert row["details"]["actions"][0]["condition"]["why"] == "presence of anyone is unknown"

    status, answer = await report(bridge_server, "anna", True)
    assert status == 200, answer
    assert (answer["person"], answer["home"]) == ("anna", True)
    (row,) = await audit_rows(service, "welcome", 1)
    assert row["details"]["trigger"] == {
        "type": "presence",
        "person": "anna",
        "home": True,
        "at": answer["since"],
    }
    assert await stored(bridge_server, "welcome")
    status, _ = await report(bridge_server, "ben", True)
    assert status == 200
    await invoke(bridge_server, "core:get_data", {"key": "k"}, reader)
    rows = await audit_rows(service, "if-home", 2)
    assert rows[-1]["decision"] == "allowed"

    # The last one leaving fires "nobody home" once: anna leaving is not it, ben is.
    await report(bridge_server, "anna", False)
    await asyncio.sleep(0.3)
    assert not await stored(bridge_server, "all-out")
    await report(bridge_server, "ben", False)
    (row,) = await audit_rows(service, "all-out", 1)
    assert row["details"]["trigger"]["person"] == "ben"
    assert await stored(bridge_server, "all-out")

    # Who may see whom: presence:read:<person>.
    status, seen = await call(
        bridge_server, "GET", "/v1/automations/presence", token(bridge_server, "presence:read:anna")
    )
    assert status == 200, seen
    assert list(seen["people"]) == ["anna"]
    assert seen["people"]["anna"]["home"] is False


async def test_presence_reports_and_rules_are_checked(bridge_server: BridgeServer) -> None:
    status, answer = await report(bridge_server, "anna", True, "presence:report:ben")
    assert (status, answer["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert answer["error"]["details"] == {"required": "presence:report:anna"}
    status, answer = await report(bridge_server, "zed", True, "presence:report:*")
    assert (status, answer["error"]["code"]) == (404, "NOT_FOUND")
    status, answer = await report(bridge_server, "anna", "yes", "presence:report:*")  # type: ignore[arg-type]
    assert (status, answer["error"]["code"]) == (400, "INVALID_REQUEST")
    # A rule may watch only the presence its creator may read, of configured people.
    maker = token(bridge_server, "automations:create", "storage:*", "presence:read:anna")
    status, answer = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("peek", conditions=[{"type": "presence", "person": "ben", "home": True}]),
    )
    assert (status, answer["error"]["details"]) == (403, {"required": "presence:read:ben"})
    status, answer = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("anyone", conditions=[{"type": "presence", "home": True}]),
    )
    assert (status, answer["error"]["details"]) == (403, {"required": "presence:read:*"})
    status, answer = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("ghost", trigger={"type": "presence", "person": "zed", "home": True}),
    )
    assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMS")


async def test_the_homes_zone_and_place_fill_rules_that_give_none(
    bridge_server: BridgeServer,
) -> None:
    runner = bridge_server.service.automations
    assert runner is not None
    # From midnight UTC on the longest day of 2026.
    runner.clock = lambda: datetime(2026, 6, 21, 0, 0, tzinfo=UTC).timestamp()
    maker = token(bridge_server, "automations:create", "storage:*")
    status, made = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("morning", trigger={"type": "time", "at": "07:30"}),
    )
    assert status == 201, made
    # 07:30 in Berlin (CEST, UTC+2) is 05:30 UTC.
    assert made["next_at"] == datetime(2026, 6, 21, 5, 30, tzinfo=UTC).timestamp()
    status, made = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("dawn", trigger={"type": "sun", "event": "sunrise"}),
    )
    assert status == 201, made
    # Berlin's sunrise on 21 June 2026: 04:43 CEST (02:43 UTC) by the almanac.
    expected = datetime(2026, 6, 21, 2, 43, tzinfo=UTC).timestamp()
    assert abs(made["next_at"] - expected) <= 120, made["next_at"] - expected


async def test_without_a_configured_home_such_rules_are_refused(
    bridge_server: BridgeServer, bridge_config: BridgeConfig
) -> None:
    runner = bridge_server.service.automations
    assert runner is not None
    runner.home = replace(runner.home, latitude=None, longitude=None, timezone=None)
    maker = token(bridge_server, "automations:create", "storage:*")
    status, answer = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("dawn", trigger={"type": "sun", "event": "sunrise", "timezone": "UTC"}),
    )
    assert status == 400, answer
    assert answer["error"]["message"] == (
        "a sun trigger needs latitude and longitude (or "
        "configure automations.latitude and .longitude)"
    )
    status, answer = await call(
        bridge_server,
        "POST",
        "/v1/automations",
        maker,
        on_read("quiet", conditions=[{"type": "time_window", "after": "22:00", "before": "06:00"}]),
    )
    assert status == 400, answer
    assert answer["error"]["message"] == (
        "a time_window condition needs timezone (or configure automations.timezone)"
    )
