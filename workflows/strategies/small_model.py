"""The small model profile's rules for phase alternation (`llm.profile: small`, or an endpoint
with `profile: small`; docs/profiles.md).

Each answers a failure of a 1.5B model seen in the evals (docs/local-models.md). A job
without the profile never runs any of this (`PhaseAlternation.small` is None); its
completion is verified the same way for every job (workflows/completion.py).

- `strategic_turn`: a strategic turn's write_file of todos.yaml is refused (the model wrote
  the file by hand instead of calling todo_write), and a todo_write that writes none of the
  deliverables still short (after the first phase; with `small.plans_name_deliverables` in
  every one);
- `named_files`: a tactical todo that says "Write X" (or "Write ...: `X`, `Y` and `Z`." in
  its first sentence) is held to X (todo_complete is refused while X is missing; writing X
  completes it);
- `lines_short`: X's lines (`small.expect_lines`) are checked when its todo is done;
  one that lacks them stays open, restated as the write that mends it;
- `plan_for`: a strategic phase whose calls were refused `small.plan_after_refusals`
  times gets the workflow's plan, one todo per declared deliverable not there yet;
- `met`: a tactical phase that did all its todos with every declared deliverable there ends
  the job (the model wrote the files, then planned again and never called job_complete);
- `todo_note`: the todo block shows the lines X must hold, else what the task says about X
  (task_words.py).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from workflows.contract import ResolvedConfig, Todo, layout
from workflows.strategies import completion_gate, ritual
from workflows.strategies.base import LinesChecked, PlannedCall, Port
from workflows.todos import current_index

PLANNED_BY_WORKFLOW = "Deliverables (planned by the workflow after refused calls)"
LATER_PLANS = frozenset({"transition", "rewind"})  # plans held to the missing deliverables
TASK_BY_WORKFLOW = "The task's steps (planned by the workflow after refused calls)"


class SmallModel:
    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        self.cfg = config
        self.port = port
        self.unplannable: set[int] = set()  # phases whose task gave no plan (not read again)

    async def strategic_turn(self, planned: list[PlannedCall], variant: str
                             ) -> list[PlannedCall]:
        """With `small.expect_lines`, the turn with its write_file of todos.yaml refused
        (ritual.refuse_todos_file_writes); its todo_write refused when it writes none of the
        deliverables still short (ritual.refuse_off_task_plans), showing the plan of them to
        copy: with `small.plans_name_deliverables` in every strategic phase (the lines a
        check finds short, with expect_lines), else after the first (a transition or rewind:
        tactical work was done, declared deliverables are missing). In an undeclared
        eval-files run the 1.5B model planned copies of the ritual's and the transition's
        words for three phases, its three notes never written."""
        small = self.cfg.config.small
        writes = ritual.refuse_todos_file_writes(
            planned, partial(completion_gate.plan_example, self.cfg)
        ) if small.expect_lines else None
        turn = writes or planned
        if not ritual.plans(turn) or not (small.plans_name_deliverables
                                          or variant in LATER_PLANS):
            return turn
        check = completion_gate.expected(self.cfg)
        if check is not None:  # the files whose lines a check finds short
            short = completion_gate.short_of(self.cfg, await self.port.lines_lacking(check))
            return ritual.refuse_off_task_plans(
                turn, short, completion_gate.plan_example(self.cfg, short)) or turn
        found = await self.port.deliverables(content=False)
        return ritual.refuse_off_task_plans(turn, completion_gate.not_there(found), (
            completion_gate.plan_shown(completion_gate.workflow_plan(self.cfg, found)))) or turn

    @staticmethod
    def named_files(todo: Todo, kind: str) -> list[str]:
        """The files a tactical todo says to write (ritual.written_file)."""
        return ritual.written_file(todo) if kind == "tactical" else []

    def todo_note(self, todos: list[Todo], kind: str) -> str:
        """For the todo block: the lines the current todo's files must hold."""
        cur = current_index(todos)
        return "" if cur is None or kind != "tactical" else completion_gate.todo_note(
            self.cfg, ritual.written_file(todos[cur]), self.port.task_words())

    async def lines_short(self, todo: Todo, paths: list[str]) -> tuple[str, str] | None:
        """None when the files among `paths` that `small.expect_lines` lists hold their
        lines (or none is listed); else (what they lack, how to mend it), with `todo`
        restated (`_restate`)."""
        check = completion_gate.expected(self.cfg, paths)
        if check is None:
            return None
        found = await self.port.mend_lines(check)
        if not found.problems:
            return None
        self._restate(todo, found)
        return "; ".join(found.problems[:10]), completion_gate.mend_example(self.cfg, found)

    def _restate(self, todo: Todo, found: LinesChecked) -> None:
        """`todo`'s file lacks lines: the todo is restated as the write that mends it (when
        the check could mend it), else as the lines its file must hold (completion_gate.
        restated_lines: a missing sentence cannot be put in by the workflow). In eval round
        12 the model, shown the mended write in the refusal, wrote its todo's own words
        again: "Write notes/apples.md with the content 'Apples grow on trees ...'",
        heading-less."""
        restated = completion_gate.restated(found)
        if restated:
            todo.content = restated
            return
        lines = completion_gate.restated_lines(self.cfg, found)
        todo.content = (None if lines == todo.content else lines) or todo.content

    async def plan_for(self, phase: int, refusals: int) -> tuple[str, list[Todo]]:
        """A strategic phase with `refusals` refused calls, at `small.plan_after_refusals`
        or more: the workflow's plan, one todo per declared deliverable not there yet, or, in
        a job that declares none, one per step of the task as instructions.md states it (its
        last follow-up instruction in a later turn), recorded in
        output/breakers/planned_<phase>.json: (its title, its todos; [] when none). Without
        deliverables the 1.5B model, its plans refused as copies of the ritual's todos,
        called todo_complete on the missing todos.yaml ten times (an undeclared eval-sum
        run)."""
        limit = self.cfg.config.small.plan_after_refusals
        if not limit or refusals < limit:
            return PLANNED_BY_WORKFLOW, []
        found = await self.port.deliverables()
        planned = completion_gate.workflow_plan(self.cfg, found)
        title, what = PLANNED_BY_WORKFLOW, "the deliverables not there yet"
        if not planned and not found.declared and phase not in self.unplannable:
            task = await self.port.read_file(layout.INSTRUCTIONS, max_chars=200_000)
            planned = completion_gate.task_plan(task, self.cfg.config.phase_settings.max_todos)
            title, what = TASK_BY_WORKFLOW, "the task's steps as instructions.md states them"
            if not planned:
                self.unplannable.add(phase)
        todos = [Todo(id=int(str(t["id"])), content=str(t["content"])) for t in planned]
        if todos:
            await self.port.write_output(f"output/breakers/planned_{phase}.json", {
                "breaker": "plan_after_refusals", "action": "plan", "phase": phase,
                "message": f"{refusals} refused calls in strategic phase {phase} "
                           f"(small.plan_after_refusals): the workflow planned {what}",
                "todos": [t.content for t in todos]})
        return title, todos

    async def met(self, phase: int) -> dict[str, Any] | None:
        """Tactical phase `phase` did all its todos: the job's completion (by the workflow)
        when every declared deliverable is there, else None."""
        found = await self.port.deliverables()
        if not found.declared or found.problems:
            return None
        return {"summary": f"{completion_gate.BY_WORKFLOW}: tactical phase {phase} did all "
                "its todos and every declared deliverable is there ("
                f"{', '.join(found.delivered)}); the model had not called job_complete (the "
                "small model profile).", "deliverables": found.delivered,
                "completed_by": "workflow"}
