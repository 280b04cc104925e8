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
  orchestrator verifies the deliverables first (workflows/completion.py). With the small
  model profile, a tactical phase that did all its todos with every declared deliverable
  in place ends the job itself (`_met`).
- A model turn without a tool call is nudged, at most `limits.max_nudges` times.
- Interrupts from outside the model's turn (the `rewind` signal, breakers, the
  budget, cancellation) go through `interrupt`: the current todos are archived with
  what was done, then a rewind or wrap-up phase starts, or the job ends.
- The rules that keep a small model to the ritual (workflows/strategies/ritual.py): the
  gate takes only a todos.yaml this phase's todo_write wrote and no repeat of done work;
  a todo whose files did not change is not done, one whose files were all written is done
  without todo_complete; one todo_complete per turn; a turn's job_complete runs last; idle
  tactical phases and rewinds are capped.

Reads and writes of the workspace are `Workspace(ops, then)` decisions: the
orchestrator runs them and calls `then` with the results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel

from workflows.contract import (
    LoadTodosResult,
    ModelReply,
    ResolvedConfig,
    StrategicTodos,
    Todo,
    ToolCallInfo,
    ToolOutcome,
    layout,
)
from workflows.prompts import render
from workflows.strategies import completion_gate, ritual
from workflows.strategies.base import (
    Archive,
    CallModel,
    CheckDeliverables,
    CheckFiles,
    CheckTodos,
    Complete,
    Decision,
    DeliverablesChecked,
    ExecuteTools,
    Interrupt,
    LinesChecked,
    PhaseInfo,
    PhaseRecord,
    PlannedCall,
    ReadMemory,
    ReportError,
    Strategy,
    StrategyView,
    ToolDecision,
    Totals,
    Workspace,
    WriteOutput,
    job_result,
    nudge_for,
    plan_calls,
)
from workflows.todos import current_index, todo_block

OWN_TOOLS = frozenset({"todo_complete", "todo_rewind", "job_complete"})
Kind = Literal["strategic", "tactical"]
Variant = Literal["bootstrap", "transition", "rewind", "wrap_up", "work"]

TITLES = {"bootstrap": "Bootstrap: explore and plan", "transition": "Transition: review and plan",
          "rewind": "Rewind: reconsider the plan", "wrap_up": "Wrap-up: record the state of work"}
PLANNED_BY_WORKFLOW = "Deliverables (planned by the workflow after refused calls)"


class Phase(BaseModel):
    number: int
    kind: Kind
    variant: Variant
    title: str
    todos: list[Todo]
    issue: str = ""  # rewind phases: what went wrong
    previous: str = ""  # strategic phases: what the phase before did (ritual.digest)
    loaded: list[str] = []  # deferred tools tool_search loaded in this phase
    evidence: dict[int, list[str]] = {}  # todo id -> files it must change (predefined todos)
    writes: int = 0  # tool calls that changed a file besides the plan (ritual.PLANNING_FILES)
    changed: list[str] = []  # paths written in the phase (at most ritual.MAX_CHANGED)
    refusals: int = 0  # calls the ritual refused in the phase (ritual.REFUSALS)
    steps: int = 0
    nudges: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Snapshot(BaseModel):
    """The strategy's state at a phase start: what continue-as-new carries."""

    phase: Phase
    totals: Totals
    history: list[PhaseRecord]
    todos_completed: int
    final_status: Literal["completed", "budget_exhausted"]
    loops: ritual.Loops = ritual.Loops()


class Pending(BaseModel):
    """A transition decided during a batch of tool calls, carried out after it."""

    to: Literal["tactical", "strategic", "rewind"]
    title: str = ""
    todos: list[Todo] = []
    issue: str = ""


class PhaseAlternation(Strategy):
    name = "phase_alternation"

    def __init__(self, config: ResolvedConfig) -> None:
        super().__init__(config)
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

    # -- Strategy --------------------------------------------------------------------

    def begin(self) -> Decision:
        return self._enter(self._strategic_phase(1, "bootstrap"))

    def snapshot(self) -> dict[str, Any]:
        return Snapshot(phase=self._ph(), totals=self.totals, history=self.history,
                        todos_completed=self.todos_completed, final_status=self.final_status,
                        loops=self.loops).model_dump(mode="json")

    def resume(self, snapshot: dict[str, Any]) -> Decision:
        snap = Snapshot.model_validate(snapshot)
        self.totals, self.history = snap.totals, snap.history
        self.todos_completed, self.final_status = snap.todos_completed, snap.final_status
        self.loops = snap.loops
        return self._enter(snap.phase, count=False)

    def view(self) -> StrategyView:
        ph = self.phase
        info = None if ph is None else PhaseInfo(
            number=ph.number, kind=ph.kind, variant=ph.variant, title=ph.title, steps=ph.steps,
            tokens_in=ph.tokens_in, tokens_out=ph.tokens_out, todos=ph.todos)
        return StrategyView(strategy=self.name, phase=info, totals=self.totals,
                            history=self.history, progress=self.todos_completed)

    def after_model(self, reply: ModelReply) -> Decision:
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
            plan_calls(reply.tool_calls, self.tools(), self.cfg, ph.kind),
            limits.todo_completes_per_turn)
        if ph.kind != "strategic":
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
            planned, ritual.avoid_sets(self.cfg, self.loops.done_plans),
            lambda: completion_gate.plan_example(self.cfg))
        return self._deliverables_checked(checked or planned)

    def _deliverables_checked(self, planned: list[PlannedCall]) -> Decision:
        """With `completion.expect_lines`, run a strategic turn with its write_file of
        todos.yaml refused (ritual.refuse_todos_file_writes) and, with `completion.
        plans_name_deliverables`, its todo_write refused when it names none of the
        deliverables a check finds short (ritual.refuse_off_task_plans), each showing the
        plan of them to copy (patch `deliverables-plan`)."""
        completion = self.cfg.config.completion
        writes = ritual.refuse_todos_file_writes(
            planned, lambda: completion_gate.plan_example(self.cfg)
        ) if completion.expect_lines else None
        turn = writes or planned
        check = completion_gate.expected(self.cfg) if completion.plans_name_deliverables \
            and ritual.plans(turn) else None  # a todo_write to hold to the files still short
        if writes is None and check is None:
            return self._execute(planned)

        def plans_checked(problems: list[str]) -> Decision:
            short = completion_gate.short_of(self.cfg, problems)
            return self._execute(ritual.refuse_off_task_plans(
                turn, short, completion_gate.plan_example(self.cfg, short)) or turn)

        if check is None:
            return self._execute(turn)
        return Workspace([check], lambda c: plans_checked(list(c[0])))

    def _execute(self, planned: list[PlannedCall]) -> Decision:
        """Run the turn's calls, its job_complete last (ritual.job_complete_last)."""
        return ExecuteTools(ritual.job_complete_last(planned) or planned)

    def owns_tool(self, name: str) -> bool:
        return name in OWN_TOOLS

    def batch_closed(self) -> bool:
        return self.pending is not None or self.completion is not None

    def own_tool(self, call: ToolCallInfo) -> ToolDecision:
        args = call.args or {}
        if call.name == "todo_complete":
            return self._todo_complete(str(args.get("notes") or ""))
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

    def after_tools(self, outcomes: list[ToolOutcome]) -> Decision:
        ph = self._ph()
        ph.tool_calls += len(outcomes)
        for o in outcomes:
            ph.loaded += [t for t in o.tools_added if t not in ph.loaded]
            ph.writes += bool(o.ok and set(o.changed) - ritual.PLANNING_FILES)
            ph.refusals += not o.ok and o.code in ritual.REFUSALS
        self.totals.tool_calls += len(outcomes)
        turn = {p for o in outcomes if o.ok for p in o.changed}
        completed = self.todos_completed > self._turn_start
        cur = current_index(ph.todos)
        todo = None if completed or cur is None or self.pending or self.completion else \
            ph.todos[cur]
        small = ritual.small_profile(self.cfg)
        files = [] if todo is None else ritual.written_for(
            todo, ph.evidence.get(todo.id), ph.kind if small else "", turn, set(ph.changed))
        ph.changed = (ph.changed + sorted(turn - set(ph.changed)))[-ritual.MAX_CHANGED:]
        hint = ritual.completion_hint(ph.todos, ph.evidence, outcomes, completed, small)
        if todo is not None and files:  # the turn did what the todo asks for: it is done
            return self._went_on([], self._with_lines(todo, files, lambda: self._done(
                todo, f"written: {', '.join(files)}"), lambda lack, fix: ToolOutcome(
                ok=False, summary=f"Todo {todo.id} stays open: {lack}. {fix}")))
        limit = self.cfg.config.completion.plan_after_refusals
        if ph.kind == "strategic" and limit and ph.refusals >= limit and small and not (
                self.pending or self.completion):
            return Workspace([CheckDeliverables()], lambda c: self._plan_deliverables(
                c[0], hint))
        return self._went_on(hint)

    def _plan_deliverables(self, found: DeliverablesChecked, hint: list[str]) -> Decision:
        """Small profile: a strategic phase refused `completion.plan_after_refusals` calls;
        its plan is the workflow's, one todo per declared deliverable not there yet (none:
        the turn goes on as it would)."""
        ph = self._ph()
        todos = [Todo(id=int(str(t["id"])), content=str(t["content"]))
                 for t in completion_gate.workflow_plan(self.cfg, found)]
        if not todos:
            return self._went_on(hint)
        self.pending = Pending(to="tactical", title=PLANNED_BY_WORKFLOW, todos=todos)
        trip = {"breaker": "plan_after_refusals", "action": "plan", "phase": ph.number,
                "message": f"{ph.refusals} refused calls in strategic phase {ph.number} "
                           "(completion.plan_after_refusals): the workflow planned the "
                           "deliverables not there yet",
                "todos": [t.content for t in todos]}
        return Workspace([WriteOutput(f"output/breakers/planned_{ph.number}.json", trip)],
                         lambda _: self._went_on(hint))

    def _went_on(self, hint: list[str], auto: ToolDecision | None = None) -> Decision:
        """After a turn's tools (and `auto`, the todo its writes completed): end the job,
        start the next phase, or the next call."""
        if isinstance(auto, Workspace):
            return Workspace(auto.ops, lambda r: self._went_on(hint, auto.then(r)))
        if self.completion is not None:
            return self._complete()
        ph = self._ph()
        if self.pending is None:
            if auto is not None:
                hint = [("The files that todo asks for are written, so the workflow marked it "
                         f"done. {auto.summary}") if auto.ok else auto.summary]
            return self._next_call(hint)
        pending, self.pending = self.pending, None
        if pending.to == "tactical":
            self._record(ph, "completed")
            return self._next_phase(Phase(
                number=ph.number + 1, kind="tactical", variant="work",
                title=pending.title or f"Phase {ph.number + 1}", todos=pending.todos))
        variant: Variant = "rewind" if pending.to == "rewind" else "transition"
        status = "rewound" if pending.to == "rewind" else "completed"

        def go_on() -> Decision:
            return self._archive(ph, status, pending.issue, lambda: self._next_phase(
                self._strategic_phase(ph.number + 1, variant, pending.issue, ph, status)))

        if pending.to == "rewind" or not ritual.small_profile(self.cfg):
            return go_on()
        return Workspace([CheckDeliverables()], lambda r: self._met(ph.number, r[0]) if (
            r[0].declared and not r[0].problems) else go_on())

    def _met(self, phase: int, found: DeliverablesChecked) -> Decision:
        """Small profile: a tactical phase did all its todos and every declared deliverable
        is there: the workflow ends the job (a 1.5B model wrote the files, then planned again
        and never called job_complete)."""
        self.completion = {"summary": f"{completion_gate.BY_WORKFLOW}: tactical phase {phase} "
                           "did all its todos and every declared deliverable is there ("
                           f"{', '.join(found.delivered)}); the model had not called "
                           "job_complete (the small model profile).",
                           "deliverables": found.delivered, "completed_by": "workflow"}
        return self._complete()

    def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> Decision:
        """Leave the current phase now: rewind, wrap up, or end the job with `status`."""
        ph = self._ph()
        self.pending = None
        if what == "rewind":
            return self._archive(ph, "rewound", reason, lambda: self._next_phase(
                self._strategic_phase(ph.number + 1, "rewind", reason, ph, "rewound")))
        if what == "wrap_up":
            self.final_status = "budget_exhausted"
            return self._archive(ph, "interrupted", reason, lambda: self._next_phase(
                self._strategic_phase(ph.number + 1, "wrap_up", reason, ph, "interrupted")))
        if what == "cancel":
            for t in ph.todos:
                if t.status == "pending":
                    t.status = "cancelled"
            status = "cancelled"
        return self._archive(ph, status, reason, lambda: self._complete(status, reason))

    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        ph = self._ph()
        ph.tokens_in += tokens_in
        ph.tokens_out += tokens_out
        self.totals.tokens_in += tokens_in
        self.totals.tokens_out += tokens_out

    # -- phases ----------------------------------------------------------------------

    def _next_phase(self, nxt: Phase) -> Decision:
        if nxt.number > self.cfg.config.limits.max_phases:
            limit = self.cfg.config.limits.max_phases
            return ReportError(f"the job reached limits.max_phases={limit} without job_complete",
                               code="phase_limit")
        ph = self._ph()
        self.loops.moving_on(ph.kind, ph.writes, nxt.variant)
        loop = self.loops.stop_reason(self.cfg.config.breakers)
        if loop is not None:
            trip = {"breaker": "phase_loop", "action": "stop", "message": loop,
                    "phase": ph.number}
            return Workspace([WriteOutput(f"output/breakers/phase_loop_{ph.number}.json", trip)],
                             lambda _: self._complete("stuck", loop))
        return self._enter(nxt)

    def _strategic_phase(self, number: int, variant: Variant, issue: str = "",
                         before: Phase | None = None, status: str = "") -> Phase:
        ps = self.cfg.config.phase_settings
        archived = (layout.archive_path(number - 1) if number > 1 and ps.archive_on_transition
                    else "(none yet)")
        todos, evidence = ritual.strategic_todos(
            self._predefined(), "transition" if variant == "work" else variant,
            {"min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos),
             "archive": archived})
        previous = "" if before is None else ritual.digest(
            before.number, status, before.todos, before.changed)
        return Phase(number=number, kind="strategic", variant=variant, title=TITLES[variant],
                     issue=issue, todos=todos, evidence=evidence, previous=previous)

    def _enter(self, phase: Phase, count: bool = True) -> Decision:
        """Start `phase`: read workspace.md for its system prompt, then its first call."""
        self.phase = phase
        self.totals.phases += count
        if phase.variant not in ("transition", "rewind"):
            return Workspace([ReadMemory()], lambda r: self._first_call(phase, r[0]))
        return Workspace([ReadMemory(), CheckDeliverables()], lambda r: self._first_call(
            phase, r[0], completion_gate.status_note(r[1])))

    def _predefined(self) -> StrategicTodos:
        """The strategic phases' predefined todos."""
        return self.cfg.strategic_todos

    def _system_prompt(self, phase: Phase, memory: str, prompt: str = "") -> str:
        ps = self.cfg.config.phase_settings
        return render(prompt or self.cfg.prompts[phase.kind], {
            "phase_number": str(phase.number), "phase_kind": phase.kind,
            "phase_title": phase.title, "workspace_md": memory,
            "min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos),
            "issue": phase.issue or "(none)", "tools": ", ".join(self.tools()),
        })

    def _first_call(self, phase: Phase, memory: str, deliverables: str = "") -> CallModel:
        self._system = self._system_prompt(phase, memory)
        ps = self.cfg.config.phase_settings
        archived = (f" The todos of phase {phase.number - 1}, with what was done, are in "
                    f"{layout.archive_path(phase.number - 1)}."
                    if phase.number > 1 and ps.archive_on_transition else "")
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
        cur = current_index(ph.todos)
        note = "" if cur is None or ph.kind != "tactical" else completion_gate.todo_note(
            self.cfg, ritual.written_file(ph.todos[cur]))
        return CallModel(conversation=f"phase_{ph.number:04d}", system_prompt=self._system,
                         todo_block=todo_block(ph.title, ph.kind, ph.number, ph.todos, note),
                         tools=self.tools(), user_messages=user_messages,
                         label=f"phase {ph.number} {ph.kind} step {ph.steps + 1}")

    def tools(self) -> list[str]:
        ph = self._ph()
        return self.cfg.config.tools.for_phase(ph.kind) + (
            ph.loaded if ph.kind == "tactical" else [])

    def _todo_complete(self, notes: str) -> ToolDecision:
        ph = self._ph()
        cur = current_index(ph.todos)
        if cur is None:
            return ToolOutcome(ok=False, code="no_open_todo", summary="There is no open todo.")
        todo = ph.todos[cur]
        paths = ph.evidence.get(todo.id)
        if paths:  # its files must have changed in this phase
            return Workspace([CheckFiles(ph.number, tuple(paths))],
                             lambda r: self._unless(ritual.missing_evidence(
                                 todo, r[0], lambda path: completion_gate.plan_file_example(
                                     self.cfg, path)), todo, notes))
        named = ritual.written_file(todo) if ph.kind == "tactical" and ritual.small_profile(
            self.cfg) else []
        if named:  # small profile: the file a todo says to write must exist
            return Workspace([CheckFiles(ph.number, tuple(named))], lambda r: self._unless(
                ritual.missing_named(todo, r[0]), todo, notes, named))
        return self._done(todo, notes)

    def _unless(self, missing: str | None, todo: Todo, notes: str,
                named: list[str] | None = None) -> ToolDecision:
        """`todo` done, unless `missing` says why it is not (ritual.missing_evidence) or the
        files it names lack their expected lines."""
        if missing is not None:
            return ToolOutcome(ok=False, code="todo_not_done", summary=(
                f"Error [todo_not_done]: {missing}"))
        return self._with_lines(todo, named or [], lambda: self._done(todo, notes), lambda lack,
                                fix: ToolOutcome(ok=False, code="todo_not_done", summary=(
                                    f"Error [todo_not_done]: Todo {todo.id} is not done: "
                                    f"{lack}. {fix} Then call todo_complete.")))

    def _with_lines(self, todo: Todo, paths: list[str], ok: Callable[[], ToolDecision],
                    lacking: Callable[[str, str], ToolDecision]) -> ToolDecision:
        """`ok()` when the files among `paths` that the config's expect_lines lists hold
        their lines (or none is listed), `lacking(what they lack, how to mend it)` else."""
        check = completion_gate.expected(self.cfg, paths)
        if check is None:
            return ok()
        return Workspace([replace(check, mend=True)], lambda r: self._short(
            todo, r[0], lacking) if r[0].problems else ok())

    def _short(self, todo: Todo, found: LinesChecked,
               lacking: Callable[[str, str], ToolDecision]) -> ToolDecision:
        """`todo`'s file lacks lines: the todo is restated as the write that mends it (when
        the check could mend it), else as the lines its file must hold (completion_gate.
        restated_lines: a missing sentence cannot be put in by the workflow), and `lacking`
        says what is missing. In eval round 12 the model, shown the mended write in the
        refusal, wrote its todo's own words again: "Write notes/apples.md with the content
        'Apples grow on trees ...'", heading-less."""
        def say(content: str | None) -> ToolDecision:
            todo.content = content or todo.content
            return lacking("; ".join(found.problems[:10]), completion_gate.mend_example(
                self.cfg, found))

        restated = completion_gate.restated(found)
        if restated:
            return say(restated)
        lines = completion_gate.restated_lines(self.cfg, found)
        return say(None if lines == todo.content else lines)

    def _done(self, todo: Todo, notes: str) -> ToolDecision:
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
        return Workspace([CheckTodos(ps.min_todos, ps.max_todos, f"phase_{ph.number:04d}",
                                     ritual.avoid_sets(self.cfg, self.loops.done_plans))],
                         lambda results: self._gate(todo, results[0]))

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

    def _archive(self, ph: Phase, status: str, issue: str,
                 then: Callable[[], Decision]) -> Decision:
        """Record the phase, write archive/phase_<n>.yaml (when configured), then `then`."""
        self._record(ph, status)
        if ph.kind == "tactical":  # a later plan must not do this again
            self.loops.archived([t.content for t in ph.todos if t.status == "completed"])
        if not self.cfg.config.phase_settings.archive_on_transition:
            return then()
        record = {"phase": ph.number, "title": ph.title, "status": status,
                  "todos": [t.model_dump() for t in ph.todos],
                  "completed": sum(t.status == "completed" for t in ph.todos),
                  "steps": ph.steps, "tool_calls": ph.tool_calls,
                  "tokens_in": ph.tokens_in, "tokens_out": ph.tokens_out}
        if issue:
            record["issue"] = issue
        return Workspace([Archive(ph.number, record | self._archive_extra(ph))],
                         lambda _: then())

    def _archive_extra(self, ph: Phase) -> dict[str, Any]:
        """More of the phase for its archive file (a subclass's)."""
        return {}

    def _complete(self, status: str | None = None, reason: str = "") -> Decision:
        """Write output/completion.json and end: job_complete, or an interrupt's status."""
        if status is None:
            self._record(self._ph(), "completed")
        result = job_result(status or self.final_status, self.completion or {}, reason,
                            self.totals)
        return Workspace([WriteOutput(layout.COMPLETION, result.model_dump())],
                         lambda _: Complete(result))

    def _ph(self) -> Phase:
        assert self.phase is not None, "strategy used before begin()"
        return self.phase
