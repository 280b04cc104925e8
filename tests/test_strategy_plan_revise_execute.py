"""plan_revise_execute end to end on the scripted model: plan, an evaluation below the
threshold, a revision, execution step by step in fresh conversations with the
predecessors' results, a failed step that revises the rest; the records in the workspace,
`state`, a worker SIGKILLed mid-job, replay on a worker without cache."""

from __future__ import annotations

import json

from temporalio.worker import Replayer

from switchback.operate.rerun import rerun
from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import JobResult, JobState
from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_bad_model_input import tool_messages
from tests.test_durability import across_a_worker_kill
from tests.waits import wait_for_requests, wait_state

CONFIG = {"extends": "creator", "strategy": "plan_revise_execute",
          "llm": {"heartbeat_timeout_seconds": 2}}


async def test_plan_revise_execute_job(client, task_queue, start_job, model_server, s3):
    script = scripts.plan_revise_execute()
    async with running_worker(client, task_queue, max_cached_workflows=0):
        handle = await start_job(script, model_server, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        during = await wait_state(handle, lambda s: s.phase.kind == "step")
        result: JobResult = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed", result
    assert result.steps == len(script)
    assert result.summary == "report.md joins alpha and beta"
    assert result.deliverables == ["notes/a.md", "notes/b.md", "report.md"]
    # plan, evaluate, revise, evaluate, step 1, step 2, step 3 (failed), replan, step 4
    assert result.phases == 9
    assert during.strategy == "plan_revise_execute" and during.todos
    assert during.strategy_detail["threshold"] == 0.7
    assert state.strategy_detail["replans"] == 1
    assert [r["score"] for r in state.strategy_detail["rounds"]] == [0.5, 0.9, None]
    assert [(p["id"], p["status"]) for p in state.strategy_detail["plan"]] == [
        (1, "done"), (2, "done"), (3, "failed"), (4, "done")]

    job = handle.id

    async def text(path: str) -> str:
        data = await s3.get("switchback", f"{job}/{path}")
        assert data is not None, path
        return data.decode()
    assert await text("report.md") == scripts.REPORT
    assert "Score: 0.50 (threshold 0.70): below the threshold" in await text(
        "archive/evaluation_r1.md")
    assert "accepted" in await text("archive/evaluation_r2.md")
    assert "Write report.md with a title" in await text("archive/plan_r3.md")
    assert "Status: failed" in await text("archive/steps/step_03.md")
    current = await text("archive/plan.md")
    assert "[x] 1. Write notes/a.md" in current and "[!] 3. Write report.md" in current
    completion = json.loads(await text("output/completion.json"))
    assert completion["status"] == "completed"

    # every stage is a fresh conversation; a step sees the plan and its predecessors' results
    reqs = model_server.requests(job)
    firsts = [r for r in reqs if len(r["messages"]) == 2]
    assert len(firsts) == 9
    tools = [{t["function"]["name"] for t in r["tools"]} for r in firsts]
    assert "submit_plan" in tools[0] and "write_file" not in tools[1]  # the evaluator reads
    assert "step_result" in tools[4] and not tools[4] & {"todo_complete", "job_complete"}
    report_step = firsts[8]["messages"][0]["content"]
    assert "notes/a.md: alpha" in report_step and "notes/b.md: beta" in report_step
    assert "Write report.md with a title" in report_step
    revise = firsts[2]["messages"][0]["content"]
    assert "the report is missing" in revise and "scored 0.50" in revise
    replan = firsts[7]["messages"][0]["content"]
    assert "needs a title" in replan and "ids above 3" in replan

    replay = await Replayer(workflows=[AgentJob], data_converter=client.data_converter
                            ).replay_workflow(await handle.fetch_history(),
                                              raise_on_replay_failure=False)
    assert replay.replay_failure is None, replay.replay_failure


async def test_plan_revise_execute_survives_a_killed_worker(client, task_queue, start_job,
                                                          model_server, s3, tmp_path):
    script = [{**s, "latency_ms": 150} for s in scripts.plan_revise_execute()]
    handle, result = await across_a_worker_kill(
        client, task_queue, tmp_path,
        lambda: start_job(script, model_server, config=CONFIG, documents=[],
                          instructions=scripts.INSTRUCTIONS),
        lambda h: wait_for_requests(model_server, h.id, 8))  # in step 1
    assert result.status == "completed" and result.phases == 9
    # a retried model call got the same answer: every scripted step used exactly once
    assert len({r["_call_key"] for r in model_server.requests(handle.id)}) == len(script)
    assert (await s3.get("switchback", f"{handle.id}/report.md")).decode() == scripts.REPORT


async def test_a_rewind_revises_the_rest_and_the_job_continues_as_new(
        client, task_queue, start_job, model_server, s3):
    """A rewind signal during step 2 fails it with the issue and revises the rest; the job
    continues as new every 2 stages; a rerun from the replan replays the recorded answers."""
    script = scripts.plan_revise_execute(revise=False, fail_step=False)
    i = next(n for n, s in enumerate(script)
             if s["tool_calls"][0]["arguments"].get("path") == "notes/b.md")
    script[i] = {**script[i], "latency_ms": 1500}  # step 2's call: the rewind lands in it
    script[i + 1:i + 1] = [step(call("submit_plan", steps=[
        {"id": 4, "name": "Write notes/b.md in capitals", "detail": "BETA", "after": [1]},
        {"id": 5, "name": "Write report.md", "detail": "join", "after": [1, 4]}])),
        step(call("write_file", path="notes/b.md", content="BETA\n"),
             call("step_result", status="done", summary="notes/b.md: BETA",
                  files=["notes/b.md"]))]
    config = {**CONFIG, "continue_as_new": {"every_phases": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_for_requests(model_server, handle.id, i + 1)
        await handle.signal("rewind", "use capitals for beta")
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
        runs = [wf async for wf in client.list_workflows(f'WorkflowId="{handle.id}"')]
        new_id = f"{handle.id}-rerun"
        # from the replan (stage 5): the state then holds the rewound step
        again = await (await rerun(client, s3, "switchback", handle.id, new_id, 5, task_queue,
                                   True)).result()
    assert result.status == "completed", result
    assert [(p["id"], p["status"]) for p in state.strategy_detail["plan"]] == [
        (1, "done"), (2, "failed"), (4, "done"), (5, "done")]
    assert state.strategy_detail["replans"] == 0  # an operator's rewind does not count
    step2 = (await s3.get("switchback", f"{handle.id}/archive/steps/step_02.md")).decode()
    assert "rewound: use capitals for beta" in step2
    replan = [r for r in model_server.requests(handle.id) if len(r["messages"]) == 2][4]
    assert "use capitals for beta" in replan["messages"][0]["content"]
    assert len(runs) >= 3
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    for wf in runs:
        h = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
        outcome = await replayer.replay_workflow(h, raise_on_replay_failure=False)
        assert outcome.replay_failure is None, outcome.replay_failure
    assert again.status == "completed" and model_server.requests(new_id) == []
    assert (await s3.get("switchback", f"{new_id}/notes/b.md")) == b"BETA\n"


async def test_plan_revise_execute_wraps_up_when_the_budget_is_spent(
        client, task_queue, start_job, model_server, s3):
    config = {**CONFIG, "budget": {"max_tokens": 5000}}
    script = [{**step(call("list_files")), "usage": {"prompt_tokens": 6000,
                                                     "completion_tokens": 10}},
              step(call("job_complete", summary="no plan yet", confidence=0.0))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "budget_exhausted" and result.summary == "no plan yet"
    assert state.phase.kind == "wrap_up"
    assert "job_complete" in {t["function"]["name"]
                              for t in model_server.requests(handle.id)[1]["tools"]}


def _text(n: int = 4) -> list[dict]:
    return [step(content="Here is the plan: write the notes, then the report.")] * n


STEPS_1_2 = [step(call("write_file", path="notes/a.md", content=scripts.A)),
             step(call("step_result", status="done", summary="notes/a.md: alpha",
                       files=["notes/a.md"])),
             step(call("write_file", path="notes/b.md", content=scripts.B),
                  call("step_result", status="done", summary="notes/b.md: beta",
                       files=["notes/b.md"]))]


async def test_a_planner_that_never_calls_its_tool_does_not_end_the_job(
        client, task_queue, start_job, model_server, s3):
    """The 1.5B model under BFCL answered a revision stage with text four times in five
    cases of ten, and the job failed with a plan in hand. A revision that never comes: the
    best-scored plan runs; an evaluation that never comes: the plan runs unscored; no plan
    at all: the task runs as one step. Each is said in archive/plan.md."""
    two = step(call("submit_plan", steps=scripts.PLAN[:2], rationale="notes"))
    cases = {
        "revision": [two, step(call("submit_evaluation", score=0.5, reasons="no report"))]
        + _text() + STEPS_1_2,
        "evaluation": [two] + _text() + STEPS_1_2,
        "plan": _text() + [step(call("write_file", path="notes/a.md", content=scripts.A),
                                call("write_file", path="notes/b.md", content=scripts.B)),
                           step(call("step_result", status="done", summary="both notes",
                                     files=["notes/a.md", "notes/b.md"]))],
    }
    notes = {"revision": "no revision came (the model answered 4 times without calling "
                         "submit_plan): the best plan, round 1 (0.50), runs",
             "evaluation": "not scored (the model answered 4 times without calling "
                           "submit_evaluation): the plan runs as it is",
             "plan": "No plan came (the model answered 4 times without calling submit_plan)"
                     ": the workflow's plan of one step."}
    async with running_worker(client, task_queue):
        for name, script in cases.items():
            handle = await start_job(script, model_server, config=CONFIG, documents=[],
                                     instructions=scripts.INSTRUCTIONS)
            result = await handle.result()
            state = await handle.query("state", result_type=JobState)
            assert result.status == "completed", (name, result)
            assert sorted(result.verified) == ["notes/a.md", "notes/b.md"], (name, result)
            current = (await s3.get("switchback", f"{handle.id}/archive/plan.md")).decode()
            assert notes[name] in current, (name, current)
            plan = [(p["id"], p["title"], p["status"]) for p in state.strategy_detail["plan"]]
            if name == "plan":
                assert plan == [(1, "The task", "done")]
                step_prompt = model_server.requests(handle.id)[4]["messages"][0]["content"]
                assert "Do the whole task below as one step." in step_prompt
            else:
                assert [p[2] for p in plan] == ["done", "done"], plan
    evaluation = (await s3.get("switchback", f"{handle.id}/archive/evaluation_r1.md"))
    assert evaluation is None  # the plan case: no evaluation


async def test_a_replan_that_never_comes_runs_the_rest_of_the_task_as_one_step(
        client, task_queue, start_job, model_server, s3):
    """A failed step's revision answered with text after the nudges (a breaker's rewind
    under BFCL failed the job so): what is left of the task runs as one step, after the done
    ones, with why the plan was set aside in its prompt."""
    script = [step(call("submit_plan", steps=scripts.PLAN[:2], rationale="notes")),
              step(call("submit_evaluation", score=0.9, reasons="fine")), STEPS_1_2[0],
              STEPS_1_2[1],
              step(call("step_result", status="failed", summary="beta is not known here"))
              ] + _text() + [STEPS_1_2[2]]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed", result
    assert sorted(result.verified) == ["notes/a.md", "notes/b.md"], result
    assert [(p["id"], p["title"], p["status"]) for p in state.strategy_detail["plan"]] == [
        (1, "Write notes/a.md", "done"), (2, "Write notes/b.md", "failed"),
        (3, "The rest of the task", "done")]
    assert state.strategy_detail["replans"] == 1
    last = model_server.requests(handle.id)[-1]["messages"][0]["content"]
    assert "Do what is left of the task below as one step" in last, last
    assert "Step 2 (Write notes/b.md) failed: beta is not known here" in last, last
    current = (await s3.get("switchback", f"{handle.id}/archive/plan.md")).decode()
    assert "No plan came (the model answered 4 times without calling submit_plan)" in current


async def test_a_rewind_whose_planner_never_plans_runs_the_rest_as_one_step(
        client, task_queue, start_job, model_server):
    """A rewind during step 2 whose plan stage answers with text after the nudges (under
    BFCL a repetition breaker's rewind failed the job so): step 2 is failed with the issue,
    and what is left of the task runs as one step."""
    script = [step(call("submit_plan", steps=scripts.PLAN[:2], rationale="notes")),
              step(call("submit_evaluation", score=0.9, reasons="fine")), STEPS_1_2[0],
              STEPS_1_2[1], {**step(call("list_files")), "latency_ms": 1500}
              ] + _text() + [STEPS_1_2[2]]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        await wait_for_requests(model_server, handle.id, 5)
        await handle.signal("rewind", "write beta in one line")
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed", result
    assert [(p["id"], p["title"], p["status"]) for p in state.strategy_detail["plan"]] == [
        (1, "Write notes/a.md", "done"), (2, "Write notes/b.md", "failed"),
        (3, "The rest of the task", "done")]
    last = model_server.requests(handle.id)[-1]["messages"][0]["content"]
    assert "The plan was set aside because: write beta in one line" in last, last


async def test_every_stage_sees_the_task_in_a_job_that_cannot_read_it(
        client, task_queue, start_job, model_server):
    """A job without read_file (BFCL's: `tools.workspace: []`): the planner, the evaluator
    and each step have the task in their system prompt (the planner under BFCL planned a
    task it never saw, about tweets for a listing of files)."""
    config = {**CONFIG, "tools": {"workspace": [], "domain": ["word_count"]}}
    script = [step(call("submit_plan", steps=[{"id": 1, "name": "Count the words",
                                                "detail": "of instructions.md"}])),
              step(call("submit_evaluation", score=0.9, reasons="fine")),
              step(call("word_count", path="instructions.md")),
              step(call("step_result", status="done", summary="counted"))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
    assert result.status == "completed", result
    systems = [r["messages"][0]["content"] for r in model_server.requests(handle.id)
               if len(r["messages"]) == 2]
    assert len(systems) == 3
    for system in systems:
        assert "## The task (instructions.md)\n# Two notes and a report\n" in system, system
        assert "{{instructions}}" not in system


async def test_a_step_that_names_files_not_in_the_workspace_is_refused(
        client, task_queue, start_job, model_server):
    """Under BFCL a step named `workspace` (a name `ls` returned) among its files, and the
    job ended `stuck` on it at its end. The step_result is refused at the step, with what is
    not there, and the step's next one is taken."""
    script = [step(call("submit_plan", steps=[{"id": 1, "name": "Write notes/a.md",
                                                "detail": "alpha"}])),
              step(call("submit_evaluation", score=0.9, reasons="fine")),
              step(call("write_file", path="notes/a.md", content=scripts.A)),
              step(call("step_result", status="done", summary="wrote it",
                        files=["notes/a.md", "workspace", "../x"])),
              step(call("step_result", status="done", summary="wrote it",
                        files=["notes/a.md"]))]
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=CONFIG, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
    assert result.status == "completed" and result.verified == ["notes/a.md"], result
    refused = [m for m in tool_messages(model_server, handle.id) if "step_incomplete" in m]
    assert refused == ["Error [step_incomplete]: step_result refused (1 of 3): not in the "
                       "workspace: ../x, workspace. `files` names only the workspace files "
                       "this step wrote, none when it wrote none: call step_result again."]


ECHO = ("Error: not in the workspace: workspace. `files` names only the workspace files this "
        "step wrote, none when it wrote none: call step_result again.")
