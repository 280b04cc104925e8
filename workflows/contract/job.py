"""What a user and a client exchange with a job: its input, its result, the `approve`
update's input and the `state` query's answer.

All plain JSON (pydantic models), so the Temporal CLI can start, steer and query a
job. Fields are added with defaults, so histories recorded before still decode.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class DocumentSpec(BaseModel):
    """A file to place under `documents/`: inline (`text` or `base64`, with a `name`) or a
    `path` inside the job's config folder or an operator-listed document root (README
    "Security model"). Checked by workflows/contract/inputs.py and create_workspace."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None  # file name under documents/ (default: the source's base name)
    path: str | None = None  # relative to the config folder, or under a document root
    text: str | None = None
    base64: str | None = None


class JobInput(BaseModel):
    """Workflow input. Plain JSON, so `temporal workflow start --input` works; checked,
    with errors that name the field, by `inputs.job_input` in the workflow's first step."""

    model_config = ConfigDict(extra="forbid")

    config: str | dict[str, Any] = "creator"
    instructions: str | None = None
    documents: list[str | DocumentSpec] | None = None  # None: the config's own documents
    deliverables: list[str] = []  # added to the config's `deliverables` (paths or globs)


class ApproveRequest(BaseModel):
    """Input of the `approve` update (checked by `inputs.approve_request`)."""

    model_config = ConfigDict(extra="forbid")

    call_id: str
    approved: bool
    note: str = ""


class RewindRequest(BaseModel):
    """The `rewind` signal as an object (a plain issue string works too). `restore_phase`:
    first put the workspace back as it was at the start of that phase (the files it replaces
    go to `archive/rewound/<phase>/`); None keeps the files as they are."""

    model_config = ConfigDict(extra="forbid")

    issue: str
    restore_phase: int | None = None


JobStatus = Literal["completed", "cancelled", "budget_exhausted", "stuck", "failed"]


class JobResult(BaseModel):
    status: JobStatus
    summary: str = ""
    deliverables: list[str] = []
    confidence: float | None = None
    notes: str = ""
    # the verification of the deliverables (docs/completion.md): the files found, each
    # present, not empty and written by this job; what was missing when the job ended;
    # whether the job declared none (an answer-only job); who ended it completed
    verified: list[str] = []
    missing: list[str] = []
    answer_only: bool = False
    completed_by: Literal["", "model", "workflow"] = ""
    phases: int = 0
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


# -- the `state` query ------------------------------------------------------------------


class Todo(BaseModel):
    id: int
    content: str
    status: Literal["pending", "completed", "cancelled"] = "pending"
    notes: str = ""


class PendingApproval(BaseModel):
    call_id: str
    tool: str
    arguments: str  # as the model sent them, capped
    phase: int
    requested_at: datetime
    deadline: datetime


class TokenCount(BaseModel):
    tokens_in: int = 0
    tokens_out: int = 0


class PhaseView(BaseModel):
    number: int = 0
    kind: str = ""
    variant: str = ""
    name: str = ""
    steps: int = 0
    tokens: TokenCount = TokenCount()


class StepLine(BaseModel):
    """One model step as a follower shows it, with the todo progress after its tools ran."""

    step: int
    phase: int
    kind: str
    progress: str
    bar: str
    tokens: int
    calls: str


class DeliverablesView(BaseModel):
    """What the job must deliver (docs/completion.md)."""

    by_job: list[str] = []  # the config's and the job input's
    by_model: list[str] = []  # named by the model when it planned (todo_write)
    # the ones the job is held to (docs/completion.md: the job's, else the model's)
    required: list[str] = []
    refusals: int = 0  # job_complete calls refused for missing deliverables


class JobState(BaseModel):
    job_id: str
    status: str  # starting | running | paused | waiting_approval | waiting_for_instructions
    # | completed | ...
    run: int = 1  # which run of the job's continue-as-new chain this is
    strategy: str = "phase_alternation"
    # what the strategy adds (JSON): auto's class and route, the plan and its evaluations,
    # a nested job's children with their status and summary
    strategy_detail: dict[str, Any] = {}
    objective: str = ""
    phase: PhaseView = PhaseView()
    todos: list[Todo] = []
    progress: str = "0/0"
    steps_total: int = 0
    tool_calls_total: int = 0
    tokens: TokenCount = TokenCount()
    cost_usd: float = 0.0
    budget_used: float = 0.0  # fraction of the budget, 0 when there is none
    efficiency: float | None = None  # todos completed per 1k tokens, last finished phase
    phases: list[dict[str, Any]] = []  # the last finished phases
    breakers: dict[str, Any] = {}
    pending_approvals: list[PendingApproval] = []
    paused: bool = False
    last_error: str | None = None
    rejected: list[str] = []  # the last signals refused, with the reason (newest last)
    last_step: str = ""  # the last model step, in one line
    recent: list[StepLine] = []  # the last 30 steps, oldest first (for `starter.py --follow`)
    current_todo: str = ""  # "3. Draft the GoBD requirement" (empty: none open)
    last_rewind: str = ""  # the last rewind, with what its restore did
    rewinds_waiting: int = 0  # rewind signals received, applied at the next step boundary
    turn: int = 1  # follow-up turns: 1, then one more per instruction taken (`instruct`)
    instructions_waiting: int = 0  # instructions queued for the turns after this one
    # while a completed turn waits for the next instruction (status waiting_for_instructions):
    # when the job ends completed if none arrives (ISO 8601, UTC)
    waiting_until: str = ""
    deliverables: DeliverablesView = DeliverablesView()
    workspace: str = ""  # where the job's files are: s3://<bucket>/<prefix>/ (the CLI reads it)
    # tool calls whose effect is unknown (at-most-once, an earlier attempt unfinished)
    unknown_outcomes: list[str] = []
