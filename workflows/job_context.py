"""A job's context, built once: at its start (`start`, then `list_tools`) or from the state a
continued run carries (`resume`). The orchestrator keeps one and passes it; nothing resolves
the config again.

    cfg        the resolved config: the config file(s) or inline object, the job input's
               deliverables joined, and, once listed, the tools as the model calls them
    ops        the workspace operations: the strategies' port, with the completion service
    breakers   the circuit breakers (their state carried across continue-as-new)
    kind       the strategy class the config names

A refusal before the job has a workspace of its own (a bad config, no instructions, a job
id already used, a document from outside the allowed roots) raises `Refused`: the job fails
at once and writes nothing into a workspace that may not be its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from switchback.workflows import job_start, tool_listing
    from switchback.workflows.breakers import Breakers
    from switchback.workflows.carry import Carried, JobRun
    from switchback.workflows.contract import InputError, ResolvedConfig, WorkspaceRef
    from switchback.workflows.failures import StepFailed, cause_of
    from switchback.workflows.steering import Steering
    from switchback.workflows.strategies import strategy_class
    from switchback.workflows.strategies.base import Strategy
    from switchback.workflows.workspace_ops import WorkspaceOps


class Refused(Exception):
    def __init__(self, what: str, code: str) -> None:
        super().__init__(what)
        self.what, self.code = what, code


@dataclass
class JobContext:
    cfg: ResolvedConfig
    ops: WorkspaceOps
    breakers: Breakers
    kind: type[Strategy]

    @property
    def ws(self) -> WorkspaceRef:
        """The job's workspace as its requests name it (with the latest snapshot taken)."""
        return self.ops.ws

    async def list_tools(self) -> None:
        """The config's tool names as the model calls them, their schemas recorded (a
        failure here is the job's: its workspace exists)."""
        self.cfg = self.ops.cfg = await tool_listing.resolve(self.cfg, self.ws)


async def start(job: JobRun, steering: Steering) -> tuple[JobContext, str]:
    """Load the config, create the workspace: the context and the job's instructions."""
    try:  # local activities at the start (job_start.py)
        cfg = await job_start.load_config(job.config)
    except Exception as e:
        if not job_start.failed(e):  # cancelled, or not an activity's failure
            raise
        raise Refused(cause_of(e), "invalid_config") from e
    cfg = job_start.with_deliverables(cfg, job.deliverables)
    kind = _kind(cfg)  # a bad name refuses the job before it has a workspace
    instructions = job.instructions or cfg.instructions
    if not instructions:
        raise Refused(f"config '{cfg.name}' has no instructions.md and the job input gives no "
                      "'instructions'", "invalid_input")
    ops = _ops(cfg, steering)
    try:
        await ops.create(instructions,
                         job.documents if job.documents is not None else cfg.documents)
    except (ActivityError, StepFailed) as e:
        refused = e.__cause__ if isinstance(e, StepFailed) and e.__cause__ else e
        if is_cancelled_exception(refused):
            raise
        raise Refused(cause_of(refused), "workspace_refused") from e
    c = cfg.config
    return JobContext(cfg, ops, Breakers(c.breakers, c.budget, c.limits.max_steps_per_phase),
                      kind), instructions


def resume(carry: Carried, steering: Steering) -> JobContext:
    """A continued run's context, from the state it carries."""
    cfg, c = carry.cfg, carry.cfg.config
    return JobContext(cfg, _ops(cfg, steering, carry), Breakers(
        c.breakers, c.budget, c.limits.max_steps_per_phase, carry.breakers), _kind(cfg))


def _kind(cfg: ResolvedConfig) -> type[Strategy]:
    try:
        return strategy_class(cfg.config.strategy)
    except KeyError as e:
        raise Refused(f"config '{cfg.name}': {e.args[0]}", "invalid_config") from e


def _ops(cfg: ResolvedConfig, steering: Steering, carry: Carried | None = None
         ) -> WorkspaceOps:
    try:  # the job's prefix, or its folder in its parent's workspace (nested)
        return WorkspaceOps.of_job(cfg, steering, carry.completion if carry else None)
    except InputError as e:
        raise Refused(str(e), "invalid_config") from e
