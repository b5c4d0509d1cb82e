"""A device that comes back is usable within seconds, whatever happened to the controller.

A real ``atmosphere-bridge run`` process runs inside a fabric namespace of its own, on
the devices' network (as on a LAN), with its managed python-matter-server; one matter.js
light is commissioned through it. Then, twice in a row: the controller is SIGKILLed (the
bridge's supervisor restarts it), the light is stopped and started again, and its state
tool must answer within 10 s of the light being back — the bound of issue 34, so the
timing is the point here. Without the bridge's recovery the controller's resubscription
back-off decides, and the second round waited more than 90 s when measured; with a
controller restart as the lever, 4 of 7 runs met the bound (docs/faults.md). The lever
now is the launcher's resubscribe command, sent on the light's mDNS announcement.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge.demo.virtual_devices import DeviceKind, VirtualDevice
from tests.support.fabric import (
    BridgeProcess,
    bridge_process,
    fabric_unavailable_reason,
    open_fabric,
)

pytestmark = pytest.mark.fabric

API_PORT = 18765
BACK_WITHIN_S = 10.0


@dataclass
class Rig:
    bridge: BridgeProcess
    light: VirtualDevice

    @property
    def log(self) -> Path:
        return self.bridge.log

    def request(self, method: str, path: str, body: Any = None, timeout: float = 15) -> Any:
        return self.bridge.request(method, path, body, timeout)

    def state(self) -> dict[str, Any] | None:
        """Return the light's state through its tool, or None when the call fails."""
        try:
            body = self.request(
                "POST", "/v1/invoke", {"tool": "matter:desk_light_state", "params": {}}, timeout=12
            )
        except (OSError, ValueError):
            return None
        if isinstance(body, dict) and body.get("status") == "success":
            result: dict[str, Any] = body["result"]
            return result
        return None

    def controller_pid(self) -> int:
        pid = self.request("GET", "/v1/devices")["controller"]["pid"]
        assert isinstance(pid, int), pid
        return pid


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with (
        open_fabric(f"atm-rec-{os.getpid()}") as fabric,
        bridge_process(fabric, API_PORT, "recovery") as bridge,
    ):
        light = fabric.device(DeviceKind.ONOFF, label="Desk Light")
        assert "desk_light_state" in bridge.commission(light, "Desk Light")
        yield Rig(bridge, light)


def wait_for_state(rig: Rig, limit_s: float) -> tuple[float, dict[str, Any] | None]:
    """Call the state tool until it answers; return (seconds taken, state)."""
    start = time.monotonic()
    while time.monotonic() - start < limit_s:
        got = rig.state()
        if got is not None:
            return time.monotonic() - start, got
        time.sleep(0.2)
    return time.monotonic() - start, None


def test_a_device_restarted_after_a_controller_kill_answers_within_10_s(rig: Rig) -> None:
    took: list[float] = []
    for _ in range(2):
        pid = rig.controller_pid()
        os.kill(pid, signal.SIGKILL)
        _, state = wait_for_state(rig, 90)  # the controller's own restart: not the bound
        assert state is not None, rig.log.read_text()[-3000:]
        assert rig.controller_pid() != pid
        rig.light.stop()
        time.sleep(3)
        rig.light.start()
        print(time.strftime("%H:%M:%S"), "device back")
        seconds, state = wait_for_state(rig, 60)
        took.append(round(seconds, 2))
        assert state is not None, (took, rig.log.read_text()[-3000:])
        # The answer is the light's own: switched through the bridge, reported by the light.
        mark = rig.light.mark()
        body = rig.request("POST", "/v1/invoke", {"tool": "matter:desk_light_toggle", "params": {}})
        assert body["status"] == "success", body
        rig.light.wait_state("onOff", "onOff", not state["on"], since=mark)
    print(f"device back -> state tool answers: {took} s")
    print(rig.request("GET", "/v1/devices")["controller"])
    notes = [
        line for line in rig.log.read_text(errors="replace").splitlines() if "bridge.matter" in line
    ]
    print("\n".join(notes[-40:]))
    log = rig.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    assert all(t <= BACK_WITHIN_S for t in took), (took, notes[-40:])
    # The controller set the node up again (at the bridge's word, or alone when its own
    # resubscription came first): it was never restarted for it.
    recovery = rig.request("GET", "/v1/devices")["controller"]["recovery"]
    assert recovery["restarts"] == 0, recovery


def test_a_device_back_after_the_controller_restarted_without_it_answers_within_10_s(
    rig: Rig,
) -> None:
    # The controller starts while the light is away: its own setup of the node then
    # retries only every 60 s, whatever the light does meanwhile.
    assert wait_for_state(rig, 60)[1] is not None
    rig.light.stop()
    pid = rig.controller_pid()
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 90
    while True:
        with contextlib.suppress(OSError, ValueError, KeyError, AssertionError):
            if (
                rig.controller_pid() != pid
                and rig.request("GET", "/v1/devices")["controller"]["connected"]
            ):
                break
        assert time.monotonic() < deadline, rig.log.read_text()[-3000:]
        time.sleep(0.5)
    time.sleep(8)  # the controller tried to set the node up and failed
    assert rig.state() is None
    rig.light.start()
    seconds, state = wait_for_state(rig, 90)
    print(f"device back after a controller restart without it -> answers in {seconds:.2f} s")
    print(rig.request("GET", "/v1/devices")["controller"])
    assert state is not None, rig.log.read_text()[-3000:]
    assert seconds <= BACK_WITHIN_S, rig.log.read_text()[-3000:]
