"""Names spoken commands hear change live: device aliases and room aliases."""

from __future__ import annotations

import pytest

from tests.support.home import Home

pytestmark = pytest.mark.controller


async def test_an_alias_added_alone_is_heard_at_once(home: Home) -> None:
    engine = home.service.intents
    assert engine is not None
    assert home.service.invocation is not None
    token = home.service.invocation.verifier.verify(home.token("device:control:*"))
    reply = await engine.handle("turn on the big lamp", "en", token=token)
    assert (reply.handled, reply.calls) == (False, ())
    # Only the aliases change: no new name, no new room, so no tool is renamed.
    await home.patch_device("node-3-color", {"aliases": ["big lamp"]})
    reply = await engine.handle("turn on the big lamp", "en", token=token)
    assert reply.handled, reply.speech
    assert [c["tool"] for c in reply.calls] == ["matter:light_sofa_lamp_on"]
    status, tool = await home.request("GET", "/v1/tools/matter:light_sofa_lamp_on",
                                      home.token("device:read:*"))  # fmt: skip
    assert status == 200, tool
    assert tool["tool"]["metadata"]["aliases"] == ["big lamp"], tool
    # Tool search (BM25 over metadata.aliases among others) finds the device by its alias.
    status, found = await home.request("GET", "/v1/tools?q=big%20lamp&limit=3",
                                       home.token("device:read:*"))  # fmt: skip
    assert status == 200, found
    assert found["tools"][0]["identity"].startswith("matter:light_sofa_lamp_"), found
