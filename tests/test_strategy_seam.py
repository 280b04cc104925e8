"""The strategy seam: a job config picks its strategy by name, and a second strategy
(`react`) runs through the same orchestrator - model calls, tools, a rewind signal, a
worker with no workflow cache - and replays.
"""

from __future__ import annotations

import json

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.worker import Replayer

from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import JobResult
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.waits import wait_for_requests


def react_script() -> list[dict]:
    return [
        step(call("read_file", path="instructions.md")),
        step(call("write_file", path="notes/a.md", content="alpha\n")),
        {**step(call("list_files")), "latency_ms": 1500},  # the rewind lands during this call
        step(call("write_file", path="notes/b.md", content="beta\n")),
        step(content="All done, I think."),  # no tool call: nudged
        step(call("job_complete", summary="wrote a and b", deliverables=["notes/a.md",
                                                                          "notes/b.md"],
                  confidence=0.8)),
    ]


async def test_react_job_runs_rewinds_and_replays(client, task_queue, start_job, model_server,
                                                 s3):
    async with running_worker(client, task_queue, max_cached_workflows=0):
        handle = await start_job(react_script(), model_server, config={"strategy": "react"},
                                 instructions="# Two notes\nWrite notes/a.md and notes/b.md.")
        await wait_for_requests(model_server, handle.id, 3)
        await handle.signal("rewind", "use the notes folder")
        result: JobResult = await handle.result()
        state = await handle.query("state")
    assert result.status == "completed" and result.summary == "wrote a and b"
    assert result.phases == 2  # the rewind started a second attempt
    assert state["strategy"] == "react" and state["phase"]["kind"] == "react"

    job = handle.id
    for path, text in (("notes/a.md", "alpha\n"), ("notes/b.md", "beta\n")):
        assert (await s3.get("switchback", f"{job}/{path}")).decode() == text
    completion = json.loads(await s3.get("switchback", f"{job}/output/completion.json"))
    assert completion["status"] == "completed" and completion["deliverables"] == [
        "notes/a.md", "notes/b.md"]
    assert not [o for o in await s3.list("switchback", f"{job}/archive/")]  # no todo ritual

    reqs = model_server.requests(job)
    tools = {t["function"]["name"] for t in reqs[0]["tools"]}
    assert {"read_file", "write_file", "job_complete"} <= tools
    assert not tools & {"todo_complete", "todo_write", "todo_rewind"}
    assert "ACTIVE TODO LIST" not in reqs[0]["messages"][0]["content"]
    second = [r for r in reqs if len(r["messages"]) == 2][1]  # attempt 2 starts afresh
    assert "use the notes folder" in second["messages"][0]["content"]
    assert any("without calling a tool" in m.get("content", "") for m in reqs[-1]["messages"])

    history = await handle.fetch_history()
    replay = await Replayer(workflows=[AgentJob], data_converter=client.data_converter
                            ).replay_workflow(history, raise_on_replay_failure=False)
    assert replay.replay_failure is None, replay.replay_failure


async def test_unknown_strategy_fails_the_job_naming_it(client, task_queue, start_job):
    async with running_worker(client, task_queue):
        handle = await start_job(None, config={"strategy": "tree_of_thought"}, instructions="x")
        with pytest.raises(WorkflowFailureError) as e:
            await handle.result()
    assert "strategy: unknown strategy 'tree_of_thought'" in str(e.value.cause)
    assert "phase_alternation" in str(e.value.cause) and "react" in str(e.value.cause)


async def test_a_strategic_phase_offers_its_control_tools_with_their_schemas(
        client, task_queue, start_job, model_server):
    """The control tools of a phase are fixed rules, no settings (0.x): the job's tool record
    still holds their schemas, so the model is sent todo_write's, not just its name."""
    async with running_worker(client, task_queue):  # (no script: the job fails after it)
        handle = await start_job(None, config={"extends": "creator"}, instructions="x")
        await wait_for_requests(model_server, handle.id, 1)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
    first = model_server.requests(handle.id)[0]["tools"]
    offered = {t["function"]["name"]: t["function"] for t in first}
    assert {"todo_complete", "todo_write", "job_complete"} <= set(offered), sorted(offered)
    assert "todos" in offered["todo_write"]["parameters"]["properties"]
    assert "todo_rewind" not in offered
