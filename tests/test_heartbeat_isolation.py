"""One job's 10 MB tool result never delays another job's heartbeat on the same worker.

Job A's tool returns 10 MB (one repeated character: tiktoken's slowest input, ~5 s) and its
config keeps whole results in the prompt, so each of its next model calls counts and hashes
10 MB. Job B, on the same worker, makes model calls (1 s each) with a 2 s heartbeat timeout
all the while. Token counting runs in a thread (tiktoken releases the GIL), so B's event loop keeps
heartbeating: B's history shows no retried attempt. With the count on the event loop, B's
calls timed out and were retried.
"""

from __future__ import annotations

import asyncio

from temporalio.api.enums.v1 import EventType

from switchback.activities.tools import registry as tool_registry
from switchback.activities.tools import run as tools
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, full_job, step, tactical
from tests.waits import wait_for_requests

BIG = 10 * 1024 * 1024
USAGE = {"prompt_tokens": 1000, "completion_tokens": 10}  # the scripted server counts nothing


async def retried_attempts(handle) -> list[str]:
    scheduled: dict[int, str] = {}
    out = []
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled[e.event_id] = e.activity_task_scheduled_event_attributes.activity_type.name
        elif e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            started = e.activity_task_started_event_attributes
            if started.attempt > 1:
                out.append(f"{scheduled[started.scheduled_event_id]}: "
                           f"{started.last_failure.message}")
    return out


async def test_a_10_mb_result_does_not_stall_another_jobs_heartbeats(
        client, task_queue, start_job, model_server, s3, monkeypatch):
    dumped: list[int] = []

    async def dump_blob(files, args, limits):
        dumped.append(1)
        return tool_registry.ToolResult("x" * BIG)

    spec = tool_registry.ToolSpec("dump_blob", "Dump a blob.", tool_registry.PathArgs)
    monkeypatch.setitem(tool_registry.TOOLS, "dump_blob", spec)
    monkeypatch.setitem(tools.HANDLERS, "dump_blob", dump_blob)
    script_a = [{**s, "usage": USAGE} for s in bootstrap() + [
        step(call("dump_blob", path="blob"))] + tactical(5) + finish()]
    script_b = [{**s, "latency_ms": 1000} for s in full_job(1)]
    async with running_worker(client, task_queue):
        b = await start_job(script_b, model_server, instructions="x", documents=[], config={
            "extends": "creator", "llm": {"heartbeat_timeout_seconds": 2}})
        await wait_for_requests(model_server, b.id, 3)
        a = await start_job(script_a, model_server, instructions="x", documents=[], config={
            "extends": "creator", "tools": {"domain": ["dump_blob"]},
            "context": {"enabled": False}})
        result_a, result_b = await asyncio.wait_for(asyncio.gather(a.result(), b.result()), 300)
    assert dumped == [1] and result_a.status == result_b.status == "completed"
    # A's prompts carried the 10 MB while B ran
    assert any(len(m.get("content") or "") == BIG for r in model_server.requests(a.id)
               for m in r["messages"])
    assert await retried_attempts(b) == []
    assert len(model_server.requests(b.id)) == len(script_b)
