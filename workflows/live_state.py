"""The live state object (the cockpit): what the `state` query returns and the web UI shows.

Built from the orchestrator's and the strategy's state by pure functions; the
same facts feed the workflow's current details (markdown) and its search
attributes (`SwitchbackPhase`, `SwitchbackPhaseNumber`, `SwitchbackTokens`,
`SwitchbackStatus`).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from temporalio.common import SearchAttributeKey

from workflows.breakers import Trip
from workflows.todos import Todo

SA_PHASE = SearchAttributeKey.for_keyword("SwitchbackPhase")
SA_PHASE_NUMBER = SearchAttributeKey.for_int("SwitchbackPhaseNumber")
SA_TOKENS = SearchAttributeKey.for_int("SwitchbackTokens")
SA_STATUS = SearchAttributeKey.for_keyword("SwitchbackStatus")


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


class JobState(BaseModel):
    job_id: str
    status: str  # starting | running | paused | waiting_approval | completed | ...
    run: int = 1  # which run of the job's continue-as-new chain this is
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
    phases: list[dict] = []  # the last finished phases
    breakers: dict = {}
    pending_approvals: list[PendingApproval] = []
    paused: bool = False
    last_error: str | None = None
    last_step: str = ""  # the last model step, in one line
    recent: list[StepLine] = []  # the last 30 steps, oldest first (for `starter.py --follow`)


def objective_of(instructions: str) -> str:
    """The first heading or line of the instructions."""
    for line in instructions.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:200]
    return ""


def details_markdown(s: JobState) -> str:
    bar = progress_bar(s.todos)
    lines = [f"**{s.status.upper()}** · phase {s.phase.number} ({s.phase.kind}): {s.phase.name}",
             "", f"`{bar}` {s.progress} todos", ""]
    for t in s.todos:
        mark = {"completed": "x", "cancelled": "-"}.get(t.status, " ")
        lines.append(f"- [{mark}] {t.id}. {t.content}")
    lines += ["", f"steps {s.steps_total} · tool calls {s.tool_calls_total} · tokens "
              f"{s.tokens.tokens_in} in / {s.tokens.tokens_out} out · ~${s.cost_usd:.4f}"]
    if s.last_step:
        lines.append(f"last step: {s.last_step}")
    for a in s.pending_approvals:
        lines.append(f"**waiting for approval**: `{a.tool}` call `{a.call_id}` {a.arguments}")
    if s.last_error:
        lines.append(f"last error: {s.last_error}")
    return "\n".join(lines)


def progress_bar(todos: list[Todo], width: int = 20) -> str:
    if not todos:
        return "-" * width
    done = sum(t.status == "completed" for t in todos)
    filled = round(width * done / len(todos))
    return "#" * filled + "-" * (width - filled)


def trip_view(trips: list[Trip]) -> list[dict]:
    return [t.model_dump() for t in trips]
