"""Three real bridges and a LAN attacker process in a private network namespace.

The namespace holds a veth pair (``va`` 10.231.0.1, ``vb`` 10.231.0.2 and 10.231.0.3),
so mDNS works between the processes and no packet leaves it. A and C find each other
and everything else by zeroconf; B does not advertise itself (``discovery: false``) and
knows A and C from its configuration, so the only address the LAN offers for B is the
attacker's spoofed advertisement. The attacker (``lan_attacker.py``, its own key) relays
challenges for B to B (a transparent proxy), answers challenges at the address it
advertises as A with a forged proof, forges the results of the calls it relays,
captures everything and then, on ``POST /attack``, replays and re-wraps what it
captured against every node, tries it as a bearer token and announces higher versions
of the nodes' local tools. C trusts the
attacker's key (a trusted peer gone rogue); A and B do not.

Every attack must be refused: no forged result reaches a caller, nothing captured works
anywhere, a peer cannot take a local name, announced endpoints of a peer are used only
where it proved its key, and each node's audit log shows what it refused.
Needs root and iproute2: fails (it does not skip) without them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.mesh.node_id import NodeIdentity
from tests.mesh.test_processes import BRIDGE, Netns, Proc, http
from tests.support.processes import stop, wait_until

# Counted as real end-to-end runs (the markers main's tests/support/real.py registers).
pytestmark = [pytest.mark.processes, pytest.mark.namespaces]

REPO = Path(__file__).resolve().parents[2]
GARAGE = "garage:garage_temp@1.0.0"
WHOAMI = "core:mesh_whoami@1.0.0"
FORGED = "forged by the LAN attacker"
ATTACKER = ("10.231.0.3", 18739)


@dataclass
class Lan:
    ns: Netns
    procs: dict[str, Proc]
    attacker: Proc
    admin: str
    tmp: Path

    def attacker_url(self) -> str:
        return f"http://{ATTACKER[0]}:{ATTACKER[1]}"


def manifest(tmp: Path, module: str, entry: str) -> str:
    path = tmp / f"{entry}.yaml"
    path.write_text(
        yaml.safe_dump(
            {"tools": [{"source": f"file:{REPO / 'tests/mesh' / module}", "entry": entry}]}
        )
    )
    return str(path)


@pytest.fixture(scope="module")
def lan(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lan]:
    assert os.geteuid() == 0, "this test creates a network namespace: run it as root"
    tmp = tmp_path_factory.mktemp("lan")
    ns = Netns(f"atm-lan-{os.getpid()}")
    issuer = NodeKey.generate()
    admin = issue_token(issuer, agent_id="admin", permissions=["*"], ttl_s=900)
    layout = {
        "a": ("va", "10.231.0.1", 18731),
        "b": ("va", "10.231.0.1", 18732),
        "c": ("10.231.0.2", "10.231.0.2", 18733),
    }
    procs: dict[str, Proc] = {}
    for name, (_iface, address, port) in layout.items():
        key = NodeKey.create(tmp / name / KEY_FILE_NAME)
        procs[name] = Proc(
            name=name,
            ident=NodeIdentity.from_key(key, name),
            key=key,
            address=address,
            port=port,
            log=tmp / f"{name}.log",
        )
    mkey = NodeKey.create(tmp / "mallory" / KEY_FILE_NAME)
    mallory = Proc(
        name="mallory",
        ident=NodeIdentity.from_key(mkey, "mallory"),
        key=mkey,
        address=ATTACKER[0],
        port=ATTACKER[1],
        log=tmp / "mallory.log",
    )
    a, b, c = procs["a"], procs["b"], procs["c"]
    mesh_common = {
        "enabled": True,
        "trust": "allowlist",
        "gossip_interval_s": 0.3,
        "announce_interval_s": 1.0,
        "announcement_ttl_s": 3.0,
    }
    meshes = {
        "a": {"interfaces": ["va"], "trusted_nodes": [b.node_id, c.node_id]},
        "b": {
            "interfaces": ["va"],
            "discovery": False,
            "peers": [a.url, c.url],
            "trusted_nodes": [a.node_id, c.node_id],
        },
        "c": {
            "interfaces": ["10.231.0.2"],
            "trusted_nodes": [a.node_id, b.node_id, mallory.node_id],
        },
    }
    manifests = {
        "a": manifest(tmp, "mesh_tools.py", "mesh_whoami"),
        "b": manifest(tmp, "lan_tools.py", "garage_temp"),
    }
    for name, proc in procs.items():
        config: dict[str, Any] = {
            "state_dir": str(tmp / name),
            "api": {"host": "0.0.0.0", "port": proc.port},
            "auth": {"trusted_issuers": [issuer.public_key_b64]},
            "matter": {"enabled": False},
            "mesh": {**mesh_common, "node_name": name, **meshes[name]},
        }
        if name in manifests:
            config["tools_manifest"] = manifests[name]
        (tmp / f"{name}.yaml").write_text(yaml.safe_dump(config))
    (tmp / "mallory.json").write_text(
        json.dumps(
            {
                "key": str(tmp / "mallory" / KEY_FILE_NAME),
                "repo": str(REPO),
                "address": ATTACKER[0],
                "port": ATTACKER[1],
                "nodes": {
                    n: {"id": p.node_id, "url": p.url, "fp": p.ident.fingerprint}
                    for n, p in procs.items()
                },
            }
        )
    )
    ns.create()
    subprocess.run(
        ["ip", "-n", ns.name, "addr", "add", "10.231.0.3/24", "dev", "vb"],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
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
        with mallory.log.open("wb") as log:
            mallory.popen = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    ns.name,
                    sys.executable,
                    str(REPO / "tests/mesh/lan_attacker.py"),
                    str(tmp / "mallory.json"),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=tmp,
                env=env,
            )
        for proc in procs.values():
            wait_until(
                lambda p=proc: http(ns, "GET", f"{p.url}/healthz")[0] == 200,
                30,
                f"{proc.name} to serve /healthz ({proc.log})",
            )
        wait_until(
            lambda: b"attacker ready" in mallory.log.read_bytes(),
            20,
            f"the attacker to start ({mallory.log})",
        )
        yield Lan(ns=ns, procs=procs, attacker=mallory, admin=admin, tmp=tmp)
    finally:
        for proc in (*procs.values(), mallory):
            stop(proc, grace_s=10.0)
        ns.delete()


def tools_at(lan: Lan, proc: Proc) -> set[str]:
    status, body = http(lan.ns, "GET", f"{proc.url}/v1/mesh/tools", token=lan.admin)
    assert status == 200, body
    return {t["identity"] for t in body["tools"]}


def invoke(lan: Lan, proc: Proc, tool: str, params: dict[str, Any]) -> tuple[int, Any]:
    return http(
        lan.ns, "POST", f"{proc.url}/v1/invoke", {"tool": tool, "params": params}, lan.admin
    )


def refusals(lan: Lan, proc: Proc) -> list[dict[str, Any]]:
    out = subprocess.run(
        [
            str(BRIDGE),
            "--config",
            str(lan.tmp / f"{proc.name}.yaml"),
            "audit",
            "--decision",
            "mesh_refused",
            "--json",
            "--limit",
            "1000",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_every_attack_of_a_lan_attacker_is_refused(lan: Lan) -> None:
    ns, a, b, c = lan.ns, lan.procs["a"], lan.procs["b"], lan.procs["c"]
    wait_until(
        lambda: {GARAGE, WHOAMI} <= tools_at(lan, c) and GARAGE in tools_at(lan, a),
        30,
        "B's and A's tools to reach C, B's to reach A",
    )

    # 1. The only address the LAN gives for B is the attacker's: it relays the call to B
    #    and forges the answer. The caller gets a routing failure, never the forged result
    #    (straight from B's "address", or from A as a relay that met the same forgery).
    for caller in (c, a):
        status, resp = invoke(lan, caller, GARAGE, {})
        assert (status, resp["error"]["code"]) == (503, "NO_CAPABLE_NODE"), resp
        assert FORGED not in json.dumps(resp)
    # 2. A's id is spoofed too (with a proof by the attacker's own key): C's call to A's
    #    tool still runs on A, at the address that proved A's key.
    status, resp = invoke(lan, c, WHOAMI, {"text": "hello"})
    assert status == 200, resp
    assert resp["result"] == {
        "text": "hello",
        "node_id": a.node_id,
        "path": [c.node_id],
        "hop_budget": 2,
    }

    # 3. What the attacker captured holds no bearer token, only per-call delegations.
    status, captured = http(ns, "GET", f"{lan.attacker_url()}/captured")
    assert status == 200
    assert captured["paths"].get("/v1/mesh/invoke", 0) >= 2, captured["paths"]
    assert captured["paths"].get("/v1/mesh/hello", 0) >= 2
    assert lan.admin not in captured["text"]
    assert lan.admin.split(".")[1] not in captured["text"]

    # 4. Everything it tries with that, and its own announcement, against every node -
    #    once it has captured at least one gossip message carrying announcements (which
    #    gossip round passes through it first depends on timing; waiting makes the replay
    #    below certain to be tried instead of asserting on a race).
    def captured_announcements() -> int:
        code, seen = http(ns, "GET", f"{lan.attacker_url()}/captured")
        assert code == 200
        count = 0
        for item in json.loads(seen["text"]):
            doc = item.get("doc")
            body = doc.get("body") if isinstance(doc, dict) else None
            if isinstance(body, dict) and isinstance(body.get("announcements"), list):
                count += len(body["announcements"])
        return count

    wait_until(
        lambda: captured_announcements() >= 1,
        60,
        "a gossip message with announcements to pass through the attacker",
    )
    status, attack = http(ns, "POST", f"{lan.attacker_url()}/attack", {})
    assert status == 200, attack
    assert attack["token_shaped"] == 0
    assert attack["invokes"] >= 2
    assert attack["announcements"] >= 1
    by_what: dict[str, list[tuple[str, int, str]]] = {}
    for row in attack["report"]:
        by_what.setdefault(row["what"], []).append((row["node"], row["status"], row["answer"]))
    for what in (
        "replay captured call",
        "re-wrap captured delegation",
        "delegation as bearer",
        "replay captured push",
    ):
        assert by_what[what], what
        assert {s for _, s, _ in by_what[what]} == {401}, (what, by_what[what])
    for what in ("replay announcements", "announce higher versions"):
        for node, status, answer in by_what[what]:
            if node == "c":  # C trusts the attacker's key: the envelope is taken...
                assert status == 200, answer
            else:
                assert status == 401, (what, node, answer)
                assert "allowlist" in answer

    # 5. ...but a peer cannot take a local name: C's get_data stays its own, unambiguous.
    wait_until(lambda: "evil:get_data@1.0.0" in tools_at(lan, c), 10, "mallory's tools at C")
    status, tool = http(ns, "GET", f"{c.url}/v1/tools/core:get_data@9.0.0", token=lan.admin)
    assert status == 404, tool
    status, resp = invoke(lan, c, "get_data", {"key": "lan"})
    assert status == 200, resp
    assert resp["execution"]["node_id"] == c.node_id
    assert resp["tool"] == "core:get_data@1.0.0"
    # Its announced endpoint is A's API: not where it proved its key, so never used.
    status, resp = invoke(lan, c, "evil:get_data@1.0.0", {"key": "lan"})
    assert (status, resp["error"]["code"]) == (503, "NO_CAPABLE_NODE"), resp

    # 6. Each node's audit log shows what it refused.
    status, captured_after = http(ns, "GET", f"{lan.attacker_url()}/captured")
    assert status == 200
    audit = {p.name: refusals(lan, p) for p in (a, b, c)}
    messages = {n: [r["details"]["message"] for r in rows] for n, rows in audit.items()}
    assert any("answer signature is invalid" in m for m in messages["c"]), messages["c"]
    assert any("answer signature is invalid" in m for m in messages["a"]), messages["a"]
    # The address advertised as A got challenges at most, each refused where it was made
    # (the nodes try it only while A's own address is not proven: it may be none).
    spoofed = captured_after["spoofed_a"]
    assert set(spoofed) <= {"/v1/mesh/hello"}, spoofed
    forged_proofs = [m for m in messages["c"] if "not its key's" in m]
    assert len(forged_proofs) == len(spoofed), (spoofed, messages["c"])
    assert any("allowlist" in m for m in messages["a"]), messages["a"]
    assert any("allowlist" in m for m in messages["b"]), messages["b"]
    assert any("replay" in m for m in messages["b"]), messages["b"]
    # The captured calls it replayed to other nodes were misaddressed there.
    assert any("addressed to another node" in m for m in messages["a"]), messages["a"]
