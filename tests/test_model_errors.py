"""Endpoint errors: 429 honours Retry-After, 5xx is retried, other 4xx fail the job once."""

from __future__ import annotations

import time

import pytest
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
