"""Phase alternation: the default strategy (seed: phase-alternation.md).

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
- `job_complete` (strategic only) writes `output/completion.json` and ends the job; the
  orchestrator verifies the deliverables first (workflows/completion.py).
- A model turn without a tool call is nudged, at most `limits.max_nudges` times.
- Interrupts from outside the model's turn (the `rewind` signal, breakers, the
  budget, cancellation) go through `interrupt`: the current todos are archived with
  what was done, then a rewind or wrap-up phase starts, or the job ends.
- The rules that keep a small model to the ritual (workflows/strategies/ritual.py): the
  gate takes only a todos.yaml this phase's todo_write wrote and no repeat of done work;
  a todo whose files did not change is not done, one whose files were all written is done
  without todo_complete; one todo_complete per turn; a turn's job_complete runs last; idle
  tactical phases and rewinds are capped. With the small model profile (llm.profile:
  small), more (workflows/strategies/small_model.py: `self.small`).

Reads and writes of the workspace are awaited on the strategy's port (`self.port`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from workflows.contract import (
    LoadTodosResult,
    ModelReply,
    ResolvedConfig,
    StrategicTodos,
    Todo,
    TodoSet,
    ToolCallInfo,
    ToolOutcome,
    layout,
)
from workflows.prompts import render
from workflows.strategies import completion_gate, ritual
from workflows.strategies.base import (
    CallModel,
    ExecuteTools,
    Interrupt,
    NextStep,
    PhaseInfo,
    PhaseRecord,
    PlannedCall,
    Port,
    ReportError,
    Strategy,
    StrategyView,
    Totals,
    follow_up_issue,
    job_result,
    nudge_for,
    plan_calls,
)
from workflows.strategies.phases import TITLES, Pending, Phase, Snapshot, Variant
from workflows.strategies.small_model import SmallModel
from workflows.todos import current_index, todo_block

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
        self._work = 0  # the current turn's work calls (ritual.work_calls)
        self._ran: list[str] = []  # the current turn's calls, in the order they run
        # the small model profile's rules (llm.profile: small), or None
        self.small = SmallModel(config, port) if ritual.small_profile(config) else None

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
        planned = ritual.limit_todo_completes(
            plan_calls(reply.tool_calls, self.tools(), self.cfg, ph.kind, self.port.patched), 1)
        self._work = ritual.work_calls(planned)
        if ph.kind != "strategic":
            if self.small and ph.kind == "tactical" and self.port.patched(
                    ritual.TODO_NEEDS_A_CALL):
                planned = ritual.refuse_workless_complete(
                    planned, self._unheld_todo(), ph.todo_calls, ph.workless) or planned
            return self._execute(planned)
        cur = current_index(ph.todos)
        todo = None if cur is None else ph.todos[cur]
        evidence = None if todo is None else ph.evidence.get(todo.id)

        def example(path: str) -> str:
            return completion_gate.plan_file_example(self.cfg, path)

        off = ritual.refuse_off_todo_writes(planned, todo, evidence, ritual.done_planning_files(
            ph.todos, ph.evidence), example)  # rewrites of a done todo's file refused too
        planned = off or planned
        checked = ritual.refuse_repeated_plans(
            planned, self._avoid(),
            partial(completion_gate.plan_example, self.cfg))
        planned = checked or planned
        return self._execute(await self.small.strategic_turn(planned, ph.variant)
                             if self.small else planned)

    def _execute(self, planned: list[PlannedCall]) -> NextStep:
        """Run the turn's calls, its job_complete last (ritual.job_complete_last)."""
        calls = ritual.job_complete_last(planned) or planned
        self._ran = [p.call.name for p in calls]
        return ExecuteTools(calls)

    def _task_calls(self, outcomes: list[ToolOutcome]) -> int:
        """The turn's calls of a tool of the task that ran and wrote no file (an MCP
        server's, a service's): work all the same, not an idle phase (patch
        `work-without-files`; before it, three tactical phases of such calls ended the job
        `stuck`)."""
        task = self.cfg.config.tools.of_the_task()
        ran = sum(o.ok and not o.changed and name in task
                  for name, o in zip(self._ran, outcomes, strict=False))
        return ran if ran and self.port.patched(ritual.WORK_WITHOUT_FILES) else 0

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
        if self.todos_completed == self._turn_start:  # (a completed todo set it to 0)
            ph.todo_calls += self._work
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
        small = self.small is not None
        files = [] if todo is None else ritual.written_for(
            todo, ph.evidence.get(todo.id), ph.kind if small else "", turn, set(ph.changed))
        ph.changed = (ph.changed + sorted(turn - set(ph.changed)))[-ritual.MAX_CHANGED:]
        hint = ritual.completion_hint(ph.todos, ph.evidence, outcomes, completed, small)
        if todo is not None and files:  # the turn did what the todo asks for: it is done
            short = await self.small.lines_short(todo, files) if self.small else None
            auto = await self._done(todo, f"written: {', '.join(files)}") if short is None \
                else ToolOutcome(ok=False, summary=f"Todo {todo.id} stays open: {short[0]}. "
                                 f"{short[1]}")
            return await self._went_on([], auto)
        if self.small and ph.kind == "strategic" and ph.variant != "wrap_up" and not (
                self.pending or self.completion):  # (a wrap-up records, it plans no work)
            title, todos = await self.small.plan_for(ph.number, ph.refusals)
            if todos:
                self.pending = Pending(to="tactical", title=title, todos=todos)
        return await self._went_on(hint)

    async def _went_on(self, hint: list[str], auto: ToolOutcome | None = None) -> NextStep:
        """After a turn's tools (and `auto`, the todo its writes completed): end the job,
        start the next phase, or the next call."""
        if self.completion is not None:
            return await self._complete()
        ph = self._ph()
        if self.pending is None:
            if auto is not None:
                hint = [("The files that todo asks for are written, so the workflow marked it "
                         f"done. {auto.summary}") if auto.ok else auto.summary]
            return self._next_call(hint)
        pending, self.pending = self.pending, None
        if pending.to == "tactical":
            self._record(ph, "completed")
            return await self._next_phase(Phase(
                number=ph.number + 1, kind="tactical", variant="work",
                title=pending.title or f"Phase {ph.number + 1}", todos=pending.todos))
        variant: Variant = "rewind" if pending.to == "rewind" else "transition"
        status = "rewound" if pending.to == "rewind" else "completed"
        if pending.to != "rewind" and self.small and (
                met := await self.small.met(ph.number)):
            self.completion = met
            return await self._complete()
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
        ps = self.cfg.config.phase_settings
        archived = layout.archive_path(number - 1) if number > 1 else "(none yet)"
        todos, evidence = ritual.strategic_todos(
            self._predefined(), "transition" if variant in ("work", "follow_up") else variant,
            {"min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos),
             "archive": archived})
        previous = "" if before is None else ritual.digest(
            before.number, status, before.todos, before.changed)
        return Phase(number=number, kind="strategic", variant=variant, title=TITLES[variant],
                     issue=issue, todos=todos, evidence=evidence, previous=previous)

    async def _enter(self, phase: Phase, count: bool = True) -> NextStep:
        """Start `phase`: read workspace.md for its system prompt, then its first call (a
        transition or rewind phase is told which declared deliverables are there)."""
        self.phase = phase
        self.totals.phases += count
        memory = await self.port.read_memory()
        if phase.variant not in ("transition", "rewind", "follow_up"):
            return self._first_call(phase, memory)
        return self._first_call(phase, memory, completion_gate.status_note(
            await self.port.deliverables()))

    def _avoid(self) -> tuple[TodoSet, ...]:
        """What a new plan must not repeat (ritual.avoid_sets)."""
        if not self.port.patched(ritual.PLAN_NOT_THE_PROMPT):
            return ritual.avoid_sets(self.cfg, self.loops.done_plans)
        return ritual.avoid_sets(self.cfg, self.loops.done_plans,
                                 prompt=self._strategic_prompt(), predefined=self._predefined())

    def _strategic_prompt(self) -> str:
        """The name of the strategic phases' system prompt (`prompts.<name>`)."""
        return "strategic"

    def _predefined(self) -> StrategicTodos:
        """The strategic phases' predefined todos."""
        return self.cfg.strategic_todos

    def _system_prompt(self, phase: Phase, memory: str, prompt: str = "") -> str:
        ps = self.cfg.config.phase_settings
        return render(prompt or self._kind_prompt(phase.kind), {
            "phase_number": str(phase.number), "phase_kind": phase.kind,
            "phase_title": phase.title, "workspace_md": memory,
            "min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos),
            "issue": phase.issue or "(none)", "tools": ", ".join(self.tools()),
        })

    def _unheld_todo(self) -> Todo | None:
        """The current todo unless a file check holds it (its evidence, or with the small
        profile the file it names): that check's refusal says more than "no call"."""
        ph = self._ph()
        cur = current_index(ph.todos)
        if cur is None or ph.evidence.get(ph.todos[cur].id) or (
                self.small and self._writes() and self.small.named_files(ph.todos[cur],
                                                                         ph.kind)):
            return None
        return ph.todos[cur]

    def _writes(self) -> bool:
        """Can this phase write a workspace file? (Not a tactical phase of
        `phase_settings.tactical_workspace` without write_file: the small profile's rules
        that hold a todo to the file it names do not apply there.)"""
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
        archived = (f" The todos of phase {phase.number - 1}, with what was done, are in "
                    f"{layout.archive_path(phase.number - 1)}." if phase.number > 1 else "")
        kickoff = render(self.cfg.prompts["kickoff"], {
            "phase_number": str(phase.number), "phase_kind": phase.kind,
            "phase_title": phase.title,
            "issue_note": (f"\n\nThis phase was started because of an issue:\n\n> {phase.issue}\n"
                           f"{archived}" if phase.issue else ""),
            "previous": (f"\n\n{phase.previous}" if phase.previous else "") + deliverables,
        })
        return self._next_call([kickoff])

    def _next_call(self, user_messages: list[str]) -> CallModel:
        ph = self._ph()
        note = self.small.todo_note(ph.todos, ph.kind) if self.small and self._writes() \
            else ""
        return CallModel(conversation=f"phase_{ph.number:04d}", system_prompt=self._system,
                         todo_block=todo_block(ph.title, ph.kind, ph.number, ph.todos, note),
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
            return ToolOutcome(ok=False, code="no_open_todo", summary="There is no open todo.")
        todo = ph.todos[cur]
        paths = ph.evidence.get(todo.id)
        named = self.small.named_files(todo, ph.kind) if self.small and self._writes() \
            else []
        if paths:  # its files must have changed in this phase
            missing = ritual.missing_evidence(
                todo, await self.port.check_files(ph.number, tuple(paths)),
                partial(completion_gate.plan_file_example, self.cfg), ph.changed)
        elif named:  # small profile: the file a todo says to write must exist
            missing = ritual.missing_named(
                todo, await self.port.check_files(ph.number, tuple(named)), ph.changed)
        else:
            return await self._done(todo, notes)
        if missing is not None:
            return ToolOutcome(ok=False, code="todo_not_done", summary=(
                f"Error [todo_not_done]: {missing}"))
        short = await self.small.lines_short(todo, [] if paths else named) if self.small \
            else None
        if short is None:
            return await self._done(todo, notes)
        return ToolOutcome(ok=False, code="todo_not_done", summary=(
            f"Error [todo_not_done]: Todo {todo.id} is not done: {short[0]}. {short[1]} Then "
            "call todo_complete."))

    async def _done(self, todo: Todo, notes: str) -> ToolOutcome:
        """`todo` is complete: the next one, or the end of the phase (the gate)."""
        ph = self._ph()
        todo.status, todo.notes = "completed", notes[:2000]
        self.todos_completed += 1
        ph.todo_calls = 0
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

    async def _archive(self, ph: Phase, status: str, issue: str) -> None:
        """Record the phase, write archive/phase_<n>.yaml."""
        self._record(ph, status)
        if ph.kind == "tactical":  # a later plan must not do this again
            self.loops.archived([t.content for t in ph.todos if t.status == "completed"])
        await self._write_archive(ph, status, issue)

    async def _write_archive(self, ph: Phase, status: str, issue: str) -> None:
        """archive/phase_<n>.yaml."""
        record = {"phase": ph.number, "title": ph.title, "status": status,
                  "todos": [t.model_dump() for t in ph.todos],
                  "completed": sum(t.status == "completed" for t in ph.todos),
                  "steps": ph.steps, "tool_calls": ph.tool_calls,
                  "tokens_in": ph.tokens_in, "tokens_out": ph.tokens_out}
        if issue:
            record["issue"] = issue
        await self.port.archive(ph.number, record | self._archive_extra(ph))

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
