"""Host and session hygiene on a real ``atmosphere-bridge run`` process.

- DNS rebinding: a request naming a host that is not one of the bridge's names
  (``Host: evil.example``) is refused with 421 before any credential is read, on the
  API and on the console; loopback, IP addresses and ``api.allowed_hosts`` are served.
- Console sign-out: a page of another origin can neither sign the user out nor clear
  the cookie; a real sign-out revokes the token the console minted for the session, so
  a copy of it is refused afterwards.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.cli.console import make_link
from bridge.console.sessions import COOKIE
from tests.auth.test_processes import BRIDGE, Proc, start
from tests.support.ports import free_port
from tests.support.processes import stop

pytestmark = pytest.mark.skipif(not BRIDGE.exists(), reason="needs the atmosphere-bridge script")


def request(
    proc: Proc,
    method: str,
    path: str,
    *,
    host: str | None = None,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """Send one request with exactly these headers (``Host`` included); return the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{proc.port}")
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.fixture
def bridge() -> Iterator[tuple[Proc, NodeKey]]:
    base = Path(tempfile.mkdtemp(prefix="atmosphere-hygiene-"))
    proc = Proc(name="hygiene", port=free_port(), state=base / "state", log=base / "run.log")
    key = NodeKey.create(proc.state / KEY_FILE_NAME)
    try:
        start(
            proc,
            {
                "state_dir": str(proc.state),
                "api": {
                    "host": "127.0.0.1",
                    "port": proc.port,
                    "allowed_hosts": ["bridge.home.arpa"],
                },
                "matter": {"enabled": False},
            },
        )
        yield proc, key
    finally:
        stop(proc, grace_s=10.0)
        shutil.rmtree(base, ignore_errors=True)


def test_only_the_bridges_own_host_names_are_served(bridge: tuple[Proc, NodeKey]) -> None:
    proc, key = bridge
    token = issue_token(key, agent_id="reader", permissions=["*"], ttl_s=600)
    auth = {"Authorization": f"Bearer {token}"}
    for rebound in (
        "evil.example",
        f"evil.example:{proc.port}",
        "EVIL.example.",
        "bridge.home.arpa.evil.example",
        "localhost.evil.example",
    ):
        for path in ("/v1/tools", "/console/signin", "/healthz"):
            status, _, body = request(proc, "GET", path, host=rebound, headers=auth)
            assert status == 421, (rebound, path)
            error = json.loads(body)["error"]
            assert error["code"] == "INVALID_REQUEST"
            assert error["details"]["reason"] == "host_not_allowed"
    for own in (
        f"127.0.0.1:{proc.port}",
        "127.0.0.1",
        f"localhost:{proc.port}",
        f"[::1]:{proc.port}",
        "192.168.1.20",
        "bridge.home.arpa",
        f"BRIDGE.home.arpa.:{proc.port}",
    ):
        status, _, body = request(proc, "GET", "/v1/tools", host=own, headers=auth)
        assert status == 200, (own, body[:200])


def _signed_in(proc: Proc) -> tuple[str, str]:
    """Sign a browser in with a one-time link; return (cookie value, CSRF secret)."""
    link = make_link(proc.state, proc.url, permissions=["*"], label="alice")
    code = link.split("code=", 1)[1]
    origin = {"Origin": proc.url, "Content-Type": "application/x-www-form-urlencoded"}
    status, headers, _ = request(
        proc, "POST", "/console/link", headers=origin, body=f"code={code}".encode()
    )
    assert status == 303
    cookie = re.search(rf"{COOKIE}=([^;]+)", headers["set-cookie"])
    assert cookie is not None
    status, _, page = request(
        proc, "GET", "/console/home", headers={"Cookie": f"{COOKIE}={cookie.group(1)}"}
    )
    assert status == 200
    csrf = re.search(rb'<meta name="csrf" content="([^"]+)">', page)
    assert csrf is not None
    return cookie.group(1), csrf.group(1).decode()


def _console_tokens(proc: Proc, admin: str) -> list[dict[str, Any]]:
    # A link's token is "console:<label>:<the link's own subject>" (one subject per link).
    status, _, body = request(
        proc, "GET", "/v1/tokens", headers={"Authorization": f"Bearer {admin}"}
    )
    assert status == 200, body
    doc = json.loads(body)
    entries = doc["tokens"] if isinstance(doc, dict) else doc
    return [e for e in entries if e["agent_id"].startswith("console:alice:")]


def test_sign_out_checks_origin_first_and_revokes_the_sessions_token(
    bridge: tuple[Proc, NodeKey],
) -> None:
    proc, key = bridge
    admin = issue_token(key, agent_id="admin", permissions=["*"], ttl_s=600)
    cookie, csrf = _signed_in(proc)
    jar = {"Cookie": f"{COOKIE}={cookie}", "Content-Type": "application/x-www-form-urlencoded"}
    form = f"csrf={csrf}".encode()
    # A page of another site posts the sign-out form (a browser sends no cookie with a
    # SameSite=Strict jar, but would obey a Set-Cookie that clears it): refused, and
    # nothing in the answer touches the cookie.
    cookieless = {"Content-Type": "application/x-www-form-urlencoded"}
    for sent in (
        {**jar, "Origin": "http://evil.example"},
        jar,
        {**cookieless, "Origin": "http://evil.example"},
    ):
        status, headers, body = request(proc, "POST", "/console/signout", headers=sent, body=form)
        assert status == 403
        assert json.loads(body)["error"]["details"] == {"reason": "origin"}
        assert "set-cookie" not in headers
        status, _, _ = request(proc, "GET", "/console/home", headers=jar)
        assert status == 200  # still signed in
    (minted,) = _console_tokens(proc, admin)
    assert minted["revoked"] is False
    # The real sign-out: the session ends and the token minted for it is revoked.
    status, headers, _ = request(
        proc, "POST", "/console/signout", headers={**jar, "Origin": proc.url}, body=form
    )
    assert status == 303
    assert f'{COOKIE}=""' in headers["set-cookie"] or f"{COOKIE}=;" in headers["set-cookie"]
    (after,) = _console_tokens(proc, admin)
    assert after["id"] == minted["id"]
    assert after["revoked"] is True
    status, headers, _ = request(proc, "GET", "/console/home", headers=jar)
    assert status == 303
