"""A hand-made continue-as-new `carry`: job input that skips load_config, as an attacker
with access to the namespace could send it. What it carries must still be held to the
operator's rules by the activities."""

from __future__ import annotations

import uuid

from switchback.activities.storage.snapshots import load_snapshot
from switchback.workflows.carry import Carried, JobRun, PhaseStart
from switchback.workflows.contract import JobResult, ResolvedConfig, WorkspaceRef


async def forged_job(client, s3, task_queue: str, done_job: str, llm: dict | None = None,
                     workspace: dict | None = None, job_id: str | None = None,
                     nested: dict | None = None):
    """Start a job whose carry is `done_job`'s phase-1 state with its config changed."""
    _, raw_state, cfg = await load_snapshot(s3, WorkspaceRef(bucket="switchback",
                                                             job_id=done_job), 1)
    state = PhaseStart.model_validate(raw_state)
    c = cfg.config
    forged: ResolvedConfig = cfg.model_copy(update={"config": c.model_copy(update={
        "llm": c.llm.model_copy(update=llm or {}),
        "workspace": c.workspace.model_copy(update=workspace or {}),
        "nested": c.nested.model_copy(update=nested or {})})})
    return await client.start_workflow(
        "AgentJob", JobRun(config="creator", carry=Carried(
            cfg=forged, objective="x", strategy=state.strategy, breakers=state.breakers)),
        id=job_id or f"forged-{uuid.uuid4().hex[:8]}", task_queue=task_queue,
        result_type=JobResult)
