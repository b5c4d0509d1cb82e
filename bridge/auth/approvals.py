"""Pending confirmations of dangerous calls: request, list, approve/deny, wait, time out.

Details: docs/modules.md, ``bridge.auth.approvals``.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bridge.auth.canonical import canonical_json
from bridge.auth.keys import NodeKey
from bridge.auth.permissions import PermissionChecker
from bridge.auth.tokens import AgentToken, TokenVerifier, principal
from bridge.errors import ConflictError, InvalidRequestError, NotFoundError, PermissionDeniedError
from bridge.events import EventBus
from bridge.limits import APPROVALS_BOUND
from bridge.storage import Database

APPROVE_PERMISSION = "admin:approve"

_MIGRATION = """
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    agent_id TEXT,
    params_json TEXT NOT NULL,
    message TEXT NOT NULL,
    required INTEGER NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    decided_at REAL,
    votes_json TEXT NOT NULL
);
CREATE INDEX approvals_status ON approvals(status, created_at);
"""

# An approval and its votes name tokens by id and people by subject, not by agent name.
_MIGRATION_V2 = """
ALTER TABLE approvals ADD COLUMN token_id TEXT;
ALTER TABLE approvals ADD COLUMN subject TEXT;
ALTER TABLE approvals ADD COLUMN token_expires_at REAL;
ALTER TABLE approvals ADD COLUMN reason TEXT;
"""


class ApprovalStatus(StrEnum):
    """Where an approval stands."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"  # the caller's token was revoked or expired while it waited


class Decision(StrEnum):
    """A vote."""

    APPROVE = "approve"
    DENY = "deny"


@dataclass(frozen=True, slots=True, kw_only=True)
class Vote:
    """One approver's signed decision."""

    approver: str
    issuer: str
    decision: Decision
    ts: float
    signature: str
    token_id: str | None = None
    subject: str | None = None
    token_expires_at: float | None = None

    @property
    def who(self) -> str:
        """Return the subject this vote counts for (older votes: the approver's name)."""
        return self.subject or principal(self.approver)

    def signed_fields(self, approval_id: str, call_id: str) -> dict[str, Any]:
        """Return the object whose canonical encoding the node signs."""
        fields: dict[str, Any] = {
            "approval_id": approval_id,
            "call_id": call_id,
            "approver": self.approver,
            "issuer": self.issuer,
            "decision": self.decision.value,
            "ts": self.ts,
        }
        if self.token_id is not None:
            fields["token_id"] = self.token_id
            fields["subject"] = self.subject
        return fields

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "approver": self.approver,
            "issuer": self.issuer,
            "decision": self.decision.value,
            "ts": self.ts,
            "signature": self.signature,
            "token_id": self.token_id,
            "subject": self.subject,
            "token_expires_at": self.token_expires_at,
        }


@dataclass(slots=True, kw_only=True)
class Approval:
    """A confirmation request and its votes (mutable while pending)."""

    id: str
    call_id: str
    tool: str
    agent_id: str | None
    params: dict[str, Any]
    message: str
    required: int
    created_at: float
    expires_at: float
    status: ApprovalStatus = ApprovalStatus.PENDING
    decided_at: float | None = None
    votes: list[Vote] = field(default_factory=list)
    token_id: str | None = None
    subject: str | None = None
    token_expires_at: float | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "id": self.id,
            "call_id": self.call_id,
            "tool": self.tool,
            "agent_id": self.agent_id,
            "token_id": self.token_id,
            "subject": self.subject,
            "token_expires_at": self.token_expires_at,
            "reason": self.reason,
            "params": self.params,
            "message": self.message,
            "required": self.required,
            "approvals": sum(1 for v in self.votes if v.decision is Decision.APPROVE),
            "status": self.status.value,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "decided_at": self.decided_at,
            "votes": [v.to_json() for v in self.votes],
        }


class ApprovalStore:
    """Create, decide and wait for approvals; persist them in the bridge database.

    With a ``verifier``, an approval follows its tokens: revoking the caller's token
    cancels its pending approvals (``cancelled``, reason ``token_revoked``), its expiry
    ends the wait (reason ``token_expired``), a revoked approver's votes stop counting,
    and ``view`` shows every token's state to approvers.
    """

    def __init__(
        self,
        db: Database,
        key: NodeKey,
        *,
        events: EventBus | None = None,
        verifier: TokenVerifier | None = None,
    ) -> None:
        self._db = db
        self._key = key
        self._events = events
        self._verifier = verifier
        self._checker = PermissionChecker()
        self._live: dict[str, Approval] = {}
        # The token id behind each live approval: pending approvals are bounded per token.
        self._owners: dict[str, str] = {}
        self._done: dict[str, asyncio.Future[Approval]] = {}
        self._saving: set[asyncio.Task[None]] = set()
        db.migrate("auth.approvals.v1", _MIGRATION)
        db.migrate("auth.approvals.v2_token_id", _MIGRATION_V2)
        if verifier is not None:
            verifier.revocations.subscribe(self._revoked)

    async def start(self) -> None:
        """Close approvals left pending by a previous process."""
        await self._db.execute(
            "UPDATE approvals SET status = ?, decided_at = ? WHERE status = ?",
            (ApprovalStatus.INTERRUPTED.value, time.time(), ApprovalStatus.PENDING.value),
        )

    async def stop(self) -> None:
        """Close every live approval as interrupted."""
        for approval in list(self._live.values()):
            await self._finish(approval, ApprovalStatus.INTERRUPTED)
        if self._saving:
            await asyncio.gather(*self._saving, return_exceptions=True)

    async def request(
        self,
        *,
        call_id: str,
        tool: str,
        agent_id: str | None,
        params: dict[str, Any],
        message: str,
        required: int,
        timeout_s: float,
        token: AgentToken | None = None,
    ) -> Approval:
        """Create a pending approval for ``token``'s call and announce it.

        Raise ``RateLimitedError`` when ``token`` (by its id) already has
        ``PENDING_APPROVALS_PER_TOKEN`` pending, ``OverloadedError`` when the node has
        ``PENDING_APPROVALS``: nothing is stored or announced then. A request made for
        no token (a rule awaiting its approval) is counted against ``agent_id``.
        """
        owner = token.id if token is not None else f"agent:{agent_id or ''}"
        APPROVALS_BOUND.check(self._owners.values(), owner)
        now = time.time()
        approval = Approval(
            id=uuid.uuid4().hex,
            call_id=call_id,
            tool=tool,
            agent_id=agent_id,
            params=params,
            message=message,
            required=max(1, required),
            created_at=now,
            expires_at=now + timeout_s,
            token_id=token.id if token is not None else None,
            subject=principal(token.agent_id) if token is not None else None,
            token_expires_at=token.expires_at if token is not None else None,
        )
        self._live[approval.id] = approval
        self._owners[approval.id] = owner
        self._done[approval.id] = asyncio.get_running_loop().create_future()
        await self._save(approval)
        if self._events is not None:
            self._events.publish("approval.pending", self.view(approval))
        return approval

    async def wait(self, approval_id: str) -> Approval:
        """Wait until the approval is decided, expires or its token ends; return it final."""
        approval = self._live.get(approval_id)
        future = self._done.get(approval_id)
        if approval is None or future is None:
            return await self.get(approval_id)
        deadline, why = approval.expires_at, None
        if approval.token_expires_at is not None and self._verifier is not None:
            token_end = approval.token_expires_at + self._verifier.clock_skew_s
            if token_end < deadline:
                deadline, why = token_end, "token_expired"
        remaining = max(0.0, deadline - time.time())
        try:
            return await asyncio.wait_for(asyncio.shield(future), remaining)
        except TimeoutError:
            if why is not None and self._verifier is not None:
                # The loop's timer may fire before the verifier's clock reaches the
                # token's end (on uvloop up to 1 ms early, 52 of 300 waits): wait that
                # out, so the token reads expired to the check that follows and the
                # caller is always told "expired", never "cancelled" one run in many.
                late = deadline - self._verifier.now()
                if late > 0:
                    await asyncio.sleep(min(late, 1.0) + 0.001)
            if approval.status is ApprovalStatus.PENDING:
                if why is None:
                    await self._finish(approval, ApprovalStatus.TIMEOUT)
                else:
                    await self._finish(approval, ApprovalStatus.CANCELLED, reason=why)
            return approval
        except asyncio.CancelledError:
            if approval.status is ApprovalStatus.PENDING:
                await self._finish(approval, ApprovalStatus.INTERRUPTED)
            raise

    async def decide(self, approval_id: str, token: AgentToken, decision: str) -> Approval:
        """Record ``token``'s holder's vote; return the approval after the vote.

        The caller's own subject (every token named under it) cannot vote on its call,
        and each subject votes once.
        """
        try:
            choice = Decision(decision)
        except ValueError as err:
            raise InvalidRequestError("decision must be 'approve' or 'deny'") from err
        if not self._checker.allows(token.permissions, (APPROVE_PERMISSION,)):
            raise PermissionDeniedError(
                f"deciding approvals needs '{APPROVE_PERMISSION}'",
                {"required": APPROVE_PERMISSION},
            )
        approval = self._live.get(approval_id)
        if approval is not None and approval.status is not ApprovalStatus.PENDING:
            raise ConflictError(
                f"approval '{approval_id}' is already {approval.status.value}",
                {"status": approval.status.value},
            )
        if approval is None:
            stored = await self.get(approval_id)
            raise ConflictError(
                f"approval '{approval_id}' is already {stored.status.value}",
                {"status": stored.status.value},
            )
        subject = principal(token.agent_id)
        caller = approval.subject or (
            principal(approval.agent_id) if approval.agent_id is not None else None
        )
        if token.id == approval.token_id or subject == caller:
            raise PermissionDeniedError("an agent cannot approve its own call")
        if any(v.who == subject for v in approval.votes):
            raise ConflictError(f"'{subject}' already voted on this approval")
        vote_ts = time.time()
        unsigned = Vote(
            approver=token.agent_id,
            issuer=token.issuer,
            decision=choice,
            ts=vote_ts,
            signature="",
            token_id=token.id,
            subject=subject,
            token_expires_at=token.expires_at,
        )
        signature = self._key.sign(
            canonical_json(unsigned.signed_fields(approval.id, approval.call_id))
        )
        approval.votes.append(
            Vote(
                approver=token.agent_id,
                issuer=token.issuer,
                decision=choice,
                ts=vote_ts,
                signature=signature,
                token_id=token.id,
                subject=subject,
                token_expires_at=token.expires_at,
            )
        )
        approvals = sum(1 for v in approval.votes if v.decision is Decision.APPROVE)
        if choice is Decision.DENY:
            await self._finish(approval, ApprovalStatus.DENIED)
        elif approvals >= approval.required:
            await self._finish(approval, ApprovalStatus.APPROVED)
        else:
            await self._save(approval)
        return approval

    def valid_approvers(self, approval: Approval) -> list[Vote]:
        """Return the approving votes whose tokens are still valid now, one per subject."""
        seen: set[str] = set()
        out: list[Vote] = []
        for vote in approval.votes:
            if vote.decision is not Decision.APPROVE or vote.who in seen:
                continue
            if (
                self._verifier is not None
                and vote.token_id is not None
                and (self._verifier.state(vote.token_id, vote.token_expires_at or 0.0) != "valid")
            ):
                continue
            seen.add(vote.who)
            out.append(vote)
        return out

    def view(self, approval: Approval) -> dict[str, Any]:
        """Return the wire form with each token's state now (``valid``/``revoked``/``expired``)."""
        doc = approval.to_json()
        if self._verifier is None:
            return doc
        if approval.token_id is not None:
            doc["token_state"] = self._verifier.state(
                approval.token_id, approval.token_expires_at or 0.0
            )
        for vote, shown in zip(approval.votes, doc["votes"], strict=True):
            if vote.token_id is not None:
                shown["token_state"] = self._verifier.state(
                    vote.token_id, vote.token_expires_at or 0.0
                )
        return doc

    def _revoked(self, notice: dict[str, Any]) -> None:
        """End the revoked token's pending approvals now; drop its votes from the others."""
        token_id = notice.get("token_id")
        for approval in list(self._live.values()):
            if approval.status is not ApprovalStatus.PENDING:
                continue
            if approval.token_id == token_id:
                self._end_now(approval, ApprovalStatus.CANCELLED, "token_revoked")
            elif any(v.token_id == token_id for v in approval.votes):
                approval.votes = [v for v in approval.votes if v.token_id != token_id]
                self._save_later(approval)

    def _end_now(self, approval: Approval, status: ApprovalStatus, reason: str) -> None:
        """Finish ``approval`` at once (from a synchronous listener); persist it after."""
        approval.status = status
        approval.reason = reason
        approval.decided_at = time.time()
        future = self._done.pop(approval.id, None)
        if future is not None and not future.done():
            future.set_result(approval)
        if self._events is not None:
            self._events.publish("approval.decided", self.view(approval))
        self._save_later(approval, drop=True)

    def _save_later(self, approval: Approval, *, drop: bool = False) -> None:
        async def save() -> None:
            await self._save(approval)
            if drop:
                self._live.pop(approval.id, None)

        task = asyncio.get_running_loop().create_task(save())
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def get(self, approval_id: str) -> Approval:
        """Return a live or stored approval; raise ``NotFoundError`` if unknown."""
        live = self._live.get(approval_id)
        if live is not None:
            return live
        row = await self._db.fetchone("SELECT * FROM approvals WHERE id = ?", (approval_id,))
        if row is None:
            raise NotFoundError(f"no approval '{approval_id}'")
        return _from_row(row)

    async def list(
        self, status: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[Approval]:
        """Return approvals, newest first, optionally only those with ``status``.

        ``offset`` skips that many of the newest (the pages of ``count``).
        """
        where, args = self._where(status)
        rows = await self._db.fetchall(
            f"SELECT * FROM approvals{where} ORDER BY created_at DESC, id LIMIT ? OFFSET ?",  # noqa: S608 - fixed text
            (*args, limit, offset),
        )
        return [self._live.get(row["id"]) or _from_row(row) for row in rows]

    async def count(self, status: str | None = None) -> int:
        """Return how many approvals there are, optionally only those with ``status``."""
        where, args = self._where(status)
        row = await self._db.fetchone(f"SELECT COUNT(*) AS n FROM approvals{where}", args)  # noqa: S608 - fixed text
        return int(row["n"]) if row is not None else 0

    @staticmethod
    def _where(status: str | None) -> tuple[str, tuple[str, ...]]:
        if status is None:
            return "", ()
        try:
            ApprovalStatus(status)
        except ValueError as err:
            raise InvalidRequestError(f"unknown approval status '{status}'") from err
        return " WHERE status = ?", (status,)

    async def _finish(
        self, approval: Approval, status: ApprovalStatus, *, reason: str | None = None
    ) -> None:
        approval.status = status
        approval.reason = reason
        approval.decided_at = time.time()
        # Persist before leaving the live map, so a reader never sees the stale stored row.
        await self._save(approval)
        self._live.pop(approval.id, None)
        self._owners.pop(approval.id, None)
        future = self._done.pop(approval.id, None)
        if future is not None and not future.done():
            future.set_result(approval)
        if self._events is not None:
            self._events.publish("approval.decided", self.view(approval))

    async def _save(self, approval: Approval) -> None:
        await self._db.execute(
            "INSERT OR REPLACE INTO approvals (id, call_id, tool, agent_id, params_json, "
            "message, required, status, created_at, expires_at, decided_at, votes_json, "
            "token_id, subject, token_expires_at, reason) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                approval.id,
                approval.call_id,
                approval.tool,
                approval.agent_id,
                json.dumps(approval.params, default=str),
                approval.message,
                approval.required,
                approval.status.value,
                approval.created_at,
                approval.expires_at,
                approval.decided_at,
                json.dumps([v.to_json() for v in approval.votes]),
                approval.token_id,
                approval.subject,
                approval.token_expires_at,
                approval.reason,
            ),
        )


def _from_row(row: Any) -> Approval:
    return Approval(
        id=row["id"],
        call_id=row["call_id"],
        tool=row["tool"],
        agent_id=row["agent_id"],
        params=json.loads(row["params_json"]),
        message=row["message"],
        required=row["required"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        status=ApprovalStatus(row["status"]),
        decided_at=row["decided_at"],
        votes=[
            Vote(
                approver=v["approver"],
                issuer=v["issuer"],
                decision=Decision(v["decision"]),
                ts=v["ts"],
                signature=v["signature"],
                token_id=v.get("token_id"),
                subject=v.get("subject"),
                token_expires_at=v.get("token_expires_at"),
            )
            for v in json.loads(row["votes_json"])
        ],
        token_id=row["token_id"],
        subject=row["subject"],
        token_expires_at=row["token_expires_at"],
        reason=row["reason"],
    )
