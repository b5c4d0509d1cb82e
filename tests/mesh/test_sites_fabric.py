"""Three sites joined by a real ``nats-server`` hub; a call at site A switches a light at C.

Four private network namespaces, so nothing leaves this machine:

- the hub's ("wan"): ``nats-server`` with the configuration ``atmosphere-bridge sites
  hub-config`` generated (one nkey user per site, generated permissions), listening
  on a veth link to each site (10.233.N.1, the site's end 10.233.N.2);
- sites A and B (``bridge.netns`` namespaces): one mesh-only bridge each;
- site C: the Matter fabric (``tests/support/fabric.py: open_fabric``) with its own
  managed python-matter-server and a matter.js on/off light, and C's bridge.

No site has a route to another: the only road is the hub, which each bridge dials out
to. The test process reaches each bridge's API over its namespace's host link. A learns
C's Matter tools from C's signed announcement on the hub and calls them with a real
signed token; the light's own state reports prove the command arrived; both bridges
audit the call. Then the hub is killed and restarted while A keeps calling: every call
A saw succeed ran at C exactly once. Then C's bridge is killed: A's calls fail at once
with a retryable error, and work again when C is back.
Needs root, iproute2, nats-server, Node.js and the controller venv.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge import netns
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, write_test_paa
from bridge.mesh.node_id import node_id_for
from tests.support.fabric import CONTROLLER_VENV, Fabric, fabric_unavailable_reason, open_fabric
from tests.support.hub import NATS_SERVER, Hub
from tests.support.processes import stop, wait_until

pytestmark = pytest.mark.fabric

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
LIGHT = "Porch Light"
SLUG = "porch_light"
HUB_PORT = 4222
PORTS = {"a": 18741, "b": 18742, "c": 18743}
WAN_NET = {"a": 1, "b": 2, "c": 3}


@dataclass
class Site:
    """One site's bridge: where the test reaches it, its state and its process."""

    name: str
    namespace: str
    node_id: str
    url: str
    state_dir: Path
    log: Path
    argv: list[str] = field(default_factory=list)
    popen: subprocess.Popen[bytes] | None = None

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.popen = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT)

    def audit(self, tool: str) -> list[sqlite3.Row]:
        """Return this bridge's audit rows for ``tool`` (read from its SQLite file)."""
        db = sqlite3.connect(f"file:{self.state_dir / 'bridge.db'}?mode=ro", uri=True, timeout=10)
        db.row_factory = sqlite3.Row
        try:
            query = "SELECT * FROM audit_log WHERE tool = ? ORDER BY id"
            return db.execute(query, (tool,)).fetchall()
        finally:
            db.close()


@dataclass
class Sites:
    fabric: Fabric
    hub: Hub
    sites: dict[str, Site]
    light: VirtualDevice
    admin: str
    caller: str
    controller_pid: int | None = None


def http(
    method: str, url: str, body: Any = None, token: str | None = None, timeout: float = 120
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, timeout=15)


def end_pid(pid: int | None) -> None:
    """Stop a process this module started indirectly (C's controller), by PID."""
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return


def link_to_wan(wan: str, site: str, namespace: str) -> str:
    """Join ``namespace`` to the hub's namespace by a veth pair; return the hub's address."""
    n = WAN_NET[site]
    ip(
        "link",
        "add",
        f"hub{site}",
        "netns",
        wan,
        "type",
        "veth",
        "peer",
        "name",
        "uplink-hub",
        "netns",
        namespace,
    )
    ip("-n", wan, "addr", "add", f"10.233.{n}.1/24", "dev", f"hub{site}")
    ip("-n", wan, "link", "set", f"hub{site}", "up")
    ip("-n", namespace, "addr", "add", f"10.233.{n}.2/24", "dev", "uplink-hub")
    ip("-n", namespace, "link", "set", "uplink-hub", "up")
    return f"nats://10.233.{n}.1:{HUB_PORT}"


@pytest.fixture(scope="module")
def three_sites() -> Iterator[Sites]:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.fail(reason)
    assert Path(NATS_SERVER).exists(), "nats-server (Debian package) is missing: make install"
    assert BRIDGE.exists(), f"the installed atmosphere-bridge script {BRIDGE} is missing"
    pid = os.getpid()
    wan = f"atm-wan-{pid}"
    with open_fabric(f"atm-sitec-{pid}") as fab:
        namespaces = {"c": fab.namespace.name}
        made: list[str] = []
        hub = Hub(
            base=fab.base_dir / "hub",
            sites=["a", "b", "c"],
            port=HUB_PORT,
            prefix=["ip", "netns", "exec", wan],
        )
        hub.base.mkdir()
        sites: dict[str, Site] = {}
        light: VirtualDevice | None = None
        controller_pid: int | None = None
        try:
            ip("netns", "add", wan)
            ip("-n", wan, "link", "set", "lo", "up")
            for name in ("a", "b"):
                ns = netns.create_namespace(f"atm-site{name}-{pid}")
                made.append(ns.name)
                namespaces[name] = ns.name
            hub_urls = {name: link_to_wan(wan, name, namespaces[name]) for name in ("a", "b", "c")}
            hub.configure(listen=f"0.0.0.0:{HUB_PORT}")
            hub.start()
            issuer = NodeKey.generate()
            admin = issue_token(issuer, agent_id="site-admin", permissions=["*"], ttl_s=3600)
            caller = issue_token(
                issuer,
                agent_id="agent-at-a",
                permissions=["device:control:*", "device:read:*"],
                ttl_s=3600,
            )
            light = fab.device(DeviceKind.ONOFF)
            sites = _write_sites(fab, hub, issuer, namespaces, hub_urls)
            for site in sites.values():
                site.start()
            for site in sites.values():
                wait_until(
                    lambda s=site: http("GET", f"{s.url}/healthz", timeout=5)[0] == 200,
                    90,
                    f"{site.name} to serve /healthz:\n{site.log_tail()}",
                )
            controller_pid = _commission(sites["c"], light, admin)
            yield Sites(
                fabric=fab,
                hub=hub,
                sites=sites,
                light=light,
                admin=admin,
                caller=caller,
                controller_pid=controller_pid,
            )
        finally:
            for site in sites.values():
                stop(site)
            end_pid(controller_pid)
            hub.stop()
            if light is not None:
                light.stop(timeout_s=2.0)
            for name in made:
                netns.delete_namespace(name)
            ip("netns", "del", wan, check=False)


def _write_sites(
    fab: Fabric, hub: Hub, issuer: NodeKey, namespaces: dict[str, str], hub_urls: dict[str, str]
) -> dict[str, Site]:
    keys = {n: NodeKey.create(fab.base_dir / f"bridge-{n}" / KEY_FILE_NAME) for n in PORTS}
    ids = {n: node_id_for(k.public_key_b64) for n, k in keys.items()}
    sites: dict[str, Site] = {}
    for name, port in PORTS.items():
        ns = netns.find_namespace(namespaces[name])
        assert ns is not None
        state_dir = fab.base_dir / f"bridge-{name}"
        config: dict[str, Any] = {
            "state_dir": str(state_dir),
            "api": {"host": "0.0.0.0", "port": port},
            "auth": {"trusted_issuers": [issuer.public_key_b64]},
            "matter": {"enabled": False},
            "mesh": {
                "enabled": True,
                "node_name": f"site-{name}",
                "discovery": False,
                "trust": "allowlist",
                "trusted_nodes": [ids[o] for o in PORTS if o != name],
                "gossip_interval_s": 0.5,
                "announce_interval_s": 1.0,
                "announcement_ttl_s": 4.0,
                "sites": {
                    "site": name,
                    "hub_urls": [hub_urls[name]],
                    "credentials_file": str(hub.seed_file(name)),
                    "request_timeout_s": 4.0,
                },
            },
        }
        if name == "c":
            settings = fab.controller_settings("c")
            write_test_paa(state_dir / "controller" / "paa")
            config["matter"] = {
                "enabled": True,
                "netns": ns.name,
                "controller_venv": str(CONTROLLER_VENV),
                "controller_port": settings.port,
            }
        config_path = fab.base_dir / f"{name}.yaml"
        config_path.write_text(yaml.safe_dump(config))
        argv = [
            *ns.exec_prefix(),
            str(BRIDGE),
            "--config",
            str(config_path),
            "run",
            *([] if name == "c" else ["--no-matter"]),
        ]
        sites[name] = Site(
            name=name,
            namespace=ns.name,
            node_id=ids[name],
            url=f"http://{ns.ns_address}:{port}",
            state_dir=state_dir,
            log=fab.base_dir / f"{name}.log",
            argv=argv,
        )
    return sites


def _commission(c: Site, light: VirtualDevice, admin: str) -> int | None:
    assert light.pairing is not None
    status, body = http(
        "POST",
        f"{c.url}/v1/devices/commission",
        {"code": light.pairing.manual, "name": LIGHT, "room": "Porch"},
        admin,
    )
    assert status == 201, (body, c.log_tail())
    assert sorted(body["tools"]) == [f"{SLUG}_off", f"{SLUG}_on", f"{SLUG}_state", f"{SLUG}_toggle"]
    status, listing = http("GET", f"{c.url}/v1/devices", token=admin)
    assert status == 200, listing
    pid: int | None = listing["controller"]["pid"]
    return pid


def invoke(
    site: Site, tool: str, token: str, timeout: float = 60, trace_id: str | None = None
) -> tuple[int, Any, float]:
    started = time.monotonic()
    body: dict[str, Any] = {"tool": tool, "params": {}}
    if trace_id is not None:
        body["context"] = {"trace_id": trace_id}
    status, body = http("POST", f"{site.url}/v1/invoke", body, token, timeout=timeout)
    return status, body, time.monotonic() - started


def c_tools_at(site: Site, c: Site, token: str) -> list[str]:
    status, body = http(
        "GET",
        f"{site.url}/v1/tools?namespace=matter&server_name={c.node_id}",
        token=token,
        timeout=10,
    )
    assert status == 200, body
    return sorted(t["tool"]["name"] for t in body["tools"])


def test_a_switches_the_light_at_c_through_the_hub(three_sites: Sites) -> None:
    s = three_sites
    a, c = s.sites["a"], s.sites["c"]
    wait_until(
        lambda: f"{SLUG}_toggle" in c_tools_at(a, c, s.admin),
        30,
        f"A to learn C's tools over the hub:\n{a.log_tail()}",
    )
    sent = {"kind": "command", "node_id": 1, "endpoint_id": 1, "cluster": "OnOff", "payload": {}}
    for tool, command, expected in ((f"{SLUG}_on", "On", True), (f"{SLUG}_off", "Off", False)):
        mark = s.light.mark()
        status, resp, _ = invoke(a, tool, s.caller)
        assert status == 200, (resp, a.log_tail())
        assert resp["status"] == "success", resp
        assert resp["result"]["sent"] == [{**sent, "command": command}]
        assert resp["execution"]["node_id"] == c.node_id
        assert resp["execution"]["path"] == [a.node_id, c.node_id]
        s.light.wait_state("onOff", "onOff", expected, since=mark, timeout_s=15, local=False)
    # The audit on both ends: A recorded the call it routed, C the delegated call it ran.
    identity = f"matter:{SLUG}_on@1.0.0"
    at_a = [r for r in a.audit(identity) if r["outcome"] == "completed"]
    at_c = [r for r in c.audit(identity) if r["outcome"] == "completed"]
    assert [r["agent_id"] for r in at_a] == ["agent-at-a"]
    assert [r["agent_id"] for r in at_c] == ["agent-at-a"]
    assert at_c[0]["node_id"] == c.node_id


def test_hub_killed_mid_traffic_loses_nothing_acknowledged(three_sites: Sites) -> None:
    s = three_sites
    a, c = s.sites["a"], s.sites["c"]
    tool = f"{SLUG}_toggle"
    identity = f"matter:{tool}@1.0.0"
    wait_until(lambda: tool in c_tools_at(a, c, s.admin), 30, "A to hold C's toggle")
    before = len(c.audit(identity))
    state = f"{SLUG}_state"
    status, resp, _ = invoke(c, state, s.caller)
    assert status == 200, resp
    was_on = resp["result"]["on"]
    acked: list[str] = []
    failed: list[dict[str, Any]] = []
    done = threading.Event()

    def traffic() -> None:
        for n in range(400):  # bounded; stops once enough calls passed after the restart
            if done.is_set():
                return
            trace = f"hub-restart-{n}"
            status, body, _ = invoke(a, tool, s.caller, timeout=30, trace_id=trace)
            if status == 200 and body.get("status") == "success":
                acked.append(trace)
            else:
                failed.append(body.get("error") or body)
                time.sleep(0.1)

    worker = threading.Thread(target=traffic)
    worker.start()
    try:
        wait_until(lambda: len(acked) >= 3, 60, "calls to pass before the hub dies")
        s.hub.kill()
        time.sleep(1.5)
        s.hub.start()
        after = len(acked)
        wait_until(
            lambda: len(acked) >= after + 3,
            90,
            f"calls to pass again after the hub restart:\n{a.log_tail()}",
        )
    finally:
        done.set()
        worker.join(120)
    assert failed, "the hub was down for 1.5 s: some calls must have failed"
    for error in failed:  # every failure says so, and may be retried
        assert error["retryable"] is True, error
        assert error["code"] == "NO_CAPABLE_NODE", error
    ran = [r["trace_id"] for r in c.audit(identity)[before:] if r["outcome"] == "completed"]
    # Every acknowledged call ran at C, none ran twice; a failed one ran at most once
    # (the hub may have died after delivering it: "it may have run", and retryable).
    assert len(ran) == len(set(ran)), ran
    assert set(acked) <= set(ran), sorted(set(acked) - set(ran))
    assert set(ran) - set(acked) <= {f"hub-restart-{n}" for n in range(400)}
    # And the light agrees with C's audit: it was toggled once per call C ran.
    now_on = was_on != (len(ran) % 2 == 1)
    wait_until(
        lambda: invoke(c, state, s.caller)[1].get("result") == {"on": now_on},
        15,
        f"the light to be on={now_on} after {len(ran)} toggles",
    )


def test_site_c_offline_fails_fast_then_comes_back(three_sites: Sites) -> None:
    s = three_sites
    a, c = s.sites["a"], s.sites["c"]
    tool = f"{SLUG}_state"
    wait_until(lambda: tool in c_tools_at(a, c, s.admin), 30, "A to hold C's state tool")
    assert c.popen is not None
    c.popen.kill()  # the site's bridge dies: its hub connection closes with it
    c.popen.wait(10)
    c.popen = None
    status, body, took = invoke(a, tool, s.caller)
    assert status == 503, body
    assert (body["error"]["code"], body["error"]["retryable"]) == ("NO_CAPABLE_NODE", True)
    assert "site c unreachable" in json.dumps(body["error"]["details"]["unreachable"])
    assert took < 3.0, took  # the hub says "no responders" at once (the timeout is 4 s)
    # Its announcement expires at A (ttl 4 s): C's tools leave A's registry.
    wait_until(lambda: c_tools_at(a, c, s.admin) == [], 20, "C's tools to expire at A")
    c.start()
    wait_until(
        lambda: tool in c_tools_at(a, c, s.admin),
        90,
        f"C to come back over the hub:\n{c.log_tail()}",
    )

    def answers() -> bool:
        status, body, _ = invoke(a, tool, s.caller, timeout=30)
        return status == 200 and body["execution"]["node_id"] == c.node_id

    wait_until(answers, 60, "A's calls to run at C again")


def test_a_partitioned_site_times_out_then_its_tools_expire_then_it_heals(
    three_sites: Sites,
) -> None:
    s = three_sites
    a, c = s.sites["a"], s.sites["c"]
    tool = f"{SLUG}_state"
    wait_until(lambda: tool in c_tools_at(a, c, s.admin), 60, "A to hold C's state tool")
    wan = f"atm-wan-{os.getpid()}"
    ip("-n", wan, "link", "set", "hubc", "down")  # C's link cut: no close reaches anyone
    try:
        # The hub still believes in C: the call goes out and nobody answers it within
        # mesh.sites.request_timeout_s (4 s). The state tool is idempotent, so the
        # router treats the silence as unreachable (a non-idempotent one: TIMEOUT).
        status, body, took = invoke(a, tool, s.caller)
        assert status == 503, body
        assert (body["error"]["code"], body["error"]["retryable"]) == ("NO_CAPABLE_NODE", True)
        assert "did not answer in 4 s" in body["error"]["details"]["unreachable"][c.node_id]
        assert 3.5 <= took < 15, took
        # C's announcements stop arriving: they expire at A (ttl 4 s) and C's tools leave
        # A's registry, so calls fail at once instead of waiting for C.
        wait_until(lambda: c_tools_at(a, c, s.admin) == [], 20, "C's tools to expire at A")
        status, body, took = invoke(a, tool, s.caller)
        assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND"), body
        assert took < 3, took
    finally:
        ip("-n", wan, "link", "set", "hubc", "up")

    def answers() -> bool:
        status, body, _ = invoke(a, tool, s.caller, timeout=30)
        return status == 200 and body["execution"]["node_id"] == c.node_id

    wait_until(answers, 90, f"C to dial back and answer:\n{c.log_tail()}")
