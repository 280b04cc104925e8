"""Pause and resume: nothing starts while paused, and a paused job survives a new worker."""

from __future__ import annotations

import asyncio

from tests.conftest import running_worker
from tests.scripts import full_job
from tests.waits import temporal_cli, wait_for_requests, wait_state


async def test_pause_survives_worker_restart(client, task_queue, start_job, model_server, s3):
    script = [{**s, "latency_ms": 200} for s in full_job(2)]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        await wait_for_requests(model_server, handle.id, 10)
        await asyncio.to_thread(temporal_cli, client, "workflow", "signal", "--workflow-id",
                                handle.id, "--name", "pause")
        st = await wait_state(handle, lambda s: s.status == "paused")
        assert st.paused
        made = len(model_server.requests(handle.id))
    # the worker is gone; the paused job waits on the server
    await asyncio.sleep(1.5)
    assert len(model_server.requests(handle.id)) == made
    async with running_worker(client, task_queue):
        st = await wait_state(handle, lambda s: s.status == "paused")  # replayed, still paused
        await asyncio.sleep(1.0)
        assert len(model_server.requests(handle.id)) == made
        await asyncio.to_thread(temporal_cli, client, "workflow", "signal", "--workflow-id",
                                handle.id, "--name", "resume")
        result = await handle.result()
    assert result.status == "completed" and result.steps == len(script)
