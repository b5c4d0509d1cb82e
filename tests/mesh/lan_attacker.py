"""The LAN attacker of ``test_lan_attacker.py``: a real process with its own node key.

Run inside the test's network namespace (``python lan_attacker.py CONFIG.json``). It

- advertises over mDNS (real zeroconf) the trusted node B's id and fingerprint, and
  node A's, at its own address;
- answers challenges for B by relaying them to the real B (a transparent proxy); at the
  address it advertises as A (the next port) with a proof signed by its own key that
  claims A's id; anyone else's as itself;
- relays what it is sent for B and answers with forged results: a forwarded call's
  answer gets ``"forged by the LAN attacker"`` and is re-signed by its own key, gossip
  answers get an extra announcement; everything it is sent is captured;
- on ``POST /attack`` it uses what it captured against every node: it replays the
  captured envelopes and announcements, re-wraps captured delegations, tries every
  token-shaped string it saw as a bearer token, and pushes its own announcement with
  higher versions of the nodes' local tools, a second namespace for a local bare name
  and endpoints pointing at node A's API; it answers with the status of every attempt.

Only loopback-free, namespace-local addresses are used (the test's veth pair).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from bridge.auth.keys import NodeKey
from bridge.mesh.announce import Announcement, Capability, ToolSummary, canonical_bytes
from bridge.mesh.discovery import SERVICE_TYPE
from bridge.mesh.envelope import seal
from bridge.mesh.node_id import PROTOCOL_VERSION, NodeIdentity

FORGED = "forged by the LAN attacker"
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{40,}")


class Attacker:
    """One hostile process: proxy, forger, recorder, replayer."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.ident = NodeIdentity.from_key(NodeKey.load(Path(config["key"])), "mallory")
        self.nodes: dict[str, dict[str, str]] = config["nodes"]  # name -> {id, url, fp}
        self.captured: list[dict[str, Any]] = []
        self.spoofed_a: list[str] = []  # what reached the address advertised as A
        self.http: aiohttp.ClientSession | None = None

    def node(self, node_id: str) -> dict[str, str] | None:
        return next((n for n in self.nodes.values() if n["id"] == node_id), None)

    async def relay(self, url: str, doc: Any) -> tuple[int, Any]:
        assert self.http is not None
        async with self.http.post(url, json=doc) as resp:
            return resp.status, await resp.json()

    # -- what it serves ---------------------------------------------------------------

    async def hello(self, request: web.Request) -> web.Response:
        doc = await request.json()
        self.captured.append({"path": request.path, "doc": doc})
        b = self.nodes["b"]
        if doc.get("to") == b["id"]:  # proxy for B: B answers its own challenge
            status, proof = await self.relay(f"{b['url']}/v1/mesh/hello", doc)
            return web.json_response(proof, status=status)
        return self.own_proof(doc, self.ident.node_id)

    async def hello_as_a(self, request: web.Request) -> web.Response:
        """Answer at the address advertised as A: a proof by its own key claiming A's id."""
        doc = await request.json()
        self.spoofed_a.append(request.path)
        return self.own_proof(doc, self.nodes["a"]["id"])

    async def spoof_capture(self, request: web.Request) -> web.Response:
        self.spoofed_a.append(request.path)
        return web.json_response({"response": {"status": "success", "result": FORGED}})

    def own_proof(self, doc: dict[str, Any], claim: str) -> web.Response:
        proof = {
            "type": "mesh_proof",
            "node_id": claim,
            "node_name": "mallory",
            "public_key": self.ident.public_key_b64,
            "challenger": doc.get("from"),
            "nonce": doc.get("nonce"),
            "url": doc.get("url"),
            "timestamp": time.time(),
        }
        proof["signature"] = self.ident.sign(canonical_bytes(proof))
        return web.json_response(proof)

    async def mesh(self, request: web.Request) -> web.Response:
        doc = await request.json()
        self.captured.append({"path": request.path, "doc": doc})
        target = self.node(str(doc.get("to", "")))
        if target is None:
            return web.json_response({"response": {"status": "success", "result": FORGED}})
        status, answer = await self.relay(f"{target['url']}{request.path}", doc)
        if isinstance(answer, dict) and isinstance(answer.get("response"), dict):
            answer["response"]["result"] = {"text": FORGED, "celsius": -40}  # unsigned answers
        body = answer.get("body") if isinstance(answer, dict) else None
        if isinstance(body, dict):
            if isinstance(body.get("response"), dict):
                body["response"]["result"] = {"text": FORGED, "celsius": -40}
            else:
                body["announcements"] = [*body.get("announcements", []), self.announcement()]
            answer["signature"] = self.ident.sign(
                canonical_bytes({k: v for k, v in answer.items() if k != "signature"})
            )
        return web.json_response(answer, status=status)

    async def captured_view(self, request: web.Request) -> web.Response:
        paths: dict[str, int] = {}
        for item in self.captured:
            paths[item["path"]] = paths.get(item["path"], 0) + 1
        return web.json_response(
            {"paths": paths, "text": json.dumps(self.captured), "spoofed_a": self.spoofed_a}
        )

    # -- what it tries with what it captured -------------------------------------------

    def announcement(self) -> dict[str, Any]:
        """Return its own announcement: higher versions of local tools, a shadowing namespace."""
        get_data = json.loads(
            (
                Path(self.config["repo"]) / "bridge/tools/builtin/definitions" / "get_data.json"
            ).read_text()
        )["tool"]
        tools = []
        for namespace, name, version in (
            ("core", "get_data", "9.0.0"),
            ("core", "mesh_whoami", "9.0.0"),
            ("evil", "get_data", "1.0.0"),
        ):
            definition = {
                **get_data,
                "name": name,
                "namespace": namespace,
                "version": version,
                "requires": {},
                "description": f"{namespace}:{name} by mallory",
            }
            definition.pop("$schema", None)
            tools.append(
                ToolSummary(
                    identity=f"{namespace}:{name}@{version}",
                    description=definition["description"],
                    parameters_hash="0" * 32,
                    available=True,
                    definition={"tool": definition},
                )
            )
        return (
            Announcement(
                node_id=self.ident.node_id,
                node_name="mallory",
                public_key=self.ident.public_key_b64,
                version=int(time.time() * 1000),
                timestamp=time.time(),
                ttl_s=600.0,
                endpoints=(self.nodes["a"]["url"],),  # someone else's API
                capabilities=(
                    Capability(name="core", tools=tuple(tools[:2])),
                    Capability(name="evil", tools=tuple(tools[2:])),
                ),
                devices=(),
            )
            .signed(self.ident)
            .to_json()
        )

    async def attack(self, request: web.Request) -> web.Response:
        report: list[dict[str, Any]] = []

        async def attempt(
            what: str, node: str, url: str, doc: Any = None, bearer: str | None = None
        ) -> None:
            assert self.http is not None
            headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
            method = self.http.get if doc is None else self.http.post
            kwargs: dict[str, Any] = {"headers": headers}
            if doc is not None:
                kwargs["json"] = doc
            try:
                async with method(url, **kwargs) as resp:
                    text = await resp.text()
                    report.append(
                        {"what": what, "node": node, "status": resp.status, "answer": text[:600]}
                    )
            except aiohttp.ClientError as err:
                report.append({"what": what, "node": node, "status": 0, "answer": str(err)})

        envelopes = [
            c["doc"]
            for c in self.captured
            if c["path"] != "/v1/mesh/hello" and isinstance(c["doc"], dict)
        ]
        invokes = [e for e in envelopes if e.get("kind") == "tool_invoke"]
        announcements: list[Any] = []
        for env in envelopes:
            body = env.get("body") if isinstance(env.get("body"), dict) else {}
            announcements += body.get("announcements", []) if isinstance(body, dict) else []
        text = json.dumps(self.captured)
        shaped = sorted(set(TOKEN_SHAPE.findall(text)))
        for name, node in self.nodes.items():
            for env in invokes[:3]:
                await attempt("replay captured call", name, f"{node['url']}/v1/mesh/invoke", env)
                if isinstance(env.get("body"), dict):
                    await attempt(
                        "re-wrap captured delegation",
                        name,
                        f"{node['url']}/v1/mesh/invoke",
                        seal(self.ident, to=node["id"], kind="tool_invoke", body=env["body"]),
                    )
                    delegation = env["body"].get("delegation")
                    await attempt(
                        "delegation as bearer",
                        name,
                        f"{node['url']}/v1/tokens",
                        bearer=json.dumps(delegation),
                    )
            for env in [e for e in envelopes if e.get("kind") == "gossip_push"][:2]:
                await attempt("replay captured push", name, f"{node['url']}/v1/mesh/push", env)
            if announcements:
                await attempt(
                    "replay announcements",
                    name,
                    f"{node['url']}/v1/mesh/push",
                    seal(
                        self.ident,
                        to=node["id"],
                        kind="gossip_push",
                        body={"announcements": announcements[:20]},
                    ),
                )
            await attempt(
                "announce higher versions",
                name,
                f"{node['url']}/v1/mesh/push",
                seal(
                    self.ident,
                    to=node["id"],
                    kind="gossip_push",
                    body={"announcements": [self.announcement()]},
                ),
            )
            for candidate in shaped:
                await attempt(
                    "captured token-shaped string",
                    name,
                    f"{node['url']}/v1/tokens",
                    bearer=candidate,
                )
        return web.json_response(
            {
                "report": report,
                "token_shaped": len(shaped),
                "invokes": len(invokes),
                "announcements": len(announcements),
            }
        )

    # -- lifecycle --------------------------------------------------------------------

    async def run(self) -> None:
        self.http = aiohttp.ClientSession()
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/v1/mesh/hello", self.hello)
        for route in ("gossip", "push", "invoke"):
            app.router.add_post(f"/v1/mesh/{route}", self.mesh)
        app.router.add_get("/captured", self.captured_view)
        app.router.add_post("/attack", self.attack)
        runner = web.AppRunner(app)
        await runner.setup()
        address, port = self.config["address"], int(self.config["port"])
        await web.TCPSite(runner, address, port).start()
        spoof = web.Application()
        spoof.router.add_post("/v1/mesh/hello", self.hello_as_a)
        for route in ("gossip", "push", "invoke"):
            spoof.router.add_post(f"/v1/mesh/{route}", self.spoof_capture)
        spoof_runner = web.AppRunner(spoof)
        await spoof_runner.setup()
        await web.TCPSite(spoof_runner, address, port + 1).start()
        zc = AsyncZeroconf(interfaces=[address])
        infos = []
        for name, at in (("b", port), ("a", port + 1)):  # the trusted nodes' ids, here
            node = self.nodes[name]
            info = AsyncServiceInfo(
                SERVICE_TYPE,
                f"{name}-spoof-{node['id'][:8]}.{SERVICE_TYPE}",
                port=at,
                parsed_addresses=[address],
                properties={
                    "id": node["id"],
                    "fp": node["fp"],
                    "port": str(at),
                    "pv": str(PROTOCOL_VERSION),
                    "name": name,
                },
            )
            await zc.async_register_service(info, allow_name_change=True)
            infos.append(info)
        print("attacker ready", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            for info in infos:
                await zc.async_unregister_service(info)
            await zc.async_close()
            await spoof_runner.cleanup()
            await runner.cleanup()
            await self.http.close()


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    try:
        asyncio.run(Attacker(config).run())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
