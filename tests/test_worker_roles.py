"""Worker roles and separate task queues: model and tool activities on their own queues."""

from __future__ import annotations

import contextlib
import uuid
from datetime import timedelta

from switchback.activities.storage.s3 import S3Store
from switchback.worker import build_workers, tuning_from_env
from switchback.workflows.contract import JobInput, JobResult
from tests.markers import local_activity
from tests.scripts import full_job


async def test_model_and_tool_activities_on_their_own_queues(client, model_server, s3,
                                                             monkeypatch):
    tq = f"tq-{uuid.uuid4().hex[:8]}"
    queues = {"model": f"{tq}-model", "tools": f"{tq}-tools"}
    monkeypatch.setenv("SWITCHBACK_MODEL_TASK_QUEUE", queues["model"])
    monkeypatch.setenv("SWITCHBACK_TOOL_TASK_QUEUE", queues["tools"])
    monkeypatch.setenv("SWITCHBACK_MAX_CONCURRENT_ACTIVITIES", "7")
    assert tuning_from_env() == {"max_concurrent_activities": 7,
                                 "sticky_queue_schedule_to_start_timeout": timedelta(seconds=5)}
    # three "processes", one role each; every tool on its queue
    history, polled = await run_on_roles(
        client, model_server, tq, ("workflows", "model", "tools"),
        {"extends": "creator", "task_queues": queues, "tools": {"local": []}})
    assert sorted(polled) == sorted([tq, *queues.values()])
    placed = {(e.activity_task_scheduled_event_attributes.activity_type.name,
               e.activity_task_scheduled_event_attributes.task_queue.name)
              for e in history.events if e.HasField("activity_task_scheduled_event_attributes")}
    assert ("call_model", queues["model"]) in placed
    assert ("run_tool", queues["tools"]) in placed
    assert not any(name == "archive_phase" for name, _ in placed)
    assert "archive_phase" in local_activities(history)  # run by the workflows worker


async def run_on_roles(client, model_server, tq: str, roles: tuple[str, ...], config: dict):
    """Run a one-tactical-phase job on workers of these roles (one "process" each): its
    history and the task queues the workers polled."""
    store = S3Store()
    workers, closers = [], []
    for role in roles:
        ws, cs = build_workers(client, tq, store, role)
        workers += ws
        closers += cs
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, full_job(1))
    async with contextlib.AsyncExitStack() as stack:
        for w in workers:
            await stack.enter_async_context(w)
        handle = await client.start_workflow(
            "AgentJob", JobInput(config=config, instructions="x", documents=[]),
            id=job_id, task_queue=tq, result_type=JobResult)
        assert (await handle.result()).status == "completed"
    for c in closers:
        await c.close()
    store.close()
    return await handle.fetch_history(), [w.task_queue for w in workers]


def local_activities(history) -> set[str]:
    """Activity types of the local-activity markers in a history."""
    return {t for e in history.events if (t := local_activity(e)) is not None}


async def test_workspace_tools_run_as_local_activities_in_the_workflow_worker(
        client, model_server, s3, monkeypatch):
    """tools.local (default: the workspace tools): run inside the workflow task, recorded as
    local-activity markers; the rest stay activities. A workflows-only worker runs them."""
    tq = f"tq-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("SWITCHBACK_MODEL_TASK_QUEUE", f"{tq}-model")
    history, _ = await run_on_roles(
        client, model_server, tq, ("workflows", "model"),
        {"extends": "defaults", "task_queues": {"model": f"{tq}-model"}})
    scheduled = [e.activity_task_scheduled_event_attributes.activity_type.name
                 for e in history.events
                 if e.HasField("activity_task_scheduled_event_attributes")]
    markers = [e.marker_recorded_event_attributes.marker_name for e in history.events
               if e.HasField("marker_recorded_event_attributes")]
    assert "run_tool" not in scheduled and "call_model" in scheduled
    assert markers.count("core_local_activity") >= 5  # the job's workspace tool calls
    assert {"tool.write_file", "read_memory", "archive_phase", "snapshot_phase",
            "load_todos"} <= local_activities(history)  # a local tool call: `tool.<name>`
    assert "run_tool" not in local_activities(history)
