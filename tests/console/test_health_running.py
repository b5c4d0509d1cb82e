"""The console's Health page checks the parts as they run, not the default configuration.

A full bridge whose managed controller runs in a fabric namespace (as ``make demo``
runs it): the controller answers on the namespace's address, not on
``ws://127.0.0.1:<port>/ws`` where the configuration alone would look. The page's
controller check must reach the running controller (pass, naming its address) — before,
it said "cannot connect to ws://127.0.0.1:…" while the controller ran fine.
"""

from __future__ import annotations

from collections.abc import Iterator

import aiohttp
import pytest

from tests.support.fabric import Fabric, ThreadedBridge

pytestmark = pytest.mark.fabric


@pytest.fixture(scope="module")
def bridge(fabric: Fabric) -> Iterator[ThreadedBridge]:
    running = ThreadedBridge(fabric, "health")
    try:
        running.start()
        yield running
    finally:
        running.stop()


async def test_health_checks_the_running_controller(bridge: ThreadedBridge) -> None:
    running_url = bridge.controller.url
    configured = f"ws://127.0.0.1:{bridge.config.matter.controller_port}/ws"
    assert running_url != configured  # the namespace's address: the case of the demo
    jar = aiohttp.CookieJar(unsafe=True)  # keeps the cookies of an IP host
    async with aiohttp.ClientSession(cookie_jar=jar) as client:
        async with client.post(
            f"{bridge.url}/console/signin",
            data={"token": bridge.token},
            headers={"Origin": bridge.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 303
        async with client.get(f"{bridge.url}/console/api/health") as res:
            assert res.status == 200
            body = await res.json()
    (check,) = [c for c in body["doctor"]["checks"] if c["name"] == "controller"]
    assert check["status"] == "ok", check
    assert running_url in check["found"], check
    assert body["controller"]["url"] == running_url
    assert body["controller"]["connected"] is True
