import asyncio
from pathlib import Path
from typing import Any

import pytest

from bridge.auth.tokens import AgentToken
from bridge.errors import ConflictError, NotFoundError, PermissionDeniedError
from bridge.invocation.jobs import JobStatus
from bridge.tools.context import CallContext
from bridge.tools.definition import Execution, ToolDefinition
from tests.invocation.helpers import Env

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


def register(env: Env, gate: asyncio.Event) -> None:
    async def work(params: dict[str, Any], ctx: CallContext) -> Any:
        await gate.wait()
        return {"n": params["n"] * 2}

    env.registry.register(
        ToolDefinition(
            name="work",
            description="Work",
            parameters=SCHEMA,
            execution=Execution(async_allowed=True),
        ),
        work,
    )


def verified(env: Env, agent: str, perms: tuple[str, ...] = ("*",)) -> AgentToken:
    return env.runtime.verifier.verify(env.token(agent=agent, perms=perms))


async def wait_status(env: Env, job_id: str, token: AgentToken, status: JobStatus) -> Any:
    for _ in range(300):
        job = await env.runtime.jobs.get(job_id, token)
        if job.status is status:
            return job
        await asyncio.sleep(0.01)
    raise AssertionError(f"job never reached {status}")


async def test_job_lifecycle(env: Env) -> None:
    gate = asyncio.Event()
    register(env, gate)
    alice = verified(env, "alice", ("device:*",))
    job = await env.runtime.jobs.submit(env.request("work", {"n": 4}), alice)
    assert job.status in (JobStatus.QUEUED, JobStatus.RUNNING)
    await wait_status(env, job.id, alice, JobStatus.RUNNING)
    with pytest.raises(PermissionDeniedError):
        await env.runtime.jobs.get(job.id, verified(env, "bob", ("device:*",)))
    assert (await env.runtime.jobs.get(job.id, verified(env, "root", ("admin:*",)))).id == job.id
    gate.set()
    done = await wait_status(env, job.id, alice, JobStatus.COMPLETED)
    assert done.response is not None
    assert done.response["result"] == {"n": 8}
    with pytest.raises(ConflictError):
        await env.runtime.jobs.cancel(job.id, alice)
    with pytest.raises(NotFoundError):
        await env.runtime.jobs.get("missing", alice)


async def test_cancel(env: Env) -> None:
    register(env, asyncio.Event())
    alice = verified(env, "alice")
    job = await env.runtime.jobs.submit(env.request("work", {"n": 1}), alice)
    await wait_status(env, job.id, alice, JobStatus.RUNNING)
    cancelled = await env.runtime.jobs.cancel(job.id, alice)
    assert cancelled.status is JobStatus.CANCELLED
    assert cancelled.error is not None
    assert cancelled.error["details"] == {"cancelled": True}


async def test_restart_reports_interrupted(tmp_path: Path) -> None:
    env = Env(tmp_path)
    await env.runtime.start()
    register(env, asyncio.Event())
    alice = verified(env, "alice")
    job = await env.runtime.jobs.submit(env.request("work", {"n": 1}), alice)
    await wait_status(env, job.id, alice, JobStatus.RUNNING)
    # Simulate a crash: the process dies without stop(); a new process opens the same file.
    crashed_db_path = env.db.path
    again = Env(tmp_path)
    assert again.db.path == crashed_db_path
    await again.runtime.start()
    after = await again.runtime.jobs.get(
        job.id, again.runtime.verifier.verify(again.token(agent="alice"))
    )
    assert after.status is JobStatus.ERROR
    assert after.interrupted is True
    assert after.error is not None
    assert after.error["details"] == {"interrupted": True}
    assert after.to_json()["status"] == "error"
    await again.runtime.stop()
    for task in list(env.runtime.jobs._tasks.values()):
        task.cancel()
    await asyncio.sleep(0)


async def test_retention_purges_finished(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.runtime.jobs.retention_s = 0.0
    await env.runtime.start()
    gate = asyncio.Event()
    gate.set()
    register(env, gate)
    alice = verified(env, "alice")
    job = await env.runtime.jobs.submit(env.request("work", {"n": 1}), alice)
    await wait_status(env, job.id, alice, JobStatus.COMPLETED)
    await asyncio.sleep(0.01)
    assert await env.runtime.jobs.purge() == 1
    with pytest.raises(NotFoundError):
        await env.runtime.jobs.get(job.id, alice)
    await env.runtime.stop()
