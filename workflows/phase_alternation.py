"""Phase alternation: the first Strategy (seed: phase-alternation.md).

    bootstrap strategic -> tactical -> transition strategic -> tactical -> ... -> job_complete

- Every phase starts with an empty conversation (a new conversation key);
  `workspace.md` is read at phase start and put in the system prompt.
- Tool sets by phase come from config; a call outside the set is refused with a
  tool error and never executed.
- Strategic -> tactical: completing the last strategic todo runs the gate on
  `todos.yaml`; a rejection keeps that todo open and tells the model why.
- Tactical -> strategic: the phase's todos (status, notes) go to
  `archive/phase_<n>.yaml`; `todo_rewind(issue)` archives them as rewound and
  starts a rewind strategic phase with the issue in its prompt.
- `job_complete` (strategic only) writes `output/completion.json` and ends the job.
- A model turn without a tool call is nudged, at most `limits.max_nudges` times.
- Interrupts from outside the model's turn (the `rewind` signal, breakers, the
  budget, cancellation) go through `interrupt`: the current todos are archived with
  what was done, then a rewind or wrap-up phase starts, or the job ends.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from workflows.config_schema import ResolvedConfig
from workflows.prompts import render
from workflows.strategy import (
    CallModel,
    Complete,
    Effects,
    ExecuteTools,
    NextStep,
    PlannedCall,
    ReportError,
    Strategy,
)
from workflows.todos import Todo, current_index, todo_block
from workflows.types import CONTROL_TOOLS, JobResult, ModelReply, ToolCallInfo, ToolOutcome

Kind = Literal["strategic", "tactical"]
Variant = Literal["bootstrap", "transition", "rewind", "wrap_up", "work"]
Interrupt = Literal["rewind", "wrap_up", "finish", "cancel"]

TITLES = {"bootstrap": "Bootstrap: explore and plan", "transition": "Transition: review and plan",
          "rewind": "Rewind: reconsider the plan", "wrap_up": "Wrap-up: record the state of work"}


class Phase(BaseModel):
    number: int
    kind: Kind
    variant: Variant
    title: str
    todos: list[Todo]
    issue: str = ""  # rewind phases: what went wrong
    loaded: list[str] = []  # deferred tools tool_search loaded in this phase
    steps: int = 0
    nudges: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Totals(BaseModel):
    phases: int = 0
    steps: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class PhaseRecord(BaseModel):
    """A finished phase, for the `state` view (the last 20 are kept)."""

    number: int
    kind: Kind
    variant: Variant
    status: str
    steps: int
    todos_completed: int
    tokens_in: int
    tokens_out: int


class Snapshot(BaseModel):
    """The strategy's state between phases: what continue-as-new carries."""

    phase: Phase
    totals: Totals
    history: list[PhaseRecord]
    todos_completed: int
    final_status: Literal["completed", "budget_exhausted"]


class Pending(BaseModel):
    """A transition decided during a batch of tool calls, carried out after it."""

    to: Literal["tactical", "strategic", "rewind"]
    title: str = ""
    todos: list[Todo] = []
    issue: str = ""


class PhaseAlternation(Strategy):
    def __init__(self, config: ResolvedConfig, effects: Effects) -> None:
        self.cfg = config
        self.fx = effects
        self.phase: Phase | None = None
        self.totals = Totals()
        self.pending: Pending | None = None
        self.completion: dict | None = None
        self.final_status: Literal["completed", "budget_exhausted"] = "completed"
        self.todos_completed = 0
        self.history: list[PhaseRecord] = []
        self._system = ""

    # -- Strategy --------------------------------------------------------------------

    async def begin(self) -> NextStep:
        return await self._enter(self._strategic_phase(1, "bootstrap"))

    def snapshot(self) -> Snapshot:
        return Snapshot(phase=self._ph(), totals=self.totals, history=self.history,
                        todos_completed=self.todos_completed, final_status=self.final_status)

    async def resume(self, snap: Snapshot) -> NextStep:
        """Continue a job from a snapshot taken at the start of its current phase."""
        self.totals, self.history = snap.totals, snap.history
        self.todos_completed, self.final_status = snap.todos_completed, snap.final_status
        return await self._enter(snap.phase, count=False)

    async def after_model(self, reply: ModelReply) -> NextStep:
        ph = self._ph()
        ph.steps += 1
        ph.tokens_in += reply.usage.prompt_tokens
        ph.tokens_out += reply.usage.completion_tokens
        self.totals.steps += 1
        self.totals.tokens_in += reply.usage.prompt_tokens
        self.totals.tokens_out += reply.usage.completion_tokens
        limits = self.cfg.config.limits
        if not reply.tool_calls:
            ph.nudges += 1
            if ph.nudges > limits.max_nudges:
                return ReportError(f"the model answered {ph.nudges} times in a row without "
                                   f"calling a tool in phase {ph.number} "
                                   f"(limits.max_nudges={limits.max_nudges})", code="no_tool_call")
            return self._next_call([self.cfg.prompts["nudge"]])
        ph.nudges = 0
        return ExecuteTools([self._plan(i, c) for i, c in enumerate(reply.tool_calls)])

    def owns_tool(self, name: str) -> bool:
        return name in CONTROL_TOOLS

    def batch_closed(self) -> bool:
        return self.pending is not None or self.completion is not None

    async def run_own_tool(self, call: ToolCallInfo) -> ToolOutcome:
        args = call.args or {}
        if call.name == "todo_complete":
            return await self._todo_complete(str(args.get("notes") or ""))
        if call.name == "todo_rewind":
            issue = str(args.get("issue") or "").strip()
            self.pending = Pending(to="rewind", issue=issue)
            return ToolOutcome(ok=True, summary="Rewind accepted: the todos are archived with "
                               "your note and a strategic phase will reconsider the plan.")
        self.completion = dict(args)  # job_complete
        return ToolOutcome(ok=True, summary="Job completion recorded.")

    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep:
        ph = self._ph()
        ph.tool_calls += len(outcomes)
        for o in outcomes:
            ph.loaded += [t for t in o.tools_added if t not in ph.loaded]
        self.totals.tool_calls += len(outcomes)
        if self.completion is not None:
            return await self._complete()
        if self.pending is None:
            return self._next_call([])
        pending, self.pending = self.pending, None
        if pending.to == "tactical":
            self._record(ph, "completed")
            nxt = Phase(number=ph.number + 1, kind="tactical", variant="work",
                        title=pending.title or f"Phase {ph.number + 1}", todos=pending.todos)
        else:
            await self._archive(ph, "rewound" if pending.to == "rewind" else "completed",
                                pending.issue)
            variant: Variant = "rewind" if pending.to == "rewind" else "transition"
            nxt = self._strategic_phase(ph.number + 1, variant, pending.issue)
        return await self._next_phase(nxt)

    async def interrupt(self, what: Interrupt, reason: str,
                        status: str = "stuck") -> NextStep:
        """Leave the current phase now: rewind, wrap up, or end the job with `status`."""
        ph = self._ph()
        self.pending = None
        if what == "rewind":
            await self._archive(ph, "rewound", reason)
            return await self._next_phase(self._strategic_phase(ph.number + 1, "rewind", reason))
        if what == "wrap_up":
            self.final_status = "budget_exhausted"
            await self._archive(ph, "interrupted", reason)
            return await self._next_phase(self._strategic_phase(ph.number + 1, "wrap_up",
                                                                reason))
        if what == "cancel":
            for t in ph.todos:
                if t.status == "pending":
                    t.status = "cancelled"
            status = "cancelled"
        await self._archive(ph, status, reason)
        return await self._complete(status, reason)

    def progress(self) -> int:
        return self.todos_completed

    async def _next_phase(self, nxt: Phase) -> NextStep:
        if nxt.number > self.cfg.config.limits.max_phases:
            limit = self.cfg.config.limits.max_phases
            return ReportError(f"the job reached limits.max_phases={limit} without job_complete",
                               code="phase_limit")
        return await self._enter(nxt)

    # -- phases ----------------------------------------------------------------------

    def _strategic_phase(self, number: int, variant: Variant, issue: str = "") -> Phase:
        todos = getattr(self.cfg.strategic_todos, "transition" if variant == "work" else variant)
        return Phase(number=number, kind="strategic", variant=variant, title=TITLES[variant],
                     issue=issue, todos=[Todo(id=i, content=t) for i, t in enumerate(todos, 1)])

    async def _enter(self, phase: Phase, count: bool = True) -> NextStep:
        self.phase = phase
        self.totals.phases += count
        memory = await self.fx.read_memory()
        ps = self.cfg.config.phase_settings
        self._system = render(self.cfg.prompts[phase.kind], {
            "phase_number": str(phase.number), "phase_kind": phase.kind,
            "phase_title": phase.title, "workspace_md": memory,
            "min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos),
            "issue": phase.issue or "(none)", "tools": ", ".join(self.tools()),
        })
        kickoff = render(self.cfg.prompts["kickoff"], {
            "phase_number": str(phase.number), "phase_kind": phase.kind,
            "phase_title": phase.title,
            "issue_note": (f"\n\nThis phase was started because of an issue:\n\n> {phase.issue}\n"
                           if phase.issue else ""),
        })
        return self._next_call([kickoff])

    def _next_call(self, user_messages: list[str]) -> CallModel:
        ph = self._ph()
        return CallModel(conversation=f"phase_{ph.number:04d}", system_prompt=self._system,
                         todo_block=todo_block(ph.title, ph.kind, ph.number, ph.todos),
                         tools=self.tools(), user_messages=user_messages,
                         label=f"phase {ph.number} {ph.kind} step {ph.steps + 1}")

    def tools(self) -> list[str]:
        ph = self._ph()
        return self.cfg.config.tools.for_phase(ph.kind) + (
            ph.loaded if ph.kind == "tactical" else [])

    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        """Tokens spent outside the model steps (summaries) count like any others."""
        ph = self._ph()
        ph.tokens_in += tokens_in
        ph.tokens_out += tokens_out
        self.totals.tokens_in += tokens_in
        self.totals.tokens_out += tokens_out

    def _plan(self, i: int, call: ToolCallInfo) -> PlannedCall:
        ph = self._ph()
        if i >= self.cfg.config.limits.max_tool_calls_per_step:
            return PlannedCall(call, "too many tool calls in one turn "
                               f"(limit {self.cfg.config.limits.max_tool_calls_per_step}); "
                               "this one was not run", "too_many_calls")
        if call.name not in self.tools():
            tools = self.cfg.config.tools
            if ph.kind == "tactical" and call.name in tools.deferred:
                return PlannedCall(call, f"tool '{call.name}' is not loaded yet: call "
                                   "tool_search with what you want to do to load it",
                                   "tool_not_loaded")
            if call.name in tools.known():
                return PlannedCall(call, f"tool '{call.name}' is not available in the {ph.kind} "
                                   f"phase. Available: {', '.join(self.tools())}",
                                   "tool_not_allowed")
            return PlannedCall(call, f"unknown tool '{call.name}'. Available: "
                               f"{', '.join(self.tools())}", "unknown_tool")
        if call.error:
            return PlannedCall(call, call.error, "invalid_arguments")
        return PlannedCall(call)

    async def _todo_complete(self, notes: str) -> ToolOutcome:
        ph = self._ph()
        cur = current_index(ph.todos)
        if cur is None:
            return ToolOutcome(ok=False, code="no_open_todo", summary="There is no open todo.")
        todo = ph.todos[cur]
        todo.status, todo.notes = "completed", notes[:2000]
        self.todos_completed += 1
        nxt = current_index(ph.todos)
        if nxt is not None:
            left = sum(t.status == "pending" for t in ph.todos)
            return ToolOutcome(ok=True, summary=f"Todo {todo.id} done. {left} remaining. "
                               f"Next: {ph.todos[nxt].id}. {ph.todos[nxt].content}")
        if ph.variant == "wrap_up":  # no gate, no new phase: the job ends here
            self.completion = {"summary": notes or "wrap-up finished without job_complete"}
            return ToolOutcome(ok=True, summary=f"Todo {todo.id} done. The job ends now.")
        if ph.kind == "tactical":
            self.pending = Pending(to="strategic")
            return ToolOutcome(ok=True, summary=f"Todo {todo.id} done. All todos of this phase "
                               "are complete; the next phase starts now.")
        ps = self.cfg.config.phase_settings
        gate = await self.fx.load_todos(ps.min_todos, ps.max_todos)
        if not gate.ok:
            todo.status, todo.notes = "pending", ""
            self.todos_completed -= 1
            return ToolOutcome(ok=False, code="transition_rejected", summary=(
                f"Phase transition rejected: {gate.reason} The todo stays open: fix todos.yaml "
                "(use todo_write), then call todo_complete again."))
        self.pending = Pending(to="tactical", title=gate.title,
                               todos=[Todo(id=t.id, content=t.content) for t in gate.todos])
        return ToolOutcome(ok=True, summary=f"Todo {todo.id} done. todos.yaml accepted "
                           f"({len(gate.todos)} todos); the tactical phase starts now.")

    def _record(self, ph: Phase, status: str) -> None:
        self.history = (self.history + [PhaseRecord(
            number=ph.number, kind=ph.kind, variant=ph.variant, status=status, steps=ph.steps,
            todos_completed=sum(t.status == "completed" for t in ph.todos),
            tokens_in=ph.tokens_in, tokens_out=ph.tokens_out)])[-20:]

    async def _archive(self, ph: Phase, status: str, issue: str = "") -> None:
        self._record(ph, status)
        if not self.cfg.config.phase_settings.archive_on_transition:
            return
        record = {"phase": ph.number, "title": ph.title, "status": status,
                  "todos": [t.model_dump() for t in ph.todos],
                  "completed": sum(t.status == "completed" for t in ph.todos),
                  "steps": ph.steps, "tool_calls": ph.tool_calls,
                  "tokens_in": ph.tokens_in, "tokens_out": ph.tokens_out}
        if issue:
            record["issue"] = issue
        await self.fx.archive_phase(ph.number, record)

    async def _complete(self, status: str | None = None, reason: str = "") -> Complete:
        """Write output/completion.json and end: job_complete, or an interrupt's status."""
        args = self.completion or {}
        if status is None:
            self._record(self._ph(), "completed")
        result = JobResult(status=status or self.final_status,  # type: ignore[arg-type]
                           summary=str(args.get("summary", reason)),
                           deliverables=[str(d) for d in args.get("deliverables") or []],
                           confidence=args.get("confidence"),
                           notes=str(args.get("notes") or ""), **self.totals.model_dump())
        await self.fx.write_output("output/completion.json", result.model_dump())
        return Complete(result)

    def _ph(self) -> Phase:
        assert self.phase is not None, "strategy used before begin()"
        return self.phase
