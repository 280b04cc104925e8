"""A nested job's steering reaches its children: pause and resume, a rewind (which goes to
the running children, not the coordinator), cancel (children cancelled, each records it)."""

from __future__ import annotations

import asyncio
import json

import yaml
from temporalio.client import WorkflowExecutionStatus

from switchback.workflows.contract import JobResult, JobState
from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.waits import wait_for_requests, wait_state

CONFIG = {"extends": "creator", "strategy": "nested",
          "phase_settings": {"min_todos": 1, "max_todos": 4},
          "nested": {"max_concurrent": 2}, "llm": {"heartbeat_timeout_seconds": 2}}


def kids(job: str) -> list[str]:
    return [f"{job}-p2-t1", f"{job}-p2-t2"]


def setup(model_server, job: str, first_latency_ms: int) -> None:
    parent, children = scripts.nested(job)
    model_server.set_script(job, parent)
    for i, (child_id, script) in enumerate(children.items(), 1):
        slow = {**step(call("list_files")), "latency_ms": first_latency_ms}
        model_server.set_script(child_id, [slow] + script)
        assert child_id == kids(job)[i - 1]


async def test_pause_rewind_and_resume_reach_the_children(client, task_queue, start_job,
                                                          model_server, s3):
    job = "nested-steering"
    setup(model_server, job, 1500)
    async with running_worker(client, task_queue):
        handle = await start_job(None, job_id=job, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        for kid in kids(job):
            await wait_for_requests(model_server, kid, 1)  # both in their slow first call
        running = await handle.query("state", result_type=JobState)
        assert running.phase.kind == "delegate"
        assert running.strategy_detail["child_jobs"] == {k: "running" for k in kids(job)}
        await handle.signal("pause")
        children = [client.get_workflow_handle(k, result_type=JobResult) for k in kids(job)]
        for c in children:
            await wait_state(c, lambda s: s.status == "paused")
        paused = await handle.query("state", result_type=JobState)
        assert paused.strategy_detail["child_jobs"] == {k: "paused" for k in kids(job)}
        await handle.signal("rewind", "write the letters in capitals")
        made = {k: len(model_server.requests(k)) for k in kids(job)}
        await asyncio.sleep(1.0)  # paused: nothing new starts
        assert {k: len(model_server.requests(k)) for k in kids(job)} == made
        await handle.signal("resume")
        result: JobResult = await handle.result()
        results = [await c.result() for c in children]
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and "child_jobs" not in state.strategy_detail
    assert result.phases == 3  # bootstrap, delegation, transition: the coordinator kept its plan
    assert not any(p["variant"] == "rewind" for p in state.phases)
    for kid, r in zip(kids(job), results, strict=True):
        assert r.status == "completed" and r.phases == 2, kid  # the rewind: a second attempt
        second = [q for q in model_server.requests(kid) if len(q["messages"]) == 2][1]
        assert "write the letters in capitals" in second["messages"][0]["content"]


async def test_cancel_reaches_the_children(client, task_queue, start_job, model_server, s3):
    job = "nested-cancel"
    setup(model_server, job, 20000)
    async with running_worker(client, task_queue):
        handle = await start_job(None, job_id=job, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        for kid in kids(job):
            await wait_for_requests(model_server, kid, 1)
        await handle.cancel()
        for _ in range(300):
            if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(0.1)
        desc = await handle.describe()
        child_status = [(await client.get_workflow_handle(k).describe()).status
                        for k in kids(job)]
    assert desc.status == WorkflowExecutionStatus.CANCELED
    assert child_status == [WorkflowExecutionStatus.CANCELED] * 2
    for kid in kids(job):  # each child recorded its end in its folder
        done = json.loads(await s3.get("switchback",
                                       f"{job}/subjobs/{kid}/output/completion.json"))
        assert done["status"] == "cancelled"
    done = json.loads(await s3.get("switchback", f"{job}/output/completion.json"))
    assert done["status"] == "cancelled"
    arch = yaml.safe_load(await s3.get("switchback", f"{job}/archive/phase_2.yaml"))
    assert arch["status"] == "cancelled"
    assert [t["status"] for t in arch["todos"]] == ["cancelled"] * 2
    assert [(c["key"], c["status"]) for c in arch["children"]] == [
        ("p2-t1", "cancelled"), ("p2-t2", "cancelled")]
