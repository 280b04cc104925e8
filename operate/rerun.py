"""Re-run a job under a new id from the start of its phase N, replaying its model answers.

The new job's workspace is the old one as it was at the start of phase N (the phase
snapshot), its state is the old job's state then (todos, totals, breakers, the follow-up
turn and what that turn wrote), and its
model calls are answered from the old job's recorded responses for as long as the
prompts are identical (`ResolvedConfig.replay_from`). After a fix to a tool or a prompt, the
first prompt that differs is where the new code changes the story; from there the
live endpoint answers, or the job stops (`--stop-at-divergence`).
"""

from __future__ import annotations

from temporalio.client import Client, WorkflowHandle

from switchback.activities.storage import ownership
from switchback.activities.storage.s3 import S3Store
from switchback.activities.storage.snapshots import load_snapshot, restore_workspace
from switchback.workflows.carry import Carried, JobRun, PhaseStart
from switchback.workflows.contract import WORKFLOW_TYPE, JobResult, WorkspaceRef, layout


async def rerun(client: Client, s3: S3Store, bucket: str, job_id: str, new_id: str,
                from_phase: int, task_queue: str, stop_at_divergence: bool) -> WorkflowHandle:
    files, raw_state, cfg = await load_snapshot(s3, WorkspaceRef(bucket=bucket, job_id=job_id),
                                            from_phase)
    state = PhaseStart.model_validate(raw_state)
    target = WorkspaceRef(bucket=bucket, job_id=new_id)
    if await s3.list(bucket, layout.prefix(new_id), limit=1):
        raise LookupError(f"job id '{new_id}' already has a workspace in s3://{bucket}/; "
                          "choose another --id")
    await ownership.mark(s3, target, {"job_id": new_id, "run_id": None, "rerun_of": job_id})
    await restore_workspace(s3, WorkspaceRef(bucket=bucket, job_id=job_id), files, new_id)
    cfg = cfg.model_copy(update={
        "replay_from": job_id, "replay_on_divergence": "stop" if stop_at_divergence else "live"})
    carry = Carried(cfg=cfg, objective=state.objective, strategy=state.strategy,
                    breakers=state.breakers, turn=state.turn, completion=state.completion)
    return await client.start_workflow(WORKFLOW_TYPE, JobRun(config=cfg.name, carry=carry),
                                       id=new_id, task_queue=task_queue,
                                       result_type=JobResult)
