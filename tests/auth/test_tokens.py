import base64
import hashlib
import json
import sqlite3
import time
from pathlib import Path

import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import (
    EXPIRY_SKEW_S,
    MAX_USABLE_TOKEN_CHARS,
    Constraints,
    IssuedTokens,
    Revocations,
    TokenVerifier,
    issue_token,
    parse_token,
)
from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.storage import Database


@pytest.fixture(name="key")
def key_fixture() -> NodeKey:
    return NodeKey.generate()


def reason(verifier: TokenVerifier, raw: str) -> str:
    with pytest.raises(UnauthenticatedError) as info:
        verifier.verify(raw)
    return str(info.value.details["reason"])


def test_round_trip(key: NodeKey) -> None:
    raw = issue_token(
        key,
        agent_id="agent-1",
        permissions=["device:control:*", "tool:read:*"],
        ttl_s=3600,
        constraints=Constraints(max_hops=2, allowed_nodes=("n1",), rate_limit_per_minute=30),
        now=1_000_000.0,
    )
    verifier = TokenVerifier([key.public_key_b64], clock=lambda: 1_000_100.0)
    token = verifier.verify(raw)
    assert token.agent_id == "agent-1"
    assert token.permissions == ("device:control:*", "tool:read:*")
    assert token.issued_at == 1_000_000.0
    assert token.expires_at == 1_003_600.0
    assert token.constraints == Constraints(
        max_hops=2, allowed_nodes=("n1",), rate_limit_per_minute=30
    )
    assert token.issuer == key.public_key_b64
    body = raw.split(".")[0]
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert payload["constraints"]["rate_limit"] == {"per_minute": 30}


def test_rejections(key: NodeKey) -> None:
    now = time.time()
    verifier = TokenVerifier([key.public_key_b64], clock_skew_s=5)
    stranger = NodeKey.generate()
    assert reason(verifier, issue_token(stranger, agent_id="a", permissions=[], ttl_s=60)) == (
        "unknown_issuer"
    )
    good = issue_token(key, agent_id="a", permissions=["x:y:z"], ttl_s=60)
    body, sig = good.split(".")
    forged_payload, _ = parse_token(good)
    doc = forged_payload.payload()
    doc["permissions"] = ["*"]
    forged_body = (
        base64.urlsafe_b64encode(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
        .rstrip(b"=")
        .decode()
    )
    assert reason(verifier, f"{forged_body}.{sig}") == "bad_signature"
    expired = issue_token(key, agent_id="a", permissions=[], ttl_s=60, now=now - 3600)
    assert reason(verifier, expired) == "expired"
    future = issue_token(key, agent_id="a", permissions=[], ttl_s=60, now=now + 3600)
    assert reason(verifier, future) == "not_yet_valid"
    for junk in ["", "abc", "a.b.c", f"{body}x.{sig}", "e30.AAAA", "!!.!!"]:
        assert reason(verifier, junk) == "malformed"
    assert verifier.verify(good).agent_id == "a"


def test_issue_rejects_bad_permission(key: NodeKey) -> None:
    with pytest.raises(InvalidRequestError):
        issue_token(key, agent_id="a", permissions=["device:con*"], ttl_s=60)
    with pytest.raises(InvalidRequestError):
        issue_token(key, agent_id="a", permissions=["a::b"], ttl_s=60)
    with pytest.raises(InvalidRequestError):
        issue_token(key, agent_id="a", permissions=[], ttl_s=0)


def _every_text(db_dir: Path) -> bytes:
    """Return the bytes of every file SQLite keeps for the database (db, WAL, SHM)."""
    return b"".join(p.read_bytes() for p in sorted(db_dir.iterdir()) if p.is_file())


def test_no_token_can_be_rebuilt_from_the_database(key: NodeKey, tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    ledger = IssuedTokens(db)
    raws = [
        issue_token(key, agent_id=f"agent-{i}", permissions=["*"], ttl_s=3600) for i in range(5)
    ]
    for raw in raws:
        ledger.record_sync(raw)
    rows = db.fetchall_sync("SELECT * FROM issued_tokens")
    assert sorted(rows[0].keys()) == [
        "agent_id",
        "expires_at",
        "id",
        "issued_at",
        "issued_by",
        "permissions_json",
        "token_sha256",
    ]
    blob = _every_text(tmp_path)
    for raw in raws:
        body, signature = raw.split(".")
        assert signature.encode() not in blob
        assert body.encode() not in blob
        assert raw.encode() not in blob
        parsed, _ = parse_token(raw)
        assert ledger.get_sync(parsed.id) == {
            "id": parsed.id,
            "agent_id": parsed.agent_id,
            "permissions": ["*"],
            "issued_at": parsed.issued_at,
            "expires_at": parsed.expires_at,
            "issued_by": None,
        }
        [row] = [r for r in rows if r["id"] == parsed.id]
        # docs/configuration.md: the ledger keeps the SHA-256 of the token text.
        assert row["token_sha256"] == hashlib.sha256(raw.encode()).hexdigest()
    db.close()


def test_v1_ledger_is_rewritten_without_payload_or_signature(key: NodeKey, tmp_path: Path) -> None:
    # A database as an older version left it: payload and signature of each token.
    raw = issue_token(key, agent_id="old", permissions=["device:control:*"], ttl_s=3600)
    parsed, _ = parse_token(raw)
    old = sqlite3.connect(tmp_path / "bridge.db")
    old.execute("PRAGMA journal_mode=WAL")
    old.execute(
        "CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL DEFAULT 0)"
    )
    old.execute(
        "CREATE TABLE issued_tokens (signature TEXT PRIMARY KEY, agent_id TEXT NOT NULL, "
        "issued_at REAL NOT NULL, expires_at REAL NOT NULL, payload_json TEXT NOT NULL)"
    )
    old.execute("INSERT INTO schema_migrations VALUES ('auth.issued_tokens.v1', 0)")
    old.execute(
        "INSERT INTO issued_tokens VALUES (?, ?, ?, ?, ?)",
        (
            parsed.signature,
            "old",
            parsed.issued_at,
            parsed.expires_at,
            json.dumps(parsed.payload(), sort_keys=True),
        ),
    )
    old.commit()
    old.close()
    assert parsed.signature.encode() in _every_text(tmp_path)
    db = Database(tmp_path / "bridge.db")
    ledger = IssuedTokens(db)
    assert ledger.list_sync() == [
        {
            "id": parsed.id,
            "agent_id": "old",
            "permissions": ["device:control:*"],
            "issued_at": parsed.issued_at,
            "expires_at": parsed.expires_at,
            "issued_by": None,
        }
    ]
    assert (
        db.fetchone_sync("SELECT token_sha256 FROM issued_tokens")[0]
        == hashlib.sha256(raw.encode()).hexdigest()
    )
    db.close()
    blob = _every_text(tmp_path)
    assert parsed.signature.encode() not in blob
    assert raw.split(".")[0].encode() not in blob


def test_revocation_is_checked_on_every_verification(key: NodeKey, tmp_path: Path) -> None:
    db = Database(tmp_path / "bridge.db")
    revocations = Revocations(db)
    verifier = TokenVerifier([key.public_key_b64], revocations=revocations)
    raw = issue_token(key, agent_id="a", permissions=["*"], ttl_s=3600)
    token = verifier.verify(raw)  # now in the verifier's cache
    notice = revocations.revoke(key, token.id, token.expires_at)
    assert reason(verifier, raw) == "revoked"
    # Survives a restart; a peer trusting the issuer accepts the signed notice, once.
    again = TokenVerifier([key.public_key_b64], revocations=Revocations(db))
    assert reason(again, raw) == "revoked"
    peer = Revocations()
    assert peer.accept(dict(notice), [key.public_key_b64]) is True
    assert peer.accept(dict(notice), [key.public_key_b64]) is False
    assert token.id in peer
    stranger = NodeKey.generate()
    other = Revocations()
    assert other.accept(dict(notice), [stranger.public_key_b64]) is False  # issuer not trusted
    forged = {**notice, "token_id": "f" * 32}
    assert other.accept(forged, [key.public_key_b64]) is False  # signature does not cover it
    by_stranger = Revocations().revoke(stranger, token.id, token.expires_at)
    assert other.accept(by_stranger, [key.public_key_b64]) is False  # not the issuer's
    assert token.id not in other
    for junk in [
        None,
        [],
        {"type": "token_revocation"},
        {**notice, "expires_at": float("nan")},
        {**notice, "extra": 1},
    ]:
        assert other.accept(junk, [key.public_key_b64]) is False
    db.close()


def test_expiry_uses_a_small_skew_not_the_replay_window(key: NodeKey) -> None:
    issued = 1_000_000.0
    raw = issue_token(key, agent_id="a", permissions=[], ttl_s=1, now=issued)
    now = [issued + 0.5]
    verifier = TokenVerifier([key.public_key_b64], clock=lambda: now[0])
    assert verifier.clock_skew_s == EXPIRY_SKEW_S == 5.0
    assert verifier.verify(raw).agent_id == "a"
    now[0] = issued + 1 + EXPIRY_SKEW_S
    assert reason(verifier, raw) == "expired"
    strict = TokenVerifier([key.public_key_b64], clock_skew_s=0, clock=lambda: issued + 1.0)
    assert reason(strict, raw) == "expired"


def test_issue_refuses_a_token_too_heavy_for_a_header(key: NodeKey) -> None:
    perms = [f"device:control:light-{i:04d}" for i in range(800)]
    with pytest.raises(InvalidRequestError) as info:
        issue_token(key, agent_id="a", permissions=perms, ttl_s=60)
    assert info.value.details["max_chars"] == MAX_USABLE_TOKEN_CHARS == 16000
    assert "fewer, broader permission patterns" in info.value.message
    fits = issue_token(key, agent_id="a", permissions=perms[:200], ttl_s=60)
    assert len(fits) <= MAX_USABLE_TOKEN_CHARS
    for ttl in (float("inf"), float("nan"), 1e30):
        with pytest.raises(InvalidRequestError):
            issue_token(key, agent_id="a", permissions=[], ttl_s=ttl)


async def test_a_token_verified_earlier_is_rechecked_on_each_call(
    key: NodeKey, tmp_path: Path
) -> None:
    from bridge.invocation.invoker import Invoker
    from bridge.invocation.messages import ToolRequest
    from bridge.tools.definition import ToolDefinition
    from bridge.tools.registry import ToolRegistry

    async def echo(params: dict[str, object], ctx: object) -> dict[str, object]:
        return params

    registry = ToolRegistry()
    registry.register(ToolDefinition(name="echo", description="Echo"), echo)
    verifier = TokenVerifier([key.public_key_b64])
    invoker = Invoker(registry=registry, verifier=verifier, node_id="n")
    token = verifier.verify(issue_token(key, agent_id="a", permissions=["*"], ttl_s=600))
    assert (await invoker.invoke(ToolRequest(tool="echo"), token=token)).ok
    verifier.revocations.revoke(key, token.id, token.expires_at)
    resp = await invoker.invoke(ToolRequest(tool="echo"), token=token)
    assert resp.error is not None
    assert (resp.error["code"], resp.error["details"]["reason"]) == ("UNAUTHENTICATED", "revoked")


@pytest.mark.parametrize(
    "now",
    [
        1_764_167_625.0006,  # rounded to the nearest millisecond this became ...625.001
        1_764_167_625.0009,
        1_000_000.0007,
        1_000_000.0,
        1_764_167_625.123,
    ],
)
def test_a_token_is_valid_the_moment_it_is_made_with_no_clock_skew(
    key: NodeKey, now: float
) -> None:
    # CI: a console link's freshly minted token was refused 401 "not valid yet" now and
    # then (tests/auth/test_authority.py runs its bridge with auth.expiry_skew_s: 0):
    # issued_at was rounded to the nearest millisecond, up to 0.5 ms into the future.
    raw = issue_token(key, agent_id="a", permissions=["*"], ttl_s=60, now=now)
    token = TokenVerifier([key.public_key_b64], clock_skew_s=0, clock=lambda: now).verify(raw)
    assert token.issued_at <= now
    assert now - token.issued_at < 0.001
    assert token.expires_at <= now + 60


def test_tokens_made_and_used_at_once_are_never_early(key: NodeKey) -> None:
    verifier = TokenVerifier([key.public_key_b64], clock_skew_s=0)
    refused = []
    for i in range(500):
        raw = issue_token(key, agent_id=f"a{i}", permissions=["*"], ttl_s=60)
        try:
            verifier.verify(raw)
        except UnauthenticatedError as err:
            refused.append(err.details["reason"])
    assert refused == []
