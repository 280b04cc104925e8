"""MCP tools on split workers: listing and calls run on the tools queue; the model worker
has no MCP server at all (it reads the schemas the job recorded)."""

from __future__ import annotations

import contextlib
import uuid

from switchback.activities.storage.s3 import S3Store
from switchback.activities.tools.mcp_sessions import McpServers
from switchback.worker import build_workers
from switchback.workflows.contract import JobInput, JobResult
from tests.scripts import bootstrap, call, finish, step


async def test_only_the_tools_worker_talks_to_mcp_servers(client, model_server, s3, mcp,
                                                          monkeypatch):
    tq = f"tq-{uuid.uuid4().hex[:8]}"
    queues = {"model": f"{tq}-model", "tools": f"{tq}-tools"}
    monkeypatch.setenv("SWITCHBACK_MODEL_TASK_QUEUE", queues["model"])
    monkeypatch.setenv("SWITCHBACK_TOOL_TASK_QUEUE", queues["tools"])
    store = S3Store()
    workers, closers = [], []
    for role in ("workflows", "model", "tools"):
        ws, cs = build_workers(client, tq, store, role, mcp if role == "tools" else McpServers())
        workers += ws
        closers += cs
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, bootstrap() + [
        step(call("time__get_current_time", timezone="UTC")),
        step(call("write_file", path="now.json", content="{{last_tool_result}}")),
    ] + [step(call("todo_complete", notes=f"t{i}")) for i in range(5)] + finish())
    async with contextlib.AsyncExitStack() as stack:
        for w in workers:
            await stack.enter_async_context(w)
        handle = await client.start_workflow(
            "AgentJob", JobInput(config={"task_queues": queues,
                                         "tools": {"domain": ["time.get_current_time"]}},
                                 instructions="x", documents=[]),
            id=job_id, task_queue=tq, result_type=JobResult)
        assert (await handle.result()).status == "completed"
    for c in closers:
        await c.close()
    store.close()
    history = await handle.fetch_history()
    placed = {(e.activity_task_scheduled_event_attributes.activity_type.name,
               e.activity_task_scheduled_event_attributes.task_queue.name)
              for e in history.events if e.HasField("activity_task_scheduled_event_attributes")}
    assert {("list_tools", queues["tools"]), ("run_tool", queues["tools"]),
            ("call_model", queues["model"])} <= placed
    now = await s3.get("switchback", f"{job_id}/now.json")
    assert now is not None and b'"timezone": "UTC"' in now
