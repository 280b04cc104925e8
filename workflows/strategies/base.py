"""The Strategy seam: a strategy decides the next step; the orchestrator carries it out.

A strategy is plain deterministic Python. It never awaits anything and never reads
the orchestrator: the orchestrator (workflows/agent_job.py) tells it what happened
and asks what to do next.

    begin() | resume(snapshot)        -> Decision     a job starts / continues as new
    after_model(reply)                -> Decision     the model answered
    own_tool(call)                    -> ToolDecision  one of the strategy's control tools
    after_tools(outcomes)             -> Decision     a turn's tool calls ran
    interrupt(what, reason, status)   -> Decision     rewind signal, breakers, cancel

A `Decision` is a `NextStep` - ask the model (`CallModel`), run the tool calls the
model asked for (`ExecuteTools`), finish (`Complete`), fail (`ReportError`) - or
`Workspace(ops, then)`: run these operations and hand their results to `then`, which
decides again. That is how a strategy reads `workspace.md`, checks `todos.yaml`, writes
its records or runs child jobs (`RunChildren`) without awaiting anything. `view()` is
what the orchestrator shows and what the breakers watch; `snapshot()` is what
continue-as-new carries. A strategy may be composed of another (auto runs the one it
picks): the seam is the same.

Adding a strategy: one module under workflows/strategies/ and one line in the
registry (workflows/strategies/__init__.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from workflows.contract import (
    ModelReply,
    ResolvedConfig,
    Todo,
    TodoSet,
    ToolCallInfo,
    ToolOutcome,
)
from workflows.contract.config import LinePattern
from workflows.contract.job import JobResult

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
class PlannedCall:
    call: ToolCallInfo
    refusal: str | None = None  # set: never executed, the model gets this error
    refusal_code: str = "tool_refused"


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

# -- workspace operations a strategy may ask for ---------------------------------------------


@dataclass(frozen=True)
class ReadMemory:
    """workspace.md, capped (result: str)."""


@dataclass(frozen=True)
class CheckTodos:
    """The gate on todos.yaml (result: LoadTodosResult)."""

    min_todos: int
    max_todos: int
    written_in: str = ""  # set: only a todos.yaml that todo_write wrote in this conversation
    avoid: tuple[TodoSet, ...] = ()  # a plan repeating one of these is rejected


@dataclass(frozen=True)
class CheckFiles:
    """Which of `paths` changed since phase `phase` began (result: dict path -> 'changed' |
    'unchanged' | 'missing', or None for a job recorded before the check existed)."""

    phase: int
    paths: tuple[str, ...]


@dataclass(frozen=True)
class CheckLines:
    """What the files lack of `lines` (path -> the lines each must hold): a list of
    problems, [] when every file holds its lines; with `mend`, a `LinesChecked`."""

    lines: tuple[tuple[str, tuple[str | LinePattern, ...]], ...]
    mend: bool = False


@dataclass(frozen=True)
class LinesChecked:
    """A `CheckLines(mend=True)` result: the problems, and each file that has some with the
    lines it lacks put in (path -> text; not for a missing file, nor one too long to show)."""

    problems: list[str]
    mends: dict[str, str]


@dataclass(frozen=True)
class CheckDeliverables:
    """Are the job's declared deliverables there (result: DeliverablesChecked)? The job's
    own (config, input) or, without those, the ones the model named when it planned."""


@dataclass(frozen=True)
class DeliverablesChecked:
    declared: list[str]  # paths or globs ([]: the job declares none)
    delivered: list[str]  # the files found: present, not empty, written by this job
    problems: list[str]  # what is wrong, a sentence each ([]: all there)


@dataclass(frozen=True)
class Archive:
    """archive/phase_<n>.yaml (result: its path)."""

    phase: int
    record: dict[str, Any]


@dataclass(frozen=True)
class WriteOutput:
    """A JSON file the workflow owns, e.g. output/completion.json (result: its path)."""

    path: str
    data: dict[str, Any]


@dataclass(frozen=True)
class ReadFile:
    """A workspace file, capped (result: str, '' when it does not exist)."""

    path: str
    max_chars: int = 20_000


@dataclass(frozen=True)
class WriteText:
    """A markdown record the workflow owns, e.g. archive/plan.md (result: its path)."""

    path: str
    text: str


@dataclass(frozen=True)
class ChildJob:
    """One child AgentJob: id `<job id>-<key>`, workspace `subjobs/<that id>/`."""

    key: str
    title: str
    instructions: str
    config: dict[str, Any]  # an inline config (`workspace.within_parent` set)


@dataclass(frozen=True)
class RunChildren:
    """Run child jobs, at most `max_concurrent` at a time; pause, resume, rewind and cancel
    reach the running ones (result: list[ChildOutcome], in the order of `jobs`)."""

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


WorkspaceOp = (ReadMemory | CheckTodos | CheckFiles | CheckLines | Archive | WriteOutput
               | CheckDeliverables | ReadFile | WriteText | RunChildren)

T = TypeVar("T")


@dataclass
class Workspace(Generic[T]):
    """Run `ops` in order, then call `then` with their results (same order)."""

    ops: list[WorkspaceOp]
    then: Callable[[list[Any]], T | Workspace[T]]


Decision = NextStep | Workspace[NextStep]
ToolDecision = ToolOutcome | Workspace[ToolOutcome]
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

    def __init__(self, config: ResolvedConfig) -> None:
        self.cfg = config
        self.totals = Totals()  # the job's totals (a composing strategy may share its own)

    @abstractmethod
    def begin(self) -> Decision: ...

    @abstractmethod
    def resume(self, snapshot: dict[str, Any]) -> Decision:
        """Continue a job from `snapshot()` as it was at the start of its current phase."""

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """JSON-able state at a phase start (continue-as-new, phase snapshots)."""

    @abstractmethod
    def view(self) -> StrategyView: ...

    @abstractmethod
    def after_model(self, reply: ModelReply) -> Decision: ...

    def owns_tool(self, name: str) -> bool:
        """True for the strategy's control tools (carried out by `own_tool`, no activity)."""
        return False

    def own_tool(self, call: ToolCallInfo) -> ToolDecision:
        raise NotImplementedError(f"{self.name} has no tool '{call.name}'")

    def batch_closed(self) -> bool:
        """True when the remaining calls of the current turn must be skipped."""
        return False

    @abstractmethod
    def after_tools(self, outcomes: list[ToolOutcome]) -> Decision: ...

    @abstractmethod
    def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> Decision:
        """Leave the current step from outside the model's turn: 'rewind', 'wrap_up',
        'finish' (end with `status`) or 'cancel'. Records what was done first."""

    @abstractmethod
    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        """Tokens spent outside the model steps (summaries) count like any others."""


def plan_calls(calls: list[ToolCallInfo], offered: list[str], cfg: ResolvedConfig,
               kind: str) -> list[PlannedCall]:
    """The tool calls of a turn, each either to run or refused with a reason the model reads:
    beyond the per-turn limit, not offered now (not loaded, other phase, unknown), or with
    arguments that failed their schema."""
    c = cfg.config
    out = []
    for i, call in enumerate(calls):
        if i >= c.limits.max_tool_calls_per_step:
            out.append(PlannedCall(call, "too many tool calls in one turn (limit "
                                   f"{c.limits.max_tool_calls_per_step}); this one was not run",
                                   "too_many_calls"))
        elif call.name not in offered:
            if "tool_search" in offered and call.name in c.tools.deferred:
                out.append(PlannedCall(call, f"tool '{call.name}' is not loaded yet: call "
                                       "tool_search with what you want to do to load it",
                                       "tool_not_loaded"))
            elif call.name in c.tools.known():
                out.append(PlannedCall(call, f"tool '{call.name}' is not available in the "
                                       f"{kind} phase. Available: {', '.join(offered)}",
                                       "tool_not_allowed"))
            else:
                out.append(PlannedCall(call, f"unknown tool '{call.name}'. Available: "
                                       f"{', '.join(offered)}", "unknown_tool"))
        elif call.error:
            out.append(PlannedCall(call, call.error, "invalid_arguments"))
        else:
            out.append(PlannedCall(call))
    return out


ECHO = "<tool_response>"  # what a reply that echoes tool results holds (see nudge_for)


def nudge_for(cfg: ResolvedConfig, reply: ModelReply, nudge: str | None = None) -> str:
    """What a turn without a tool call gets: the nudge (`nudge`, else prompts/nudge.md), or,
    when the answer was cut off at the token limit (`finish_reason: length`), what happened
    and what to do instead; when it only echoed `<tool_response>` blocks (the tools' answers,
    not calls: the 1.5B model under react, eval round 13, in 3 of 10 runs until the nudges
    ran out), that this runs nothing (prompts/echo_nudge.md; a config resolved before it
    has none, and gets the nudge)."""
    if reply.finish_reason == "length" and cfg.prompts.get("cut_off"):
        return cfg.prompts["cut_off"]
    if ECHO in reply.content and cfg.prompts.get("echo_nudge"):
        return cfg.prompts["echo_nudge"]
    return cfg.prompts["nudge"] if nudge is None else nudge


def job_result(status: str, args: dict[str, Any], reason: str, totals: Totals) -> JobResult:
    """The job's result from `job_complete`'s arguments (or an interrupt's reason)."""
    confidence = args.get("confidence")
    return JobResult(status=status, completed_by="workflow" if args.get(
                     "completed_by") == "workflow" else "",
                     summary=str(args.get("summary", reason)),
                     deliverables=[str(d) for d in args.get("deliverables") or []],
                     confidence=confidence if isinstance(confidence, int | float) else None,
                     notes=str(args.get("notes") or ""), **totals.model_dump())
