"""Console sign-in over real HTTP: one-time links, cookies, CSRF, CSP, sign-out."""

from __future__ import annotations

import math
import re
import time
from types import SimpleNamespace

import aiohttp
import pytest

from bridge.auth.tokens import issue_token
from bridge.cli.console import make_link
from bridge.console.headers import CSP
from bridge.console.sessions import COOKIE, CSRF_HEADER
from tests.support.server import BridgeServer


def _code(link: str) -> str:
    return link.split("code=", 1)[1]


async def _client(server: BridgeServer) -> aiohttp.ClientSession:
    # A client with its own cookie jar (unsafe=True: the jar keeps cookies of IP hosts).
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def _sign_in(
    client: aiohttp.ClientSession, server: BridgeServer, code: str, origin: str | None = None
) -> aiohttp.ClientResponse:
    return await client.post(
        f"{server.url}/console/link",
        data={"code": code},
        headers={"Origin": origin or server.url},
        allow_redirects=False,
    )


async def _csrf(client: aiohttp.ClientSession, server: BridgeServer) -> str:
    async with client.get(f"{server.url}/console/home") as page:
        assert page.status == 200
        text = await page.text()
    match = re.search(r'<meta name="csrf" content="([^"]+)">', text)
    assert match is not None
    return match.group(1)


async def test_link_signs_in_once_with_a_strict_http_only_cookie(
    bridge_server: BridgeServer,
) -> None:
    link = make_link(
        bridge_server.service.state_dir,
        bridge_server.url,
        permissions=["device:read:*"],
        label="alice",
    )
    assert link.startswith(f"{bridge_server.url}/console/link?code=")
    async with await _client(bridge_server) as client:
        # Opening the link only shows a button: a link preview never uses the code up.
        async with client.get(link) as shown:
            assert shown.status == 200
            assert shown.headers["Content-Security-Policy"] == CSP
            assert shown.headers["Referrer-Policy"] == "same-origin"
            assert COOKIE not in shown.cookies
        async with await _sign_in(client, bridge_server, _code(link)) as res:
            assert res.status == 303
            assert res.headers["Location"] == "/console/home"
            cookie = res.headers["Set-Cookie"]
        assert f"{COOKIE}=" in cookie
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert "Path=/" in cookie
        # The session acts with a console token scoped as the link said.
        async with client.get(f"{bridge_server.url}/v1/approvals") as denied:
            assert denied.status == 403
            assert (await denied.json())["error"]["details"] == {"required": "admin:approve"}
        # A second browser cannot use the same code.
        async with await _client(bridge_server) as other:
            async with await _sign_in(other, bridge_server, _code(link)) as again:
                assert again.status == 401
                assert "used already or has expired" in await again.text()
                assert COOKIE not in again.cookies


async def test_state_changes_need_the_csrf_secret_and_our_origin(
    bridge_server: BridgeServer,
) -> None:
    link = make_link(bridge_server.service.state_dir, bridge_server.url)
    async with await _client(bridge_server) as client:
        async with await _sign_in(client, bridge_server, _code(link)) as res:
            assert res.status == 303
        csrf = await _csrf(client, bridge_server)
        body = {"tool": "no_such_tool", "params": {}}
        url = f"{bridge_server.url}/v1/invoke"
        async with client.post(url, json=body, headers={"Origin": bridge_server.url}) as res:
            assert res.status == 403
            assert (await res.json())["error"]["details"] == {"reason": "csrf"}
        bad = {CSRF_HEADER: csrf, "Origin": "http://evil.example"}
        async with client.post(url, json=body, headers=bad) as res:
            assert res.status == 403
        good = {CSRF_HEADER: csrf, "Origin": bridge_server.url}
        async with client.post(url, json=body, headers=good) as res:
            assert res.status == 404  # passed auth: the pipeline answers about the tool
            assert (await res.json())["error"]["code"] == "TOOL_NOT_FOUND"
        # Reads need no CSRF secret; the token is the session's (admin: *).
        async with client.get(f"{bridge_server.url}/v1/approvals") as res:
            assert res.status == 200
        # Sign-out needs the secret too, and ends the session.
        async with client.post(
            f"{bridge_server.url}/console/signout",
            data={"csrf": "x"},
            headers={"Origin": bridge_server.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 403
        async with client.post(
            f"{bridge_server.url}/console/signout",
            data={"csrf": csrf},
            headers={"Origin": bridge_server.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 303
            assert res.headers["Location"] == "/console/signin"
        async with client.get(f"{bridge_server.url}/console/home", allow_redirects=False) as res:
            assert res.status == 303
            assert res.headers["Location"] == "/console/signin"


async def test_a_pasted_token_signs_in_and_a_bad_one_does_not(
    bridge_server: BridgeServer,
) -> None:
    runtime = bridge_server.service.invocation
    assert runtime is not None
    raw = issue_token(runtime.key, agent_id="phone", permissions=["admin:approve"], ttl_s=60)
    async with await _client(bridge_server) as client:
        async with client.post(
            f"{bridge_server.url}/console/signin",
            data={"token": raw},
            headers={"Origin": bridge_server.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 303
        async with client.get(f"{bridge_server.url}/console/home") as page:
            assert "phone" in await page.text()
        async with client.get(f"{bridge_server.url}/v1/approvals") as res:
            assert res.status == 200
        async with client.get(f"{bridge_server.url}/console/api/state") as res:
            assert res.status == 403
            assert (await res.json())["error"]["code"] == "PERMISSION_DENIED"
    async with await _client(bridge_server) as client:
        async with client.post(
            f"{bridge_server.url}/console/signin",
            data={"token": raw[:-4] + "AAAA"},
            headers={"Origin": bridge_server.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 401
            assert "signature" in await res.text()
        # A sign-in form posted from another site is refused.
        async with client.post(
            f"{bridge_server.url}/console/signin",
            data={"token": raw},
            headers={"Origin": "http://evil.example"},
            allow_redirects=False,
        ) as res:
            assert res.status == 401
            assert COOKIE not in res.cookies


async def test_an_expired_link_is_refused(bridge_server: BridgeServer) -> None:
    from bridge.console.sessions import LinkStore

    store = LinkStore(bridge_server.service.db)
    code = store.create_sync(ttl_s=60, now=time.time() - 120)
    async with await _client(bridge_server) as client:
        async with await _sign_in(client, bridge_server, code) as res:
            assert res.status == 401


async def test_a_link_signs_in_whatever_the_millisecond_with_no_clock_skew(
    bridge_server: BridgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CI flake of tests/auth/test_authority.py (its bridge runs with
    # auth.expiry_skew_s: 0): the token the link mints was made at .0006 of a second,
    # stamped issued_at .001 (rounded to the nearest millisecond) and checked at once,
    # still before .001: "not valid yet", 401. Here the clock stands still at .0006.
    runtime = bridge_server.service.invocation
    assert runtime is not None
    frozen = math.floor(time.time()) + 0.0006
    monkeypatch.setattr("bridge.auth.tokens.time", SimpleNamespace(time=lambda: frozen))
    monkeypatch.setattr(runtime.verifier, "_clock", lambda: frozen)
    monkeypatch.setattr(runtime.verifier, "clock_skew_s", 0.0)
    link = make_link(bridge_server.service.state_dir, bridge_server.url, label="edge")
    async with await _client(bridge_server) as client:
        async with await _sign_in(client, bridge_server, _code(link)) as res:
            assert res.status == 303, await res.text()
            assert res.headers["Location"] == "/console/home"


async def test_a_refused_link_says_which_step_refused_it(
    bridge_server: BridgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = bridge_server.service.invocation
    assert runtime is not None
    async with await _client(bridge_server) as client:
        # Used up already: the link step.
        link = make_link(bridge_server.service.state_dir, bridge_server.url, label="once")
        async with await _sign_in(client, bridge_server, _code(link)) as res:
            assert res.status == 303
        async with await _sign_in(client, bridge_server, _code(link)) as res:
            assert res.status == 401
            page = await res.text()
        assert 'data-step="link" data-reason="link_used_or_expired"' in page
        assert "Not signed in: the link was refused: this sign-in link was used" in page
        # The minted token refused when checked: the verifier's clock an hour behind.
        link = make_link(bridge_server.service.state_dir, bridge_server.url, label="early")
        with monkeypatch.context() as patch:
            patch.setattr(runtime.verifier, "_clock", lambda: time.time() - 3600)
            async with await _sign_in(client, bridge_server, _code(link)) as res:
                assert res.status == 401
                page = await res.text()
        assert 'data-step="verify" data-reason="not_yet_valid"' in page
        assert "Not signed in: the session&#x27;s new token was refused: token is not valid" in page
        # Another site's form: the form step.
        async with client.post(
            f"{bridge_server.url}/console/link",
            data={"code": _code(link)},
            headers={"Origin": "http://evil.example"},
            allow_redirects=False,
        ) as res:
            assert res.status == 401
            assert 'data-step="form" data-reason="origin"' in await res.text()


async def test_pages_without_a_session_go_to_sign_in(bridge_server: BridgeServer) -> None:
    async with await _client(bridge_server) as client:
        for path in ("/", "/console/home", "/console/approvals"):
            async with client.get(f"{bridge_server.url}{path}", allow_redirects=False) as res:
                assert res.status == 303, path
                assert res.headers["Location"] == "/console/signin"
        async with client.get(f"{bridge_server.url}/console/static/console.js") as res:
            assert res.status == 200
            assert res.content_type == "text/javascript"
        async with client.get(f"{bridge_server.url}/console/static/..%2Fpages.py") as res:
            assert res.status == 404
        # A stale cookie on an API call is a clear 401, not an anonymous pass.
        client.cookie_jar.update_cookies({COOKIE: "stale"})
        async with client.get(f"{bridge_server.url}/v1/tools") as res:
            assert res.status == 401
            assert (await res.json())["error"]["details"]["reason"] == "session_ended"


async def test_audit_filters_pages_and_csv(bridge_server: BridgeServer) -> None:
    runtime = bridge_server.service.invocation
    assert runtime is not None
    # 60 calls refused by permission leave 60 "permission_denied" entries (unauthenticated requests
    # are only counted per source and minute, not kept as entries). The tool is out of the
    # token's sight, so each is answered 404 as an unknown tool would be.
    outsider = issue_token(
        runtime.key, agent_id="outsider", permissions=["nothing:at:all"], ttl_s=60
    )
    for i in range(60):
        async with bridge_server.client.post(
            f"{bridge_server.url}/v1/invoke",
            json={"tool": "core:store_data", "params": {"key": f"k{i}", "value": i}},
            headers={"Authorization": f"Bearer {outsider}"},
        ) as refused:
            assert refused.status == 404
    admin = issue_token(runtime.key, agent_id="auditor", permissions=["admin:audit"], ttl_s=60)
    async with await _client(bridge_server) as client:
        async with client.post(
            f"{bridge_server.url}/console/signin",
            data={"token": admin},
            headers={"Origin": bridge_server.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 303
        url = f"{bridge_server.url}/console/api/audit"
        async with client.get(url, params={"decision": "permission_denied"}) as res:
            first = await res.json()
        assert len(first["entries"]) == 50
        assert first["more"] is True
        assert {e["decision"] for e in first["entries"]} == {"permission_denied"}
        async with client.get(url, params={"decision": "permission_denied", "page": "1"}) as res:
            second = await res.json()
        assert len(second["entries"]) == 10
        assert second["more"] is False
        ids = [e["id"] for e in first["entries"] + second["entries"]]
        assert ids == sorted(ids, reverse=True)
        assert len(set(ids)) == 60
        async with client.get(url, params={"agent": "nobody"}) as res:
            assert (await res.json())["entries"] == []
        async with client.get(
            url, params={"decision": "permission_denied", "format": "csv"}
        ) as res:
            assert res.content_type == "text/csv"
            lines = (await res.text()).splitlines()
        assert lines[0] == (
            "id,ts,agent_id,tool,decision,outcome,error_code,duration_ms,call_id,node_id"
        )
        assert len(lines) == 61
        # Denied (the decision), answered as an unknown tool (the code the caller saw).
        assert all(",permission_denied,error,TOOL_NOT_FOUND," in line for line in lines[1:])
        for bad in ({"page": "-1"}, {"since": "soon"}, {"format": "xml"}, {"limit": "5"}):
            async with client.get(url, params=bad) as res:
                assert res.status == 400, bad
                assert (await res.json())["error"]["code"] == "INVALID_REQUEST"
    narrow = issue_token(runtime.key, agent_id="guest", permissions=["device:read:*"], ttl_s=60)
    async with await _client(bridge_server) as client:
        async with client.post(
            f"{bridge_server.url}/console/signin",
            data={"token": narrow},
            headers={"Origin": bridge_server.url},
            allow_redirects=False,
        ) as res:
            assert res.status == 303
        async with client.get(f"{bridge_server.url}/console/api/audit") as res:
            assert res.status == 403
            assert (await res.json())["error"]["details"] == {"required": "admin:audit"}


def test_csv_cells_never_start_a_formula() -> None:
    from bridge.console.pages import _csv_cell

    assert [_csv_cell(v) for v in ("=SUM(A1)", "+1", "-2", "@x", "plain", None, 12)] == [
        "'=SUM(A1)",
        "'+1",
        "'-2",
        "'@x",
        "plain",
        "",
        "12",
    ]


async def test_the_qr_of_a_secret_takes_only_a_bounded_body_with_csrf(
    bridge_server: BridgeServer,
) -> None:
    link = make_link(bridge_server.service.state_dir, bridge_server.url, label="qr")
    url = f"{bridge_server.url}/console/api/qr"
    async with await _client(bridge_server) as client:
        async with await _sign_in(client, bridge_server, _code(link)) as res:
            assert res.status == 303
        csrf = {CSRF_HEADER: await _csrf(client, bridge_server), "Origin": bridge_server.url}
        async with client.post(url, json={"text": "tok.en"}) as no_csrf:
            assert no_csrf.status == 403
        async with client.post(url, json={"text": "tok.en"}, headers=csrf) as ok:
            assert ok.status == 200
            assert ok.content_type == "image/svg+xml"
            assert (await ok.text()).lstrip().startswith("<?xml")
        hostile = [
            ({"text": "x" * 3_500}, 400),
            ({"text": ""}, 400),
            ({"text": 5}, 400),
            ([[[[[[]]]]]], 400),
            ({"text": "a" * 30_000}, 413),
        ]
        for body, status in hostile:
            async with client.post(url, json=body, headers=csrf) as bad:
                assert bad.status == status, (str(body)[:40], bad.status)
                assert "error" in await bad.json()
        async with client.post(
            url, data=b'{"text": "\\udead"}', headers={**csrf, "Content-Type": "application/json"}
        ) as surrogate:
            assert surrogate.status == 400
    async with aiohttp.ClientSession() as stranger:
        async with stranger.post(url, json={"text": "x"}) as anon:
            assert anon.status == 401
