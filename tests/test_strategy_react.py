"""react, the baseline, with what the product promises: an approval, the budget's wrap-up,
continue-as-new at an attempt boundary, a worker SIGKILLed mid-job, a rerun from a
recorded attempt. (tests/test_strategy_seam.py: tools, nudges, a rewind signal, replay.)"""

from __future__ import annotations

import json

from temporalio.worker import Replayer

from switchback.operate.rerun import rerun
from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import ApproveRequest, JobState
from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bad_model_input import tool_messages
from tests.test_durability import across_a_worker_kill
from tests.waits import wait_for_requests, wait_state

CONFIG = {"extends": "creator", "strategy": "react", "llm": {"heartbeat_timeout_seconds": 2}}


async def test_react_waits_for_an_approval(client, task_queue, start_job, model_server, s3):
    config = {**CONFIG, "approval_required": ["write_file"]}
    script = scripts.react()[:-1] + [step(call(  # notes/a.md was denied: it is not delivered
        "job_complete", summary="wrote what was approved", confidence=0.9,
        deliverables=["report.md", "notes/b.md"]))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        st = await wait_state(handle, lambda s: bool(s.pending_approvals))
        assert st.status == "waiting_approval" and st.pending_approvals[0].tool == "write_file"
        await handle.execute_update("approve", ApproveRequest(
            call_id=st.pending_approvals[0].call_id, approved=False, note="not there"))
        for _ in range(2):  # the other two writes
            st = await wait_state(handle, lambda s: bool(s.pending_approvals))
            await handle.execute_update("approve", ApproveRequest(
                call_id=st.pending_approvals[0].call_id, approved=True))
        result = await handle.result()
    assert result.status == "completed"
    assert await s3.get("switchback", f"{handle.id}/notes/a.md") is None  # denied
    assert await s3.get("switchback", f"{handle.id}/notes/b.md") is not None
    denied = model_server.requests(handle.id)[2]["messages"][-1]["content"]
    assert "approval_denied" in denied and "not there" in denied


async def test_react_wraps_up_when_the_budget_is_spent(client, task_queue, start_job,
                                                       model_server, s3):
    config = {**CONFIG, "budget": {"max_tokens": 5000}}
    script = [{**step(call("read_file", path="instructions.md")),
               "usage": {"prompt_tokens": 6000, "completion_tokens": 10}},
              step(call("job_complete", summary="ran out; nothing written", confidence=0.1))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "budget_exhausted" and result.summary == "ran out; nothing written"
    assert state.phase.variant == "wrap_up" and state.breakers["trips"][0]["breaker"] == "budget"
    wrap = model_server.requests(handle.id)[1]["messages"]
    assert len(wrap) == 2 and "budget" in wrap[1]["content"].lower()
    done = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert done["status"] == "budget_exhausted"


async def test_react_continues_as_new_at_an_attempt_and_reruns(client, task_queue, start_job,
                                                               model_server, s3):
    script = scripts.react(("report.md", "notes/b.md"))
    script[1] = {**script[1], "latency_ms": 1500}  # the rewind lands during this call
    config = {**CONFIG, "continue_as_new": {"every_phases": 1}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_for_requests(model_server, handle.id, 2)
        await handle.signal("rewind", "write the notes again")
        result = await handle.result()
        runs = [wf async for wf in client.list_workflows(f'WorkflowId="{handle.id}"')]
        new_id = f"{handle.id}-rerun"
        again = await (await rerun(client, s3, "switchback", handle.id, new_id, 2, task_queue,
                                   True)).result()
    assert result.status == "completed" and result.phases == 2
    assert len(runs) == 2  # attempt 2 ran in the second run
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    for wf in runs:
        h = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        outcome = await replayer.replay_workflow(h, raise_on_replay_failure=False)
        assert outcome.replay_failure is None, outcome.replay_failure
    # the rerun from attempt 2 answered every call from the recording
    assert again.status == "completed" and again.summary == result.summary
    assert model_server.requests(new_id) == []


async def test_react_survives_a_killed_worker(client, task_queue, start_job, model_server, s3,
                                              tmp_path):
    script = [{**s, "latency_ms": 400} for s in scripts.react()]
    handle, result = await across_a_worker_kill(
        client, task_queue, tmp_path,
        lambda: start_job(script, model_server, config=CONFIG, documents=[],
                          instructions=scripts.INSTRUCTIONS),
        lambda h: wait_for_requests(model_server, h.id, 2))
    assert result.status == "completed" and result.steps == len(script)
    assert len({r["_call_key"] for r in model_server.requests(handle.id)}) == len(script)
    assert (await s3.get("switchback", f"{handle.id}/report.md")).decode() == scripts.REPORT


async def test_breaker_notes_speak_reacts_tools(client, task_queue, start_job, model_server,
                                               s3):
    config = {**CONFIG, "breakers": {"no_progress_steps": 2}}
    script = [step(call("read_file", path="instructions.md")), step(call("list_files"))] + (
        scripts.react()[1:])
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        assert (await handle.result()).status == "completed"
    note = model_server.requests(handle.id)[2]["messages"][-1]["content"]
    assert note.startswith("Checkpoint: no progress in the last 2 steps. Try another way")
    assert "todo_" not in note


async def test_a_job_that_cannot_write_files_is_not_told_to_deliver_them(
        client, task_queue, start_job, model_server):
    """react's system prompt follows the job's tools: with write_file, react.md (files are the
    job's results); without it (`tools.workspace: []`, as the BFCL runner sets), react_actions
    .md: the results are what the tools do, job_complete names no file. Under BFCL the 1.5B
    model, told to deliver files it could not write, claimed files of the API's world."""
    script = [step(call("job_complete", summary="42", deliverables=["tmp"], confidence=0.9)),
              step(call("job_complete", summary="the answer: 42", deliverables=[],
                        confidence=0.9))]
    prompts, refused = {}, {}
    async with running_worker(client, task_queue):
        for name, tools in (("files", {}), ("actions", {"tools": {"workspace": []}})):
            handle = await start_job(script, model_server, config={**CONFIG, **tools},
                                     documents=[], instructions="What is six times seven?")
            result = await handle.result()
            assert result.status == "completed" and result.answer_only, result
            system = model_server.requests(handle.id)[0]["messages"][0]
            assert system["role"] == "system"
            prompts[name] = " ".join(system["content"].split())
            refused[name] = tool_messages(model_server, handle.id)[0]
    assert "the files are what the job delivers" in prompts["files"]
    assert "You have no tool that writes workspace files" in prompts["actions"]
    assert "What is six times seven?" in prompts["actions"]
    assert "write_file" not in prompts["actions"].split("## The task")[0]
    # a refused claim: the files job is told to do the work with the tools; the actions
    # job that it can name only files its tools wrote
    assert "tmp does not exist. Do the work that makes them so" in refused["files"]
    assert refused["actions"].endswith(
        "tmp does not exist. You have no tool that writes workspace files, so a deliverable "
        "can only be a file your tools wrote: when the task's work is done with the tools, "
        "call job_complete again with no deliverables."), refused["actions"]
