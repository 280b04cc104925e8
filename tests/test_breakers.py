"""Circuit breakers tripping on a scripted model that misbehaves."""

from __future__ import annotations

import json

import yaml

from switchback.activities.model.prompt import TODO_HEADER
from switchback.workflows.breakers import WRAP_UP_STEPS
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical, transition


def user_messages(model_server, job_id: str) -> list[str]:
    out: list[str] = []
    for r in model_server.requests(job_id):
        for m in r["messages"]:
            if m["role"] == "user" and m["content"] not in out:
                out.append(m["content"])
    return out


async def trips(s3, job_id: str) -> list[dict]:
    keys = sorted(o.key for o in await s3.list("switchback", f"{job_id}/output/breakers/"))
    return [json.loads(await s3.get("switchback", k)) for k in keys]


async def run(client, task_queue, start_job, model_server, script, config):
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config={"extends": "creator", **config})
        return handle, await handle.result()


async def test_budget_warns_then_wraps_up(client, task_queue, start_job, model_server, s3):
    usage = {"usage": {"prompt_tokens": 1000, "completion_tokens": 0}}
    script = [{**s, **usage} for s in bootstrap() + tactical(5)[:3]]  # 10 steps: 10k tokens
    script += [{**s, **usage} for s in [
        step(call("write_file", path="workspace.md", content="state"),
             call("todo_complete", notes="recorded")),
        step(call("job_complete", summary="partial", deliverables=["work/a_1.md"],
                  confidence=0.4, notes="ran out of budget"))]]
    handle, result = await run(client, task_queue, start_job, model_server, script,
                               {"budget": {"max_tokens": 10_000}})
    assert result.status == "budget_exhausted" and result.summary == "partial"
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "budget_exhausted"
    msgs = user_messages(model_server, handle.id)
    assert any("80% of the job's budget" in m and "2000 tokens left" in m for m in msgs)
    assert any("Wrap-up" in m for m in msgs)
    assert [t["action"] for t in await trips(s3, handle.id)] == ["note", "wrap_up"]
    arch = yaml.safe_load(await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml"))
    assert arch["status"] == "interrupted" and arch["completed"] == 2  # step 10's calls dropped
    assert await s3.get("switchback", f"{handle.id}/work/a_3.md") is None


async def test_repetition_nudge_rewind_then_stuck(client, task_queue, start_job, model_server,
                                                 s3):
    same = step(call("read_file", path="instructions.md"))
    script = bootstrap() + [same] * 5 + [same] * 5 + [same] * 5
    handle, result = await run(client, task_queue, start_job, model_server, script, {})
    assert result.status == "stuck"
    actions = [(t["breaker"], t["action"]) for t in await trips(s3, handle.id)]
    assert actions == [("repetition", "note"), ("repetition", "rewind"), ("repetition", "stop")]
    assert any("You repeated the same tool call in the last 5 steps. That is not progress: if "
               "the current todo is done, call todo_complete;" in m  # (a read repeated 10 times)
               for m in user_messages(model_server, handle.id))
    arch2 = yaml.safe_load(await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml"))
    assert arch2["status"] == "rewound" and "Loop detected" in arch2["issue"]
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "stuck"


async def test_declared_polling_tool_is_not_a_loop(client, task_queue, start_job, model_server,
                                                   s3):
    poll = step(call("list_files", path="output"))
    script = bootstrap() + [poll] * 6 + tactical(5) + finish()
    handle, result = await run(client, task_queue, start_job, model_server, script,
                               {"breakers": {"exempt_tools": ["list_files"]}})
    assert result.status == "completed"
    assert await trips(s3, handle.id) == []


async def test_no_progress_checkpoint(client, task_queue, start_job, model_server, s3):
    wander = [step(call("write_file", path=f"notes/{i}.md", content=str(i))) for i in range(5)]
    script = bootstrap() + wander + tactical(5) + finish()
    handle, result = await run(client, task_queue, start_job, model_server, script,
                               {"breakers": {"no_progress_steps": 4}})
    assert result.status == "completed"
    assert any(m.startswith("Checkpoint: no todo was completed in the last 4 steps")
               for m in user_messages(model_server, handle.id))
    assert [t["breaker"] for t in await trips(s3, handle.id)] == ["no_progress"]


async def test_phase_step_cap_forces_rewind(client, task_queue, start_job, model_server, s3):
    wander = [step(call("write_file", path=f"notes/{i}.md", content=str(i))) for i in range(8)]
    script = (bootstrap() + wander + transition("Again", memory="capped") + tactical(5, "b")
              + finish())
    handle, result = await run(client, task_queue, start_job, model_server, script,
                               {"limits": {"max_steps_per_phase": 8},
                                "breakers": {"no_progress_steps": 0}})
    assert result.status == "completed"
    [trip] = await trips(s3, handle.id)
    assert trip["breaker"] == "phase_steps" and trip["action"] == "rewind"
    arch = yaml.safe_load(await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml"))
    assert arch["status"] == "rewound" and "max_steps_per_phase=8" in arch["issue"]


def kickoff_of(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


async def test_job_step_cap_wraps_up_then_ends_budget_exhausted(client, task_queue, start_job,
                                                                model_server, s3):
    """breakers.max_steps_per_job: at the cap the step's calls are dropped, a wrap-up
    strategic phase records the state, and its job_complete ends the job budget_exhausted."""
    wrap_up = [step(call("write_file", path="workspace.md", content="state at the cap"),
                    call("todo_complete", notes="recorded")),
               step(call("job_complete", summary="partial", deliverables=["work/a_1.md"],
                         confidence=0.4, notes="stopped at the step cap"))]
    script = bootstrap() + tactical(5)[:3] + wrap_up + tactical(5)[3:] + finish()
    handle, result = await run(client, task_queue, start_job, model_server, script,
                               {"breakers": {"max_steps_per_job": 10, "no_progress_steps": 0}})
    assert (result.status, result.summary, result.steps) == ("budget_exhausted", "partial", 12)
    [trip] = await trips(s3, handle.id)
    assert {k: trip[k] for k in ("breaker", "action", "phase", "step", "message")} == {
        "breaker": "job_steps", "action": "wrap_up", "phase": 2, "step": 10,
        "message": "The job reached its step cap (10 model steps)."}
    reqs = model_server.requests(handle.id)
    assert len(reqs) == 12  # 10 steps, then the 2 of the wrap-up: nothing after
    assert kickoff_of(reqs[10]).startswith("Phase 3 (strategic) begins: Wrap-up: record the "
                                           "state of work.")
    assert "The job reached its step cap (10 model steps)." in kickoff_of(reqs[10])
    assert "Wrap-up" not in json.dumps(reqs[9])
    arch = yaml.safe_load(await s3.get("switchback", f"{handle.id}/archive/phase_2.yaml"))
    assert arch["status"] == "interrupted" and arch["completed"] == 2  # step 10's calls dropped
    assert await s3.get("switchback", f"{handle.id}/work/a_3.md") is None
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "budget_exhausted"
    assert await s3.get("switchback", f"{handle.id}/workspace.md") == b"state at the cap"


async def test_cost_cap_warns_at_80_and_95_percent_then_wraps_up(client, task_queue, start_job,
                                                                 model_server, s3):
    """budget.max_cost_usd with the llm prices: $1 of prompt tokens at $1,000 per million.
    The tactical steps cost $0.80, $0.15, $0.05: a notice at 80%, one at 95%, then the
    wrap-up phase - which here never calls job_complete and is stopped after
    WRAP_UP_STEPS, budget_exhausted all the same."""
    free = {"usage": {"prompt_tokens": 0, "completion_tokens": 0}}

    def costs(tokens: int) -> dict:
        return {"usage": {"prompt_tokens": tokens, "completion_tokens": 0}}

    work = tactical(5)
    wander = [{**step(call("list_files", path=f"w{i}")), **free}
              for i in range(WRAP_UP_STEPS + 1)]
    script = ([{**s, **free} for s in bootstrap()] + [{**work[0], **costs(800)},
              {**work[1], **costs(150)}, {**work[2], **costs(50)}] + wander)
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[], config={
            "extends": "creator", "llm": {"price_in_per_mtok": 1000, "price_out_per_mtok": 0},
            "budget": {"max_cost_usd": 1.0},
            "breakers": {"no_progress_steps": 0}})
        result = await handle.result()
        state = await handle.query("state")
    stopped = 10 + WRAP_UP_STEPS + 1  # the wrap-up phase (from step 11): one step too many
    assert result.status == "budget_exhausted" and result.steps == stopped
    assert [(t["breaker"], t["action"], t["step"]) for t in await trips(s3, handle.id)] == [
        ("budget", "note", 8), ("budget", "note", 9), ("budget", "wrap_up", 10),
        ("budget", "stop", stopped)]
    reqs = model_server.requests(handle.id)
    assert len(reqs) == stopped
    last_user = [[m["content"] for m in r["messages"] if m["role"] == "user"  # before the
                  and not m["content"].startswith(TODO_HEADER)][-1] for r in reqs]  # todo block
    assert last_user[8] == ("Budget notice: 80% of the job's budget is used; $0.2000 left. "
                            "Finish the essential todos first.")
    assert last_user[9] == ("Budget notice: 95% of the job's budget is used; $0.0500 left. "
                            "Finish the essential todos first.")
    assert not any("Budget notice" in u for u in last_user[:8])
    assert kickoff_of(reqs[10]).startswith("Phase 3 (strategic) begins: Wrap-up")
    assert ("The job's budget is used up (100%: 1000 tokens, $1.0000). A final strategic "
            "phase now records the state of the work.") in kickoff_of(reqs[10])
    assert state["cost_usd"] == 1.0 and state["tokens"]["tokens_in"] == 1000
    assert state["budget_used"] == 1.0
    completion = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert completion["status"] == "budget_exhausted"
