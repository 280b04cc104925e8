"""A model or tool task queue that no worker polls surfaces as a clear error in `state` and in
the job's failure, not a silent hang: load_config asks the server who polls it
(DescribeTaskQueue); a queue whose worker went away after that is caught by the
schedule-to-start timeout on activities sent to a separate queue."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities.storage.s3 import S3Store
from switchback.worker import build_workers
from switchback.workflows.contract import JobState
from tests.conftest import running_worker
from tests.scripts import full_job


async def failure(handle) -> str:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 120)
    return str(info.value.cause)


async def test_a_typo_queue_fails_the_job_clearly(client, task_queue, start_job, model_server):
    typo = f"switchback-modle-{uuid.uuid4().hex[:6]}"
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(1), model_server, instructions="x", documents=[],
                                 config={"extends": "creator", "task_queues": {"model": typo}})
        why = await failure(handle)
        state = await handle.query("state", result_type=JobState)
    expected = (f"task_queues.model: no worker polls task queue '{typo}' (start one with "
                f"SWITCHBACK_WORKER_ROLE=model SWITCHBACK_MODEL_TASK_QUEUE={typo}, or fix the "
                "config)")
    assert expected in why and "SwitchbackJobFailed" in why
    assert state.status == "failed" and expected in (state.last_error or "")
    assert model_server.requests(handle.id) == []


async def test_a_queue_whose_worker_went_away_hits_the_backstop(client, task_queue, start_job,
                                                                model_server, monkeypatch):
    gone = f"{task_queue}-model"
    monkeypatch.setenv("SWITCHBACK_MODEL_TASK_QUEUE", gone)
    store = S3Store()
    workers, closers = build_workers(client, task_queue, store, "model")
    async with contextlib.AsyncExitStack() as stack:  # polls `gone` for a moment, then stops
        for w in workers:
            await stack.enter_async_context(w)
        await asyncio.sleep(1)
    for c in closers:
        await c.close()
    store.close()
    monkeypatch.delenv("SWITCHBACK_MODEL_TASK_QUEUE")
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(1), model_server, instructions="x", documents=[],
                                 config={"extends": "creator", "task_queues": {
                                     "model": gone, "schedule_to_start_seconds": 2}})
        why = await failure(handle)
        state = await handle.query("state", result_type=JobState)
    expected = (f"no worker took it from task queue '{gone}' within "
                "task_queues.schedule_to_start_seconds: does a worker poll that queue?")
    assert expected in why and "model call failed" in why
    assert expected in (state.last_error or "")
