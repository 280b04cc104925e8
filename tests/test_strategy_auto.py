"""auto end to end on the scripted model: one model call classifies the instructions (A/B/C
with reasons, recorded in archive/classification.json and `state`), the class picks the
strategy through `auto.routes`, and that strategy runs the job; a model that will not
classify gets class B; a worker SIGKILLed in the routed strategy; replay."""

from __future__ import annotations

import json

from temporalio.worker import Replayer

from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import JobResult, JobState
from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.scripts import step
from tests.test_durability import across_a_worker_kill
from tests.waits import wait_for_requests

CONFIG = {"extends": "creator", "strategy": "auto", "llm": {"heartbeat_timeout_seconds": 2}}


async def test_auto_routes_a_routine_task_to_react(client, task_queue, start_job, model_server,
                                                   s3):
    script = scripts.auto("C") + scripts.react()
    async with running_worker(client, task_queue, max_cached_workflows=0):
        handle = await start_job(script, model_server, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result: JobResult = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.steps == len(script)
    assert result.phases == 2  # the classification, react's attempt
    assert state.strategy == "auto" and state.phase.kind == "react"
    assert state.strategy_detail["classification"] == {
        "complexity": "C", "reasons": "one short task", "strategy": "react"}
    assert state.strategy_detail["routed_to"] == "react"
    assert [p["kind"] for p in state.phases] == ["classify", "react"]
    recorded = json.loads(await s3.get("switchback",
                                       f"{handle.id}/archive/classification.json"))
    assert recorded["complexity"] == "C" and recorded["strategy"] == "react"
    assert (await s3.get("switchback", f"{handle.id}/report.md")).decode() == scripts.REPORT

    reqs = model_server.requests(handle.id)
    assert [t["function"]["name"] for t in reqs[0]["tools"]] == ["classify_task"]
    assert "Two notes and a report" in reqs[0]["messages"][0]["content"]  # the instructions
    assert "Class A (complex)" in reqs[0]["messages"][0]["content"]
    assert "job_complete" in {t["function"]["name"] for t in reqs[1]["tools"]}
    assert len(reqs[1]["messages"]) == 2  # react starts its own conversation

    replay = await Replayer(workflows=[AgentJob], data_converter=client.data_converter
                            ).replay_workflow(await handle.fetch_history(),
                                              raise_on_replay_failure=False)
    assert replay.replay_failure is None, replay.replay_failure


async def test_routes_come_from_config(client, task_queue, start_job, model_server, s3):
    script = scripts.auto("A") + scripts.plan_revise_execute(revise=False, fail_step=False)
    config = {**CONFIG, "auto": {"routes": {"A": "plan_revise_execute"}}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed" and result.steps == len(script)
    assert state.strategy_detail["routed_to"] == "plan_revise_execute"
    assert [p["status"] for p in state.strategy_detail["plan"]] == ["done"] * 3
    assert await s3.get("switchback", f"{handle.id}/archive/plan.md") is not None


async def test_a_model_that_will_not_classify_gets_class_b(client, task_queue, start_job,
                                                           model_server, s3):
    script = [step(content="This looks simple."), step(content="Really simple.")]
    config = {**CONFIG, "limits": {"max_nudges": 1}, "auto": {"routes": {"B": "react"}}}
    async with running_worker(client, task_queue):
        handle = await start_job(script + scripts.react(), model_server, config=config,
                                 documents=[], instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed"
    c = state.strategy_detail["classification"]
    assert c["complexity"] == "B" and "did not call classify_task" in c["reasons"]
    assert "Really simple." in c["reasons"]


async def test_auto_survives_a_killed_worker(client, task_queue, start_job, model_server, s3,
                                            tmp_path):
    script = [{**s, "latency_ms": 300} for s in scripts.auto("C") + scripts.react()]
    handle, result = await across_a_worker_kill(
        client, task_queue, tmp_path,
        lambda: start_job(script, model_server, config=CONFIG, documents=[],
                          instructions=scripts.INSTRUCTIONS),
        lambda h: wait_for_requests(model_server, h.id, 3))  # routed, in react
    assert result.status == "completed" and result.phases == 2
    assert len({r["_call_key"] for r in model_server.requests(handle.id)}) == len(script)


async def test_auto_routes_a_complex_task_to_nested_and_continues_as_new(
        client, task_queue, start_job, model_server, s3):
    """Class A runs nested (the default route) - its children included - composed under
    auto; the job continues as new at each phase start, the route carried along."""
    job = "auto-nested"
    parent, children = scripts.nested(job)
    model_server.set_script(job, scripts.auto("A") + parent)
    for child_id, script in children.items():
        model_server.set_script(child_id, script)
    config = {**CONFIG, "phase_settings": {"min_todos": 1, "max_todos": 4},
              "continue_as_new": {"every_phases": 1}}
    async with running_worker(client, task_queue):
        handle = await start_job(None, job_id=job, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
        runs = [wf async for wf in client.list_workflows(f'WorkflowId="{job}"')]
    assert result.status == "completed", result
    assert state.strategy == "auto" and state.strategy_detail["routed_to"] == "nested"
    assert state.strategy_detail["classification"]["complexity"] == "A"
    assert [c["status"] for c in state.strategy_detail["children"]] == ["completed"] * 2
    assert len(runs) == 3  # classification + bootstrap, transition (delegation in between)
    for kid in children:
        assert await s3.get("switchback", f"{job}/subjobs/{kid}/result.md") is not None
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    for wf in runs:
        h = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        outcome = await replayer.replay_workflow(h, raise_on_replay_failure=False)
        assert outcome.replay_failure is None, outcome.replay_failure
