"""``atmosphere-bridge demo`` as a person runs it: its own process, matter.js devices, controller.

The demo is started as its own process on a free loopback port and read like a person
reads it: the banner's token, then the API. Every device of the demo must have been
commissioned under its name and room, and each of issue 29's kinds must answer through
its own tool (or, for the button, which has no tool of its own, through the generic
tool's read). Expected values are the device scripts' documented initial values and the
Matter specification's units (devices/kinds/*.mjs), never the bridge's code. Ctrl-C
(SIGTERM here) must stop everything and remove the namespace.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge import netns
from bridge.demo.virtual_devices import node_available

pytestmark = pytest.mark.fabric

BIN = Path(sys.executable).parent / "atmosphere-bridge"
READY_S = 420  # ten devices started and commissioned on a loaded 2-core machine


@dataclass
class Demo:
    proc: subprocess.Popen[str]
    base: str
    token: str
    lines: list[str]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    reason = netns.unsupported_reason() or node_available()
    if reason:
        pytest.skip(reason)
    port = _free_port()
    cwd = tmp_path_factory.mktemp("demo")
    state = cwd / "demo-state"  # the demo recreates it: never its working directory
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ATMOSPHERE_BRIDGE_CONFIG", "DEMO_PORT", "ATMOSPHERE_BRIDGE_TOKEN")
    }
    proc = subprocess.Popen(
        [str(BIN), "demo", "--port", str(port), "--state-dir", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=cwd,
    )
    lines: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("# 4."):
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    started = time.monotonic()
    try:
        assert ready.wait(READY_S), "\n".join(lines[-30:])
        text = "\n".join(lines)
        match = re.search(r"^export TOKEN='([^']+)'$", text, re.MULTILINE)
        assert match is not None, text
        print(f"demo ready in {time.monotonic() - started:.1f} s (wall, from the test)")
        yield Demo(proc=proc, base=f"http://127.0.0.1:{port}", token=match.group(1), lines=lines)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def call(demo: Demo, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        demo.base + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {demo.token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def invoke(demo: Demo, tool: str, **params: Any) -> Any:
    status, body = call(demo, "POST", "/v1/invoke", {"tool": tool, "params": params})
    assert status == 200, (tool, body)
    assert body.get("status") == "success", (tool, body)
    return body["result"]


# name -> room, exactly as bridge/cli/demo.py promises them in its banner and the README.
DEMO = {
    "Living Room Light": "Living Room",
    "Kitchen Dimmer": "Kitchen",
    "Bedroom Color Light": "Bedroom",
    "Hall Thermostat": "Hall",
    "Bedroom Fan": "Bedroom",
    "Robot Vacuum": "Living Room",
    "Desk Energy Plug": "Office",
    "Hall Button": "Hall",
    "Sink Leak Sensor": "Kitchen",
    "Garage Door": "Garage",
}


def devices_by_name(demo: Demo) -> dict[str, dict[str, Any]]:
    status, body = call(demo, "GET", "/v1/devices")
    assert status == 200, body
    return {d["name"]: d for d in body["devices"]}


def test_every_demo_device_is_commissioned_in_its_room(demo: Demo) -> None:
    found = devices_by_name(demo)
    assert {name: found[name]["room"] for name in DEMO if name in found} == DEMO
    for name in DEMO:
        assert any(
            line.startswith("[") and f"commissioned {name} (" in line for line in demo.lines
        ), name


def test_fan_mode_is_set_and_read_back(demo: Demo) -> None:
    invoke(demo, "bedroom_fan_set_fan_mode", mode="high")  # FanMode High = 3: 100 %
    state = invoke(demo, "bedroom_fan_state")
    assert (state["fan_mode"], state["fan_speed_percent"]) == ("high", 100)


def test_robot_vacuum_cleans_a_room_by_its_name(demo: Demo) -> None:
    invoke(demo, "robot_vacuum_clean_areas", areas=["Kitchen"])
    state = invoke(demo, "robot_vacuum_state")
    # RvcOperationalState Running (1) once a cleaning run mode is chosen.
    assert (state["selected_areas"], state["status"]) == (["Kitchen"], "running")
    invoke(demo, "robot_vacuum_return_to_base")


def test_plug_reports_its_energy_in_human_units(demo: Demo) -> None:
    plug = invoke(demo, "desk_energy_plug_state")
    # 120000 mW, 230000 mV, 1000 mA, 1000000 mWh imported (devices/kinds/energy.mjs).
    assert (plug["power_w"], plug["voltage_v"], plug["current_a"], plug["energy_kwh"]) == (
        120.0,
        230.0,
        1.0,
        1.0,
    )


def test_leak_sensor_and_garage_door_answer(demo: Demo) -> None:
    assert invoke(demo, "sink_leak_sensor_state") == {"leak": False}  # StateValue false
    # ClosureControl OverallCurrentState position 0 = FullyClosed (the script's value).
    assert invoke(demo, "closure_garage_door_state")["closure"] == "closed"


def test_the_button_has_no_tool_of_its_own_and_is_read_through_the_generic_tool(
    demo: Demo,
) -> None:
    button = devices_by_name(demo)["Hall Button"]
    assert button["tools"] == []
    assert 59 in button["clusters"]  # Switch
    # Switch NumberOfPositions (attribute 0) is 2 and MultiPressMax (2) is 3 in the script.
    by_name = invoke(
        demo,
        "control_matter_device",
        device_id=button["id"],
        access="read",
        cluster="Switch",
        attribute="NumberOfPositions",
    )
    assert (by_name["attribute_id"], by_name["value"]) == (0, 2)
    by_id = invoke(
        demo,
        "control_matter_device",
        device_id=button["id"],
        access="read",
        cluster=59,
        attribute=2,
    )
    assert (by_id["attribute"], by_id["value"]) == ("MultiPressMax", 3)


def test_sigterm_stops_the_demo_and_removes_its_namespace(demo: Demo) -> None:
    namespace = f"atm-demo-{demo.proc.pid}"
    listed = subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, check=True
    ).stdout
    assert namespace in listed
    demo.proc.send_signal(signal.SIGTERM)
    assert demo.proc.wait(timeout=120) == 0
    time.sleep(0.5)  # the pump thread reads the last lines
    assert demo.lines[-1] == "demo stopped; namespace removed"
    listed = subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, check=True
    ).stdout
    assert namespace not in listed
