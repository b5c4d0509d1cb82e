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
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, write_test_paa
from tests.support.fabric import CONTROLLER_VENV, fabric_unavailable_reason, open_fabric

pytestmark = pytest.mark.fabric

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
API_PORT = 18797
TOOL_TIMEOUT_S = 10.0  # every Matter tool's execution.timeout_ms


def _request(url: str, token: str, path: str, body: Any = None, timeout: float = 30) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        f"{url}{path}",
        data=data,
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return json.loads(err.read() or b"null")


def test_calls_to_a_device_that_stopped_answering_end_at_their_deadline() -> None:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with open_fabric(f"atm-dl-{os.getpid()}") as fabric:
        ns = fabric.namespace
        thermostat = fabric.device(DeviceKind.THERMOSTAT, label="Hall Thermostat")
        state = fabric.base_dir / "bridge-state"
        token = issue_token(
            NodeKey.load_or_create(state / KEY_FILE_NAME),
            agent_id="deadline",
            permissions=["*"],
            ttl_s=3600,
        )
        write_test_paa(state / "controller" / "paa")
        config = fabric.base_dir / "bridge.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "state_dir": str(state),
                    "api": {"host": "0.0.0.0", "port": API_PORT},
                    "matter": {
                        "enabled": True,
                        "netns": ns.name,
                        "controller_venv": str(CONTROLLER_VENV),
                        "controller_port": fabric.controller_settings("unused").port,
                    },
                }
            )
        )
        log = fabric.base_dir / "bridge.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [*ns.exec_prefix(), str(BRIDGE), "--config", str(config), "run"],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        url = f"http://{ns.ns_address}:{API_PORT}"
        pid = thermostat.pid
        try:
            deadline = time.monotonic() + 120
            while True:
                with contextlib.suppress(OSError, ValueError):
                    if _request(url, token, "/healthz", timeout=2) is not None:
                        break
                assert proc.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.3)
            assert thermostat.pairing is not None
            body = _request(
                url,
                token,
                "/v1/devices/commission",
                {"code": thermostat.pairing.manual, "name": "Hall Thermostat"},
                timeout=300,
            )
            assert "hall_thermostat_set_temperature" in body["tools"], body

            def call(tool: str, params: dict[str, Any]) -> tuple[float, str | None]:
                started = time.monotonic()
                answer = _request(url, token, "/v1/invoke", {"tool": tool, "params": params})
                return time.monotonic() - started, (answer.get("error") or {}).get("code")

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
            assert "Traceback" not in log.read_text(errors="replace")
        finally:
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
