"""A job id used again: the new job never sees the earlier job's files and deletes none of
them. create_workspace claims the prefix for its run (`.switchback/owner.json`); a retried
attempt of the same run goes on, any other run is refused with a non-retryable error that
names the id and what is there."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from switchback.activities.storage.workspace import WorkspaceActivities
from switchback.workflows.contract import CreateWorkspaceRequest, DocumentSpec, WorkspaceRef
from tests.conftest import running_worker
from tests.forge import forged_job
from tests.scripts import full_job


async def objects(s3, job_id: str) -> dict[str, str]:
    return {o.key: o.etag for o in await s3.list("switchback", f"{job_id}/")}


async def failure(handle) -> str:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 60)
    return str(info.value.cause)


async def test_a_reused_job_id_is_refused_and_nothing_is_touched(client, task_queue, start_job,
                                                                 model_server, s3):
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    async with running_worker(client, task_queue):
        first = await start_job(full_job(1), model_server, job_id=job_id, instructions="# One\n",
                                documents=[{"name": "mine.md", "text": "first job's"}])
        assert (await first.result()).status == "completed"
        run_id = (await first.describe()).run_id
        before, calls = await objects(s3, job_id), len(model_server.requests(job_id))
        second = await start_job(None, job_id=job_id, instructions="# Two\n",
                                 documents=[{"name": "mine.md", "text": "second job's"}])
        why = await failure(second)
        state = await second.query("state")
    assert f"job id '{job_id}' is already used: s3://switchback/{job_id}/ belongs to run " \
           f"{run_id}" in why
    assert "nothing was changed. Start the job under another id" in why
    assert "instructions.md" in why and "JobIdInUse" in why
    assert state["status"] == "failed" and "is already used" in state["last_error"]
    assert await objects(s3, job_id) == before  # nothing written, nothing deleted
    assert await s3.get("switchback", f"{job_id}/documents/mine.md") == b"first job's"
    assert len(model_server.requests(job_id)) == calls  # the second run never called the model


async def test_a_forged_carry_under_a_used_id_touches_nothing(client, task_queue, start_job,
                                                            model_server, s3):
    """A hand-made continue-as-new carry skips create_workspace; the worker's guard still
    finds that the prefix belongs to another run before any activity runs."""
    async with running_worker(client, task_queue):
        victim = await start_job(full_job(1), model_server, instructions="x", documents=[])
        await victim.result()
        run_id = (await victim.describe()).run_id
        before = await objects(s3, victim.id)
        forged = await forged_job(client, s3, task_queue, victim.id, job_id=victim.id, llm={},
                                  workspace={})
        why = await failure(forged)
    assert f"job id '{victim.id}' is already used: s3://switchback/{victim.id}/ belongs to " \
           f"run {run_id}, not to this job" in why
    assert await objects(s3, victim.id) == before


async def test_files_without_an_owner_are_not_adopted(client, task_queue, start_job, s3):
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    await s3.put("switchback", f"{job_id}/notes.md", b"from before the ownership marker")
    async with running_worker(client, task_queue):
        why = await failure(await start_job(None, job_id=job_id, instructions="x",
                                            documents=[]))
    assert f"s3://switchback/{job_id}/ holds files of an earlier job (1 objects: notes.md)" in why
    assert list(await objects(s3, job_id)) == [f"{job_id}/notes.md"]


async def test_a_retried_attempt_of_the_same_run_goes_on(s3):
    ws = WorkspaceRef(bucket="switchback", job_id=f"job-{uuid.uuid4().hex[:10]}")
    req = CreateWorkspaceRequest(workspace=ws, instructions="# x\n", max_file_bytes=1000,
                                 documents=[DocumentSpec(name="a.md", text="a")])
    acts, env = WorkspaceActivities(s3), ActivityEnvironment()
    env.info = dataclasses.replace(env.info, workflow_id=ws.job_id, workflow_run_id="run-1")
    first = await env.run(acts.create_workspace, req)
    again = await env.run(acts.create_workspace, req)  # attempt 2 of the same run
    assert first.files == ["instructions.md", "documents/a.md", "workspace.md"]
    # the same initial files; each was created only if missing (the first attempt's stay)
    assert again.files == ["instructions.md", "documents/a.md", "workspace.md"]
    env.info = dataclasses.replace(env.info, workflow_run_id="run-2")
    with pytest.raises(ApplicationError) as info:
        await env.run(acts.create_workspace, req)
    assert info.value.type == "JobIdInUse" and info.value.non_retryable
    assert "belongs to run run-1" in info.value.message
