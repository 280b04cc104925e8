"""Cancel mid model call: the job archives its todos, writes completion.json, ends Cancelled."""

from __future__ import annotations

import asyncio
import json
import time

import yaml
from temporalio.client import WorkflowExecutionStatus

from tests.conftest import running_worker
from tests.scripts import bootstrap, tactical
from tests.waits import temporal_cli, wait_for_requests


async def test_cancel_during_a_model_call(client, task_queue, start_job, model_server, s3):
    slow = {**tactical(5)[2], "latency_ms": 20000}
    script = bootstrap() + tactical(5)[:2] + [slow] + tactical(5)[3:]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config={"extends": "creator",
                                         "llm": {"heartbeat_timeout_seconds": 2}})
        await wait_for_requests(model_server, handle.id, len(bootstrap()) + 3)
        t0 = time.monotonic()
        await asyncio.to_thread(temporal_cli, client, "workflow", "cancel", "--workflow-id",
                                handle.id)
        for _ in range(200):
            if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(0.1)
        elapsed = time.monotonic() - t0
        desc = await handle.describe()
    assert desc.status == WorkflowExecutionStatus.CANCELED
    assert elapsed < 15  # did not wait for the 20 s model answer
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "cancelled"
    arch = yaml.safe_load(await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml"))
    assert arch["status"] == "cancelled"
    assert [t["status"] for t in arch["todos"]] == ["completed"] * 2 + ["cancelled"] * 3
    # the model call was cancelled through its heartbeat, not left to finish
    history = await handle.fetch_history()
    assert any(e.HasField("activity_task_cancel_requested_event_attributes")
               for e in history.events)
