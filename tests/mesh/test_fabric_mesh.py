"""A Matter call made at node C runs on node A, against the real fabric.

Three real ``atmosphere-bridge run`` processes share one private fabric namespace
(``tests/support/fabric.py: open_fabric``, created for this module alone so the extra
link below never touches the session fabric other tests use):

- A runs the Matter side: its own managed python-matter-server (inside the namespace)
  and one matter.js on/off light, commissioned through A's API;
- B and C are mesh-only (``--no-matter``, ``matter.enabled: false``).

The mesh talks over an internal veth pair added to the namespace (``meshva`` with
10.232.0.1, ``meshvb`` with 10.232.0.2, both ends inside): the nodes find each other
by zeroconf alone (no static peers), so no mDNS packet leaves the namespace. The test
process reaches each API over the namespace's host link. C learns A's Matter tools by
gossip and routes ``…_on``/``…_toggle``/``…_off`` calls with a real signed token to A;
the light's own state reports prove the command reached the device. Killing A makes C's
call fail fast with ``NO_CAPABLE_NODE``, then A's tools leave C's registry.
Needs root, iproute2, Node.js and the controller venv; skips with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, write_test_paa
from bridge.mesh.node_id import node_id_for
from tests.support.fabric import CONTROLLER_VENV, Fabric, fabric_unavailable_reason, open_fabric
from tests.support.processes import stop, wait_until

pytestmark = pytest.mark.fabric

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
TTL_S = 3.0
LIGHT = "Porch Light"
MESH_LINK = {"meshva": "10.232.0.1", "meshvb": "10.232.0.2"}
# name -> (mesh interface, API port inside the namespace)
LAYOUT = {"a": ("meshva", 18721), "b": ("meshva", 18722), "c": ("meshvb", 18723)}


@dataclass
class Node:
    """One bridge process: its identity, where the test reaches it and its log."""

    name: str
    node_id: str
    url: str
    mesh_url: str
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])


@dataclass
class MatterMesh:
    """The module's fabric, three nodes, the commissioned light and the tokens."""

    fabric: Fabric
    nodes: dict[str, Node]
    light: VirtualDevice
    admin: str
    caller: str
    tools: list[str] = field(default_factory=list)
    controller_pid: int | None = None


def http(method: str, url: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def end_pid(pid: int | None) -> None:
    """Stop a process this module started indirectly (A's controller), by PID."""
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


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=15)


@pytest.fixture(scope="module")
def matter_mesh() -> Iterator[MatterMesh]:
    reason = fabric_unavailable_reason()
    if reason:
        pytest.skip(reason)
    if not BRIDGE.exists():
        pytest.skip(f"the installed atmosphere-bridge script {BRIDGE} is missing")
    with open_fabric(f"atm-mmesh-{os.getpid()}") as fab:
        ns = fab.namespace
        ip("-n", ns.name, "link", "add", "meshva", "type", "veth", "peer", "name", "meshvb")
        for iface, address in MESH_LINK.items():
            ip("-n", ns.name, "addr", "add", f"{address}/24", "dev", iface)
            ip("-n", ns.name, "link", "set", iface, "up")
        issuer = NodeKey.generate()
        admin = issue_token(issuer, agent_id="mesh-admin", permissions=["*"], ttl_s=3600)
        caller = issue_token(
            issuer,
            agent_id="agent-at-c",
            permissions=["device:control:*", "device:read:*"],
            ttl_s=3600,
        )
        light = fab.device(DeviceKind.ONOFF)
        nodes = _write_nodes(fab, issuer)
        mesh = MatterMesh(fabric=fab, nodes=nodes, light=light, admin=admin, caller=caller)
        try:
            for name, node in nodes.items():
                argv = [
                    *ns.exec_prefix(),
                    str(BRIDGE),
                    "--config",
                    str(fab.base_dir / f"{name}.yaml"),
                    "run",
                    *([] if name == "a" else ["--no-matter"]),
                ]
                with node.log.open("wb") as log:
                    node.popen = subprocess.Popen(
                        argv, stdout=log, stderr=subprocess.STDOUT, cwd=fab.base_dir
                    )
            for node in nodes.values():
                wait_until(
                    lambda n=node: http("GET", f"{n.url}/healthz")[0] == 200,
                    90,
                    f"{node.name} to serve /healthz:\n{node.log_tail()}",
                )
            _commission(mesh)
            yield mesh
        finally:
            for node in nodes.values():
                stop(node)
            end_pid(mesh.controller_pid)
            # With its controller gone the light lingers ~10 s closing sessions; its
            # storage is thrown away, so a short grace before SIGKILL is enough.
            light.stop(timeout_s=2.0)


def _write_nodes(fab: Fabric, issuer: NodeKey) -> dict[str, Node]:
    keys: dict[str, NodeKey] = {}
    nodes: dict[str, Node] = {}
    for name, (iface, port) in LAYOUT.items():
        keys[name] = NodeKey.create(fab.base_dir / f"bridge-{name}" / KEY_FILE_NAME)
        nodes[name] = Node(
            name=name,
            node_id=node_id_for(keys[name].public_key_b64),
            url=f"http://{fab.namespace.ns_address}:{port}",
            mesh_url=f"http://{MESH_LINK[iface]}:{port}",
            log=fab.base_dir / f"{name}.log",
        )
    for name, node in nodes.items():
        state_dir = fab.base_dir / f"bridge-{name}"
        config: dict[str, Any] = {
            "state_dir": str(state_dir),
            "api": {"host": "0.0.0.0", "port": LAYOUT[name][1]},
            "auth": {"trusted_issuers": [issuer.public_key_b64]},
            "matter": {"enabled": False},
            "mesh": {
                "enabled": True,
                "node_name": name,
                "interfaces": [LAYOUT[name][0]],
                "trust": "allowlist",
                "trusted_nodes": [n.node_id for n in nodes.values() if n is not node],
                "gossip_interval_s": 0.3,
                "announce_interval_s": 1.0,
                "announcement_ttl_s": TTL_S,
            },
        }
        if name == "a":
            settings = fab.controller_settings("a")
            write_test_paa(state_dir / "controller" / "paa")
            config["matter"] = {
                "enabled": True,
                "netns": fab.namespace.name,
                "controller_venv": str(CONTROLLER_VENV),
                "controller_port": settings.port,
            }
        (fab.base_dir / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return nodes


def _commission(mesh: MatterMesh) -> None:
    a = mesh.nodes["a"]
    assert mesh.light.pairing is not None
    status, body = http(
        "POST",
        f"{a.url}/v1/devices/commission",
        {"code": mesh.light.pairing.manual, "name": LIGHT, "room": "Porch"},
        mesh.admin,
    )
    assert status == 201, (body, a.log_tail())
    assert body["node_id"] == 1
    mesh.tools = body["tools"]
    status, listing = http("GET", f"{a.url}/v1/devices", token=mesh.admin)
    assert status == 200, listing
    assert listing["controller"]["managed"] is True
    mesh.controller_pid = listing["controller"]["pid"]


def mesh_tools(node: Node, token: str) -> dict[str, list[str]]:
    """Return ``identity -> [offering node ids]`` as ``node`` sees the mesh."""
    status, body = http("GET", f"{node.url}/v1/mesh/tools", token=token)
    assert status == 200, body
    return {t["identity"]: [n["node_id"] for n in t["nodes"]] for t in body["tools"]}


# The light is commissioned into room "Porch", which gets its room tools.
PORCH_ROOM_TOOLS = ["room_porch_lights_brightness", "room_porch_lights_off", "room_porch_lights_on"]


def matter_tools_from(node: Node, origin: Node, token: str) -> list[str]:
    """Return the Matter tools in ``node``'s registry whose server is ``origin``."""
    status, body = http(
        "GET", f"{node.url}/v1/tools?namespace=matter&server_name={origin.node_id}", token=token
    )
    assert status == 200, body
    return sorted(t["tool"]["name"] for t in body["tools"])


def invoke_at(node: Node, tool: str, token: str) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    status, body = http("POST", f"{node.url}/v1/invoke", {"tool": tool, "params": {}}, token)
    return status, body, time.monotonic() - started


def test_c_routes_matter_calls_to_a_and_the_light_obeys(matter_mesh: MatterMesh) -> None:
    mesh = matter_mesh
    a, b, c = mesh.nodes["a"], mesh.nodes["b"], mesh.nodes["c"]
    slug = "porch_light"
    assert mesh.tools == [f"{slug}_off", f"{slug}_on", f"{slug}_state", f"{slug}_toggle"]
    # 1. zeroconf alone: every node discovers the two others on the namespace's mesh link.
    for me in (a, b, c):
        others = [n for n in (a, b, c) if n is not me]

        def discovered(me: Node = me, others: list[Node] = others) -> bool:
            status, body = http("GET", f"{me.url}/v1/mesh/peers", token=mesh.admin)
            peers = {p["node_id"]: p for p in body["peers"]} if status == 200 else {}
            return all(
                peers.get(o.node_id, {}).get("discovered")
                and peers[o.node_id]["urls"] == [o.mesh_url]
                for o in others
            )

        wait_until(discovered, 15, f"{me.name} to discover its peers by mDNS")
    # 2. gossip: C (and B) hold A's Matter tools with server_name = A's node id.
    status, body = http("GET", f"{a.url}/v1/tools?namespace=matter", token=mesh.admin)
    assert status == 200, body
    assert all(t["local"] for t in body["tools"])
    a_tools = sorted(t["tool"]["name"] for t in body["tools"])
    assert a_tools == sorted([*mesh.tools, "control_matter_device", *PORCH_ROOM_TOOLS])
    identities = {f"matter:{name}@1.0.0" for name in a_tools}

    def converged() -> bool:
        return all(
            identities <= set(mesh_tools(n, mesh.admin))
            and matter_tools_from(n, a, mesh.admin) == a_tools
            for n in (b, c)
        )

    wait_until(converged, 15, "B and C to learn A's Matter tools by gossip")
    seen = mesh_tools(c, mesh.admin)
    assert {i: seen[i] for i in identities} == {i: [a.node_id] for i in identities}
    assert matter_tools_from(c, c, mesh.admin) == []
    # 3. calls made at C with the agent's token run on A and reach the light itself.
    light = mesh.light
    sent = {"kind": "command", "node_id": 1, "endpoint_id": 1, "cluster": "OnOff", "payload": {}}
    for tool, command, expected in (
        (f"{slug}_on", "On", True),
        (f"{slug}_toggle", "Toggle", False),
        (f"{slug}_toggle", "Toggle", True),
        (f"{slug}_off", "Off", False),
    ):
        mark = light.mark()
        status, resp, _ = invoke_at(c, tool, mesh.caller)
        assert status == 200, (json.dumps(resp), c.log_tail())
        assert resp["status"] == "success", resp
        assert resp["result"]["sent"] == [{**sent, "command": command}]
        assert_ran_on(resp, a, c)
        light.wait_state("onOff", "onOff", expected, since=mark, timeout_s=15, local=False)
        # A's controller agrees: its state tool, also called at C, reads the new value.
        wait_until(
            lambda exp=expected: (
                invoke_at(c, f"{slug}_state", mesh.caller)[1].get("result") == {"on": exp}
            ),
            10,
            f"A's controller to report on={expected}",
        )
    status, resp, _ = invoke_at(c, f"{slug}_state", mesh.caller)
    assert (status, resp["result"]) == (200, {"on": False})
    assert_ran_on(resp, a, c)


def assert_ran_on(resp: dict[str, Any], origin: Node, caller: Node) -> None:
    """Assert the response says the call ran on ``origin``, one hop from ``caller``."""
    execution = resp["execution"]
    assert (execution["node_id"], execution["hops"]) == (origin.node_id, 1), resp
    assert execution["path"] == [caller.node_id, origin.node_id], resp
    assert execution["attempts"] == [origin.node_id], resp
    assert 0 < execution["duration_ms"] <= resp["duration_ms"], resp
    assert resp["node_id"] == caller.node_id, resp


def test_killing_a_fails_calls_fast_and_drops_its_tools(matter_mesh: MatterMesh) -> None:
    mesh = matter_mesh
    a, b, c = mesh.nodes["a"], mesh.nodes["b"], mesh.nodes["c"]
    a_tools = sorted([*mesh.tools, "control_matter_device", *PORCH_ROOM_TOOLS])
    wait_until(lambda: matter_tools_from(c, a, mesh.admin) == a_tools, 15, "C to hold A's tools")
    mark = mesh.light.mark()
    # A crashes (no goodbye); its controller goes with it, as under a service manager.
    stop(a, signal.SIGKILL)
    end_pid(mesh.controller_pid)
    status, resp, elapsed = invoke_at(c, "porch_light_on", mesh.caller)
    assert (status, resp["error"]["code"]) == (503, "NO_CAPABLE_NODE"), resp
    assert elapsed < 2.0
    assert mesh.light.changes()[mark:] == []
    took = wait_until(
        lambda: (
            matter_tools_from(c, a, mesh.admin) == [] and matter_tools_from(b, a, mesh.admin) == []
        ),
        TTL_S + 5,
        "A's tools to leave B's and C's registries",
    )
    assert took <= TTL_S + 2
    assert not any(i.startswith("matter:") for i in mesh_tools(c, mesh.admin))
    status, resp, _ = invoke_at(c, "porch_light_on", mesh.caller)
    assert (status, resp["error"]["code"]) == (404, "TOOL_NOT_FOUND"), resp
