"""Endpoint errors: 429 honours Retry-After, 5xx is retried, other 4xx fail the job once."""

from __future__ import annotations

import time

import pytest
from temporalio.api.enums.v1 import TaskQueueKind
from temporalio.client import WorkflowFailureError

from tests.conftest import running_worker
from tests.scripts import bootstrap, finish, tactical


async def test_429_and_500_are_retried(client, task_queue, start_job, model_server, s3):
    script = bootstrap()
    script[2:2] = [{"error": {"status": 429, "retry_after": 2, "message": "slow down"}},
                   {"error": {"status": 500, "message": "boom"}}]
    script += tactical(5) + finish()
    async with running_worker(client, task_queue):
        t0 = time.monotonic()
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        assert (await handle.result()).status == "completed"
        elapsed = time.monotonic() - t0
    assert elapsed >= 2  # waited for Retry-After
    history = await handle.fetch_history()
    failures = [e.activity_task_started_event_attributes.attempt for e in history.events
                if e.HasField("activity_task_started_event_attributes")]
    assert max(failures) == 3  # one call took three attempts: 429, 500, success


async def test_400_is_not_retried(client, task_queue, start_job, model_server, s3):
    script = bootstrap()[:2] + [{"error": {"status": 400, "message": "context too long"}}]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    assert "model call failed" in str(info.value.cause)
    assert "HTTP 400" in str(info.value.cause) and "context too long" in str(info.value.cause)
    history = await handle.fetch_history()
    attempts = [e.activity_task_started_event_attributes.attempt for e in history.events
                if e.HasField("activity_task_started_event_attributes")]
    assert max(attempts) == 1
    assert await s3.get("switchback", f"{handle.id}/output/error.json") is not None


async def test_a_retried_model_call_sends_the_next_workflow_task_to_the_normal_queue(
        client, task_queue, start_job, model_server, s3):
    """activities/retry_unstick.py: a retry drops the job's sticky queue (a dead worker's
    queue would hold the next task for the sticky timeout); first attempts keep it."""
    script = bootstrap()
    script[3:3] = [{"error": {"status": 500, "message": "boom"}}]
    script += tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        assert (await handle.result()).status == "completed"
    events = list((await handle.fetch_history()).events)
    queue_after = {}  # attempt of a completed activity -> kind of the next workflow task's queue
    attempt_of = {e.activity_task_started_event_attributes.scheduled_event_id:
                  e.activity_task_started_event_attributes.attempt for e in events
                  if e.HasField("activity_task_started_event_attributes")}
    for i, e in enumerate(events):
        if e.HasField("activity_task_completed_event_attributes"):
            attempt = attempt_of[e.activity_task_completed_event_attributes.scheduled_event_id]
            nxt = next(x for x in events[i + 1:]
                       if x.HasField("workflow_task_scheduled_event_attributes"))
            queue_after.setdefault(attempt, set()).add(
                nxt.workflow_task_scheduled_event_attributes.task_queue.kind)
    assert queue_after[2] == {TaskQueueKind.TASK_QUEUE_KIND_NORMAL}
    assert TaskQueueKind.TASK_QUEUE_KIND_STICKY in queue_after[1]
