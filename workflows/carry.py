"""What a job carries into its next run when it continues as new (at a phase start).

Only compact state: the resolved config, the strategy's snapshot (current phase's
todos, totals, the last phases), the breakers' state, steering state (paused,
rewinds not yet applied) and the last steps for followers. The conversation of
the new phase is empty anyway; everything else lives in the workspace.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from workflows.breakers import BreakerState
from workflows.contract import InlineMessage, JobInput, ResolvedConfig, StepLine


class Carried(BaseModel):
    cfg: ResolvedConfig
    objective: str
    strategy: dict[str, Any]  # the strategy's snapshot(); the strategy is cfg's `strategy`
    breakers: BreakerState
    paused: bool = False
    rewinds: list[str] = []
    recent: list[StepLine] = []
    runs: int = 1  # runs of this job so far, this one included
    last_error: str | None = None
    # the last turn's results of the phase before (stored with the next model call)
    closing: list[InlineMessage] = []
    closing_conversation: str = ""


class PhaseStart(BaseModel):
    """A job's state at the start of a phase: enough to start a new job from there."""

    objective: str
    strategy: dict[str, Any]
    breakers: BreakerState


class JobRun(JobInput):
    """The workflow's input: a job (plain JSON from users) or its continuation."""

    carry: Carried | None = None
