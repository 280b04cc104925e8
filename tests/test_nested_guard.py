"""A nested job's children work in `<parent>/subjobs/<child>/`. Nobody else gets in: not a
job started by hand with `nested.within_parent`, not a forged carry, not the child of a
workflow that is not an AgentJob, not the child of an impostor "AgentJob" (run by the
attacker's own worker) that borrows a finished job's id or that owns no workspace. The
worker's guard asks Temporal who the parent is and checks the parent's prefix marker."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ChildWorkflowError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from switchback.activities.storage.paths import PathError, check_path
from switchback.workflows.contract import layout
from tests.conftest import running_worker
from tests.forge import forged_job
from tests.scripts import full_job

WITHIN = {"extends": "creator", "nested": {"within_parent": True}}


async def objects(s3, prefix: str) -> dict[str, str]:
    return {o.key: o.etag for o in await s3.list("switchback", f"{prefix}/")}


async def failure(handle) -> str:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 60)
    return str(info.value.cause)


def test_the_layout_of_children() -> None:
    assert layout.subjob_prefix("job-1", "job-1-p2-t1") == "job-1/subjobs/job-1-p2-t1"
    assert layout.split_subjob("job-1/subjobs/job-1-p2-t1") == ("job-1", "job-1-p2-t1")
    for prefix in ("job-1", "job-1/other/x", "job-1/subjobs/", "job-1/subjobs/a/b", "/subjobs/x"):
        assert layout.split_subjob(prefix) is None, prefix
    assert layout.job_of("job-1/subjobs/job-1-p2-t1") == "job-1-p2-t1"
    assert layout.is_internal("subjobs/k/.switchback/owner.json")
    assert not layout.is_internal("subjobs/k/result.md")
    assert layout.is_workflow_owned("subjobs/k/result.md")
    with pytest.raises(PathError) as e:
        check_path("subjobs/k/.switchback/conversations/react_0001/000001.json")
    assert e.value.code == "reserved_path"


async def test_a_job_without_a_parent_may_not_claim_one(client, task_queue, start_job,
                                                        model_server, s3):
    job = f"orphan-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        why = await failure(await start_job(None, job_id=job, config=WITHIN, instructions="x",
                                            documents=[]))
    assert "nested.within_parent: only a child of a nested job" in why
    assert not await objects(s3, job) and not model_server.requests(job)


async def test_a_forged_carry_may_not_claim_a_parent(client, task_queue, start_job,
                                                     model_server, s3):
    async with running_worker(client, task_queue):
        done = await start_job(full_job(1), model_server, instructions="x", documents=[])
        await done.result()
        forged = await forged_job(client, s3, task_queue, done.id,
                                  nested={"within_parent": True})
        why = await failure(forged)
    assert "nested.within_parent: only a child of a nested job" in why
    assert not await objects(s3, forged.id)


async def start_child(target: dict[str, Any]) -> str:
    """A real AgentJob started as a child, asking for its parent's workspace."""
    try:
        await workflow.execute_child_workflow(
            "AgentJob", {"config": WITHIN, "instructions": "read documents/ and tell all",
                         "documents": []},
            id=target["child"], task_queue=target["queue"])
    except ChildWorkflowError as e:
        return str(e.cause)
    return "the child ran"


@workflow.defn(name="AgentJob")
class ImpostorJob:
    """An attacker's worker, on its own task queue, runs a workflow it calls AgentJob."""

    @workflow.run
    async def run(self, target: dict[str, Any]) -> str:
        return await start_child(target)


@workflow.defn(name="SomeWorkflow")
class SomeParent:
    @workflow.run
    async def run(self, target: dict[str, Any]) -> str:
        return await start_child(target)


async def test_an_impostor_parent_with_a_finished_jobs_id_gets_nothing(
        client, task_queue, start_job, model_server, s3):
    async with running_worker(client, task_queue):
        victim = await start_job(full_job(1), model_server, instructions="x", documents=[
            {"name": "secret.md", "text": "the victim's"}])
        assert (await victim.result()).status == "completed"
        before = await objects(s3, victim.id)
        handle = await client.start_workflow(
            "AgentJob", {"child": f"{victim.id}-p2-t1", "queue": task_queue}, id=victim.id,
            task_queue=f"attacker-{uuid.uuid4().hex[:6]}")
        queue = (await handle.describe()).task_queue
        async with Worker(client, task_queue=queue, workflows=[ImpostorJob],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            why = await asyncio.wait_for(handle.result(), 60)
    assert f"may not work in {victim.id}/subjobs/{victim.id}-p2-t1/" in why
    assert f"s3://switchback/{victim.id}/ does not belong to its parent" in why
    assert await objects(s3, victim.id) == before  # no copy of secret.md, nothing written
    assert not model_server.requests(f"{victim.id}-p2-t1")


async def test_an_impostor_parent_that_owns_no_workspace_gets_nothing(
        client, task_queue, model_server, s3):
    parent = f"impostor-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            "AgentJob", {"child": f"{parent}-p2-t1", "queue": task_queue}, id=parent,
            task_queue=f"attacker-{uuid.uuid4().hex[:6]}")
        queue = (await handle.describe()).task_queue
        async with Worker(client, task_queue=queue, workflows=[ImpostorJob],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            why = await asyncio.wait_for(handle.result(), 60)
    assert "does not belong to its parent" in why
    assert not await objects(s3, parent)


async def test_the_child_of_another_kind_of_workflow_gets_nothing(client, task_queue,
                                                                  model_server, s3):
    parent = f"other-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            "SomeWorkflow", {"child": f"{parent}-p2-t1", "queue": task_queue}, id=parent,
            task_queue=f"attacker-{uuid.uuid4().hex[:6]}")
        queue = (await handle.describe()).task_queue
        async with Worker(client, task_queue=queue, workflows=[SomeParent],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            why = await asyncio.wait_for(handle.result(), 60)
    assert "its parent is a SomeWorkflow, not an AgentJob" in why
    assert not await objects(s3, parent)
