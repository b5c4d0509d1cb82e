"""A real ``atmosphere-bridge run`` for the credential and authority tests, and its clients.

``LiveBridge.start`` writes a config (loopback API, no Matter, no mesh, the tools of
``authority_tools.py`` plus a client tool ``ui:ask_user``, ``auth.expiry_skew_s: 0`` so
short-lived tokens expire when they say) and waits for ``/healthz``. ``http`` speaks
plain HTTP with ``urllib``; ``ws`` runs a coroutine with an ``aiohttp`` session; the
audit is read straight from the bridge's SQLite file (WAL, read-only).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import Constraints, issue_token, parse_token
from tests.support.ports import free_port
from tests.support.processes import stop, wait_until

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"
HERE = Path(__file__).parent
ASK = """
tool:
  name: ask_user
  namespace: ui
  description: Ask the person at the client a question and wait for the answer.
  type: client
  intent: render
  parameters:
    type: object
    properties: {question: {type: string}}
    required: [question]
  requires: {permissions: ["ui:ask"]}
  execution: {timeout_ms: 20000, requires_response: true}
"""
T = TypeVar("T")


@dataclass
class LiveBridge:
    """One bridge process on loopback and what tests need to talk to it."""

    base: Path
    port: int = field(default_factory=free_port)
    popen: subprocess.Popen[bytes] | None = None
    key: NodeKey | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def state(self) -> Path:
        return self.base / "state"

    @property
    def log(self) -> Path:
        return self.base / "bridge.log"

    @classmethod
    def start(cls) -> LiveBridge:
        base = Path(tempfile.mkdtemp(prefix="atmosphere-authority-"))
        bridge = cls(base=base)
        bridge.key = NodeKey.create(bridge.state / KEY_FILE_NAME)
        (base / "ask.yaml").write_text(ASK)
        manifest = base / "tools.yaml"
        manifest.write_text(
            yaml.safe_dump(
                {
                    "tools": [
                        {"source": f"file:{HERE / 'authority_tools.py'}", "entry": name}
                        for name in ("door_unlock", "vault_open", "slow_echo")
                    ]
                    + [{"source": "definition:ask.yaml"}]
                }
            )
        )
        config = {
            "state_dir": str(bridge.state),
            "tools_manifest": str(manifest),
            "api": {"host": "127.0.0.1", "port": bridge.port},
            "auth": {"expiry_skew_s": 0},
            "matter": {"enabled": False},
        }
        (base / "bridge.yaml").write_text(yaml.safe_dump(config))
        with bridge.log.open("wb") as log:
            bridge.popen = subprocess.Popen(
                [str(BRIDGE), "--config", str(base / "bridge.yaml"), "run", "--no-matter"],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=base,
            )
        wait_until(
            lambda: bridge.http("GET", "/healthz")[0] == 200,
            30,
            f"the bridge to serve /healthz ({bridge.log})",
        )
        return bridge

    def stop(self) -> None:
        stop(self, grace_s=10.0)

    # -- tokens -----------------------------------------------------------------------

    def token(
        self,
        agent: str,
        perms: list[str],
        *,
        ttl_s: float = 3600,
        rate: int | None = None,
        now: float | None = None,
    ) -> str:
        """Return a token signed by the bridge's node key (as ``token issue`` makes them)."""
        assert self.key is not None
        return issue_token(
            self.key,
            agent_id=agent,
            permissions=perms,
            ttl_s=ttl_s,
            now=now,
            constraints=Constraints(rate_limit_per_minute=rate),
        )

    def root(self) -> str:
        """Return an administrator's token (``*``), as ``token issue`` on the node makes it."""
        return self.token("root", ["*"])

    def issue(
        self, agent: str, perms: list[str], *, ttl_s: float = 3600, rate: int | None = None
    ) -> str:
        """Issue a token through the running bridge as an administrator (it is in the ledger)."""
        constraints = {} if rate is None else {"rate_limit_per_minute": rate}
        status, body, _ = self.http(
            "POST",
            "/v1/tokens",
            self.root(),
            {"agent_id": agent, "permissions": perms, "ttl_s": ttl_s, "constraints": constraints},
        )
        assert status == 201, body
        return str(body["token"])

    def revoke(self, raw: str) -> None:
        """Revoke ``raw`` through the running bridge, as an administrator."""
        token, _ = parse_token(raw)
        status, body, _ = self.http("DELETE", f"/v1/tokens/{token.id}", self.root())
        assert (status, body.get("revoked")) == (200, True), body

    # -- clients ----------------------------------------------------------------------

    def http(
        self,
        method: str,
        path: str,
        token: str | None = None,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        form: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, Any, dict[str, str]]:
        """Send one request; return the status, the JSON (or text) answer and headers."""
        sent = dict(headers or {})
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=sent)
        opener = urllib.request.build_opener(_NoRedirect())
        try:
            with opener.open(request, timeout=timeout) as resp:
                return resp.status, _decode(resp.read()), dict(resp.headers)
        except urllib.error.HTTPError as err:
            return err.code, _decode(err.read()), dict(err.headers)

    def run(self, job: Callable[[aiohttp.ClientSession], Awaitable[T]]) -> T:
        """Run ``job(session)`` in a fresh event loop with an aiohttp session."""

        async def main() -> T:
            timeout = aiohttp.ClientTimeout(total=30)
            async with aiohttp.ClientSession(timeout=timeout) as session:
                return await job(session)

        return asyncio.run(main())

    # -- the audit ----------------------------------------------------------------------

    def audit(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Return the rows of ``sql`` on the bridge's database (read-only)."""
        conn = sqlite3.connect(f"file:{self.state / 'bridge.db'}?mode=ro", uri=True)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def refusals_of(self, token_id: str) -> dict[str, int]:
        """Return ``{reason: count}`` of the refusals counted under ``token:<token_id>``."""
        rows = self.audit(
            "SELECT reason, sum(count) FROM audit_rejections WHERE source = ? GROUP BY reason",
            (f"token:{token_id}",),
        )
        return {reason: count for reason, count in rows}

    def ran(self) -> list[str]:
        """Return the lines the tools appended to ``ran.log`` (what really ran)."""
        path = self.base / "ran.log"
        return path.read_text().splitlines() if path.exists() else []


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _decode(data: bytes) -> Any:
    try:
        return json.loads(data or b"null")
    except ValueError:
        return data.decode("utf-8", "replace")
