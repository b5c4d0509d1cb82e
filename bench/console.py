"""The web console: page weight, time to first render, and device report → page DOM delay.

Run: .venv/bin/python bench/console.py [--presses 30]
A real bridge (python-matter-server in a private namespace) commissions one matter.js
on/off light; Debian's headless Chromium signs in with a one-time link. Measured:
- page weight: bytes of the home page's HTML, script and style sheet (uncompressed) and
  of the state read the script makes;
- time to first render on loopback: Chromium's first-contentful-paint for /console/home
  and the time until the devices are drawn (navigation start → first device card);
- delay from the device's own report to the page: the light's "button" (SIGUSR1) is
  pressed N times; for each, the time the device printed its change (read by this
  process) to the moment a MutationObserver in the page sees the state text change.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bridge.cli.console import make_link
from bridge.demo.virtual_devices import DeviceKind
from tests.console.browser import chromium, wait_for
from tests.support.fabric import ThreadedBridge, open_fabric

OBSERVE = """
window.__changes = [];
const target = document.querySelector('[data-device] [data-role="state"]');
new MutationObserver(() => window.__changes.push([Date.now(), target.textContent]))
  .observe(target, {childList: true, characterData: true, subtree: true});
"""


def pct(values: list[float], q: float) -> float:
    """Return the q-quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class EventClock:
    """Wall-clock receipt times of ``device.state`` events on a /v1/events socket."""

    def __init__(self, url: str, token: str) -> None:
        import asyncio
        import threading

        self.times: list[float] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._task = self._loop.create_task(self._listen(url, token))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        import asyncio
        import contextlib

        with contextlib.suppress(asyncio.CancelledError):
            self._loop.run_until_complete(self._task)

    def close(self) -> None:
        """Close the socket before the bridge stops."""
        self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(5)

    async def _listen(self, url: str, token: str) -> None:
        import aiohttp

        ws_url = url.replace("http", "ws") + "/v1/events?types=device.state"
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(ws_url, headers={"Authorization": f"Bearer {token}"}) as ws,
        ):
            self._ready.set()
            async for _msg in ws:
                self.times.append(time.time())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presses", type=int, default=30)
    args = parser.parse_args()
    with open_fabric(f"atm-bench-console-{int(time.time()) % 100000}") as fabric:
        light = fabric.device(DeviceKind.ONOFF)
        bridge = ThreadedBridge(fabric, "bench-console")
        bridge.start()
        try:
            assert light.pairing is not None
            req = urllib.request.Request(
                f"{bridge.url}/v1/devices/commission",
                method="POST",
                data=json.dumps(
                    {"code": light.pairing.manual, "name": "Bench Light", "room": "Lab"}
                ).encode(),
                headers={
                    "Authorization": f"Bearer {bridge.token}",
                    "Content-Type": "application/json",
                },
            )
            with urllib.request.urlopen(req, timeout=300) as res:
                json.loads(res.read())
            with chromium() as driver:
                measure(driver, bridge, light, args.presses)
        finally:
            bridge.stop()


def measure(driver: object, bridge: ThreadedBridge, light: object, presses: int) -> None:
    from selenium.webdriver.common.by import By

    d: object = driver
    d.get(make_link(bridge.config.state_dir, bridge.url, label="bench"))  # type: ignore[attr-defined]
    d.find_element(By.ID, "use-link").click()  # type: ignore[attr-defined]
    wait_for(lambda: d.current_url.endswith("/console/home"))  # type: ignore[attr-defined]
    renders, paints = [], []
    for _ in range(5):
        d.get(f"{bridge.url}/console/home")  # type: ignore[attr-defined]
        wait_for(lambda: d.find_elements(By.CSS_SELECTOR, "[data-device]"))  # type: ignore[attr-defined]
        timing = d.execute_script(  # type: ignore[attr-defined]
            "const p = performance.getEntriesByName('first-contentful-paint')[0];"
            "const r = performance.getEntriesByType('resource')"
            "  .map(e => [e.name, e.transferSize, e.encodedBodySize]);"
            "const n = performance.getEntriesByType('navigation')[0];"
            "return {fcp: p ? p.startTime : null, now: performance.now(), res: r,"
            " html: n.encodedBodySize};"
        )
        paints.append(timing["fcp"])
        renders.append(timing["now"])
    weights = {"html": timing["html"]}
    for name, _transfer, body in timing["res"]:
        weights[name.rsplit("/", 1)[-1].split("?")[0]] = body
    total = sum(v for k, v in weights.items() if k in ("html", "console.js", "console.css"))
    print(f"page weight (bytes, uncompressed): {weights}; page total {total}")
    print(
        f"first contentful paint ms: median {statistics.median(paints):.0f} "
        f"(min {min(paints):.0f}, max {max(paints):.0f}) over {len(paints)} loads"
    )
    print(f"devices drawn by ms (upper bound, polled): median {statistics.median(renders):.0f}")
    d.execute_script(OBSERVE)  # type: ignore[attr-defined]
    clock = EventClock(bridge.url, bridge.token)
    offset = time.time() - time.monotonic()
    delays, to_bridge = [], []
    for _ in range(presses):
        mark = light.mark()  # type: ignore[attr-defined]
        before = len(d.execute_script("return window.__changes"))  # type: ignore[attr-defined]
        now_on = d.find_element(By.CSS_SELECTOR, '[data-role="state"]').text == "On"  # type: ignore[attr-defined]
        light.press()  # type: ignore[attr-defined]
        change = light.wait_state("onOff", "onOff", not now_on, since=mark, local=True)  # type: ignore[attr-defined]
        seen = wait_for(
            lambda b=before: d.execute_script(  # type: ignore[attr-defined]
                "return window.__changes.length > arguments[0] ? window.__changes[arguments[0]] : null",  # noqa: E501
                b,
            ),
            10,
        )
        delays.append(seen[0] / 1000 - (change.at + offset))
        if clock.times:
            to_bridge.append(clock.times[-1] - (change.at + offset))
        time.sleep(0.2)
    clock.close()
    ms = [x * 1000 for x in delays]
    print(
        f"device report -> page DOM over {len(ms)} presses: p50 {pct(ms, 0.5):.1f} ms, "
        f"p95 {pct(ms, 0.95):.1f} ms, max {max(ms):.1f} ms"
    )
    if to_bridge:
        bms = [x * 1000 for x in to_bridge]
        print(
            f"  of which device report -> bridge event on /v1/events: p50 {pct(bms, 0.5):.1f} "
            f"ms, p95 {pct(bms, 0.95):.1f} ms"
        )


if __name__ == "__main__":
    main()
