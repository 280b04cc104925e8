"""`DocumentPipeline`: a Creator job, then one Validator job per requirement it wrote.

    creator   child AgentJob `<id>-creator` (config `creator_config`)
    read      its output/requirements.json
    validate  child AgentJob `<id>-validate-<requirement id>` per requirement, at most
              `max_concurrent` at a time, each with its own workspace and history;
              the requirement is its documents/requirement.json
    collect   each validator's output/decision.json -> output/pipeline.json (this
              pipeline's workspace, prefix `<id>/`)

Both kinds of job are the same universal AgentJob with a different config: nothing
here knows what a creator or a validator does. A validator that fails does not stop
the others; the pipeline reports it.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue, RetryPolicy
from temporalio.exceptions import ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.contract import (
        JOB_FAILED_ERROR,
        NO_INPUT,
        WORKFLOW_TYPE,
        WRITE_OUTPUT,
        DocumentSpec,
        InputError,
        JobInput,
        JobResult,
        WorkspaceRef,
        WriteOutputRequest,
        from_raw,
    )
    from switchback.workflows.failures import cause_of as _cause
    from switchback.workflows.failures import job_failed
    from switchback_documents.pipeline_contract import (
        PIPELINE_TYPE,
        READ_DECISION,
        READ_REQUIREMENTS,
        PipelineInput,
        PipelineResult,
        ReadRequirementsRequest,
        RequirementRef,
        ValidationOutcome,
        pipeline_input,
    )

RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2,
                    maximum_interval=timedelta(seconds=20), maximum_attempts=8)


@workflow.defn(name=PIPELINE_TYPE)
class DocumentPipeline:
    def __init__(self) -> None:
        self.stage = "creator"
        self.requirements = 0
        self.outcomes: list[ValidationOutcome] = []
        self.running: list[str] = []

    @workflow.query(name="state")
    def state(self) -> dict[str, Any]:
        return {"stage": self.stage, "requirements": self.requirements,
                "done": len(self.outcomes), "running": self.running,
                "outcomes": [o.model_dump() for o in self.outcomes]}

    @workflow.run
    async def run(self, raw: RawValue = NO_INPUT) -> PipelineResult:
        """`raw`: the input, undecoded; decoded and checked first (a bad one fails the
        pipeline at once)."""
        try:
            inp = pipeline_input(from_raw(raw, "pipeline input"))
        except InputError as e:
            raise job_failed(str(e), "invalid_input") from None
        pid = workflow.info().workflow_id
        creator_id = f"{pid}-creator"
        creator = await workflow.execute_child_workflow(
            WORKFLOW_TYPE, JobInput(config=inp.creator_config, instructions=inp.instructions,
                                    documents=inp.documents),
            id=creator_id, result_type=JobResult, task_queue=workflow.info().task_queue,
            static_summary=f"{inp_name(inp.creator_config)}: the creator job of pipeline {pid}")
        bucket = _bucket(inp)
        if creator.status != "completed":
            return await self._finish(bucket, PipelineResult(status="failed",
                                                             creator_job=creator_id))
        self.stage = "validating"
        reqs: list[RequirementRef] = await workflow.execute_activity(
            READ_REQUIREMENTS, ReadRequirementsRequest(
                workspace=WorkspaceRef(bucket=bucket, job_id=creator_id)),
            result_type=list[RequirementRef], summary="read output/requirements.json",
            start_to_close_timeout=timedelta(seconds=60), retry_policy=RETRY)
        self.requirements = len(reqs)
        gate = asyncio.Semaphore(inp.max_concurrent)
        outcomes = await asyncio.gather(*(self._validate(pid, r, inp, bucket, gate)
                                          for r in reqs))
        decisions: dict[str, int] = {}
        for o in outcomes:
            if o.decision:
                decisions[o.decision] = decisions.get(o.decision, 0) + 1
        failed = [o.requirement_id for o in outcomes if o.error]
        result = PipelineResult(status="completed_with_failures" if failed else "completed",
                                creator_job=creator_id, requirements=len(reqs),
                                decisions=decisions, failed=failed)
        return await self._finish(bucket, result)

    async def _validate(self, pid: str, req: RequirementRef, inp: PipelineInput, bucket: str,
                        gate: asyncio.Semaphore) -> ValidationOutcome:
        job_id = f"{pid}-validate-{_safe(req.id)}"
        async with gate:
            self.running.append(job_id)
            doc = DocumentSpec(name="requirement.json", text=json.dumps(
                {"id": req.id, "statement": req.statement, "regime": req.regime,
                 "record": req.record}, ensure_ascii=False, indent=1))
            try:
                res = await workflow.execute_child_workflow(
                    WORKFLOW_TYPE, JobInput(config=inp.validator_config, documents=[doc]),
                    id=job_id, result_type=JobResult, task_queue=workflow.info().task_queue,
                    static_summary=f"{inp_name(inp.validator_config)}: validate {req.id} "
                    f"({req.regime}) of pipeline {pid}")
                found = await workflow.execute_activity(
                    READ_DECISION, WorkspaceRef(bucket=bucket, job_id=job_id), result_type=dict,
                    summary=f"read decision of {req.id}",
                    start_to_close_timeout=timedelta(seconds=60), retry_policy=RETRY)
                outcome = ValidationOutcome(
                    requirement_id=req.id, job_id=job_id, status=res.status,
                    decision=found.get("decision"), duplicate_of=found.get("duplicate_of"),
                    reason=str(found.get("reason") or ""),
                    error=None if found.get("decision") else "the validator recorded no decision")
            except ChildWorkflowError as e:
                outcome = ValidationOutcome(requirement_id=req.id, job_id=job_id,
                                            status="failed", error=_cause(e))
            finally:
                self.running.remove(job_id)
        self.outcomes.append(outcome)
        return outcome

    async def _finish(self, bucket: str, result: PipelineResult) -> PipelineResult:
        self.stage = "done"
        await workflow.execute_activity(
            WRITE_OUTPUT, WriteOutputRequest(
                workspace=WorkspaceRef(bucket=bucket, job_id=workflow.info().workflow_id),
                path="output/pipeline.json",
                data={**result.model_dump(), "outcomes": [o.model_dump() for o in self.outcomes]}),
            result_type=str, summary="write output/pipeline.json",
            start_to_close_timeout=timedelta(seconds=60), retry_policy=RETRY)
        if result.status == "failed":
            raise ApplicationError(f"the creator job {result.creator_job} did not complete",
                                   type=JOB_FAILED_ERROR, non_retryable=True)
        return result


def inp_name(config: str | dict[str, Any]) -> str:
    """A config's name for a child job's summary (an inline one: what it extends)."""
    return config if isinstance(config, str) else f"{config.get('extends', 'inline')} (inline)"


def _bucket(inp: PipelineInput) -> str:
    """The creator's workspace bucket (an inline config may set it)."""
    if isinstance(inp.creator_config, dict):
        return str(inp.creator_config.get("workspace", {}).get("bucket", "switchback"))
    return "switchback"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in text)[:60]
