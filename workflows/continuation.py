"""A phase start, as the orchestrator handles it: whether the job continues as new there
(Temporal suggests it, or `continue_as_new.every_phases`; never before this run's first
phase), how it does, and the snapshot of the workspace and state (for `starter.py rerun`).

A phase start is the only place the job continues as new: a new conversation begins, and
no operation (a nested job's children included) is in flight.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.carry import Carried, JobRun, PhaseStart
    from workflows.contract import ResolvedConfig
    from workflows.metrics import log_extra
    from workflows.strategies.base import PhaseInfo
    from workflows.workspace_ops import WorkspaceOps


class PhaseStarts:
    def __init__(self) -> None:
        self.this_run = 0  # phases started in this run
        self.config_recorded = False  # .switchback/config.json written in this run

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
        """Record the workspace and `state` at this phase start (the config once a run)."""
        assert phase is not None
        await ops.snapshot(phase.number, state.model_dump(mode="json"),
                           None if self.config_recorded else cfg)
        self.config_recorded = True


async def continue_as_new(job: JobRun, carry: Carried, phase: PhaseInfo | None) -> None:
    """Let the handlers finish, then continue as new with `carry` (never returns)."""
    await workflow.wait_condition(workflow.all_handlers_finished)
    workflow.logger.info("continuing as new at phase %s (run %s)",
                         phase.number if phase else "?", carry.runs, extra=log_extra(phase))
    workflow.continue_as_new(JobRun(config=job.config, carry=carry))
