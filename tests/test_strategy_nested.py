"""nested end to end on the scripted model: a coordinator whose todos run as child jobs
in sub-folders of its workspace, at most `max_concurrent` at a time; their summaries reach
the next coordinator phase; a failed child is reported, not fatal; a worker SIGKILLed while
the children run; replay of the parent's and the children's histories."""

from __future__ import annotations

import json

import yaml
from temporalio.api.enums.v1 import EventType
from temporalio.worker import Replayer

from switchback.operate.rerun import rerun
from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import ApproveRequest, JobResult, JobState
from tests import strategy_scripts as scripts
from tests.conftest import running_worker
from tests.scripts import call, step
from tests.test_durability import across_a_worker_kill
from tests.waits import wait_for_requests, wait_state

CONFIG = {"extends": "creator", "strategy": "nested",
          "phase_settings": {"min_todos": 1, "max_todos": 4},
          "nested": {"max_concurrent": 1}, "llm": {"heartbeat_timeout_seconds": 2}}
DOC = {"name": "brief.md", "text": "# Brief\n\nalpha and beta\n"}


def set_scripts(model_server, job_id: str, latency_ms: int = 0) -> None:
    parent, children = scripts.nested(job_id)
    model_server.set_script(job_id, [{**s, "latency_ms": latency_ms} for s in parent])
    for child_id, script in children.items():
        model_server.set_script(child_id, [{**s, "latency_ms": latency_ms} for s in script])


async def test_nested_job_runs_children_in_sub_folders(client, task_queue, start_job,
                                                       model_server, s3):
    job = "nested-e2e"
    set_scripts(model_server, job)
    parent, _ = scripts.nested(job)
    kid = f"{job}-p2-t1"
    probe = step(call("list_files", path="subjobs"),  # what the coordinator may do there
                 call("read_file", path=f"subjobs/{kid}/.switchback/owner.json"),
                 call("write_file", path=f"subjobs/{kid}/result.md", content="forged"),
                 call("delete_file", path=f"subjobs/{kid}/output/completion.json"))
    model_server.set_script(job, parent[:5] + [probe] + parent[5:])
    config = {**CONFIG, "tools": {"workspace": ["read_file", "write_file", "list_files",
                                                "search_files", "delete_file"]}}
    async with running_worker(client, task_queue, max_cached_workflows=0):
        handle = await start_job(None, job_id=job, config=config, documents=[DOC],
                                 instructions=scripts.INSTRUCTIONS)
        result: JobResult = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "completed", result
    kids = [f"{job}-p2-t1", f"{job}-p2-t2"]
    # the children's steps and tokens count towards the job's totals
    assert result.steps == 8 + 2 + 2 and result.tokens_in > 0
    assert state.strategy == "nested" and state.strategy_detail["inner_strategy"] == "react"
    assert [c["job_id"] for c in state.strategy_detail["children"]] == kids

    async def text(path: str) -> str:
        data = await s3.get("switchback", f"{job}/{path}")
        assert data is not None, path
        return data.decode()
    for kid, note in zip(kids, (scripts.A, scripts.B), strict=True):  # noqa: B020
        assert await text(f"subjobs/{kid}/result.md") == note  # not "forged"
        assert await text(f"subjobs/{kid}/documents/brief.md") == DOC["text"]  # a copy
        done = json.loads(await text(f"subjobs/{kid}/output/completion.json"))
        assert done["status"] == "completed"
        instructions = await text(f"subjobs/{kid}/instructions.md")
        assert "Write result.md about" in instructions and "Two notes and a report" in instructions
        # nothing of the child outside its folder: no top-level prefix of its own
        assert not await s3.list("switchback", f"{kid}/")
    archive = yaml.safe_load(await text("archive/phase_2.yaml"))
    assert [t["status"] for t in archive["todos"]] == ["completed", "completed"]
    assert archive["todos"][0]["notes"] == "[completed] result.md written (alpha)"
    assert [c["job_id"] for c in archive["children"]] == kids
    assert await text("report.md") == scripts.REPORT

    # the coordinator's next phase reads the children's summaries in its prompt
    reqs = model_server.requests(job)
    firsts = [r for r in reqs if len(r["messages"]) == 3]  # system, kickoff, todo block
    assert len(firsts) == 2
    assert "result.md written (beta)" in firsts[1]["messages"][0]["content"]
    assert "CHILD JOB" in firsts[0]["messages"][0]["content"]
    # ... sees the children's files, never their .switchback/, and may not change them
    listed = [o.key for o in await s3.list("switchback", f"{job}/subjobs/")]
    assert any("/.switchback/" in k for k in listed)  # they exist ...
    answers = [m["content"] for m in reqs[6]["messages"][-5:-1]]  # before the todo block
    assert f"subjobs/{kid}/result.md" in answers[0] and ".switchback" not in answers[0]
    assert "reserved_path" in answers[1]
    assert "read_only" in answers[2] and "read_only" in answers[3]

    # fan-out bound 1: the second child starts after the first has ended
    history = await handle.fetch_history()
    order = [e.event_type for e in history.events if e.event_type in (
        EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
        EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED)]
    assert order == [EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
                     EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED] * 2
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    for wf in [job, *kids]:
        h = await client.get_workflow_handle(wf).fetch_history()
        outcome = await replayer.replay_workflow(h, raise_on_replay_failure=False)
        assert outcome.replay_failure is None, (wf, outcome.replay_failure)


async def test_a_failed_child_is_reported_not_fatal(client, task_queue, start_job,
                                                   model_server, s3):
    job = "nested-failing-child"
    set_scripts(model_server, job)
    model_server.set_script(f"{job}-p2-t2", [{"error": {"status": 400}}])  # fails the child
    config = {**CONFIG, "nested": {"max_concurrent": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(None, job_id=job, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
    assert result.status == "completed"
    archive = yaml.safe_load(await s3.get("switchback", f"{job}/archive/phase_2.yaml"))
    assert [t["status"] for t in archive["todos"]] == ["completed", "cancelled"]
    failed = archive["children"][1]
    assert failed["status"] == "failed" and "model call failed" in failed["error"]
    assert archive["todos"][1]["notes"].startswith("[failed] model call failed")
    prompt = [r for r in model_server.requests(job) if len(r["messages"]) == 3][1]
    assert f"{job}-p2-t2 (subjobs/{job}-p2-t2/): failed" in prompt["messages"][0]["content"]


async def test_nested_job_survives_a_killed_worker(client, task_queue, start_job,
                                                   model_server, s3, tmp_path):
    job = "nested-kill"
    set_scripts(model_server, job, latency_ms=300)
    handle, result = await across_a_worker_kill(
        client, task_queue, tmp_path,
        lambda: start_job(None, job_id=job, config=CONFIG, documents=[],
                          instructions=scripts.INSTRUCTIONS),
        lambda h: wait_for_requests(model_server, f"{job}-p2-t1", 1))  # a child is running
    assert result.status == "completed" and result.steps == 11
    for kid in (f"{job}-p2-t1", f"{job}-p2-t2"):
        keys = {r["_call_key"] for r in model_server.requests(kid)}
        assert len(keys) == 2  # each child's scripted steps used once
        assert await s3.get("switchback", f"{job}/subjobs/{kid}/result.md") is not None


async def test_children_ask_for_approvals_and_share_the_budget(client, task_queue, start_job,
                                                               model_server, s3):
    """A tool that needs approval waits in the child that calls it (approved on the child's
    id); each child gets its share of what is left of the budget; the children's tokens
    count towards the coordinator's budget, which then wraps up."""
    job = "nested-budget"
    parent, children = scripts.nested(job)
    small = {"prompt_tokens": 100, "completion_tokens": 10}
    parent[1:3] = [step(call("todo_complete", notes="explored")),  # no writes up here
                   step(call("todo_complete", notes="planned"))]
    parent = [{**s, "usage": small} for s in parent[:4]] + [
        {**parent[4], "usage": {"prompt_tokens": 3000, "completion_tokens": 10}},  # over budget
        step(call("todo_complete", notes="recorded")),  # the wrap-up phase
        step(call("job_complete", summary="out of budget after the children",
                  deliverables=[], confidence=0.5))]
    model_server.set_script(job, parent)
    for child_id, script in children.items():
        model_server.set_script(child_id, [
            {**s, "usage": {"prompt_tokens": 1500, "completion_tokens": 10}} for s in script])
    config = {**CONFIG, "budget": {"max_tokens": 8000}, "approval_required": ["write_file"],
              "nested": {"max_concurrent": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(None, job_id=job, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        for kid in (f"{job}-p2-t1", f"{job}-p2-t2"):
            await wait_for_requests(model_server, kid, 1)
            child = client.get_workflow_handle(kid)
            st = await wait_state(child, lambda s: bool(s.pending_approvals))
            await child.execute_update("approve", ApproveRequest(
                call_id=st.pending_approvals[0].call_id, approved=True))
        result = await handle.result()
        state = await handle.query("state", result_type=JobState)
    assert result.status == "budget_exhausted", result
    assert result.tokens_in > 4 * 1500 + 4 * 100 + 3000  # the children's count
    trip = state.breakers["trips"][-1]
    assert trip["breaker"] == "budget" and "9490 tokens" in trip["message"]
    assert state.phase.variant == "wrap_up"
    for kid in (f"{job}-p2-t1", f"{job}-p2-t2"):
        cfg = json.loads(await s3.get("switchback",
                                      f"{job}/subjobs/{kid}/.switchback/config.json"))
        assert cfg["config"]["budget"]["max_tokens"] == (8000 - 4 * 110) // 2
        assert cfg["config"]["strategy"] == "react" and cfg["config"]["nested"][
            "within_parent"]
        assert await s3.get("switchback", f"{job}/subjobs/{kid}/result.md") is not None


async def test_nested_continues_as_new_and_reruns(client, task_queue, start_job, model_server,
                                                  s3):
    """The coordinator continues as new at each phase start (never with children running);
    its children, here phase_alternation jobs, continue as new too and keep their parent's
    workspace (the guard checks each of their runs); a rerun from the coordinator's last
    phase answers from the recording."""
    job = "nested-can"
    parent, _ = scripts.nested(job)
    model_server.set_script(job, parent)
    for i in (1, 2):
        model_server.set_script(f"{job}-p2-t{i}", scripts.phase_alternation())
    config = {**CONFIG, "continue_as_new": {"every_phases": 1},
              "nested": {"inner_strategy": "phase_alternation", "max_concurrent": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(None, job_id=job, config=config, documents=[],
                                 instructions=scripts.INSTRUCTIONS)
        result = await handle.result()
        new_id = f"{job}-rerun"
        again = await (await rerun(client, s3, "switchback", job, new_id, 3, task_queue,
                                   True)).result()
    assert result.status == "completed", result
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    for wf_id, expected in ((job, 2), (f"{job}-p2-t1", 3), (f"{job}-p2-t2", 3)):
        runs = [wf async for wf in client.list_workflows(f'WorkflowId="{wf_id}"')]
        assert len(runs) == expected, wf_id
        for wf in runs:
            h = await client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history()
            outcome = await replayer.replay_workflow(h, raise_on_replay_failure=False)
            assert outcome.replay_failure is None, (wf_id, outcome.replay_failure)
    assert (await s3.get("switchback", f"{job}/subjobs/{job}-p2-t2/report.md")) is not None
    assert again.status == "completed" and model_server.requests(new_id) == []
    assert await s3.get("switchback", f"{new_id}/subjobs/{job}-p2-t1/report.md") is not None


def test_a_child_config_is_its_parents_source_marked_as_a_child() -> None:
    """A nested job's children's config: the parent's source with the child's marks."""
    from switchback.activities.config_files import load_config
    from switchback.workflows.strategies.nested import Nested
    source = {"extends": "creator", "strategy": "nested",
              "workspace": {"bucket": "switchback"}, "limits": {"max_phases": 9}}
    cfg = load_config(source, policy=False)
    assert cfg.source is not None and not cfg.config.nested.within_parent
    child = Nested(cfg, None)._child_config(2)  # type: ignore[arg-type]
    loaded = load_config(child, policy=False).config
    assert loaded.nested.within_parent and loaded.strategy == "react"
    assert loaded.limits.max_phases == 9 and loaded.workspace.bucket == "switchback"
