"""Three real ``atmosphere-bridge run`` processes meshing over zeroconf in a private namespace.

Pure loopback has no multicast, so the test creates a network namespace with ``lo`` and
a veth pair whose both ends live inside it (10.231.0.1 on ``va``, 10.231.0.2 on ``vb``),
runs the three bridges there with ``ip netns exec``, and talks to them from a worker
thread that entered the namespace (``os.setns``). No mDNS packet can reach the real
network. Node A loads a core tool (``tests/mesh/mesh_tools.py``); B and C learn it by
gossip after finding each other by zeroconf alone (no static peers configured).
Needs root and iproute2; skips with the reason otherwise (fails under CI).
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
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.auth.canonical import b64e
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token, parse_token
from bridge.invocation.messages import RequestRouting, ToolRequest
from bridge.mesh.delegation import Grant, delegate
from bridge.mesh.envelope import seal
from bridge.mesh.node_id import NodeIdentity
from tests.support.processes import stop, wait_until
from tests.support.real import bridge_script_reason, require, root_reason, tools_reason

REPO = Path(__file__).resolve().parents[2]
BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
TOOL = "core:mesh_whoami@1.0.0"
TTL_S = 3.0

pytestmark = [pytest.mark.processes, pytest.mark.namespaces]


@pytest.fixture(scope="module", autouse=True)
def _real_parts() -> None:
    require(root_reason("a network namespace") or tools_reason("ip") or bridge_script_reason())


@dataclass
class Proc:
    name: str
    ident: NodeIdentity
    key: NodeKey
    address: str
    port: int
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    @property
    def node_id(self) -> str:
        return self.ident.node_id


class Netns:
    """A private namespace and a one-thread executor whose thread lives inside it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pool: ThreadPoolExecutor | None = None

    def create(self) -> None:
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)
        for cmd in (
            ["ip", "netns", "add", self.name],
            ["ip", "-n", self.name, "link", "set", "lo", "up"],
            ["ip", "-n", self.name, "link", "add", "va", "type", "veth", "peer", "name", "vb"],
            ["ip", "-n", self.name, "addr", "add", "10.231.0.1/24", "dev", "va"],
            ["ip", "-n", self.name, "addr", "add", "10.231.0.2/24", "dev", "vb"],
            ["ip", "-n", self.name, "link", "set", "va", "up"],
            ["ip", "-n", self.name, "link", "set", "vb", "up"],
        ):
            subprocess.run(cmd, check=True, capture_output=True)
        path = f"/run/netns/{self.name}"

        def enter() -> None:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.setns(fd, os.CLONE_NEWNET)
            finally:
                os.close(fd)

        self.pool = ThreadPoolExecutor(max_workers=1, initializer=enter)

    def run[T](self, fn: Callable[[], T]) -> T:
        assert self.pool is not None
        return self.pool.submit(fn).result(timeout=30)

    def delete(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)


def http(
    ns: Netns, method: str, url: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    def call() -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, unwrap(json.loads(resp.read() or b"null"))
        except urllib.error.HTTPError as err:
            return err.code, unwrap(json.loads(err.read() or b"null"))

    return ns.run(call)


def unwrap(doc: Any) -> Any:
    """Return the body of a node's signed ``mesh_answer`` (other answers as they are)."""
    if isinstance(doc, dict) and doc.get("type") == "mesh_answer":
        return doc["body"]
    return doc


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Netns, dict[str, Proc], str]]:
    tmp = tmp_path_factory.mktemp("mesh3")
    ns = Netns(f"atm-mesh-{os.getpid()}")
    issuer = NodeKey.generate()
    token = issue_token(
        issuer, agent_id="agent-e2e", permissions=["mesh:test:*", "mesh:read"], ttl_s=600
    )
    layout = {
        "a": ("va", "10.231.0.1", 18711),
        "b": ("va", "10.231.0.1", 18712),
        "c": ("vb", "10.231.0.2", 18713),
    }
    procs: dict[str, Proc] = {}
    for name, (_iface, address, port) in layout.items():
        state = tmp / name
        key = NodeKey.create(state / KEY_FILE_NAME)
        procs[name] = Proc(
            name=name,
            ident=NodeIdentity.from_key(key, name),
            key=key,
            address=address,
            port=port,
            log=tmp / f"{name}.log",
        )
    manifest = tmp / "tools.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {"source": f"file:{REPO / 'tests/mesh/mesh_tools.py'}", "entry": "mesh_whoami"}
                ]
            }
        )
    )
    for name, proc in procs.items():
        config = {
            "state_dir": str(tmp / name),
            "api": {"host": "0.0.0.0", "port": proc.port},
            "auth": {"trusted_issuers": [issuer.public_key_b64]},
            "matter": {"enabled": False},
            "mesh": {
                "enabled": True,
                "node_name": name,
                "interfaces": [layout[name][0]],
                "trust": "allowlist",
                "trusted_nodes": [p.node_id for p in procs.values() if p is not proc],
                "gossip_interval_s": 0.3,
                "announce_interval_s": 1.0,
                "announcement_ttl_s": TTL_S,
            },
        }
        if name == "a":
            config["tools_manifest"] = str(manifest)
        (tmp / f"{name}.yaml").write_text(yaml.safe_dump(config))
    ns.create()
    try:
        for name, proc in procs.items():
            with proc.log.open("wb") as log:
                proc.popen = subprocess.Popen(
                    [
                        "ip",
                        "netns",
                        "exec",
                        ns.name,
                        str(BRIDGE),
                        "--config",
                        str(tmp / f"{name}.yaml"),
                        "run",
                        "--no-matter",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=tmp,
                )
        for proc in procs.values():
            wait_until(
                lambda p=proc: http(ns, "GET", f"{p.url}/healthz")[0] == 200,
                20,
                f"{proc.name} to serve /healthz ({proc.log})",
            )
        yield ns, procs, token
    finally:
        for proc in procs.values():
            stop(proc, grace_s=10.0)
        ns.delete()


def peers_of(ns: Netns, proc: Proc, token: str) -> dict[str, dict[str, Any]]:
    status, body = http(ns, "GET", f"{proc.url}/v1/mesh/peers", token=token)
    assert status == 200, body
    return {p["node_id"]: p for p in body["peers"]}


def has_tool(ns: Netns, proc: Proc, token: str) -> bool:
    status, body = http(ns, "GET", f"{proc.url}/v1/mesh/tools", token=token)
    return status == 200 and any(t["identity"] == TOOL for t in body["tools"])


def test_discover_converge_route_and_fail_over(mesh: tuple[Netns, dict[str, Proc], str]) -> None:
    ns, procs, token = mesh
    a, b, c = procs["a"], procs["b"], procs["c"]
    # 1. zeroconf: every node discovers the two others, with the right fingerprints.
    for me in (a, b, c):
        others = [p for p in (a, b, c) if p is not me]
        wait_until(
            lambda me=me, others=others: all(
                peers_of(ns, me, token).get(o.node_id, {}).get("discovered") for o in others
            ),
            15,
            f"{me.name} to discover its peers by mDNS",
        )
        peers = peers_of(ns, me, token)
        for other in others:
            assert peers[other.node_id]["fingerprint"] == other.ident.fingerprint
            assert peers[other.node_id]["urls"] == [other.url]
    # 2. gossip: B and C learn A's tool; it is in C's registry with server_name = A.
    wait_until(lambda: has_tool(ns, b, token) and has_tool(ns, c, token), 10, "tool convergence")
    status, body = http(ns, "GET", f"{c.url}/v1/mesh/tools", token=token)
    (entry,) = [t for t in body["tools"] if t["identity"] == TOOL]
    assert [n["node_id"] for n in entry["nodes"]] == [a.node_id]
    status, tool = http(ns, "GET", f"{c.url}/v1/tools/{TOOL}", token=token)
    assert status == 200, tool
    assert json.dumps(tool).count(a.node_id) >= 1
    # 3. a call made at C runs on A.
    status, resp = http(
        ns, "POST", f"{c.url}/v1/invoke", {"tool": TOOL, "params": {"text": "hello"}}, token
    )
    assert status == 200, resp
    assert resp["status"] == "success"
    assert resp["result"] == {
        "text": "hello",
        "node_id": a.node_id,
        "path": [c.node_id],
        "hop_budget": 2,
    }
    execution = resp["execution"]
    assert (execution["node_id"], execution["hops"]) == (a.node_id, 1)
    assert execution["path"] == [c.node_id, a.node_id]
    assert execution["attempts"] == [a.node_id]
    assert execution["duration_ms"] >= 0
    assert resp["node_id"] == c.node_id
    # 4. kill A (no goodbye): calls fail over fast with NO_CAPABLE_NODE...
    stop(a, signal.SIGKILL)
    started = time.monotonic()
    status, resp = http(
        ns,
        "POST",
        f"{c.url}/v1/invoke",
        {"tool": TOOL, "params": {"text": "hello"}, "routing": {"timeout_ms": 30_000}},
        token,
    )
    elapsed = time.monotonic() - started
    assert resp["error"]["code"] == "NO_CAPABLE_NODE", resp
    assert status == 503
    # Not the call's 30 s timeout waited out on the dead node: a third of it is headroom.
    assert elapsed < 10.0
    # ...and A's tool leaves the others' registries once its announcement expires.
    took = wait_until(
        lambda: not has_tool(ns, b, token) and not has_tool(ns, c, token),
        TTL_S + 5,
        "A's tool to leave B and C",
    )
    assert took <= TTL_S + 2
    status, resp = http(
        ns, "POST", f"{c.url}/v1/invoke", {"tool": TOOL, "params": {"text": "x"}}, token
    )
    assert (status, resp["error"]["code"]) == (404, "TOOL_NOT_FOUND")


def test_forged_replayed_untrusted_and_loop_rejected(
    mesh: tuple[Netns, dict[str, Proc], str],
) -> None:
    ns, procs, token = mesh
    b, c = procs["b"], procs["c"]
    wait_until(
        lambda: (
            c.node_id in peers_of(ns, b, token)
            and peers_of(ns, b, token)[c.node_id].get("announcement")
        ),
        15,
        "B to hold C",
    )

    def push(sender: NodeIdentity, docs: list[Any]) -> tuple[int, Any]:
        env = seal(sender, to=b.node_id, kind="gossip_push", body={"announcements": docs})
        return http(ns, "POST", f"{b.url}/v1/mesh/push", env)

    # C's current announcement as B holds it: ask B with a digest that claims nothing.
    env = seal(c.ident, to=b.node_id, kind="gossip_digest", body={"digest": {}})
    status, reply = http(ns, "POST", f"{b.url}/v1/mesh/gossip", env)
    assert status == 200, reply
    (doc,) = [d for d in reply["announcements"] if d["node_id"] == c.node_id]
    # Tampered: a tool description changed, signature kept.
    tampered = json.loads(json.dumps(doc))
    tampered["version"] += 10**9
    tampered["node_name"] = "not-c"
    assert push(c.ident, [tampered]) == (200, {"outcomes": {"forged": 1}})
    # Replayed: wait until C re-announced, then replay the older signed document.
    wait_until(
        lambda: peers_of(ns, b, token)[c.node_id]["announcement"]["version"] > doc["version"],
        5,
        "C to re-announce",
    )
    assert push(c.ident, [doc]) == (200, {"outcomes": {"stale": 1}})
    # Untrusted: a stranger's correctly signed announcement (relayed by trusted C)...
    stranger = NodeIdentity.from_key(NodeKey.generate(), "mallory")
    evil = dict(
        doc,
        node_id=stranger.node_id,
        node_name="mallory",
        public_key=stranger.public_key_b64,
        version=1,
        timestamp=time.time(),
    )
    evil.pop("signature")
    from bridge.mesh.announce import canonical_bytes

    evil["signature"] = stranger.sign(canonical_bytes(evil))
    assert push(c.ident, [evil]) == (200, {"outcomes": {"untrusted": 1}})
    # ...and the stranger cannot talk to B at all.
    status, body = push(stranger, [evil])
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    # A forged envelope signature is refused too.
    env = seal(c.ident, to=b.node_id, kind="gossip_push", body={"announcements": []})
    env["signature"] = b64e(b"\0" * 64)
    status, body = http(ns, "POST", f"{b.url}/v1/mesh/push", env)
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    # A routing loop: C forwards to B a request that already passed B.
    looped = ToolRequest(
        tool=TOOL,
        params={"text": "x"},
        routing=RequestRouting(hop_budget=2, path=(b.node_id, c.node_id)),
    ).signed(c.key)
    grant = Grant.of_token(parse_token(token)[0], ("mesh:test:*",))
    delegation = delegate(c.ident, grant, looped, to=b.node_id)
    env = seal(
        c.ident,
        to=b.node_id,
        kind="tool_invoke",
        body={"request": looped.to_json(), "delegation": delegation},
    )
    status, body = http(ns, "POST", f"{b.url}/v1/mesh/invoke", env)
    assert (status, body["error"]["code"]) == (508, "HOP_LIMIT_EXCEEDED")
    # The CLI shows B's peers, as an installer would see them.
    out = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            ns.name,
            str(BRIDGE),
            "mesh",
            "peers",
            "--url",
            b.url,
            "--token",
            token,
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert f"id {b.node_id}" in out
    assert any(
        line.startswith("c ") and c.node_id in line and " yes " in line for line in out.splitlines()
    )
