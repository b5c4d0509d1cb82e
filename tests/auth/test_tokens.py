import base64
import json
import time

import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import Constraints, TokenVerifier, issue_token, parse_token
from bridge.errors import InvalidRequestError, UnauthenticatedError


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
    forged_body = base64.urlsafe_b64encode(
        json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    ).rstrip(b"=").decode()
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
