"""The workflow completes a job on its own only against the deliverables the job declared
(docs/completion.md): a list the model wrote is checked when it claims completion, never
used to end the job `completed` in its place; a claim with confidence 0 is the model
saying the task is not achieved. Scripted jobs whose task names three files and whose
config, as many users write it, declares none."""

from __future__ import annotations

import json

import pytest

from tests.completion_corpus import ECHO, NOTE, text, write
from tests.conftest import running_worker
from tests.scripts import call, step

TASK = "Write `a.md`, `b.md` and `c.md`, a short note each.\n"
MEMORY = [step(write("workspace.md", "# Workspace\nx\n"), call("todo_complete")),
          step(write("main_plan.md", "# Plan\nx\n"), call("todo_complete"))]


def phases(plan: list[str], writes: list[str]) -> list[dict]:
    """phase_alternation: bootstrap, a tactical phase that plans `plan` and writes `writes`,
    then a transition phase whose model stops calling tools."""
    todos = [{"id": i, "content": f"Write {p}"} for i, p in enumerate(writes, 1)]
    return [*MEMORY, step(call("todo_complete")),
            step(call("todo_write", phase="Notes", todos=todos, deliverables=plan),
                 call("todo_complete")),
            *[step(write(p, NOTE), call("todo_complete")) for p in writes],
            *MEMORY, *[text("All done.")] * 4]


@pytest.mark.parametrize(("plan", "writes"), [
    (["a.md"], ["a.md"]),  # the model's plan names fewer files than the task asks for
    (["a.md", "b.md", "c.md"], ["c.md"]),  # it names them all, and writes one
    ([], ["a.md", "b.md", "c.md"]),  # it writes them all and never claims completion
])
async def test_a_job_that_declares_nothing_is_never_completed_by_the_workflow(
        plan, writes, client, task_queue, start_job, model_server, s3):
    config = {"extends": "defaults", "llm": {"heartbeat_timeout_seconds": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(phases(plan, writes), model_server, config=config,
                                 instructions=TASK, documents=[])
        result = await handle.result()
    assert result.status == "stuck", result.summary
    assert result.completed_by == ""
    assert "without calling a tool" in result.summary
    assert f"Files the job wrote: {', '.join(sorted(writes))}" in result.notes or all(
        p in result.notes for p in writes)
    done = json.loads(await s3.get("switchback", f"{handle.id}/output/completion.json"))
    assert done["status"] == "stuck"
    missing = [p for p in plan if p not in writes]
    assert result.missing == [f"{p} does not exist" for p in missing]


async def test_the_same_job_with_its_deliverables_declared_is_completed_by_the_workflow(
        client, task_queue, start_job, model_server):
    config = {"extends": "defaults", "llm": {"heartbeat_timeout_seconds": 2},
              "deliverables": ["a.md", "b.md", "c.md"]}
    async with running_worker(client, task_queue):
        handle = await start_job(phases([], ["a.md", "b.md", "c.md"]), model_server,
                                 config=config, instructions=TASK, documents=[])
        result = await handle.result()
    assert result.status == "completed" and result.completed_by == "workflow"
    assert sorted(result.verified) == ["a.md", "b.md", "c.md"]


QUESTION = "What was the population of Atlantis in 1900?"


async def answer(script: list[dict], strategy: str, client, task_queue, start_job,
                 model_server):
    """The result of an answer-only question's job under `strategy`."""
    config = {"extends": "defaults", "strategy": strategy,
              "llm": {"heartbeat_timeout_seconds": 2}}
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=config, instructions=QUESTION,
                                 documents=[])
        return await handle.result()


@pytest.mark.parametrize("strategy", ["react", "phase_alternation"])
async def test_a_claim_with_confidence_zero_ends_stuck(strategy, client, task_queue, start_job,
                                                       model_server):
    """An answer-only question the model says it could not answer: not `completed`."""
    gave_up = step(call("job_complete", summary="The job did not achieve the task: no data.",
                        deliverables=[], confidence=0.0))
    script = [gave_up] if strategy == "react" else [*MEMORY, gave_up]
    result = await answer(script, strategy, client, task_queue, start_job, model_server)
    assert result.status == "stuck"
    assert result.missing == ["the model reported the task not achieved (job_complete with "
                              "confidence 0): The job did not achieve the task: no data."]
    assert result.confidence == 0.0


async def test_a_claim_with_some_confidence_completes_an_answer_only_job(
        client, task_queue, start_job, model_server):
    script = [text(ECHO), step(call("job_complete", summary="1900: none", deliverables=[],
                                    confidence=0.3))]
    result = await answer(script, "react", client, task_queue, start_job, model_server)
    assert result.status == "completed" and result.answer_only
