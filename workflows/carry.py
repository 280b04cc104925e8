"""What a job carries into its next run when it continues as new (at a phase start).

Only compact state: the resolved config, the strategy's snapshot (current phase's
todos, totals, the last phases), the breakers' state, steering state (paused,
rewinds not yet applied) and the last steps for followers. The conversation of
the new phase is empty anyway; everything else lives in the workspace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError
from temporalio.contrib.workflow_streams import WorkflowStreamState

from switchback.workflows.breakers import BreakerState
from switchback.workflows.completion import CompletionState
from switchback.workflows.contract import (
    InlineMessage,
    InputError,
    JobInput,
    ResolvedConfig,
    StepLine,
    from_raw,
    job_id_problem,
    job_input,
)

if TYPE_CHECKING:
    from switchback.workflows.conversation import Conversation
    from switchback.workflows.steering import Steering
    from switchback.workflows.visibility import Progress


class Carried(BaseModel):
    cfg: ResolvedConfig
    objective: str
    strategy: dict[str, Any]  # the strategy's snapshot(); the strategy is cfg's `strategy`
    breakers: BreakerState
    paused: bool = False
    rewinds: list[str] = []
    restore_phase: int | None = None  # of the rewinds not yet applied
    rejected: list[str] = []  # signals refused (Steering.rejected), shown in `state`
    recent: list[StepLine] = []
    runs: int = 1  # runs of this job so far, this one included
    last_error: str | None = None
    last_rewind: str = ""
    # the last turn's results of the phase before (stored with the next model call)
    closing: list[InlineMessage] = []
    closing_conversation: str = ""
    completion: CompletionState = CompletionState()  # the deliverables the model declared
    # follow-up instructions not yet taken (steering.MAX_QUEUED_INSTRUCTIONS at most)
    instructions: list[str] = Field([], max_length=10)
    turn: int = Field(1, ge=1)
    instruction_tools: dict[int, list[str]] = Field({}, max_length=10)  # by the turn they start
    stream: WorkflowStreamState | None = None  # the live stream's newest events (live.py)


def carried(cfg: ResolvedConfig, strategy: dict[str, Any], breakers: BreakerState,
            s: Steering, p: Progress, conversation: Conversation,
            completion: CompletionState | None = None,
            stream: WorkflowStreamState | None = None) -> Carried:
    """What the next run of the job starts from."""
    return Carried(cfg=cfg, objective=p.objective, strategy=strategy, breakers=breakers,
                   paused=s.paused, rewinds=s.rewinds, rejected=s.rejected,
                   restore_phase=s.restore_phase, recent=p.recent, runs=p.run + 1,
                   last_error=p.last_error, last_rewind=p.last_rewind,
                   closing=conversation.inline, closing_conversation=conversation.key,
                   completion=completion or CompletionState(),
                   instructions=s.instructions, turn=s.turn,
                   instruction_tools=s.instruction_tools, stream=stream)


def take_over(carry: Carried, s: Steering, p: Progress, conversation: Conversation) -> None:
    """A continued run takes the carried state (joined with signals already received)."""
    p.objective, p.run, p.recent = carry.objective, carry.runs, carry.recent
    p.last_error, p.last_rewind = carry.last_error, carry.last_rewind
    s.paused, s.rewinds = s.paused or carry.paused, carry.rewinds + s.rewinds
    s.rejected = carry.rejected + s.rejected
    s.restore_phase = s.restore_phase or carry.restore_phase
    # instructions this run queued before it took over were numbered from turn 1
    shift = carry.turn + len(carry.instructions) - 1
    s.instruction_tools = carry.instruction_tools | {
        t + shift: tools for t, tools in s.instruction_tools.items()}
    s.instructions, s.turn = carry.instructions + s.instructions, carry.turn
    conversation.inline, conversation.key = carry.closing, carry.closing_conversation


class PhaseStart(BaseModel):
    """A job's state at the start of a phase: enough to start a new job from there."""

    objective: str
    strategy: dict[str, Any]
    breakers: BreakerState
    # the turn and its completion record (a rerun of a follow-up turn's phase is that turn;
    # snapshots taken before these were kept: turn 1)
    turn: int = Field(1, ge=1)
    completion: CompletionState = CompletionState()


class JobRun(JobInput):
    """The workflow's input: a job (plain JSON from users) or its continuation."""

    carry: Carried | None = None


def job_run(raw: object, job_id: str) -> JobRun:
    """The workflow's input (undecoded, a RawValue, or JSON) and its id, checked (InputError
    names the field). `carry`
    comes from continue-as-new or `starter.py rerun`; whatever it says, the activities
    enforce the operator's endpoints, buckets and the job's own prefix (docs/security.md)."""
    bad_id = job_id_problem(job_id)
    if bad_id:
        raise InputError(bad_id)
    raw = from_raw(raw, "job input")
    rest: object = raw
    carry: Carried | None = None
    if isinstance(raw, Mapping) and "carry" in raw:
        rest = {k: v for k, v in raw.items() if k != "carry"}
        try:
            carry = Carried.model_validate(raw["carry"]) if raw["carry"] is not None else None
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise InputError(f"job input: 'carry.{where}': {err['msg']}") from None
    job = job_input(rest)
    return JobRun(config=job.config, instructions=job.instructions, documents=job.documents,
                  deliverables=job.deliverables, carry=carry)
