"""The Strategy seam: a strategy decides the next step; the orchestrator carries it out.

A strategy is plain deterministic async Python. It awaits only its `Port` (the job's
workspace records and checks, child jobs), never Temporal: the orchestrator
(workflows/agent_job.py) tells it what happened and asks what to do next.

    begin() | resume(snapshot)        -> NextStep     a job starts / continues as new
    after_model(reply)                -> NextStep     the model answered
    own_tool(call)                    -> ToolOutcome  one of the strategy's control tools
    after_tools(outcomes)             -> NextStep     a turn's tool calls ran
    interrupt(what, reason, status)   -> NextStep     rewind signal, breakers, cancel

A `NextStep` is: ask the model (`CallModel`), run the tool calls the model asked for
(`ExecuteTools`), finish (`Complete`) or fail (`ReportError`). `view()` is what the
orchestrator shows and what the breakers watch; `snapshot()` is what continue-as-new
carries. A strategy may be composed of another (auto runs the one it picks): the seam is
the same.

Adding a strategy: one module under workflows/strategies/ and one line in the
registry (workflows/strategies/__init__.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel

from switchback.workflows.completion.state import DeliverablesChecked
from switchback.workflows.contract import (
    LoadTodosResult,
    ModelReply,
    ResolvedConfig,
    Todo,
    TodoSet,
    ToolCallInfo,
    ToolOutcome,
    layout,
)
from switchback.workflows.contract.job import JobResult
from switchback.workflows.guards import PlannedCall

# -- next steps ---------------------------------------------------------------------------


@dataclass
class CallModel:
    conversation: str  # a new key starts an empty conversation
    system_prompt: str  # sent with the first call of a conversation
    todo_block: str
    tools: list[str]
    user_messages: list[str] = field(default_factory=list)  # appended before the call
    label: str = ""


@dataclass
class ExecuteTools:
    calls: list[PlannedCall]


@dataclass
class Complete:
    result: JobResult


@dataclass
class ReportError:
    what: str  # one line a person can act on
    code: str = "job_failed"


NextStep = CallModel | ExecuteTools | Complete | ReportError

# -- what a strategy may ask of its job (the port) ---------------------------------------------


@dataclass(frozen=True)
class ChildJob:
    """One child AgentJob: id `<job id>-<key>`, workspace `subjobs/<that id>/`."""

    key: str
    title: str
    instructions: str
    config: dict[str, Any]  # an inline config (`nested.within_parent` set)


@dataclass(frozen=True)
class RunChildren:
    """Child jobs to run, at most `max_concurrent` at a time (Port.run_children)."""

    jobs: list[ChildJob]
    max_concurrent: int


class ChildOutcome(BaseModel):
    key: str
    job_id: str
    folder: str  # the child's workspace, as a path in the parent's
    status: str  # the child's JobResult status, or "failed"
    summary: str = ""
    deliverables: list[str] = []
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None  # why it failed (its failure, as the parent saw it)


class Port(Protocol):
    """What a strategy may ask of the job it runs in: the workspace's records and checks, and
    child jobs. The orchestrator implements it (workflows/workspace_ops.py) with activities;
    a strategy only awaits it. Each call is one durable step: a failure for good ends the job
    the one typed way, so a strategy never handles one."""

    async def read_memory(self) -> str:
        """workspace.md, capped."""

    async def read_file(self, path: str, max_chars: int = 20_000) -> str:
        """A workspace file, capped ('' when it does not exist)."""

    async def check_todos(self, min_todos: int, max_todos: int, written_in: str = "",
                          avoid: tuple[TodoSet, ...] = ()) -> LoadTodosResult:
        """The gate on todos.yaml. `written_in`: only a todos.yaml that todo_write wrote in
        that conversation passes; a plan repeating one of `avoid` is rejected."""

    async def check_files(self, phase: int, paths: tuple[str, ...]) -> dict[str, str] | None:
        """Which of `paths` changed since phase `phase` began (path -> 'changed' |
        'unchanged' | 'missing')."""

    async def deliverables(self, claimed: list[str] | None = None,
                           content: bool = True) -> DeliverablesChecked:
        """Are the deliverables the job is held to (its own, else the model's plan's) and
        `claimed` there? `content`: with every file there, run completion.check too."""

    async def archive(self, phase: int, record: dict[str, Any]) -> str:
        """Write archive/phase_<n>.yaml; its path."""

    async def write_output(self, path: str, data: dict[str, Any]) -> str:
        """A JSON file the workflow owns, e.g. output/completion.json; its path."""

    async def write_text(self, path: str, text: str) -> str:
        """A markdown record the workflow owns, e.g. archive/plan.md; its path."""

    async def run_children(self, children: RunChildren) -> list[ChildOutcome]:
        """Run child jobs; pause, resume, rewind and cancel reach the running ones. Their
        outcomes, in the order of `children.jobs`."""



Interrupt = Literal["rewind", "wrap_up", "finish", "cancel"]

# -- what a strategy shows --------------------------------------------------------------------


class Totals(BaseModel):
    phases: int = 0
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class PhaseRecord(BaseModel):
    """A finished phase, for the `state` view (the last 20 are kept)."""

    number: int
    kind: str
    variant: str
    status: str
    steps: int
    todos_completed: int
    tokens_in: int
    tokens_out: int


@dataclass
class PhaseInfo:
    """The unit of work with its own conversation (a phase, a step, a loop)."""

    number: int
    kind: str
    variant: str
    title: str
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    todos: list[Todo] = field(default_factory=list)
    current_todo: str = ""  # what is being worked on ("": the first pending todo, if any)


@dataclass
class StrategyView:
    strategy: str
    phase: PhaseInfo | None
    totals: Totals
    history: list[PhaseRecord]
    progress: int  # grows when the job makes progress (todos completed): the breakers watch it
    detail: dict[str, Any] = field(default_factory=dict)  # JSON: `state.strategy_detail`
    # what the breakers' notes tell a stuck model to do with this strategy's tools ("": the
    # todo tools, todo_complete / todo_rewind)
    stuck_hint: str = ""


class Strategy(ABC):
    name: ClassVar[str]

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        self.cfg = config
        self.port = port  # the job's workspace and child jobs, awaited
        self.totals = Totals()  # the job's totals (a composing strategy may share its own)

    @abstractmethod
    async def begin(self) -> NextStep: ...

    @abstractmethod
    async def resume(self, snapshot: dict[str, Any]) -> NextStep:
        """Continue a job from `snapshot()` as it was at the start of its current phase."""

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """JSON-able state at a phase start (continue-as-new, phase snapshots)."""

    @abstractmethod
    def view(self) -> StrategyView: ...

    @abstractmethod
    async def after_model(self, reply: ModelReply) -> NextStep: ...

    def owns_tool(self, name: str) -> bool:
        """True for the strategy's control tools (carried out by `own_tool`, no activity)."""
        return False

    async def own_tool(self, call: ToolCallInfo) -> ToolOutcome:
        raise NotImplementedError(f"{self.name} has no tool '{call.name}'")

    def batch_closed(self) -> bool:
        """True when the remaining calls of the current turn must be skipped."""
        return False

    @abstractmethod
    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep: ...

    @abstractmethod
    async def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> NextStep:
        """Leave the current step from outside the model's turn: 'rewind', 'wrap_up',
        'finish' (end with `status`) or 'cancel'. Records what was done first."""

    @abstractmethod
    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        """Tokens spent outside the model steps (summaries) count like any others."""

    async def follow_up(self, instruction: str, turn: int) -> NextStep:
        """The job's next turn, after a completed one: a follow-up instruction (already at
        the end of instructions.md). A strategy says what a turn is; by default a rewind
        whose issue is the instruction."""
        return await self.interrupt("rewind", follow_up_issue(instruction, turn))

    async def complete(self, result: JobResult) -> NextStep:
        """Write output/completion.json, then end with `result`."""
        await self.port.write_output(layout.COMPLETION, result.model_dump())
        return Complete(result)


def react_prompt(cfg: ResolvedConfig) -> str:
    """react's system prompt (and plan_revise_execute's wrap-up's): react.md, or
    react_actions.md for a job that acts only (`JobConfig.acts_only`)."""
    actions = cfg.prompts.get("react_actions")
    return actions if actions and cfg.config.acts_only() else cfg.prompts["react"]


def follow_up_issue(instruction: str, turn: int, limit: int = 2000) -> str:
    """What a strategic phase is told when a follow-up instruction starts turn `turn` (the
    instruction cut at `limit` characters: the whole of it is in instructions.md)."""
    shown = instruction if len(instruction) <= limit else (
        f"{instruction[:limit]} [... {len(instruction):,} characters: read the rest at the "
        "end of instructions.md]")
    return (f"The user gave a follow-up instruction (turn {turn}, now at the end of "
            f"instructions.md): {shown}\nThe earlier turns' work is in the workspace; "
            "plan what this instruction needs.")


ECHO = "<tool_response>"  # what a reply that echoes tool results holds (see nudge_for)


def nudge_for(cfg: ResolvedConfig, reply: ModelReply, nudge: str | None = None) -> str:
    """What a turn without a tool call gets: the nudge (`nudge`, else prompts/nudge.md), or,
    when the answer was cut off at the token limit (`finish_reason: length`), what happened
    and what to do instead; when it only echoed `<tool_response>` blocks (the tools' answers,
    not calls), that this runs nothing (prompts/echo_nudge.md)."""
    if reply.finish_reason == "length" and cfg.prompts.get("cut_off"):
        return cfg.prompts["cut_off"]
    if ECHO in reply.content and cfg.prompts.get("echo_nudge"):
        return cfg.prompts["echo_nudge"]
    return cfg.prompts["nudge"] if nudge is None else nudge


def job_result(status: str, args: dict[str, Any], reason: str, totals: Totals) -> JobResult:
    """The job's result from `job_complete`'s arguments (or an interrupt's reason)."""
    confidence = args.get("confidence")
    return JobResult(status=status,
                     summary=str(args.get("summary", reason)),
                     deliverables=[str(d) for d in args.get("deliverables") or []],
                     confidence=confidence if isinstance(confidence, int | float) else None,
                     notes=str(args.get("notes") or ""), **totals.model_dump())
