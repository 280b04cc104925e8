"""Phase alternation: the default strategy (seed: phase-alternation.md).

    bootstrap strategic -> tactical -> transition strategic -> tactical -> ... -> job_complete

- Every phase starts with an empty conversation; `workspace.md` is read at its start and put
  in the system prompt. Tool sets by phase come from config (the guard pipeline refuses a
  call outside the set: workflows/guards.py).
- Strategic -> tactical: the last strategic todo runs the gate on `todos.yaml`; a rejection
  keeps that todo open and tells the model why. Tactical -> strategic: the phase's todos
  (status, notes) go to `archive/phase_<n>.yaml`; `todo_rewind(issue)` archives them as
  rewound and starts a rewind phase with the issue in its prompt.
- `job_complete` (strategic only) ends the job, verified by the completion service.
- A turn without a tool call is nudged, at most `limits.max_nudges` times. Interrupts (the
  `rewind` signal, breakers, the budget, cancel) archive the todos, then a rewind or
  wrap-up phase starts, or the job ends.
- The ritual (ritual.py): the gate's rules, a predefined todo held to its files, one
  todo_complete per turn, job_complete last, idle phases and rewinds capped.

Reads and writes of the workspace are awaited on the strategy's port (`self.port`).
"""

from __future__ import annotations

from typing import Any, Literal

from switchback.workflows import guards
from switchback.workflows.contract import (
    LoadTodosResult,
    ModelReply,
    ResolvedConfig,
    StrategicTodos,
    Todo,
    TodoSet,
    ToolCallInfo,
    ToolOutcome,
)
from switchback.workflows.strategies import phases, ritual
from switchback.workflows.strategies.base import (
    CallModel,
    ExecuteTools,
    Interrupt,
    NextStep,
    PhaseInfo,
    PhaseRecord,
    Port,
    ReportError,
    Strategy,
    StrategyView,
    Totals,
    follow_up_issue,
    job_result,
    nudge_for,
)
from switchback.workflows.strategies.phases import Pending, Phase, Snapshot, Variant
from switchback.workflows.todos import current_index, todo_block

OWN_TOOLS = frozenset({"todo_complete", "todo_rewind", "job_complete"})
class PhaseAlternation(Strategy):
    name = "phase_alternation"

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        super().__init__(config, port)
        self.phase: Phase | None = None
        self.totals = Totals()
        self.pending: Pending | None = None
        self.completion: dict[str, Any] | None = None
        self.final_status: Literal["completed", "budget_exhausted"] = "completed"
        self.todos_completed = 0
        self.history: list[PhaseRecord] = []
        self.loops = ritual.Loops()
        self._system = ""
        self._turn_start = 0  # todos completed before the current turn
        self._ran: list[str] = []  # the current turn's calls, in the order they run

    # -- Strategy --------------------------------------------------------------------

    async def begin(self) -> NextStep:
        return await self._enter(self._strategic_phase(1, "bootstrap"))

    def snapshot(self) -> dict[str, Any]:
        return Snapshot(phase=self._ph(), totals=self.totals, history=self.history,
                        todos_completed=self.todos_completed, final_status=self.final_status,
                        loops=self.loops).model_dump(mode="json")

    async def resume(self, snapshot: dict[str, Any]) -> NextStep:
        snap = Snapshot.model_validate(snapshot)
        self.totals, self.history = snap.totals, snap.history
        self.todos_completed, self.final_status = snap.todos_completed, snap.final_status
        self.loops = snap.loops
        return await self._enter(snap.phase, count=False)

    def view(self) -> StrategyView:
        ph = self.phase
        info = None if ph is None else PhaseInfo(
            number=ph.number, kind=ph.kind, variant=ph.variant, title=ph.title, steps=ph.steps,
            tokens_in=ph.tokens_in, tokens_out=ph.tokens_out, todos=ph.todos)
        return StrategyView(strategy=self.name, phase=info, totals=self.totals,
                            history=self.history, progress=self.todos_completed)

    async def after_model(self, reply: ModelReply) -> NextStep:
        ph = self._ph()
        ph.steps += 1
        self.add_usage(reply.usage.prompt_tokens, reply.usage.completion_tokens)
        self.totals.steps += 1
        limits = self.cfg.config.limits
        if not reply.tool_calls:
            ph.nudges += 1
            if ph.nudges > limits.max_nudges:
                return ReportError(f"the model answered {ph.nudges} times in a row without "
                                   f"calling a tool in phase {ph.number} "
                                   f"(limits.max_nudges={limits.max_nudges})", code="no_tool_call")
            return self._next_call([nudge_for(self.cfg, reply)])
        ph.nudges, self._turn_start = 0, self.todos_completed
        calls = guards.job_complete_last(guards.screen(
            reply.tool_calls, self.tools(), ph.kind, self.cfg, self._guards()))
        self._ran = [p.call.name for p in calls]
        return ExecuteTools(calls)

    def _guards(self) -> list[guards.CallGuard]:
        """The phase's own guards, after the ones every strategy has (guards.CALL_GUARDS)."""
        ph = self._ph()
        own = ritual.strategic_guards(ph.todos, ph.evidence, self._avoid()) \
            if ph.kind == "strategic" else []
        return [guards.one_todo_per_turn, *own, guards.job_completing]

    def _task_calls(self, outcomes: list[ToolOutcome]) -> int:
        """The turn's calls of a tool of the task that ran and wrote no file (an MCP
        server's, a service's): work all the same, not an idle phase."""
        task = self.cfg.config.tools.of_the_task()
        return sum(o.ok and not o.changed and name in task
                   for name, o in zip(self._ran, outcomes, strict=False))

    def owns_tool(self, name: str) -> bool:
        return name in OWN_TOOLS

    def batch_closed(self) -> bool:
        return self.pending is not None or self.completion is not None

    async def own_tool(self, call: ToolCallInfo) -> ToolOutcome:
        args = call.args or {}
        if call.name == "todo_complete":
            return await self._todo_complete(str(args.get("notes") or ""))
        if call.name == "todo_rewind":
            issue = str(args.get("issue") or "").strip()
            self.pending = Pending(to="rewind", issue=issue)
            return ToolOutcome(ok=True, summary="Rewind accepted: the todos are archived with "
                               "your note and a strategic phase will reconsider the plan.")
        self.completion = dict(args)  # job_complete (verified by the orchestrator)
        cur = current_index(self._ph().todos)
        if cur is not None:  # it completes its todo too
            self._ph().todos[cur].status = "completed"
        return ToolOutcome(ok=True, summary="Job completion recorded.")

    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep:
        ph = self._ph()
        ph.tool_calls += len(outcomes)
        for o in outcomes:
            ph.loaded += [t for t in o.tools_added if t not in ph.loaded]
            ph.writes += bool(o.ok and set(o.changed) - ritual.PLANNING_FILES)
            ph.refusals += not o.ok and o.code in ritual.REFUSALS
        ph.writes += self._task_calls(outcomes)
        self.totals.tool_calls += len(outcomes)
        turn = {p for o in outcomes if o.ok for p in o.changed}
        completed = self.todos_completed > self._turn_start
        cur = current_index(ph.todos)
        todo = None if completed or cur is None or self.pending or self.completion else \
            ph.todos[cur]
        files = [] if todo is None else ritual.written_for(
            ph.evidence.get(todo.id), turn, set(ph.changed))
        ph.changed = (ph.changed + sorted(turn - set(ph.changed)))[-ritual.MAX_CHANGED:]
        hint = ritual.completion_hint(ph.todos, ph.evidence, outcomes, completed)
        if todo is not None and files:  # the turn did what the todo asks for: it is done
            return await self._went_on([], await self._done(todo, f"written: {', '.join(files)}"))
        return await self._went_on(hint)

    async def _went_on(self, hint: list[str], auto: ToolOutcome | None = None) -> NextStep:
        """After a turn's tools (and `auto`, the todo its writes completed): end the job,
        start the next phase, or the next call."""
        if self.completion is not None:
            return await self._complete()
        ph = self._ph()
        if self.pending is None:
            if auto is not None:
                hint = ["The files that todo asks for are written, so the workflow marked it "
                        f"done. {auto.summary}"]
            return self._next_call(hint)
        pending, self.pending = self.pending, None
        if pending.to == "tactical":
            self._record(ph, "completed")
            return await self._next_phase(Phase(
                number=ph.number + 1, kind="tactical", variant="work",
                title=pending.title or f"Phase {ph.number + 1}", todos=pending.todos))
        variant: Variant = "rewind" if pending.to == "rewind" else "transition"
        status = "rewound" if pending.to == "rewind" else "completed"
        await self._archive(ph, status, pending.issue)
        return await self._next_phase(self._strategic_phase(ph.number + 1, variant,
                                                            pending.issue, ph, status))

    async def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> NextStep:
        """Leave the current phase now: rewind, wrap up, or end the job with `status`."""
        ph = self._ph()
        self.pending = None
        if what in ("rewind", "wrap_up"):
            left = "rewound" if what == "rewind" else "interrupted"
            if what == "wrap_up":
                self.final_status = "budget_exhausted"
            await self._archive(ph, left, reason)
            return await self._next_phase(self._strategic_phase(
                ph.number + 1, "rewind" if what == "rewind" else "wrap_up", reason, ph, left))
        if what == "cancel":
            for t in ph.todos:
                if t.status == "pending":
                    t.status = "cancelled"
            status = "cancelled"
        await self._archive(ph, status, reason)
        return await self._complete(status, reason)

    async def follow_up(self, instruction: str, turn: int) -> NextStep:
        """The next turn: the finished phase archived, then a strategic phase that re-plans
        around the instruction (a transition phase's todos, the instruction as its issue). A
        turn is not a rewind: the loop breakers count afresh."""
        ph = self._ph()
        self.completion, self.pending, self.final_status = None, None, "completed"
        self.loops = ritual.Loops()  # (earlier turns' plans may be asked for again)
        issue = follow_up_issue(instruction, turn)
        await self._write_archive(ph, "completed", "")
        nxt = self._strategic_phase(ph.number + 1, "follow_up", issue, ph, "completed")
        if nxt.number > self.cfg.config.limits.max_phases:
            limit = self.cfg.config.limits.max_phases
            return ReportError(f"the job reached limits.max_phases={limit}", code="phase_limit")
        return await self._enter(nxt)

    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        ph = self._ph()
        ph.tokens_in += tokens_in
        ph.tokens_out += tokens_out
        self.totals.tokens_in += tokens_in
        self.totals.tokens_out += tokens_out

    # -- phases ----------------------------------------------------------------------

    async def _next_phase(self, nxt: Phase) -> NextStep:
        if nxt.number > self.cfg.config.limits.max_phases:
            limit = self.cfg.config.limits.max_phases
            return ReportError(f"the job reached limits.max_phases={limit} without job_complete",
                               code="phase_limit")
        ph = self._ph()
        self.loops.moving_on(ph.kind, ph.writes, nxt.variant)
        loop = self.loops.stop_reason(self.cfg.config.phase_settings)
        if loop is not None:
            trip = {"breaker": "phase_loop", "action": "stop", "message": loop,
                    "phase": ph.number}
            await self.port.write_output(f"output/breakers/phase_loop_{ph.number}.json", trip)
            return await self._complete("stuck", loop)
        return await self._enter(nxt)

    def _strategic_phase(self, number: int, variant: Variant, issue: str = "",
                         before: Phase | None = None, status: str = "") -> Phase:
        return phases.strategic(self._predefined(), self.cfg.config.phase_settings, number,
                                variant, issue, before, status)

    async def _enter(self, phase: Phase, count: bool = True) -> NextStep:
        """Start `phase`: read workspace.md for its system prompt, then its first call (a
        transition or rewind phase is told which declared deliverables are there)."""
        self.phase = phase
        self.totals.phases += count
        memory = await self.port.read_memory()
        if phase.variant not in ("transition", "rewind", "follow_up"):
            return self._first_call(phase, memory)
        return self._first_call(phase, memory, ritual.status_note(
            await self.port.deliverables(content=False)))

    def _avoid(self) -> tuple[TodoSet, ...]:
        """What a new plan must not repeat (ritual.avoid_sets)."""
        return ritual.avoid_sets(self.cfg, self.loops.done_plans, self._strategic_prompt(),
                                 self._predefined())

    def _strategic_prompt(self) -> str:
        """The name of the strategic phases' system prompt (`prompts.<name>`)."""
        return "strategic"

    def _predefined(self) -> StrategicTodos:
        """The strategic phases' predefined todos."""
        return self.cfg.strategic_todos

    def _system_prompt(self, phase: Phase, memory: str, prompt: str = "") -> str:
        return phases.system_prompt(prompt or self._kind_prompt(phase.kind), phase, memory,
                                    self.cfg.config.phase_settings, self.tools())

    def _writes(self) -> bool:
        """Can this phase write a workspace file (`phase_settings.tactical_workspace`)?"""
        return "write_file" in self.tools()

    def _kind_prompt(self, kind: str) -> str:
        """The phase kind's system prompt; a tactical phase without write_file
        (`phase_settings.tactical_workspace`) gets tactical_actions.md, which does not tell
        the model to write its results to files."""
        actions = self.cfg.prompts.get("tactical_actions")
        if kind == "tactical" and actions and not self._writes():
            return actions
        return self.cfg.prompts[kind]

    def _first_call(self, phase: Phase, memory: str, deliverables: str = "") -> CallModel:
        self._system = self._system_prompt(phase, memory)
        return self._next_call([phases.kickoff(self.cfg.prompts["kickoff"], phase,
                                               deliverables)])

    def _next_call(self, user_messages: list[str]) -> CallModel:
        ph = self._ph()
        return CallModel(conversation=f"phase_{ph.number:04d}", system_prompt=self._system,
                         todo_block=todo_block(ph.title, ph.kind, ph.number, ph.todos),
                         tools=self.tools(), user_messages=user_messages,
                         label=f"phase {ph.number} {ph.kind} step {ph.steps + 1}")

    def tools(self) -> list[str]:
        ph = self._ph()
        c = self.cfg.config
        return c.tools.for_phase(ph.kind, c.phase_settings.tactical_workspace) + (
            ph.loaded if ph.kind == "tactical" else [])

    async def _todo_complete(self, notes: str) -> ToolOutcome:
        ph = self._ph()
        cur = current_index(ph.todos)
        if cur is None:
            return guards.refusal("no_open_todo", "There is no open todo.")
        todo = ph.todos[cur]
        paths = ph.evidence.get(todo.id)
        missing = ritual.missing_evidence(todo, await self.port.check_files(
            ph.number, tuple(paths)), ph.changed) if paths else None
        if missing is not None:  # its files must have changed in this phase
            return guards.refusal("todo_not_done", missing)
        return await self._done(todo, notes)

    async def _done(self, todo: Todo, notes: str) -> ToolOutcome:
        """`todo` is complete: the next one, or the end of the phase (the gate)."""
        ph = self._ph()
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
        return self._gate(todo, await self.port.check_todos(
            ps.min_todos, ps.max_todos, f"phase_{ph.number:04d}",
            self._avoid()))

    def _gate(self, todo: Todo, gate: LoadTodosResult) -> ToolOutcome:
        """The last strategic todo is done: go tactical if todos.yaml passes the gate."""
        if not gate.ok:
            todo.status, todo.notes = "pending", ""
            self.todos_completed -= 1
            return guards.refusal("transition_rejected", (
                f"Phase transition rejected: {gate.reason} The todo stays open: fix todos.yaml "
                "(use todo_write), then call todo_complete again."))
        self.pending = Pending(to="tactical", title=gate.title,
                               todos=[Todo(id=t.id, content=t.content) for t in gate.todos])
        return ToolOutcome(ok=True, summary=f"Todo {todo.id} done. todos.yaml accepted "
                           f"({len(gate.todos)} todos); the tactical phase starts now.")

    def _record(self, ph: Phase, status: str) -> None:
        self.history = (self.history + [phases.record(ph, status)])[-20:]

    async def _archive(self, ph: Phase, status: str, issue: str) -> None:
        """Record the phase, write archive/phase_<n>.yaml."""
        self._record(ph, status)
        if ph.kind == "tactical":  # a later plan must not do this again
            self.loops.archived([t.content for t in ph.todos if t.status == "completed"])
        await self._write_archive(ph, status, issue)

    async def _write_archive(self, ph: Phase, status: str, issue: str) -> None:
        """archive/phase_<n>.yaml."""
        await self.port.archive(ph.number, phases.archive_record(ph, status, issue)
                                | self._archive_extra(ph))

    def _archive_extra(self, ph: Phase) -> dict[str, Any]:
        """More of the phase for its archive file (a subclass's)."""
        return {}

    async def _complete(self, status: str | None = None, reason: str = "") -> NextStep:
        """Write output/completion.json and end: job_complete, or an interrupt's status."""
        if status is None:
            self._record(self._ph(), "completed")
        return await self.complete(job_result(status or self.final_status,
                                              self.completion or {}, reason, self.totals))

    def _ph(self) -> Phase:
        assert self.phase is not None, "strategy used before begin()"
        return self.phase
