"""A bridge told to stop while it is still starting stops at once and leaves nothing behind.

A real ``atmosphere-bridge run`` in a fabric namespace whose controller port is already
taken by a socket that never answers: the managed server cannot come up, so the start
would wait up to its 90 s readiness bound. SIGTERM then must end the bridge within
seconds, and the server process it launched (in its own session, so it would outlive
the bridge) must be gone too. Before the fix the bridge finished its 90 s wait first;
a supervisor that SIGKILLed it after a grace left the server running.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from bridge.demo.virtual_devices import write_test_paa
from tests.support.fabric import CONTROLLER_VENV, fabric_unavailable_reason, open_fabric

pytestmark = pytest.mark.fabric

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
_HOLD_PORT = """
import socket, sys, time
s = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.listen(1)
print("held", flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def test_sigterm_during_a_start_that_cannot_finish_ends_bridge_and_controller() -> None:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    with open_fabric(f"atm-sws-{os.getpid()}") as fabric:
        ns = fabric.namespace
        port = fabric.controller_settings("unused").port
        holder = subprocess.Popen(
            [*ns.exec_prefix(), sys.executable, "-c", _HOLD_PORT, "v4", str(port)],
            stdout=subprocess.PIPE,
            text=True,
        )
        bridge: subprocess.Popen[bytes] | None = None
        server_pids: set[int] = set()
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "held"
            state = fabric.base_dir / "bridge-state"
            write_test_paa(state / "controller" / "paa")
            config = fabric.base_dir / "bridge.yaml"
            config.write_text(
                yaml.safe_dump(
                    {
                        "state_dir": str(state),
                        "api": {"host": "127.0.0.1", "port": 0},
                        "matter": {
                            "enabled": True,
                            "netns": ns.name,
                            "controller_venv": str(CONTROLLER_VENV),
                            "controller_port": port,
                        },
                    }
                )
            )
            log = fabric.base_dir / "bridge.log"
            with log.open("ab") as out:
                bridge = subprocess.Popen(
                    [*ns.exec_prefix(), str(BRIDGE), "--config", str(config), "run"],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            deadline = time.monotonic() + 60
            while not server_pids:
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                assert bridge.poll() is None, log.read_text()[-3000:]
                server_pids = {
                    int(p) for p in re.findall(r"controller started, pid (\d+)", log.read_text())
                }
                time.sleep(0.2)
            time.sleep(1.0)
            assert "listening on" not in log.read_text()  # still starting
            bridge.send_signal(signal.SIGTERM)
            start = time.monotonic()
            code = bridge.wait(30)
            took = time.monotonic() - start
            assert code == 0, log.read_text()[-3000:]
            assert took < 15, f"the bridge took {took:.1f} s to stop while starting"
            server_pids |= {
                int(p) for p in re.findall(r"controller started, pid (\d+)", log.read_text())
            }
            assert [p for p in server_pids if _alive(p)] == [], log.read_text()[-3000:]
            assert "Traceback" not in log.read_text()
        finally:
            if bridge is not None and bridge.poll() is None:
                bridge.kill()
                bridge.wait(10)
            for pid in server_pids:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
            holder.kill()
            holder.wait(10)
