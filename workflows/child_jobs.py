"""A nested job's children: child AgentJobs, each in a sub-folder of the job's workspace.

    run(RunChildren)   start each child as `<job id>-<key>` on this job's task queue (its
                       config sets `nested.within_parent`: it works in
                       `subjobs/<child id>/`), at most `max_concurrent` at a time, in order,
                       and wait for all of them
    while they run     `pause` / `resume` of this job reach the running children (and no new
                       child starts while it is paused); a `rewind` goes to the running
                       children instead of this job; cancelling this job cancels them and
                       waits until each has recorded its end (output/completion.json)
    result             one ChildOutcome per child: its JobResult, or why it failed - a child's
                       failure is information for the outer loop, never this job's failure

No child outlives this call: the orchestrator continues as new only at the start of a
model phase, never inside an operation, so no run of the job leaves children behind.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        JOB_FAILED_ERROR,
        WORKFLOW_TYPE,
        JobInput,
        JobResult,
        WorkspaceRef,
        job_id_problem,
        layout,
    )
    from switchback.workflows.failures import cause_of
    from switchback.workflows.steering import Steering
    from switchback.workflows.strategies.base import ChildJob, ChildOutcome, RunChildren

Handles = dict[str, workflow.ChildWorkflowHandle[Any, JobResult]]


async def run(op: RunChildren, ws: WorkspaceRef, steering: Steering) -> list[ChildOutcome]:
    """Run the children of `op`; their outcomes, in order."""
    gate = asyncio.Semaphore(op.max_concurrent)
    running: Handles = {}
    me = workflow.info().workflow_id
    steering.children = {f"{me}-{job.key}": "queued" for job in op.jobs}
    tasks = [asyncio.ensure_future(_child(job, steering, gate, running)) for job in op.jobs]
    sent = {"pause": False}  # what the running children were last told

    def wanted() -> bool:
        return (all(t.done() for t in tasks) or steering.paused != sent["pause"]
                or bool(steering.rewinds and running))

    try:
        while not all(t.done() for t in tasks):
            await workflow.wait_condition(wanted)
            if steering.paused != sent["pause"]:
                sent["pause"] = steering.paused
                for child_id in running:
                    steering.children[child_id] = "paused" if steering.paused else "running"
                await _signal(running, "pause" if steering.paused else "resume")
            if steering.rewinds and running:
                issue, restore = steering.take_rewinds()
                if restore is not None:  # the children have their own phases and files
                    steering.reject(f"rewind: 'restore_phase' {restore} is not applied while "
                                    "child jobs run; the issue was sent to them")
                workflow.logger.info("rewind sent to %d running children", len(running))
                await _signal(running, "rewind", issue)
    except asyncio.CancelledError:
        for t in tasks:
            t.cancel()  # each cancels its child and waits for it to end
        await asyncio.gather(*tasks, return_exceptions=True)
        steering.children = {k: "cancelled" if v in ("queued", "running", "paused") else v
                             for k, v in steering.children.items()}
        raise
    steering.children = {}  # the strategy's view has their outcomes now
    return [t.result() for t in tasks]


async def _child(job: ChildJob, steering: Steering, gate: asyncio.Semaphore,
                 running: Handles) -> ChildOutcome:
    child_id = f"{workflow.info().workflow_id}-{job.key}"
    failed = ChildOutcome(key=job.key, job_id=child_id, folder=layout.subjob_folder(child_id),
                          status="failed")
    problem = job_id_problem(child_id)
    if problem:
        steering.children[child_id] = "failed"
        return failed.model_copy(update={"error": f"cannot start a child job: {problem}"})
    async with gate:
        await workflow.wait_condition(lambda: not steering.paused)
        try:
            handle = await workflow.start_child_workflow(
                WORKFLOW_TYPE, JobInput(config=job.config, instructions=job.instructions,
                                        documents=[]),
                id=child_id, task_queue=workflow.info().task_queue, result_type=JobResult,
                static_summary=job.title[:200])
        except WorkflowAlreadyStartedError:
            steering.children[child_id] = "failed"
            return failed.model_copy(update={"error": f"a job '{child_id}' is already running"})
        running[child_id] = handle
        steering.children[child_id] = "running"
        try:
            if steering.paused:  # paused while it started
                await _signal({child_id: handle}, "pause")
            result = await handle
        except ChildWorkflowError as e:
            why = cause_of(e).removeprefix(f"{JOB_FAILED_ERROR}: ")
            steering.children[child_id] = "failed"
            return failed.model_copy(update={"error": why})
        finally:
            running.pop(child_id, None)
    steering.children[child_id] = result.status
    return failed.model_copy(update={
        "status": result.status, "summary": result.summary,
        "deliverables": result.deliverables, "steps": result.steps,
        "tool_calls": result.tool_calls, "tokens_in": result.tokens_in,
        "tokens_out": result.tokens_out})


async def _signal(handles: Handles, name: str, *args: str) -> None:
    """Send `name` to each running child; one that has just ended is let be."""
    results = await asyncio.gather(*(h.signal(name, args=list(args))
                                     for h in list(handles.values())), return_exceptions=True)
    for r in results:
        if isinstance(r, asyncio.CancelledError):
            raise r
