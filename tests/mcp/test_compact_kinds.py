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

VALVE, WASHER, VACUUM, COVER, PURIFIER, SPEAKER = (
    "mock_valve",
    "laundrywasher",
    "eufy_vacuum_omni_e28",
    "mock_window_covering_full",
    "air_purifier",
    "mock_speaker",
)

controller, home = home_fixtures(
    "mcp_compact_kinds", (VALVE, WASHER, VACUUM, COVER, PURIFIER, SPEAKER)
)


def targets(tools: dict[str, Any], name: str) -> list[str]:
    return list(tools[name].input_schema["properties"]["target"]["enum"])


async def test_each_kind_is_a_target_of_its_own_capability_only(home: Home) -> None:
    broad = home.token("device:control:*", "device:read:*", agent_id="kinds")
    valve, washer, vacuum, cover, purifier, speaker = (
        device(home, s) for s in (VALVE, WASHER, VACUUM, COVER, PURIFIER, SPEAKER)
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
            "home__sounds",
            "home__vacuums",
            "home__valves",
        ]
        assert targets(tools, "home__covers") == [cover.name]
        assert targets(tools, "home__valves") == [valve.name]
        assert targets(tools, "home__vacuums") == [vacuum.name]
        assert targets(tools, "home__appliances") == [washer.name]
        assert targets(tools, "home__fans") == [purifier.name]
        assert targets(tools, "home__sounds") == [speaker.name]
        assert tools["home__sounds"].input_schema["properties"]["action"]["enum"] == [
            "mute",
            "unmute",
            "volume",
        ]
        # The washer's own OnOff (its dead-front switch) is a switch the lights tool turns;
        # a speaker's OnOff is its mute, never a light's on/off.
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


async def test_a_speaker_mutes_and_sets_its_volume_through_the_sounds_tool(home: Home) -> None:
    speaker = device(home, SPEAKER)
    broad = home.token("device:control:*", "device:read:*", agent_id="kinds")
    async with compact_client(home, broad, "auto") as client:
        for args, sent in (
            # half way from its MinLevel 1 to 254: 127.5, rounded to 128
            ({"action": "volume", "percent": 50}, '"command":"MoveToLevel","payload":{"level":128'),
            ({"action": "mute"}, '"command":"Off"'),
            ({"action": "unmute"}, '"command":"On"'),
        ):
            result = await client.call_tool("home__sounds", {"target": speaker.name, **args})
            assert result.is_error is False, result
            assert sent in result.content[0].text, result  # type: ignore[union-attr]
        # out of range, or a light's action: refused before anything is sent
        for args in (
            {"action": "volume", "percent": 101},
            {"action": "volume", "percent": "loud"},
            {"action": "on"},
            {"action": "play"},
        ):
            wrong = await client.call_tool("home__sounds", {"target": speaker.name, **args})
            assert wrong.is_error is True, args
            assert wrong.structured_content["error"]["code"] == "INVALID_PARAMS", args
