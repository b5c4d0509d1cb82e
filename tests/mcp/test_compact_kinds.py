"""The compact profile's capabilities for issue 29's kinds, never acting on the wrong kind.

A suffix is not a kind: a valve and a blind both ``open``, a washer and a robot vacuum
both ``stop``. Recorded dumps (a valve, a laundry washer, a robot vacuum with named
rooms, a shutter, an air purifier) are imported into the real python-matter-server and
the compact tools are listed and called over ``/mcp/compact``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.test_compact import compact_client, device
from tests.support.home import Home, home_fixtures

pytestmark = pytest.mark.controller

VALVE, WASHER, VACUUM, COVER, PURIFIER = (
    "mock_valve",
    "laundrywasher",
    "eufy_vacuum_omni_e28",
    "mock_window_covering_full",
    "air_purifier",
)

controller, home = home_fixtures("mcp_compact_kinds", (VALVE, WASHER, VACUUM, COVER, PURIFIER))


def targets(tools: dict[str, Any], name: str) -> list[str]:
    return list(tools[name].input_schema["properties"]["target"]["enum"])


async def test_each_kind_is_a_target_of_its_own_capability_only(home: Home) -> None:
    broad = home.token("device:control:*", "device:read:*", agent_id="kinds")
    valve, washer, vacuum, cover, purifier = (
        device(home, s) for s in (VALVE, WASHER, VACUUM, COVER, PURIFIER)
    )
    async with compact_client(home, broad, "auto") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert sorted(tools) == [
            "home__appliances",
            "home__climate",
            "home__covers",
            "home__fans",
            "home__home_state",
            "home__lights",
            "home__vacuums",
            "home__valves",
        ]
        assert targets(tools, "home__covers") == [cover.name]
        assert targets(tools, "home__valves") == [valve.name]
        assert targets(tools, "home__vacuums") == [vacuum.name]
        assert targets(tools, "home__appliances") == [washer.name]
        assert targets(tools, "home__fans") == [purifier.name]
        # The washer's own OnOff (its dead-front switch) is a switch the lights tool turns.
        assert targets(tools, "home__lights") == [washer.name]
        # "clean the kitchen": the robot's own room name becomes its area id (40004 in
        # the recording), then the run mode tagged Cleaning (mode 1, "Cleaning").
        result = await client.call_tool(
            "home__vacuums", {"target": vacuum.name, "action": "clean_rooms", "areas": ["Kitchen"]}
        )
        assert result.is_error is False, result
        text = result.content[0].text  # type: ignore[union-attr]
        assert '"command":"SelectAreas","payload":{"newAreas":[40004]}' in text
        assert '"command":"ChangeToMode","payload":{"newMode":1}' in text
        # A valve is not a cover: the covers tool does not know it.
        wrong = await client.call_tool("home__covers", {"target": valve.name, "action": "open"})
        assert wrong.is_error is True
        assert wrong.structured_content["error"]["code"] == "NOT_FOUND"
