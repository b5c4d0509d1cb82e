"""A device that stops answering: every call to it is answered at the caller's deadline.

A real ``atmosphere-bridge run`` process with its managed controller and one matter.js
thermostat, in a fabric namespace. The thermostat is frozen (SIGSTOP): the controller
still holds it available, so calls go out and get no answer. Attribute writes carry no
interaction timeout to the controller (commands do), and the controller runs one
interaction per node at a time, so writes queue there. The bridge must answer each call
``TIMEOUT`` when the tool's 10 s run out, not when the controller gives up; the soak's
"hung" bound is that deadline plus 1 s (docs/faults.md), so the timing is the point.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bridge.demo.virtual_devices import DeviceKind
from tests.support.fabric import bridge_process, fabric_unavailable_reason, open_fabric

pytestmark = pytest.mark.fabric

API_PORT = 18797
TOOL_TIMEOUT_S = 10.0  # every Matter tool's execution.timeout_ms


def test_calls_to_a_device_that_stopped_answering_end_at_their_deadline() -> None:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with (
        open_fabric(f"atm-dl-{os.getpid()}") as fabric,
        bridge_process(fabric, API_PORT, "deadline") as bridge,
    ):
        thermostat = fabric.device(DeviceKind.THERMOSTAT, label="Hall Thermostat")
        assert "hall_thermostat_set_temperature" in bridge.commission(thermostat, "Hall Thermostat")
        pid = thermostat.pid

        def call(tool: str, params: dict[str, Any]) -> tuple[float, str | None]:
            started = time.monotonic()
            answer = bridge.request("POST", "/v1/invoke", {"tool": tool, "params": params})
            return time.monotonic() - started, (answer.get("error") or {}).get("code")

        try:
            took, code = call("matter:hall_thermostat_set_temperature", {"celsius": 21.0})
            assert code is None, (took, code)
            assert took < 5, (took, code)
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            with ThreadPoolExecutor(4) as pool:
                answers = [
                    pool.submit(call, "matter:hall_thermostat_set_temperature", {"celsius": c})
                    for c in (19.0, 19.5, 20.0)
                ]
                answers.append(pool.submit(call, "matter:hall_thermostat_state", {}))
                results = [a.result() for a in answers]
            print("frozen device, seconds and codes:", [(round(t, 3), c) for t, c in results])
            for took, code in results:
                assert code == "TIMEOUT", results
                # At the deadline: not before it, and not when the controller gives up.
                assert TOOL_TIMEOUT_S - 0.05 <= took <= TOOL_TIMEOUT_S + 0.75, results
            os.kill(pid, signal.SIGCONT)
            pid = None
            took, code = call("matter:hall_thermostat_set_temperature", {"celsius": 22.0})
            assert code is None, (took, code)  # the device answers again
            assert "Traceback" not in bridge.log.read_text(errors="replace")
        finally:
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
