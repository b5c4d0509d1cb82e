"""A credential has one identity, everywhere one is accepted, on a real ``atmosphere-bridge run``.

The property: every re-spelling of a token — ``=`` padding, the standard base64
alphabet (``+/`` for ``-_``), other values in the spare bits of the signature's last
character, whitespace inside — that decodes to the bytes of a revoked, an expired or
a rate-limited token is refused at every place that takes a credential: the HTTP
bearer header (a plain route and ``/v1/invoke``), the ``/v1/calls/ws`` upgrade and a
``tool_invoke`` carrying its own token on an open channel, ``/v1/events?token=``,
MCP (``POST /mcp``), console sign-in, and an approver's vote. The audit names the
token each refusal was for (the rejection counters under ``token:<id>``), and a
re-spelled console cookie names no session.

Why (issue 26): before canonical decoding, 15 of 15 spare-bit spellings of a revoked
token answered 200, as did ``token + "=="``; a revoked approver's vote counted; and the
audit could not tell a revoked token's use from a good one's.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge.auth.tokens import parse_token
from tests.auth.live import BRIDGE, LiveBridge
from tests.support.processes import wait_until

pytestmark = pytest.mark.skipif(not BRIDGE.exists(), reason="needs the atmosphere-bridge script")

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
PERMS = ["home:*", "admin:approve", "ui:ask"]
SWAP = {"-": "+", "_": "/"}
KINDS = ("pad_payload", "pad_signature", "alphabet", "spare_bits", "inner_space")


@st.composite
def respelling(draw: st.DrawFn, raw: str, *, spare_bits: int = 4) -> str:
    """Return ``raw`` written another way that a lenient decoder reads as the same bytes."""
    swappable = [i for i, ch in enumerate(raw) if ch in SWAP]
    kinds = draw(st.sets(st.sampled_from(KINDS), min_size=1))
    if not swappable:
        kinds.discard("alphabet")
        kinds = kinds or {"pad_signature"}
    text = list(raw)
    if "alphabet" in kinds:
        for i in draw(st.lists(st.sampled_from(swappable), min_size=1, unique=True)):
            text[i] = SWAP[text[i]]
    if "spare_bits" in kinds:
        # The canonical last character has its spare (low) bits zero; set some.
        last = ALPHABET.index(raw[-1])
        assert last % (1 << spare_bits) == 0, "the canonical form has its spare bits clear"
        text[-1] = ALPHABET[last + draw(st.integers(1, (1 << spare_bits) - 1))]
    out = "".join(text)
    if "." in out:
        payload, signature = out.split(".")
        if "pad_payload" in kinds:
            payload += "=" * draw(st.integers(1, 3))
        if "pad_signature" in kinds:
            signature += "=" * draw(st.integers(1, 3))
        out = f"{payload}.{signature}"
    elif kinds & {"pad_payload", "pad_signature"}:
        out += "=" * draw(st.integers(1, 3))
    if "inner_space" in kinds:
        at = draw(st.integers(1, len(out) - 1))
        out = out[:at] + draw(st.sampled_from([" ", "\t"])) + out[at:]
    if draw(st.booleans()):
        out = " " + out + " "
    assert out.strip() != raw
    return out


# -- the places that take a credential: each returns how the bridge answered ----------


def bearer_get(live: LiveBridge, spelling: str, _ctx: Context) -> Any:
    status, body, _ = live.http("GET", "/v1/tools", spelling)
    return status, body["error"]["code"]


def bearer_invoke(live: LiveBridge, spelling: str, _ctx: Context) -> Any:
    status, body, _ = live.http(
        "POST",
        "/v1/invoke",
        spelling,
        {"tool": "home:slow_echo", "params": {"text": "x", "seconds": 0}},
    )
    return status, body["error"]["code"]


def calls_ws_upgrade(live: LiveBridge, spelling: str, _ctx: Context) -> Any:
    async def go(session: aiohttp.ClientSession) -> Any:
        try:
            async with session.ws_connect(
                live.url + "/v1/calls/ws", headers={"Authorization": f"Bearer {spelling}"}
            ):
                return "connected"
        except aiohttp.WSServerHandshakeError as err:
            return err.status, "UNAUTHENTICATED" if err.status == 401 else "?"

    return live.run(go)


def calls_ws_message(live: LiveBridge, spelling: str, ctx: Context) -> Any:
    async def go(session: aiohttp.ClientSession) -> Any:
        async with session.ws_connect(
            live.url + "/v1/calls/ws", headers={"Authorization": f"Bearer {ctx.carrier}"}
        ) as ws:
            await ws.send_str(
                json.dumps(
                    {
                        "type": "tool_invoke",
                        "tool": "home:slow_echo",
                        "params": {"text": "x", "seconds": 0},
                        "auth": {"token": spelling},
                    }
                )
            )
            answer = json.loads((await ws.receive(timeout=20)).data)
            return 401 if answer["error"]["code"] == "UNAUTHENTICATED" else 0, answer["error"][
                "code"
            ]

    return live.run(go)


def events_query(live: LiveBridge, spelling: str, _ctx: Context) -> Any:
    async def go(session: aiohttp.ClientSession) -> Any:
        url = live.url + "/v1/events?" + urllib.parse.urlencode({"token": spelling})
        try:
            async with session.ws_connect(url):
                return "connected"
        except aiohttp.WSServerHandshakeError as err:
            return err.status, "UNAUTHENTICATED" if err.status == 401 else "?"

    return live.run(go)


def mcp_post(live: LiveBridge, spelling: str, _ctx: Context) -> Any:
    status, body, _ = live.http(
        "POST",
        "/mcp",
        spelling,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        headers={"Accept": "application/json, text/event-stream"},
    )
    return status, body["error"]["code"] if isinstance(body, dict) else body


def console_sign_in(live: LiveBridge, spelling: str, _ctx: Context) -> Any:
    status, page, headers = live.http(
        "POST", "/console/signin", form={"token": spelling}, headers={"Origin": live.url}
    )
    signed_in = "atm_session" in headers.get("Set-Cookie", "")
    return status, "signed in" if signed_in else "Not signed in" in page and "UNAUTHENTICATED"


def approval_vote(live: LiveBridge, spelling: str, ctx: Context) -> Any:
    status, body, _ = live.http(
        "POST", f"/v1/approvals/{ctx.approval_id}", spelling, {"decision": "approve"}
    )
    return status, body["error"]["code"]


PLACES: dict[str, Callable[[LiveBridge, str, Context], Any]] = {
    "bearer GET /v1/tools": bearer_get,
    "bearer POST /v1/invoke": bearer_invoke,
    "/v1/calls/ws upgrade": calls_ws_upgrade,
    "/v1/calls/ws tool_invoke auth.token": calls_ws_message,
    "/v1/events?token=": events_query,
    "MCP POST /mcp": mcp_post,
    "console sign-in": console_sign_in,
    "approval vote": approval_vote,
}


class Context:
    """What the places need: a good channel token and a pending approval to vote on."""

    def __init__(self, carrier: str, approval_id: str) -> None:
        self.carrier = carrier
        self.approval_id = approval_id


@pytest.fixture(scope="module")
def live() -> Iterator[LiveBridge]:
    bridge = LiveBridge.start()
    try:
        yield bridge
    finally:
        bridge.stop()


def _pending_unlock(live: LiveBridge, caller: str) -> tuple[str, threading.Thread, list[Any]]:
    """Start an unlock by ``caller`` in a thread; return its approval id, thread, answer."""
    answer: list[Any] = []
    thread = threading.Thread(
        target=lambda: answer.append(
            live.http(
                "POST",
                "/v1/invoke",
                caller,
                {"tool": "home:door_unlock", "params": {"door": "front"}},
                timeout=150,
            )
        ),
        daemon=True,
    )
    thread.start()
    admin = live.token("watcher", ["admin:approve"])
    found: list[str] = []

    def pending() -> bool:
        _, body, _ = live.http("GET", "/v1/approvals?status=pending", admin)
        found[:] = [a["id"] for a in body["approvals"] if a["tool"] == "home:door_unlock@1.0.0"]
        return bool(found)

    wait_until(pending, 20, "the unlock's approval")
    return found[0], thread, answer


def test_every_spelling_of_a_refused_token_is_refused_everywhere(live: LiveBridge) -> None:
    # Three tokens, each of which the bridge must refuse: revoked, expired, rate-limited.
    revoked = live.issue("revoked-agent", PERMS)
    expired = live.issue("expired-agent", PERMS, ttl_s=4)
    limited = live.issue("limited-agent", PERMS, rate=1)
    ids = {
        name: parse_token(raw)[0].id
        for name, raw in (("revoked", revoked), ("expired", expired), ("limited", limited))
    }
    # A console session of the revoked token, signed in while it was still good.
    status, _, headers = live.http(
        "POST", "/console/signin", form={"token": revoked}, headers={"Origin": live.url}
    )
    assert status == 303
    cookie = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
    assert live.http("GET", "/v1/tools", headers={"Cookie": f"atm_session={cookie}"})[0] == 200
    # The rate-limited token spends its one call; the expired one outlives its 4 s.
    assert live.http("GET", "/v1/tools", limited)[0] == 200
    live.revoke(revoked)
    wait_until(lambda: live.http("GET", "/v1/tools", expired)[0] == 401, 15, "the expiry")

    caller = live.token("door-caller", ["home:door:unlock"])
    approval_id, thread, answer = _pending_unlock(live, caller)
    ctx = Context(carrier=live.token("carrier", ["home:*"]), approval_id=approval_id)
    tokens = {"revoked": revoked, "expired": expired, "limited": limited}

    # The tokens themselves, as issued, are refused at every place too.
    canonical = {
        "revoked": (401, "UNAUTHENTICATED"),
        "expired": (401, "UNAUTHENTICATED"),
        "limited": (429, "RATE_LIMITED"),
    }
    for name in ("revoked", "expired"):
        for place, send in PLACES.items():
            assert send(live, tokens[name], ctx) == canonical[name], (name, place)
    assert bearer_get(live, limited, ctx) == canonical["limited"]
    assert bearer_invoke(live, limited, ctx) == canonical["limited"]

    sent: Counter[str] = Counter()
    outcomes: Counter[tuple[str, Any]] = Counter()

    @settings(
        max_examples=120,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def every_place_refuses(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(tokens)), label="token")
        place = data.draw(st.sampled_from(sorted(PLACES)), label="place")
        spelling = data.draw(respelling(tokens[name]), label="spelling")
        outcome = PLACES[place](live, spelling, ctx)
        sent[name] += 1
        outcomes[(place, outcome)] += 1
        assert outcome == (401, "UNAUTHENTICATED"), (name, place, spelling)

    every_place_refuses()
    # Random draws may leave a place out: each one missed gets the padded spelling of the
    # revoked token (a re-spelling the decoder must refuse), so every place is proven.
    for place in sorted(set(PLACES) - {p for p, _ in outcomes}):
        outcome = PLACES[place](live, tokens["revoked"] + "=", ctx)
        sent["revoked"] += 1
        outcomes[(place, outcome)] += 1
        assert outcome == (401, "UNAUTHENTICATED"), place
    assert set(sent) == {"revoked", "expired", "limited"}
    assert {place for place, _ in outcomes} == set(PLACES)

    # The audit names the token each refused spelling stood for, once per refusal.
    def counted() -> dict[str, int]:
        return {name: live.refusals_of(ids[name]).get("non_canonical", 0) for name in ids}

    wait_until(lambda: counted() == dict(sent), 15, f"{dict(sent)} refusals under token ids")
    # ... and the tokens as issued, once at each place (the sign-in above was before).
    assert live.refusals_of(ids["revoked"]).get("revoked") == len(PLACES)
    assert live.refusals_of(ids["expired"]).get("expired", 0) >= len(PLACES)
    assert live.refusals_of(ids["limited"]).get("rate_limited") == 1  # GET /v1/tools
    [(decision, agent)] = live.audit(
        "SELECT decision, agent_id FROM audit_log WHERE token_id = ? AND decision != 'allowed'",
        (ids["limited"],),
    )
    assert (decision, agent) == ("rate_limited", "limited-agent")

    # The console session of the revoked token: its cookie now gets nothing, and no
    # re-spelling of the cookie names a session at all.
    session_status, body, _ = live.http(
        "GET", "/v1/tools", headers={"Cookie": f"atm_session={cookie}"}
    )
    assert (session_status, body["error"]["details"]["reason"]) == (401, "revoked")

    @settings(max_examples=30, deadline=None, database=None)
    @given(spelling=respelling(cookie, spare_bits=2))
    def no_other_cookie(spelling: str) -> None:
        quoted = urllib.parse.quote(spelling.strip(), safe="")
        status, answer, _ = live.http(
            "GET", "/v1/tools", headers={"Cookie": f"atm_session={quoted}"}
        )
        assert (status, answer["error"]["details"]["reason"]) == (401, "session_ended")

    no_other_cookie()

    # No vote counted: the approval still waits with none; a real approver ends it.
    status, body, _ = live.http(
        "GET", "/v1/approvals?status=pending", live.token("watcher", ["admin:approve"])
    )
    [pending] = [a for a in body["approvals"] if a["id"] == approval_id]
    assert pending["votes"] == []
    status, body, _ = live.http(
        "POST",
        f"/v1/approvals/{approval_id}",
        live.token("denier", ["admin:approve"]),
        {"decision": "deny"},
    )
    assert (status, body["status"]) == (200, "denied")
    thread.join(30)
    assert answer[0][1]["error"]["code"] == "CONFIRMATION_DENIED"
    assert live.ran() == []


def spellings_of(raw: str, count: int) -> list[str]:
    """Return ``count`` distinct re-spellings of ``raw`` (spare bits, padding, alphabet, space)."""
    payload, signature = raw.split(".")
    last = ALPHABET.index(signature[-1])
    out = [f"{payload}.{signature[:-1]}{ALPHABET[last + v]}" for v in range(1, 16)]
    out += [f"{payload}{'=' * k}.{signature}" for k in (1, 2, 3)]
    out += [f"{payload}.{signature}{'=' * k}" for k in (1, 2, 3)]
    out += [raw[:i] + SWAP[raw[i]] + raw[i + 1 :] for i, ch in enumerate(raw) if ch in SWAP]
    out += [raw[:i] + " " + raw[i:] for i in range(1, len(raw))]
    assert len(set(out)) >= count
    return list(dict.fromkeys(out))[:count]


def test_re_spellings_share_the_tokens_one_rate_limit(live: LiveBridge) -> None:
    """60 spellings of a 2-per-minute token make no call; the token itself makes two."""
    limited = live.issue("budget-agent", ["home:*"], rate=2)
    body = {"tool": "home:slow_echo", "params": {"text": "x", "seconds": 0}}
    spelled = [live.http("POST", "/v1/invoke", s, body)[0] for s in spellings_of(limited, 60)]
    assert spelled == [401] * 60
    itself = [live.http("POST", "/v1/invoke", limited, body)[0] for _ in range(3)]
    assert itself == [200, 200, 429]
    token_id = parse_token(limited)[0].id
    wait_until(
        lambda: live.refusals_of(token_id) == {"non_canonical": 60},
        15,
        "60 refusals counted under the token's id",
    )
    rows = live.audit("SELECT decision FROM audit_log WHERE token_id = ? ORDER BY id", (token_id,))
    assert rows == [("allowed",), ("allowed",), ("rate_limited",)]
