import asyncio
import time
from pathlib import Path

import pytest

from bridge import eventloop
from bridge.auth.approvals import ApprovalStatus, ApprovalStore
from bridge.auth.keys import NodeKey
from bridge.auth.tokens import AgentToken, TokenVerifier
from bridge.errors import ConflictError, InvalidRequestError, PermissionDeniedError
from bridge.events import EventBus
from bridge.storage import Database
from tests.support.auth import votes_verify


def token(agent: str, perms: tuple[str, ...] = ("admin:approve",)) -> AgentToken:
    return AgentToken(
        agent_id=agent,
        issued_at=0,
        expires_at=1e12,
        permissions=perms,
        issuer="issuer",
        signature="sig",
    )


@pytest.fixture(name="store")
def store_fixture(tmp_path: Path) -> ApprovalStore:
    return ApprovalStore(Database(tmp_path / "b.db"), NodeKey.generate(), events=EventBus())


async def make(store: ApprovalStore, required: int = 2, timeout: float = 5.0) -> str:
    approval = await store.request(
        call_id="c1",
        tool="matter:lock_unlock@1.0.0",
        agent_id="caller",
        params={"door": "front"},
        message="Unlock front?",
        required=required,
        timeout_s=timeout,
    )
    return approval.id


async def test_two_of_n(store: ApprovalStore) -> None:
    approval_id = await make(store)
    waiter = asyncio.create_task(store.wait(approval_id))
    with pytest.raises(PermissionDeniedError):
        await store.decide(approval_id, token("caller"), "approve")
    with pytest.raises(PermissionDeniedError):
        await store.decide(approval_id, token("x", ("device:*",)), "approve")
    with pytest.raises(InvalidRequestError):
        await store.decide(approval_id, token("alice"), "maybe")
    first = await store.decide(approval_id, token("alice"), "approve")
    assert first.status is ApprovalStatus.PENDING
    with pytest.raises(ConflictError):
        await store.decide(approval_id, token("alice"), "approve")
    assert not waiter.done()
    await store.decide(approval_id, token("bob"), "approve")
    final = await waiter
    assert final.status is ApprovalStatus.APPROVED
    assert [v.approver for v in final.votes] == ["alice", "bob"]
    assert votes_verify(final, store._key.public_key_b64)
    with pytest.raises(ConflictError):
        await store.decide(approval_id, token("carol"), "approve")
    stored = (await store.list(status="approved"))[0]
    assert stored.id == approval_id
    assert votes_verify(stored, store._key.public_key_b64)


async def test_deny_and_timeout(store: ApprovalStore) -> None:
    denied = await make(store)
    waiter = asyncio.create_task(store.wait(denied))
    await store.decide(denied, token("alice"), "deny")
    assert (await waiter).status is ApprovalStatus.DENIED
    timed = await make(store, timeout=0.05)
    assert (await store.wait(timed)).status is ApprovalStatus.TIMEOUT
    assert (await store.get(timed)).status is ApprovalStatus.TIMEOUT


async def test_restart_interrupts_pending(tmp_path: Path) -> None:
    db = Database(tmp_path / "b.db")
    store = ApprovalStore(db, NodeKey.generate())
    approval_id = await make(store)
    again = ApprovalStore(db, NodeKey.generate())
    await again.start()
    assert (await again.get(approval_id)).status is ApprovalStatus.INTERRUPTED


def test_an_approval_ended_by_its_token_leaves_the_token_expired(tmp_path: Path) -> None:
    """The wait ends at the token's end, never before it by the wall clock.

    A loop's timer may fire up to a millisecond before the wall clock reaches the deadline
    (measured on uvloop: 52 of 300 waits); here the verifier's clock runs 3 ms behind, so
    every wait meets that case. The call's authority is checked again right after the
    wait: it must read "expired" then, or the caller is told "cancelled" one run and
    "expired" the next (a CI run of ``test_authority`` saw both).
    """
    eventloop.run(_waits_end_expired(tmp_path), "auto")  # the bridge's own loop (uvloop)


async def _waits_end_expired(tmp_path: Path) -> None:
    # The verifier's clock 3 ms behind the loop's: a timer that fires early, every time.
    verifier = TokenVerifier(["issuer"], clock_skew_s=0.0, clock=lambda: time.time() - 0.003)
    store = ApprovalStore(
        Database(tmp_path / "b.db"), NodeKey.generate(), events=EventBus(), verifier=verifier
    )
    states = []
    for i in range(20):
        now = time.time()
        caller = AgentToken(
            agent_id=f"caller-{i}",
            issued_at=now,
            expires_at=now + 0.005 + (i % 7) * 0.003,
            permissions=("home:door:unlock",),
            issuer="issuer",
            signature=f"sig-{i}",
        )
        approval = await store.request(
            call_id=f"c{i}",
            tool="matter:lock_unlock@1.0.0",
            agent_id=caller.agent_id,
            params={},
            message="Unlock?",
            required=1,
            timeout_s=30,
            token=caller,
        )
        final = await store.wait(approval.id)
        states.append((final.status, final.reason, verifier.state(caller.id, caller.expires_at)))
    assert set(states) == {(ApprovalStatus.CANCELLED, "token_expired", "expired")}
