"""A phase start, as the orchestrator handles it: whether the job continues as new there
(Temporal suggests it, or `continue_as_new.every_phases`; never before this run's first
phase), how it does, and the snapshot of the workspace and state (for `starter.py rerun`
and rewinds that restore a phase's files).

A phase start is the only place the job continues as new: a new conversation begins, and
no operation (a nested job's children included) is in flight.

The snapshot is taken once the phase's first model call has answered (so the first model
call of a job does not wait for it: 20-40 ms of the job's first workflow task). What it
records is still the phase's start: the state is the one at the start, and nothing the
model sees changes the workspace's files until a tool runs - the model call writes only
its conversation under `.switchback/`, which snapshots leave out, and compaction never
writes in a new conversation (nothing to fold).
If the call fails or the job is cancelled during it, the snapshot is still taken (a failure
to take it then does not hide the call's).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.carry import Carried, JobRun, PhaseStart
    from switchback.workflows.contract import ResolvedConfig
    from switchback.workflows.failures import StepFailed, is_activity_failure
    from switchback.workflows.metrics import log_extra
    from switchback.workflows.strategies.base import PhaseInfo
    from switchback.workflows.workspace_ops import WorkspaceOps

T = TypeVar("T")


class PhaseStarts:
    def __init__(self) -> None:
        self.this_run = 0  # phases started in this run
        self.config_recorded = False  # .switchback/config.json written in this run
        # the snapshot of the phase that just started, until its first model call answers
        self.pending: tuple[WorkspaceOps, int, dict[str, Any], ResolvedConfig | None] | None = None

    def continue_now(self, cfg: ResolvedConfig | None) -> bool:
        """Count a phase start; True when the job should continue as new before it."""
        self.this_run += 1
        if self.this_run < 2:
            return False  # this run's first phase: never continue before doing one
        every = cfg.config.continue_as_new.every_phases if cfg else 0
        return (workflow.info().is_continue_as_new_suggested()
                or bool(every and self.this_run > every))

    async def snapshot(self, ops: WorkspaceOps, phase: PhaseInfo | None, state: PhaseStart,
                       cfg: ResolvedConfig) -> None:
        """Record the workspace and `state` at this phase start (the config once a run):
        once the phase's first model call has answered (`after`)."""
        assert phase is not None
        taken = (ops, phase.number, state.model_dump(mode="json"),
                 None if self.config_recorded else cfg)
        self.config_recorded = True
        self.pending = taken

    async def after(self, call: Awaitable[T]) -> T:
        """`call` (a model call), then the snapshot of the phase start if it waits for it."""
        try:
            result = await call
        except BaseException:
            try:
                await self._take_pending()
            except Exception as e:  # the call's failure is the one to report
                if not (isinstance(e, StepFailed) or is_activity_failure(e)):
                    raise
            raise
        await self._take_pending()
        return result

    async def _take_pending(self) -> None:
        if self.pending is not None:
            (ops, phase, state, cfg), self.pending = self.pending, None
            await ops.snapshot(phase, state, cfg)


async def continue_as_new(job: JobRun, carry: Carried, phase: PhaseInfo | None) -> None:
    """Let the handlers finish, then continue as new with `carry` (never returns)."""
    await workflow.wait_condition(workflow.all_handlers_finished)
    workflow.logger.info("continuing as new at phase %s (run %s)",
                         phase.number if phase else "?", carry.runs, extra=log_extra(phase))
    workflow.continue_as_new(JobRun(config=job.config, carry=carry))
