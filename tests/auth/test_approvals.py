import asyncio
from pathlib import Path

import pytest

from bridge.auth.approvals import ApprovalStatus, ApprovalStore
from bridge.auth.keys import NodeKey
from bridge.auth.tokens import AgentToken
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
