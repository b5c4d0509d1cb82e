"""Faults under load: the bridge, its controller, devices and a mesh peer killed mid-traffic.

One command brings up, in a private network namespace of its own: four matter.js
devices (on/off, dimmable, colour, thermostat), the bridge as a real
``atmosphere-bridge run`` process with its managed python-matter-server, and a second
bridge (``--no-matter``) as its mesh peer (static peers, no mDNS) that reaches the
devices' tools through the first. The bridge's state directory lives on a tmpfs of
bounded size. For ``--minutes`` it runs a mixed load and injects faults on a schedule:

load   HTTP device tools (living room light, also through the peer), room tools and
       spoken commands (bedroom), MCP ``tools/call`` with the SDK client (kitchen dimmer),
       thermostat set points, ``core:store_data`` with unique values, a client-tool
       round trip (``ui:ask_user`` answered over ``/v1/events`` + ``/v1/tool-results``),
       and three open ``/v1/events`` sockets watching device-side changes;
faults the controller SIGKILLed (the bridge's supervisor restarts it); a device stopped
       and restarted; the thermostat's own button pressed; the peer SIGKILLed and
       restarted; the bridge SIGKILLed and restarted; the state disk filled near full
       and freed.

It prints a table and, last, one JSON line: ``minutes``, ``calls``, ``lost``
(acknowledged but its effect or its audit row missing), ``hung`` (no answer within the
tool's timeout + 1 s), ``wrong`` (a success the device's state, read back after every
success, disagrees with), ``unread`` (a success after which the device could not be read
back within 90 s: never counted as agreeing), ``drift`` (tools missing or extra after
recovery, at the bridge and the peer), ``dup_events`` / ``missed_events``, per-fault
recovery seconds against ``BOUNDS_S`` (``over_bound``), ``tracebacks`` in either
bridge's log, ``silent_kinds`` (a kind of call that never succeeded) and RSS / fd per
hour. It exits 1 unless lost, hung, wrong, unread, drift, over_bound, silent_kinds and
tracebacks are all 0.

    sudo .venv/bin/python bench/soak.py --minutes 30 [--rate 6]

``--short`` runs every fault once with short gaps (the ``make test`` soak). Needs root,
iproute2, Node.js and the controller venv (``make install``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime
import itertools
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bridge import netns
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, write_test_paa
from bridge.loopwatch import LoopWatch
from bridge.mesh.node_id import node_id_for
from tests.support.fabric import CONTROLLER_VENV, fabric_unavailable_reason

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
MAIN_PORT, PEER_PORT, CONTROLLER_PORT = 18765, 18766, 5590
TMPFS_MB = 48
DISK_RESERVE_MB = 4
DEVICES = (
    (DeviceKind.ONOFF, "Living Room Light", "Living Room", 0x50A, 20202301),
    (DeviceKind.DIMMABLE, "Kitchen Dimmer", "Kitchen", 0x60A, 20202302),
    (DeviceKind.COLOR, "Bedroom Color Light", "Bedroom", 0x70A, 20202303),
    (DeviceKind.THERMOSTAT, "Hall Thermostat", "Hall", 0x80A, 20202304),
)
SOCKETS = 3
TRACE_EVERY_S = 60.0
# The bound within which each fault must be recovered (its first successful call after
# it, seconds; docs/faults.md). A device back on the network is usable within 10 s
# (issue 34); the others are a restart of a process plus what it sets up.
BOUNDS_S = {
    "button press": 5.0,  # the device's report reaches every event socket
    "controller SIGKILL": 30.0,  # from the kill: supervisor restart + node setup
    "device stop+restart": 10.0,  # from the device being back
    "peer SIGKILL+restart": 30.0,  # from the restart: peer up + gossip
    "disk full+freed": 10.0,  # from the space being freed
    "bridge SIGKILL+restart": 45.0,  # from the restart: bridge + its controller + nodes
}
# How long a device may stay unreadable after a successful call before that counts.
UNREAD_LIMIT_S = 90.0
RECONNECT = "(connected)"
ASK_USER = {
    "tool": {
        "name": "ask_user",
        "namespace": "ui",
        "description": "Ask the person a question.",
        "type": "client",
        "intent": "render",
        "parameters": {
            "type": "object",
            "properties": {"question": {"type": "string"}},
            "required": ["question"],
        },
        "returns": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
        "execution": {"timeout_ms": 5000, "requires_response": True},
    }
}


def log(t0: float, text: str) -> None:
    print(f"[{time.monotonic() - t0:7.1f}s] {text}", file=sys.stderr, flush=True)


# -- processes ---------------------------------------------------------------------------


@dataclasses.dataclass
class BridgeProc:
    """One ``atmosphere-bridge run`` process inside the namespace."""

    name: str
    config: Path
    state_dir: Path
    url: str
    log_path: Path
    matter: bool
    popen: subprocess.Popen[bytes] | None = None
    # --trace-memory: run under bench/traced_bridge.py, snapshots into this directory.
    trace_dir: Path | None = None

    def start(self, ns: netns.NetworkNamespace) -> None:
        bridge = [str(BRIDGE)]
        if self.trace_dir is not None:
            traced = Path(__file__).resolve().parent / "traced_bridge.py"
            bridge = [sys.executable, str(traced), str(self.trace_dir), str(TRACE_EVERY_S), "--"]
        argv = [*ns.exec_prefix(), *bridge, "--config", str(self.config), "run"]
        if not self.matter:
            argv.append("--no-matter")
        with self.log_path.open("ab") as out:
            self.popen = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int | None:
        return None if self.popen is None else self.popen.pid

    def kill(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait(10)
        self.popen = None

    def stop(self) -> None:
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(30)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(10)
        self.popen = None


def proc_stats(pid: int | None) -> tuple[int, int] | None:
    """Return (RSS kB, open fds) of ``pid`` or None when it is gone."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as fh:
            rss = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration, ValueError):
        return None
    return rss, fds


def end_pid(pid: int | None) -> None:
    """SIGTERM then SIGKILL a process this run started (directly or through the bridge)."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def tmpfs(path: Path, size_mb: int) -> Iterator[Path]:
    """Mount a tmpfs of ``size_mb`` at ``path``; unmount it on exit, whatever happened."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "atm-soak", str(path)],
        check=True,
    )
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


# -- results -----------------------------------------------------------------------------


@dataclasses.dataclass
class Call:
    kind: str
    tool: str
    sent: float
    took: float = 0.0
    answer: str = ""  # HTTP status, "refused", "reset", "hung", "error:<code>"
    ok: bool = False
    call_id: str | None = None
    effect: Any = None
    wall: float = dataclasses.field(default_factory=time.time)  # when sent, for logs and rows


@dataclasses.dataclass
class Fault:
    kind: str
    at: float
    recovery_s: float | None = None
    drift: list[str] = dataclasses.field(default_factory=list)
    note: str = ""


@dataclasses.dataclass
class Press:
    at: float
    value: int
    seen: dict[int, int] = dataclasses.field(default_factory=dict)


class Soak:
    """The whole run: processes, load, faults and the books."""

    def __init__(
        self,
        base: Path,
        state: Path,
        minutes: float,
        rate: float,
        short: bool,
        *,
        faults: bool = True,
        trace_dir: Path | None = None,
    ) -> None:
        self.base, self.state, self.minutes = base, state, minutes
        self.rate, self.short = rate, short
        self.with_faults, self.trace_dir = faults, trace_dir
        self.t0 = time.monotonic()
        # The soak's own event loop: a late wake-up here would make a call look hung.
        self.loopwatch = LoopWatch()
        self.ns: netns.NetworkNamespace | None = None
        self.devices: dict[DeviceKind, VirtualDevice] = {}
        self.calls: list[Call] = []
        self.faults: list[Fault] = []
        self.presses: list[Press] = []
        self.wrong: list[str] = []
        self.unread: list[str] = []
        self.stats: dict[str, list[tuple[float, int, int, int]]] = defaultdict(list)
        self.events: list[list[tuple[float, str, Any]]] = [[] for _ in range(SOCKETS)]
        self.sockets_up = [False] * SOCKETS
        self.tool_names: dict[str, str] = {}
        self.timeouts: dict[str, float] = {}
        self.baseline: dict[str, set[str]] = {}
        self.stopping = asyncio.Event()
        self.fault_active: str | None = None
        self.controller_pids: set[int] = set()
        self.expect: dict[str, Any] = {}

    # -- setup -----------------------------------------------------------------------------

    def write_configs(self) -> None:
        ns = self.ns
        assert ns is not None
        main_key = NodeKey.load_or_create(self.state / KEY_FILE_NAME)
        peer_dir = self.base / "peer-state"
        peer_key = NodeKey.load_or_create(peer_dir / KEY_FILE_NAME)
        self.token = issue_token(main_key, agent_id="soak", permissions=["*"], ttl_s=86_400)
        write_test_paa(self.state / "controller" / "paa")
        (self.base / "ask_user.yaml").write_text(yaml.safe_dump(ASK_USER))
        (self.base / "tools.yaml").write_text(
            yaml.safe_dump({"tools": [{"source": f"definition:{self.base / 'ask_user.yaml'}"}]})
        )
        main_url = f"http://{ns.ns_address}:{MAIN_PORT}"
        peer_url = f"http://{ns.ns_address}:{PEER_PORT}"
        mesh = {
            "enabled": True,
            "discovery": False,
            "trust": "allowlist",
            "gossip_interval_s": 0.5,
            "announce_interval_s": 2.0,
            "announcement_ttl_s": 10.0,
        }
        main_cfg = {
            "state_dir": str(self.state),
            "tools_manifest": str(self.base / "tools.yaml"),
            "api": {"host": "0.0.0.0", "port": MAIN_PORT},
            # The default reserve (100 MB) is larger than the whole tmpfs: every stored
            # value would be refused. The disk-full fault fills the disk past any reserve.
            "audit": {"disk_reserve_mb": DISK_RESERVE_MB},
            "matter": {
                "enabled": True,
                "netns": ns.name,
                "controller_venv": str(CONTROLLER_VENV),
                "controller_port": CONTROLLER_PORT,
            },
            "mesh": {
                **mesh,
                "node_name": "main",
                "peers": [peer_url],
                "trusted_nodes": [node_id_for(peer_key.public_key_b64)],
            },
        }
        peer_cfg = {
            "state_dir": str(peer_dir),
            "api": {"host": "0.0.0.0", "port": PEER_PORT},
            "auth": {"trusted_issuers": [main_key.public_key_b64]},
            "audit": {"disk_reserve_mb": DISK_RESERVE_MB},
            "matter": {"enabled": False},
            "mesh": {
                **mesh,
                "node_name": "peer",
                "peers": [main_url],
                "trusted_nodes": [node_id_for(main_key.public_key_b64)],
            },
        }
        (self.base / "main.yaml").write_text(yaml.safe_dump(main_cfg))
        (self.base / "peer.yaml").write_text(yaml.safe_dump(peer_cfg))
        self.main = BridgeProc(
            "main",
            self.base / "main.yaml",
            self.state,
            main_url,
            self.base / "main.log",
            matter=True,
            trace_dir=self.trace_dir,
        )
        self.peer = BridgeProc(
            "peer",
            self.base / "peer.yaml",
            peer_dir,
            peer_url,
            self.base / "peer.log",
            matter=False,
        )

    async def setup(self) -> None:
        for i, (kind, name, _room, disc, code) in enumerate(DEVICES):
            self.devices[kind] = VirtualDevice(
                kind=kind,
                state_dir=self.base / "devices" / kind.value,
                port=5550 + i,
                passcode=code,
                discriminator=disc,
                label=name,
                netns=self.ns,
            )
        await asyncio.gather(*(asyncio.to_thread(d.start) for d in self.devices.values()))
        log(self.t0, "devices up")
        self.main.start(self.ns)
        await self.wait_health(self.main, 120)
        log(self.t0, "bridge up")
        for kind, name, room, _d, _c in DEVICES:
            dev = self.devices[kind]
            assert dev.pairing is not None
            status, body = await self.http_once(
                "POST",
                f"{self.main.url}/v1/devices/commission",
                {"code": dev.pairing.manual, "name": name, "room": room},
                timeout=300,
            )
            if status != 201:
                raise SystemExit(f"commissioning {name} failed: {status} {body}")
            log(self.t0, f"commissioned {name}: {len(body['tools'])} tools")
        self.peer.start(self.ns)
        await self.wait_health(self.peer, 60)
        names = await self.tool_list(self.main)
        pick = {
            "light_on": "living_room_light_on",
            "light_off": "living_room_light_off",
            "light_state": "living_room_light_state",
            "dim": "kitchen_dimmer_brightness",
            "dim_state": "kitchen_dimmer_state",
            "bed_state": "bedroom_color_light_state",
            "bed_on": "room_bedroom_lights_on",
            "bed_off": "room_bedroom_lights_off",
            "heat": "hall_thermostat_set_temperature",
            "heat_state": "hall_thermostat_state",
        }
        for key, wanted in pick.items():
            found = sorted(
                n
                for n in names
                if n == f"matter:{wanted}" or (n.startswith("matter:") and n.endswith(f"_{wanted}"))
            )
            if not found:
                raise SystemExit(f"tool {wanted} missing; have {sorted(names)}")
            self.tool_names[key] = found[0]
        self.baseline["main"] = names
        await self.wait_until(lambda: self.peer_has_tools(), 60, "the peer to learn the tools")
        self.baseline["peer"] = await self.tool_list(self.peer)
        log(
            self.t0,
            f"ready: {len(names)} tools at the bridge, {len(self.baseline['peer'])} at the peer",
        )

    async def peer_has_tools(self) -> bool:
        names = await self.tool_list(self.peer)
        return self.tool_names["light_on"] in names

    async def wait_until(
        self, probe: Callable[[], Awaitable[bool]], timeout: float, what: str
    ) -> float:
        start = time.monotonic()
        while True:
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                if await probe():
                    return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")
            await asyncio.sleep(0.2)

    async def wait_health(self, proc: BridgeProc, timeout: float) -> float:
        async def up() -> bool:
            status, _ = await self.http_once("GET", f"{proc.url}/healthz", timeout=2)
            return status == 200

        return await self.wait_until(up, timeout, f"{proc.name} /healthz ({proc.log_path})")

    async def http_once(
        self, method: str, url: str, body: Any = None, timeout: float = 10
    ) -> tuple[int, Any]:
        async with self.session.request(
            method, url, json=body, timeout=aiohttp.ClientTimeout(total=timeout)
        ) as resp:
            text = await resp.text()
            return resp.status, json.loads(text) if text else None

    async def tool_list(self, proc: BridgeProc) -> set[str]:
        status, body = await self.http_once("GET", f"{proc.url}/v1/tools")
        if status != 200:
            raise aiohttp.ClientError(f"tool list: {status}")
        for entry in body["tools"]:
            tool = entry["tool"]
            self.timeouts[tool["name"]] = tool.get("execution", {}).get("timeout_ms", 30000) / 1e3
        return {
            f"{e['tool']['namespace']}:{e['tool']['name']}"
            if e["tool"].get("namespace")
            else e["tool"]["name"]
            for e in body["tools"]
        }

    # -- calls -----------------------------------------------------------------------------

    async def invoke(
        self, kind: str, proc: BridgeProc, tool: str, params: dict[str, Any], effect: Any = None
    ) -> Call:
        """POST /v1/invoke with the tool's timeout + 1 s; book the call."""
        call = Call(kind=kind, tool=tool, sent=time.monotonic(), effect=effect)
        limit = self.timeouts.get(tool.split(":")[-1], 30.0) + 1.0
        try:
            status, body = await self.http_once(
                "POST", f"{proc.url}/v1/invoke", {"tool": tool, "params": params}, timeout=limit
            )
            call.answer = str(status)
            # A room call answers success with ``ok: false`` when a member failed.
            call.ok = (
                status == 200 and body.get("status") == "success" and _done(body.get("result"))
            )
            if isinstance(body, dict):
                call.call_id = body.get("call_id") or None
                call.effect = (effect, body.get("result")) if call.ok else None
                if not call.ok and isinstance(body.get("error"), dict):
                    call.answer = f"{status} {body['error'].get('code')}"
                elif not call.ok and status == 200:
                    call.answer = "200 partial"
        except TimeoutError:
            call.answer = "hung"
        except aiohttp.ClientConnectorError:
            call.answer = "refused"
        except (aiohttp.ClientError, OSError, ValueError):
            call.answer = "reset"
        call.took = time.monotonic() - call.sent
        self.calls.append(call)
        return call

    async def pace(self, share: float) -> None:
        await asyncio.sleep(random.uniform(0.5, 1.5) * share / self.rate)

    async def read_state(self, key: str) -> Any:
        """Return a device's state through its state tool, or None when it does not answer."""
        call = await self.invoke("read", self.main, self.tool_names[key], {})
        return call.effect[1] if call.ok else None

    async def check(self, name: str, key: str, ok: Callable[[Any], bool]) -> None:
        """Read a device back after a success; it must agree within 5 s of being readable.

        A device that cannot be read is never taken as agreeing: it is read again until
        it answers (a fault may be under way) and counted ``unread`` if it never does
        within ``UNREAD_LIMIT_S``.
        """
        start = time.monotonic()
        agree_by: float | None = None
        state = None
        while True:
            state = await self.read_state(key)
            now = time.monotonic()
            if state is not None:
                if ok(state):
                    return
                agree_by = agree_by or now + 5
                if now > agree_by:
                    self.wrong.append(
                        f"{name} at {start - self.t0:.0f} s ({self.fault_active}): "
                        f"the read-back disagrees after 5 s: {state}"
                    )
                    return
            elif now - start > UNREAD_LIMIT_S:
                self.unread.append(f"{name}: not readable for {now - start:.0f} s after a success")
                return
            await asyncio.sleep(0.5)

    async def light_worker(self) -> None:
        on = False
        for n in itertools.count():
            if self.stopping.is_set():
                return
            on = not on
            via = self.peer if n % 3 == 2 else self.main
            tool = self.tool_names["light_on" if on else "light_off"]
            call = await self.invoke(
                "http-device" if via is self.main else "peer-device", via, tool, {}, effect=on
            )
            if call.ok:
                self.expect["light"] = on
                await self.check("light", "light_state", lambda s, v=on: s.get("on") == v)
            else:
                self.expect.pop("light", None)
            await self.pace(6)

    async def bedroom_worker(self) -> None:
        on = False
        for n in itertools.count():
            if self.stopping.is_set():
                return
            on = not on
            if n % 2:
                call = await self.intent(f"turn {'on' if on else 'off'} the bedroom lights", on)
            else:
                call = await self.invoke(
                    "http-room", self.main, self.tool_names["bed_on" if on else "bed_off"], {}, on
                )
            if call.ok:
                await self.check("bedroom", "bed_state", lambda s, v=on: s.get("on") == v)
            await self.pace(6)

    async def intent(self, text: str, effect: Any) -> Call:
        call = Call(kind="spoken", tool="intent", sent=time.monotonic(), effect=effect)
        try:
            status, body = await self.http_once(
                "POST",
                f"{self.main.url}/v1/intents/handle",
                {"text": text, "language": "en"},
                timeout=11,
            )
            calls = body.get("calls", []) if isinstance(body, dict) else []
            call.ok = (
                status == 200
                and bool(body.get("handled"))
                and bool(calls)
                and all(c.get("ok") and _done(c.get("result")) for c in calls)
            )
            call.answer = str(status) if call.ok or status != 200 else "200 not-done"
            if calls:
                call.tool = str(calls[0].get("tool", "intent"))
                if not call.ok and isinstance(calls[0].get("error"), dict):
                    call.answer = f"200 {calls[0]['error'].get('code')}"
        except TimeoutError:
            call.answer = "hung"
        except aiohttp.ClientConnectorError:
            call.answer = "refused"
        except (aiohttp.ClientError, OSError, ValueError):
            call.answer = "reset"
        call.took = time.monotonic() - call.sent
        self.calls.append(call)
        return call

    async def thermostat_worker(self) -> None:
        for n in itertools.count():
            if self.stopping.is_set():
                return
            celsius = 17.0 + (n % 13) * 0.5
            call = await self.invoke(
                "http-device", self.main, self.tool_names["heat"], {"celsius": celsius}, celsius
            )
            if call.ok:
                await self.check("thermostat", "heat_state", lambda s, v=celsius: _setpoint(s) == v)
            await self.pace(6)

    async def store_worker(self) -> None:
        for n in itertools.count():
            if self.stopping.is_set():
                return
            key = f"soak/{n}"
            value = {"n": n, "nonce": uuid.uuid4().hex}
            await self.invoke(
                "store", self.main, "core:store_data", {"key": key, "value": value}, (key, value)
            )
            await self.pace(6)

    async def mcp_worker(self) -> None:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        n = 0
        tool = self.tool_names["dim"]
        limit = self.timeouts.get(tool.split(":")[-1], 10.0) + 1.0
        while not self.stopping.is_set():
            try:
                async with (
                    create_mcp_http_client(
                        headers={"Authorization": f"Bearer {self.token}"}
                    ) as client_http,
                    Client(
                        streamable_http_client(f"{self.main.url}/mcp", http_client=client_http),
                        cache=None,
                    ) as client,
                ):
                    while not self.stopping.is_set():
                        n += 1
                        percent = 1 + (n * 7) % 100
                        call = Call(kind="mcp", tool=tool, sent=time.monotonic(), effect=percent)
                        self.calls.append(call)
                        try:
                            result = await asyncio.wait_for(
                                client.call_tool(tool.replace(":", "__"), {"percent": percent}),
                                limit,
                            )
                        except TimeoutError:
                            call.answer, call.took = "hung", time.monotonic() - call.sent
                            raise
                        call.took = time.monotonic() - call.sent
                        call.ok = not result.is_error
                        call.answer = "ok" if call.ok else "tool-error " + _code(result)
                        if call.ok:
                            await self.check(
                                "dimmer",
                                "dim_state",
                                lambda s, v=percent: abs(_percent(s) - v) <= 1,
                            )
                        await self.pace(6)
            except Exception as err:
                if self.calls and self.calls[-1].kind == "mcp" and not self.calls[-1].answer:
                    self.calls[-1].answer = "reset " + _leaves(err)
                    self.calls[-1].took = time.monotonic() - self.calls[-1].sent
                await asyncio.sleep(1.0)

    async def client_tool_worker(self) -> None:
        """Call ui:ask_user and answer it from this client's own event socket."""
        session_id = "soak-client"
        while not self.stopping.is_set():
            try:
                async with self.session.ws_connect(
                    f"{self.main.url}/v1/events?types=tool_use&session={session_id}",
                    timeout=aiohttp.ClientWSTimeout(ws_close=2),
                ) as ws:

                    async def answer() -> None:
                        async for msg in ws:
                            if msg.type is not aiohttp.WSMsgType.TEXT:
                                break
                            event = json.loads(msg.data)
                            if event.get("type") != "tool_use":
                                continue
                            data = event["data"]
                            reply = data["params"]["question"][::-1]
                            await self.http_once(
                                "POST",
                                f"{self.main.url}/v1/tool-results/{data['toolCallId']}",
                                {"result": {"answer": reply}},
                                timeout=5,
                            )

                    responder = asyncio.create_task(answer())
                    await asyncio.sleep(0.3)
                    try:
                        while not self.stopping.is_set() and not responder.done():
                            question = uuid.uuid4().hex
                            call = Call(
                                kind="client-tool",
                                tool="ui:ask_user",
                                sent=time.monotonic(),
                                effect=question[::-1],
                            )
                            self.calls.append(call)
                            try:
                                status, body = await self.http_once(
                                    "POST",
                                    f"{self.main.url}/v1/invoke",
                                    {
                                        "tool": "ui:ask_user",
                                        "params": {"question": question},
                                        "context": {"session_id": session_id},
                                    },
                                    timeout=6,
                                )
                                call.ok = status == 200 and body.get("result") == {
                                    "answer": question[::-1]
                                }
                                call.answer = str(status) if call.ok or status != 200 else "bad"
                                if status != 200 and isinstance(body, dict):
                                    call.answer = f"{status} {body.get('error', {}).get('code')}"
                                if isinstance(body, dict):
                                    call.call_id = body.get("call_id")
                                if status == 200 and not call.ok:
                                    self.wrong.append(f"client tool answered {body}")
                            except TimeoutError:
                                call.answer = "hung"
                            except aiohttp.ClientConnectorError:
                                call.answer = "refused"
                            except (aiohttp.ClientError, OSError, ValueError):
                                call.answer = "reset"
                            call.took = time.monotonic() - call.sent
                            await self.pace(6)
                    finally:
                        responder.cancel()
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await responder
            except (aiohttp.ClientError, OSError, TimeoutError):
                pass
            await asyncio.sleep(0.5)

    async def event_socket(self, index: int) -> None:
        while not self.stopping.is_set():
            try:
                async with self.session.ws_connect(
                    f"{self.main.url}/v1/events?types=device.",
                    timeout=aiohttp.ClientWSTimeout(ws_close=2),
                ) as ws:
                    self.sockets_up[index] = True
                    self.events[index].append((time.monotonic(), RECONNECT, None))
                    async for msg in ws:
                        if msg.type is not aiohttp.WSMsgType.TEXT:
                            break
                        event = json.loads(msg.data)
                        data = event.get("data", {})
                        if event.get("type") == "device.state":
                            self.events[index].append(
                                (
                                    time.monotonic(),
                                    f"{data.get('device_id')}:{data.get('path')}",
                                    data.get("value"),
                                )
                            )
                        elif event.get("type") == "device.availability":
                            self.events[index].append(
                                (
                                    time.monotonic(),
                                    f"available:{data.get('device_id')}",
                                    data.get("available"),
                                )
                            )
            except (aiohttp.ClientError, OSError, TimeoutError):
                pass
            self.sockets_up[index] = False
            await asyncio.sleep(0.3)

    async def sampler(self) -> None:
        while not self.stopping.is_set():
            await self.sample()
            await asyncio.sleep(10)

    async def sample(self) -> None:
        now = time.monotonic() - self.t0
        for name, pid in (
            ("bridge", self.main.pid),
            ("peer", self.peer.pid),
            ("controller", await self.controller_pid()),
        ):
            got = proc_stats(pid)
            if got is not None and pid is not None:
                self.stats[name].append((now, pid, *got))

    async def controller_pid(self) -> int | None:
        try:
            status, body = await self.http_once("GET", f"{self.main.url}/v1/devices", timeout=3)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
            return None
        pid = body.get("controller", {}).get("pid") if status == 200 else None
        if isinstance(pid, int):
            self.controller_pids.add(pid)
            return pid
        return None

    # -- faults ----------------------------------------------------------------------------

    async def recover(
        self, fault: Fault, probe: Callable[[], Awaitable[bool]], since: float
    ) -> None:
        """Wait for the first successful call after ``since``; then check for drift."""
        try:
            await self.wait_until(probe, 90, f"recovery from {fault.kind}")
            fault.recovery_s = round(time.monotonic() - since, 2)
        except SystemExit as err:
            fault.note = str(err)
        fault.drift = await self.drift()

    async def drift(self) -> list[str]:
        """Return tools missing or extra against the baseline once things settle (<=30 s)."""
        deadline = time.monotonic() + 30
        diff: list[str] = []
        while time.monotonic() < deadline:
            diff = []
            for name, proc in (("main", self.main), ("peer", self.peer)):
                try:
                    now = await self.tool_list(proc)
                except (aiohttp.ClientError, OSError, TimeoutError, ValueError):
                    diff.append(f"{name}: no list")
                    continue
                diff += [f"{name} -{t}" for t in sorted(self.baseline[name] - now)]
                diff += [f"{name} +{t}" for t in sorted(now - self.baseline[name])]
            if not diff:
                return []
            await asyncio.sleep(1)
        return diff

    def probe_tool(self, proc: BridgeProc, key: str) -> Callable[[], Awaitable[bool]]:
        async def probe() -> bool:
            call = await self.invoke("probe", proc, self.tool_names[key], {})
            return call.ok

        return probe

    async def fault_controller(self) -> Fault:
        pid = await self.controller_pid()
        fault = Fault("controller SIGKILL", time.monotonic())
        if pid is None:
            fault.note = "no controller pid"
            return fault
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        await self.recover(fault, self.probe_tool(self.main, "light_state"), fault.at)
        return fault

    async def fault_device(self) -> Fault:
        dev = self.devices[DeviceKind.DIMMABLE]
        fault = Fault("device stop+restart", time.monotonic())
        await asyncio.to_thread(dev.stop)
        await asyncio.sleep(3)
        restart = time.monotonic()
        await asyncio.to_thread(dev.start)
        # Its bound runs from the device being back on the network (announced, READY),
        # not from the start of its boot (seconds of its own on a loaded machine).
        back = time.monotonic()
        await self.recover(fault, self.probe_tool(self.main, "dim_state"), back)
        fault.note = f"down {restart - fault.at:.1f} s, boot {back - restart:.1f} s"
        return fault

    async def fault_press(self) -> Fault:
        dev = self.devices[DeviceKind.THERMOSTAT]
        fault = Fault("button press", time.monotonic())
        with contextlib.suppress(SystemExit):
            await self.wait_until(self.all_sockets_up, 30, "event sockets")
        mark = dev.mark()
        at = time.monotonic()
        await asyncio.to_thread(dev.press)
        value = await asyncio.to_thread(_local_change, dev, mark)
        if value is None:
            fault.note = "the device reported no change"
            return fault
        press = Press(at=at, value=value)
        self.presses.append(press)

        async def seen() -> bool:
            return all(self.press_count(i, press) >= 1 for i in range(SOCKETS))

        await self.recover(fault, seen, at)
        await asyncio.sleep(2)  # late duplicates would arrive now
        return fault

    def last_fault(self, at: float) -> str:
        """Name the fault before ``at`` (monotonic) and how long before, to place a hang."""
        before = [f for f in self.faults if f.at <= at]
        if not before:
            return "before any fault"
        f = before[-1]
        return f"{at - f.at:.1f} s after {f.kind}, recovered in {f.recovery_s} s"

    async def all_sockets_up(self) -> bool:
        return all(self.sockets_up)

    def press_count(self, index: int, press: Press) -> int:
        return sum(
            1
            for (t, path, value) in self.events[index]
            if t >= press.at and path.endswith("/513/0") and value == press.value
        )

    async def fault_peer(self) -> Fault:
        assert self.ns is not None
        fault = Fault("peer SIGKILL+restart", time.monotonic())
        self.peer.kill()
        await asyncio.sleep(2)
        restart = time.monotonic()
        self.peer.start(self.ns)
        await self.recover(fault, self.probe_tool(self.peer, "light_state"), restart)
        return fault

    async def fault_bridge(self) -> Fault:
        assert self.ns is not None
        fault = Fault("bridge SIGKILL+restart", time.monotonic())
        self.main.kill()
        await asyncio.sleep(1)
        restart = time.monotonic()
        self.main.start(self.ns)
        await self.recover(fault, self.probe_tool(self.main, "light_state"), restart)
        return fault

    async def fault_disk(self) -> Fault:
        fault = Fault("disk full+freed", time.monotonic())
        filler = self.state / "filler.bin"
        free = os.statvfs(self.state)
        room = free.f_bavail * free.f_frsize
        await asyncio.to_thread(_fill, filler, room)
        left = os.statvfs(self.state)
        fault.note = f"{left.f_bavail * left.f_frsize // 1024} KiB left"
        stored = [c for c in self.calls if c.kind == "store"]
        before = len(stored)
        # Small rows may still fit in pages SQLite already holds (a long run's WAL is
        # large); a few large ones cannot.
        big = [
            await self.invoke(
                "probe",
                self.main,
                "core:store_data",
                {"key": f"soak/big/{i}", "value": "x" * 900_000},
            )
            for i in range(3)
        ]
        fault.note += "; 900 kB rows: " + ",".join(c.answer for c in big)
        await asyncio.sleep(4 if self.short else 6)
        during = [c for c in self.calls if c.kind == "store"][before:]
        fault.note += "; store during: " + ",".join(
            f"{a}x{n}" for a, n in Counter(c.answer for c in during).items()
        )
        freed = time.monotonic()
        filler.unlink()

        async def probe() -> bool:
            call = await self.invoke(
                "probe",
                self.main,
                "core:store_data",
                {"key": f"probe/{uuid.uuid4().hex}", "value": 1},
                None,
            )
            return call.ok

        await self.recover(fault, probe, freed)
        return fault

    async def fault_loop(self, end: float) -> None:
        """Inject faults until ``end``; ``--short``: every fault once, independent ones paired."""
        press, ctl, dev = self.fault_press, self.fault_controller, self.fault_device
        peer, disk, bridge = self.fault_peer, self.fault_disk, self.fault_bridge
        if self.short:
            schedule = [[press], [ctl, disk], [dev, peer], [press], [bridge], [press]]
            gap = 1.0
        else:
            schedule = [[press], [ctl], [dev], [press], [peer], [disk], [bridge], [press]]
            gap = max(10.0, (end - time.monotonic()) / (len(schedule) * 2))
        for n in itertools.count():
            if self.short and n >= len(schedule):
                return
            await asyncio.sleep(gap)
            if not self.short and time.monotonic() > end:
                return
            group = schedule[n % len(schedule)]
            names = "+".join(run.__name__ for run in group)
            self.fault_active = names
            log(self.t0, f"fault: {names}")
            faults = await asyncio.gather(*(run() for run in group))
            self.fault_active = None
            for fault in faults:
                self.faults.append(fault)
                log(
                    self.t0,
                    f"  {fault.kind}: recovered in {fault.recovery_s} s; "
                    f"drift {fault.drift} {fault.note}",
                )
            await self.sample()

    # -- run -------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        self.ns = await asyncio.to_thread(netns.create_namespace, f"atm-soak-{os.getpid()}")
        self.write_configs()
        async with aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {self.token}"}
        ) as self.session:
            self.loopwatch.start()
            await self.setup()
            await self.sample()
            start = time.monotonic()
            end = start + self.minutes * 60
            workers = [
                asyncio.create_task(w())
                for w in (
                    self.light_worker,
                    self.bedroom_worker,
                    self.thermostat_worker,
                    self.store_worker,
                    self.mcp_worker,
                    self.client_tool_worker,
                    self.sampler,
                    *(lambda i=i: self.event_socket(i) for i in range(SOCKETS)),
                )
            ]
            if self.with_faults:
                await self.fault_loop(end)
            while time.monotonic() < end and not self.short:
                await asyncio.sleep(1)
            self.stopping.set()
            await asyncio.sleep(0.1)
            _, pending = await asyncio.wait(workers, timeout=15)
            for task in pending:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            for c in self.calls:
                if not c.answer:
                    c.answer = "cancelled"
            await self.sample()
            elapsed = time.monotonic() - start
            final_drift = await self.drift()
            # A clean stop flushes what is buffered: rows lost are those a SIGKILL dropped.
            self.main.stop()
            self.peer.stop()
            return self.report(elapsed, final_drift)

    def audit(self, state_dir: Path) -> tuple[set[str], Counter[str]]:
        """Return the audited call ids and the completed rows per tool name."""
        with contextlib.closing(sqlite3.connect(state_dir / "bridge.db")) as db:
            rows = db.execute("SELECT call_id, tool, outcome FROM audit_log").fetchall()
        done = Counter(
            str(tool).split("@")[0] for _, tool, outcome in rows if outcome == "completed"
        )
        return {row[0] for row in rows}, done

    def stored(self) -> dict[str, Any]:
        with contextlib.closing(sqlite3.connect(self.state / "bridge.db")) as db:
            return {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM core_data")}

    def explain_hang(self, call: Call) -> list[str]:
        """What the bridges wrote about a call that got no answer in time: the audit rows
        of its tool from around then (when they were written, outcome, time in the
        pipeline) and each bridge's warnings and errors from the same seconds."""
        lines: list[str] = []
        name = call.tool.split(":")[-1]
        for proc in (self.main, self.peer):
            try:
                with contextlib.closing(sqlite3.connect(proc.state_dir / "bridge.db")) as db:
                    rows = db.execute(
                        "SELECT ts, outcome, error_code, duration_ms FROM audit_log"
                        " WHERE tool LIKE ? AND ts BETWEEN ? AND ? ORDER BY ts",
                        (f"%{name}", call.wall - 2, call.wall + 30),
                    ).fetchall()
            except sqlite3.Error as err:
                rows, lines = [], [*lines, f"    {proc.name} audit unreadable: {err}"]
            for ts, outcome, code, ms in rows[:6]:
                lines.append(
                    f"    {proc.name} audit: row at +{ts - call.wall:.2f} s, {outcome}"
                    f" {code or ''}, {ms:.0f} ms in the pipeline"
                )
            try:
                text = proc.log_path.read_text(errors="replace").splitlines()
            except OSError:
                text = []
            shown = 0
            for line in text:
                try:
                    at = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
                except ValueError:
                    continue
                offset = at.replace(tzinfo=datetime.UTC).timestamp() - call.wall
                if -2 <= offset <= 15 and (" WARNING " in line or " ERROR " in line):
                    lines.append(f"    {proc.name} log +{offset:.2f} s: {line[24:200]}")
                    shown += 1
                    if shown >= 12:
                        break
        return lines

    def report(self, elapsed: float, final_drift: list[str]) -> dict[str, Any]:
        main_ids, main_done = self.audit(self.state)
        peer_ids, peer_done = self.audit(self.peer.state_dir)
        audit, done = main_ids | peer_ids, main_done + peer_done
        stored = self.stored()
        lost: list[str] = []
        lost_effect: list[str] = []
        # Calls without an id in their answer (MCP, spoken): completed rows per tool must
        # be at least the successes acknowledged for that tool, whatever the face.
        acked = Counter(c.tool.split("@")[0] for c in self.calls if c.ok)
        for tool, n in sorted(acked.items()):
            if done[tool] < n:
                lost.append(f"{tool}: {n} acknowledged, {done[tool]} completed audit rows")
        for c in self.calls:
            if not c.ok:
                continue
            if c.call_id is not None and c.call_id not in audit:
                lost.append(f"{c.kind} {c.tool} {c.call_id}: no audit row")
            if c.kind == "store" and c.effect is not None:
                key, value = c.effect[0]
                if stored.get(key) != value:
                    lost_effect.append(f"store {key}: acknowledged, not in core_data")
        hung = [c for c in self.calls if c.answer == "hung"]
        dup = missed = 0
        for press in self.presses:
            for i in range(SOCKETS):
                seen = self.press_count(i, press)
                missed += seen == 0
                dup += max(0, seen - 1)
        # A device.state event repeating the value the socket last saw on that path says
        # nothing changed: a re-report (after a reconnect, say), not a device-side change.
        repeats = 0
        repeated: Counter[str] = Counter()
        for events in self.events:
            last: dict[str, Any] = {}
            for _, path, value in events:
                if path == RECONNECT:  # a new connection starts from what is true now
                    last.clear()
                elif path in last and last[path] == value:
                    repeats += 1
                    repeated[path] += 1
                last[path] = value
        drift = sorted({d for f in self.faults for d in f.drift} | set(final_drift))
        over = [
            f"{f.kind}: {f.recovery_s} s (bound {BOUNDS_S[f.kind]:g} s)"
            for f in self.faults
            if f.recovery_s is None or f.recovery_s > BOUNDS_S[f.kind]
        ]
        tracebacks = {p.name: _tracebacks(p.log_path) for p in (self.main, self.peer)}
        answers: dict[str, Counter[str]] = defaultdict(Counter)
        for c in self.calls:
            if c.kind != "probe":
                answers[c.kind]["ok" if c.ok else c.answer] += 1
        per_kind = Counter(c.kind for c in self.calls if c.kind != "probe")
        # A kind of call that never once succeeded was not exercised, whatever else held.
        silent = sorted(k for k, counts in answers.items() if counts["ok"] == 0)
        resources = {name: _growth(rows) for name, rows in self.stats.items()}
        result = {
            "minutes": round(elapsed / 60, 2),
            "calls": sum(per_kind.values()),
            "ok": sum(1 for c in self.calls if c.ok and c.kind != "probe"),
            "lost": len(lost) + len(lost_effect),
            "lost_audit": len(lost),
            "lost_effect": len(lost_effect),
            "hung": len(hung),
            "wrong": len(self.wrong),
            "unread": len(self.unread),
            "over_bound": len(over),
            "silent_kinds": silent,
            "tracebacks": tracebacks,
            "drift": len(drift),
            "dup_events": dup,
            "missed_events": missed,
            "repeat_events": repeats,
            "events": sum(len(e) for e in self.events),
            "presses": len(self.presses),
            "ok_by_kind": {k: v["ok"] for k, v in sorted(answers.items())},
            "recovery_s": {f.kind: f.recovery_s for f in self.faults},
            "resources": resources,
            "soak_loop_longest_delay_s": round(self.loopwatch.longest_s, 3),
        }
        kinds = "  ".join(f"{k} {v}" for k, v in sorted(per_kind.items()))
        print(f"{'calls by kind':<28} {kinds}")
        for kind, counts in sorted(answers.items()):
            print(f"  {kind:<26} " + "  ".join(f"{k}: {v}" for k, v in counts.most_common()))
        print(f"{'fault':<28} {'recovery s':>10} {'bound s':>8}  drift  note")
        for f in self.faults:
            print(
                f"{f.kind:<28} {f.recovery_s!s:>10} {BOUNDS_S[f.kind]:>8g}  {len(f.drift):>5}  "
                f"{f.note}"
            )
        for name, rows in self.stats.items():
            first, last = rows[0], rows[-1]
            print(
                f"{name:<28} RSS {first[2] // 1024} -> {last[2] // 1024} MiB, fds {first[3]} -> "
                f"{last[3]} (pids {len({r[1] for r in rows})}); {resources[name]}"
            )
        if repeated:
            print(
                "repeated device.state by path: "
                + "  ".join(f"{p} x{n}" for p, n in repeated.most_common(6))
            )
        hangs = []
        for c in hung[:10]:
            hangs.append(
                f"hung: {c.kind} {c.tool} {c.took:.1f}s, sent at {c.sent - self.t0:.1f} s"
                f" ({self.last_fault(c.sent)})"
            )
            hangs.extend(self.explain_hang(c))
        for line in [
            *lost_effect[:10],
            *lost[:10],
            *hangs,
            *self.wrong[:10],
            *self.unread[:10],
            *over,
            *drift[:10],
            *(f"no {k} call succeeded" for k in silent),
        ]:
            print(f"  ! {line}")
        print(json.dumps(result, sort_keys=True))
        return result


def _done(result: Any) -> bool:
    """Return False for a room call's answer that says a member failed (``ok: false``)."""
    return not (isinstance(result, dict) and result.get("ok") is False)


def _code(result: Any) -> str:
    """Return the error code an MCP tool error's text names."""
    text = " ".join(getattr(c, "text", "") for c in getattr(result, "content", []))
    found = re.search(r"\b[A-Z][A-Z_]{4,}\b", text)
    return found.group(0) if found else text[:40]


def _tracebacks(path: Path) -> int:
    try:
        return path.read_text(errors="replace").count("Traceback (most recent call last)")
    except OSError:
        return -1


def _fill(path: Path, size: int) -> None:
    with path.open("wb") as fh:
        chunk = b"\0" * (1 << 20)
        while size > 0:
            n = min(size, len(chunk))
            try:
                fh.write(chunk[:n])
            except OSError:
                return
            size -= n


def _local_change(dev: VirtualDevice, mark: int) -> int | None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for change in dev.changes()[mark:]:
            if change.local and change.attribute == "localTemperature":
                return int(change.value)
        time.sleep(0.05)
    return None


def _setpoint(state: dict[str, Any]) -> float | None:
    for key in (
        "heating_setpoint",
        "heating_setpoint_celsius",
        "occupied_heating_setpoint",
        "target_temperature",
        "setpoint",
    ):
        if key in state:
            return float(state[key])
    return None


def _percent(state: dict[str, Any]) -> float:
    for key in ("brightness", "percent", "brightness_percent", "level_percent"):
        if key in state:
            return float(state[key])
    return -100.0


def _leaves(err: BaseException) -> str:
    """Name what really ended an MCP session: the leaves of an exception group, with an
    HTTP status where there is one ("ConnectError" while the bridge is down, "404" for a
    session the restarted bridge does not know)."""
    if isinstance(err, BaseExceptionGroup):
        return "+".join(sorted({_leaves(e) for e in err.exceptions}))
    status = getattr(getattr(err, "response", None), "status_code", None)
    return f"{type(err).__name__} {status}" if status else type(err).__name__


def _growth(rows: list[tuple[float, int, int, int]]) -> dict[str, Any]:
    """Return RSS / fd growth per hour over the longest run of one PID, and over its
    second half alone (``late``: start-up and warm-up excluded, what a leak would show)."""
    by_pid: dict[int, list[tuple[float, int, int, int]]] = defaultdict(list)
    for row in rows:
        by_pid[row[1]].append(row)
    longest = max(by_pid.values(), key=lambda r: r[-1][0] - r[0][0])
    span_h = (longest[-1][0] - longest[0][0]) / 3600
    out: dict[str, Any] = {
        "span_min": round(span_h * 60, 1),
        "rss_mib": longest[-1][2] // 1024,
        "fds": longest[-1][3],
    }
    if span_h > 0:
        out["rss_mib_per_h"] = round((longest[-1][2] - longest[0][2]) / 1024 / span_h, 1)
        out["fds_per_h"] = round((longest[-1][3] - longest[0][3]) / span_h, 1)
        half = next(
            r for r in longest if r[0] >= longest[0][0] + (longest[-1][0] - longest[0][0]) / 2
        )
        if longest[-1][0] > half[0]:
            late_h = (longest[-1][0] - half[0]) / 3600
            out["late_rss_mib"] = [half[2] // 1024, longest[-1][2] // 1024]
            out["late_rss_mib_per_h"] = round((longest[-1][2] - half[2]) / 1024 / late_h, 1)
    return out


async def amain(args: argparse.Namespace) -> int:
    base = Path(tempfile.mkdtemp(prefix="atmosphere-soak-", dir="/var/tmp"))
    soak: Soak | None = None
    try:
        with tmpfs(base / "state", TMPFS_MB) as state:
            soak = Soak(
                base,
                state,
                args.minutes,
                args.rate,
                args.short,
                faults=not args.no_faults,
                trace_dir=args.trace_memory,
            )
            try:
                result = await soak.run()
            finally:
                await asyncio.to_thread(_teardown, soak)
                if args.keep:
                    shutil.copytree(state, base / "state-kept", dirs_exist_ok=True)
    finally:
        if not args.keep:
            subprocess.run(["rm", "-rf", str(base)], check=False)
        else:
            print(f"kept {base}", file=sys.stderr)
    clean = not (
        result["lost"]
        or result["hung"]
        or result["wrong"]
        or result["drift"]
        or result["unread"]
        or result["over_bound"]
        or result["silent_kinds"]
        or any(n != 0 for n in result["tracebacks"].values())
    )
    return 0 if clean else 1


def _teardown(soak: Soak) -> None:
    for proc in (getattr(soak, "main", None), getattr(soak, "peer", None)):
        if proc is not None:
            proc.stop()
    for pid in soak.controller_pids:
        end_pid(pid)
    for dev in soak.devices.values():
        dev.stop(timeout_s=2.0)
    if soak.ns is not None:
        netns.delete_namespace(soak.ns.name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="load time (0.5-600)")
    parser.add_argument("--rate", type=float, default=6.0, help="calls per second (1-50)")
    parser.add_argument("--short", action="store_true", help="every fault once, short gaps")
    parser.add_argument("--keep", action="store_true", help="keep the run's directory")
    parser.add_argument("--no-faults", action="store_true", help="load only, no fault injected")
    parser.add_argument(
        "--trace-memory",
        type=Path,
        default=None,
        metavar="DIR",
        help="run the main bridge under tracemalloc, a snapshot a minute into DIR "
        "(bench/memory_growth.py DIR compares them)",
    )
    args = parser.parse_args()
    args.minutes = max(0.5, min(600.0, args.minutes))
    args.rate = max(1.0, min(50.0, args.rate))
    reason = fabric_unavailable_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    return asyncio.run(amain(args))


if __name__ == "__main__":
    sys.exit(main())
