"""Asynchronous invocation: jobs that run a call in the background and keep its outcome.

``JobManager.submit`` stores a job (``queued``), starts the call through the invoker
and returns at once; the job moves to ``running`` and ends ``completed`` or ``error``
(with the ``tool_response``), or ``cancelled``. Jobs live in SQLite; at start-up every
job a previous process left ``queued`` or ``running`` becomes an ``error`` with
``interrupted: true``, so a restart reports them instead of forgetting them. A job
belongs to the token that submitted it (by id); when that token is revoked or expires,
its live jobs are cancelled (``UNAUTHENTICATED``, reason ``token_revoked`` /
``token_expired``) with a ``job.cancelled`` event and an audit row. Finished
jobs are deleted ``retention_s`` after they end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bridge.auth.audit import AuditEntry
from bridge.auth.permissions import covers
from bridge.auth.tokens import AgentToken
from bridge.errors import ConflictError, NotFoundError, PermissionDeniedError
from bridge.events import EventBus
from bridge.invocation.invoker import Invoker
from bridge.invocation.messages import ToolRequest
from bridge.limits import JOBS_BOUND
from bridge.storage import Database

_MIGRATION = """
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    interrupted INTEGER NOT NULL DEFAULT 0,
    request_id TEXT NOT NULL,
    response_json TEXT,
    error_json TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX jobs_status ON jobs(status, updated_at);
"""

# A job belongs to the token that submitted it (its id), not to an agent name.
_MIGRATION_V2 = """
ALTER TABLE jobs ADD COLUMN token_id TEXT;
CREATE INDEX jobs_token ON jobs(token_id);
"""

_INTERRUPTED_ERROR = {
    "code": "TOOL_FAILED",
    "message": "the bridge stopped while this job was running; its outcome is unknown",
    "details": {"interrupted": True},
    "retryable": False,
}
ADMIN_JOBS = "admin:jobs"


class JobStatus(StrEnum):
    """Where a job stands; all but ``queued`` and ``running`` are final."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    ERROR = "error"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """A snapshot of a job."""

    id: str
    agent_id: str
    tool: str
    status: JobStatus
    interrupted: bool
    request_id: str
    response: dict[str, Any] | None
    error: dict[str, Any] | None
    created_at: float
    updated_at: float
    token_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "job_id": self.id,
            "agent_id": self.agent_id,
            "token_id": self.token_id,
            "tool": self.tool,
            "status": self.status.value,
            "interrupted": self.interrupted,
            "request_id": self.request_id,
            "response": self.response,
            "error": self.error,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


def _job(row: Any) -> Job:
    return Job(
        id=row["id"],
        agent_id=row["agent_id"],
        tool=row["tool"],
        status=JobStatus(row["status"]),
        interrupted=bool(row["interrupted"]),
        request_id=row["request_id"],
        response=json.loads(row["response_json"]) if row["response_json"] else None,
        error=json.loads(row["error_json"]) if row["error_json"] else None,
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        token_id=row["token_id"],
    )


class JobManager:
    """Run calls as background jobs and answer for them across restarts."""

    def __init__(
        self,
        invoker: Invoker,
        db: Database,
        *,
        retention_s: float = 3600.0,
        sweep_interval_s: float = 60.0,
        events: EventBus | None = None,
    ) -> None:
        self._invoker = invoker
        self._db = db
        self._events = events
        self.retention_s = retention_s
        self._sweep_interval_s = sweep_interval_s
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # The token of each live job (running jobs are bounded per token id), the timer
        # that ends it at the token's expiry, and why a job was ended for its token
        # (``token_revoked`` / ``token_expired``).
        self._owners: dict[str, AgentToken] = {}
        self._expiry: dict[str, asyncio.TimerHandle] = {}
        self._ended: dict[str, str] = {}
        self._sweeper: asyncio.Task[None] | None = None
        db.migrate("invocation.jobs.v1", _MIGRATION)
        db.migrate("invocation.jobs.v2_token_id", _MIGRATION_V2)
        invoker.verifier.revocations.subscribe(self._token_revoked)

    async def start(self) -> None:
        """Mark jobs a previous process left unfinished as interrupted; start the sweeper."""
        await self._interrupt_unfinished()
        await self.purge()
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def stop(self) -> None:
        """Cancel the sweeper and every running job (recorded as interrupted)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._interrupt_unfinished()

    async def submit(self, request: ToolRequest, token: AgentToken) -> Job:
        """Store a job for ``request``, start it and return it (``queued``).

        Raise ``InvalidRequestError`` when the tool does not allow asynchronous runs,
        ``RateLimitedError`` when the token already runs ``JOBS_PER_TOKEN`` jobs and
        ``OverloadedError`` when the node runs ``JOBS``.
        """
        self._invoker.admit_job(request, token)
        JOBS_BOUND.check((t.id for t in self._owners.values()), token.id)
        self._db.ensure_reserve("a new job")
        now = time.time()
        job_id = uuid.uuid4().hex
        self._owners[job_id] = token  # counted from here: submits race on the insert
        try:
            await self._db.execute(
                "INSERT INTO jobs (id, agent_id, token_id, tool, status, request_id, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job_id,
                    token.agent_id,
                    token.id,
                    request.tool,
                    JobStatus.QUEUED.value,
                    request.id,
                    now,
                    now,
                ),
            )
        except BaseException:
            self._owners.pop(job_id, None)
            raise
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._run(job_id, request, token))
        self._tasks[job_id] = task
        deadline = self._invoker.verifier.expiry_deadline(token)
        self._arm_expiry(job_id, deadline)
        task.add_done_callback(lambda _t: self._forget(job_id))
        return await self._get(job_id)

    def _forget(self, job_id: str) -> None:
        self._tasks.pop(job_id, None)
        self._owners.pop(job_id, None)
        self._ended.pop(job_id, None)
        timer = self._expiry.pop(job_id, None)
        if timer is not None:
            timer.cancel()

    async def get(self, job_id: str, token: AgentToken) -> Job:
        """Return the job if ``token``'s holder owns it (or holds ``admin:jobs``)."""
        job = await self._get(job_id)
        self._check_owner(job, token)
        return job

    async def cancel(self, job_id: str, token: AgentToken) -> Job:
        """Cancel a queued or running job; ``CONFLICT`` if it already ended."""
        job = await self.get(job_id, token)
        task = self._tasks.get(job_id)
        if job.status not in (JobStatus.QUEUED, JobStatus.RUNNING) or task is None:
            raise ConflictError(f"job '{job_id}' already ended ({job.status.value})")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return await self._get(job_id)

    async def purge(self) -> int:
        """Delete finished jobs older than the retention time; return how many."""
        return await self._db.execute(
            "DELETE FROM jobs WHERE status NOT IN (?, ?) AND updated_at < ?",
            (JobStatus.QUEUED.value, JobStatus.RUNNING.value, time.time() - self.retention_s),
        )

    async def _get(self, job_id: str) -> Job:
        row = await self._db.fetchone("SELECT * FROM jobs WHERE id = ?", (job_id,))
        if row is None:
            raise NotFoundError(f"no job '{job_id}'", {"job_id": job_id})
        return _job(row)

    @staticmethod
    def _check_owner(job: Job, token: AgentToken) -> None:
        if job.token_id != token.id and not any(covers(p, ADMIN_JOBS) for p in token.permissions):
            raise PermissionDeniedError("this job belongs to another token")

    async def _run(self, job_id: str, request: ToolRequest, token: AgentToken) -> None:
        try:
            await self._set(job_id, JobStatus.RUNNING)
            # Charged to the token's rate limit when it was admitted.
            response = await self._invoker.invoke(request, token=token, charged=True)
        except asyncio.CancelledError:
            why = self._ended.get(job_id)
            if why is not None:
                error = {
                    "code": "UNAUTHENTICATED",
                    "message": f"the job was cancelled: its token {why.removeprefix('token_')}",
                    "details": {"cancelled": True, "reason": why, "token_id": token.id},
                    "retryable": False,
                }
            else:
                error = {
                    "code": "TOOL_FAILED",
                    "message": "the job was cancelled",
                    "details": {"cancelled": True},
                    "retryable": False,
                }
            await asyncio.shield(self._set(job_id, JobStatus.CANCELLED, error=error))
            raise
        status = JobStatus.COMPLETED if response.ok else JobStatus.ERROR
        await self._set(job_id, status, response=response.to_json(), error=response.error)

    async def _set(
        self,
        job_id: str,
        status: JobStatus,
        *,
        response: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        await self._db.execute(
            "UPDATE jobs SET status = ?, response_json = ?, error_json = ?, updated_at = ? "
            "WHERE id = ?",
            (
                status.value,
                json.dumps(response) if response is not None else None,
                json.dumps(error) if error is not None else None,
                time.time(),
                job_id,
            ),
        )

    def _token_revoked(self, notice: dict[str, Any]) -> None:
        """Cancel every live job of the revoked token."""
        for job_id, token in list(self._owners.items()):
            if token.id == notice.get("token_id"):
                self._end(job_id, "token_revoked")

    def _arm_expiry(self, job_id: str, deadline: float) -> None:
        # The loop's timers run on the monotonic clock and may fire up to a clock
        # resolution early; a token is good until its wall-clock deadline, so a timer
        # that wakes before it is armed again for the rest.
        def expire() -> None:
            left = deadline - time.time()
            if left > 0:
                self._arm_expiry(job_id, deadline)
                return
            self._end(job_id, "token_expired")

        loop = asyncio.get_running_loop()
        self._expiry[job_id] = loop.call_later(max(0.0, deadline - time.time()) + 0.001, expire)

    def _end(self, job_id: str, why: str) -> None:
        """Cancel a live job whose token ended (``why``), with an event and an audit row."""
        task, token = self._tasks.get(job_id), self._owners.get(job_id)
        if task is None or token is None or task.done() or job_id in self._ended:
            return
        self._ended[job_id] = why
        task.cancel()
        audit = self._invoker.audit
        if audit is not None:
            audit.record(
                AuditEntry(
                    call_id=job_id,
                    agent_id=token.agent_id,
                    token_id=token.id,
                    tool=None,
                    decision=why,
                    outcome="error",
                    error_code="UNAUTHENTICATED",
                    node_id=self._invoker.node_id,
                    details={"job_id": job_id, "message": f"job cancelled: {why}"},
                )
            )
        if self._events is not None:
            self._events.publish(
                "job.cancelled",
                {
                    "job_id": job_id,
                    "agent_id": token.agent_id,
                    "tokenId": token.id,
                    "reason": why,
                },
            )

    async def _interrupt_unfinished(self) -> None:
        await self._db.execute(
            "UPDATE jobs SET status = ?, interrupted = 1, error_json = ?, updated_at = ? "
            "WHERE status IN (?, ?)",
            (
                JobStatus.ERROR.value,
                json.dumps(_INTERRUPTED_ERROR),
                time.time(),
                JobStatus.QUEUED.value,
                JobStatus.RUNNING.value,
            ),
        )

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval_s)
            await self.purge()
