"""Asynchronous invocation: jobs that run a call in the background and keep its outcome.

``JobManager.submit`` stores a job (``queued``), starts the call through the invoker
and returns at once; the job moves to ``running`` and ends ``completed`` or ``error``
(with the ``tool_response``), or ``cancelled``. Jobs live in SQLite; at start-up every
job a previous process left ``queued`` or ``running`` becomes an ``error`` with
``interrupted: true``, so a restart reports them instead of forgetting them. Finished
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

from bridge.auth.permissions import covers
from bridge.auth.tokens import AgentToken
from bridge.errors import ConflictError, NotFoundError, PermissionDeniedError
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

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "job_id": self.id,
            "agent_id": self.agent_id,
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
    ) -> None:
        self._invoker = invoker
        self._db = db
        self.retention_s = retention_s
        self._sweep_interval_s = sweep_interval_s
        self._tasks: dict[str, asyncio.Task[None]] = {}
        # The token id behind each running job: running jobs are bounded per token.
        self._owners: dict[str, str] = {}
        self._sweeper: asyncio.Task[None] | None = None
        db.migrate("invocation.jobs.v1", _MIGRATION)

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
        JOBS_BOUND.check(self._owners.values(), token.id)
        self._db.ensure_reserve("a new job")
        now = time.time()
        job_id = uuid.uuid4().hex
        self._owners[job_id] = token.id  # counted from here: submits race on the insert
        try:
            await self._db.execute(
                "INSERT INTO jobs (id, agent_id, tool, status, request_id, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (job_id, token.agent_id, request.tool, JobStatus.QUEUED.value, request.id,
                 now, now),
            )  # fmt: skip
        except BaseException:
            self._owners.pop(job_id, None)
            raise
        task = asyncio.get_running_loop().create_task(self._run(job_id, request, token))
        self._tasks[job_id] = task
        task.add_done_callback(lambda _t: self._forget(job_id))
        return await self._get(job_id)

    def _forget(self, job_id: str) -> None:
        self._tasks.pop(job_id, None)
        self._owners.pop(job_id, None)

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
        if job.agent_id != token.agent_id and not any(
            covers(p, ADMIN_JOBS) for p in token.permissions
        ):
            raise PermissionDeniedError("this job belongs to another agent")

    async def _run(self, job_id: str, request: ToolRequest, token: AgentToken) -> None:
        try:
            await self._set(job_id, JobStatus.RUNNING)
            response = await self._invoker.invoke(request, token=token)
        except asyncio.CancelledError:
            await asyncio.shield(self._set(job_id, JobStatus.CANCELLED, error={
                "code": "TOOL_FAILED", "message": "the job was cancelled",
                "details": {"cancelled": True}, "retryable": False,
            }))
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

    async def _interrupt_unfinished(self) -> None:
        await self._db.execute(
            "UPDATE jobs SET status = ?, interrupted = 1, error_json = ?, updated_at = ? "
            "WHERE status IN (?, ?)",
            (
                JobStatus.ERROR.value, json.dumps(_INTERRUPTED_ERROR), time.time(),
                JobStatus.QUEUED.value, JobStatus.RUNNING.value,
            ),
        )

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval_s)
            await self.purge()
