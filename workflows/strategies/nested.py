"""nested: an outer strategic loop whose todos run as child jobs.

    coordinator (bootstrap) -> delegation: each todo a child AgentJob -> coordinator
      (transition: reads the children's summaries) -> delegation -> ... -> job_complete

Phase alternation with the tactical phase replaced by a delegation:

- The coordinator phases are strategic phases with their own prompt (prompts/nested.md) and
  predefined todos (prompts/nested_todos.yaml); their todos.yaml passes the same gate
  (`phase_settings.min_todos`-`max_todos` todos).
- A delegation phase starts one child AgentJob per todo (`RunChildren`, carried out by
  workflows/child_jobs.py): id `<job id>-p<phase>-t<todo>`, strategy
  `nested.inner_strategy`, the job's config otherwise, `nested.within_parent` (it works
  in `subjobs/<child id>/` with a copy of documents/), instructions from prompts/subjob.md
  (its todo and the start of the job's instructions), a share of the remaining budget. At
  most `nested.max_concurrent` run at a time.
- Each child's end - completed, stuck, out of budget, failed, cancelled - becomes its todo's
  status and notes, the archive (archive/phase_<n>.yaml, with a `children` list) and the
  next coordinator phase's prompt; a failed child never fails the job. Its tokens, steps and
  tool calls count towards the job's totals (and budget).
- Pause, resume, rewind and cancel reach the running children (child_jobs.py); the job
  continues as new only at a coordinator phase's start, when no child runs.
"""

from __future__ import annotations

from typing import Any

from switchback.workflows.breakers import cost_of
from switchback.workflows.contract import StrategicTodos, layout
from switchback.workflows.prompts import render
from switchback.workflows.strategies.base import (
    ChildJob,
    ChildOutcome,
    Interrupt,
    NextStep,
    RunChildren,
    StrategyView,
)
from switchback.workflows.strategies.phase_alternation import PhaseAlternation
from switchback.workflows.strategies.phases import Phase


class Nested(PhaseAlternation):
    name = "nested"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.children: list[ChildOutcome] = []  # the last delegation's (running: "running")

    def snapshot(self) -> dict[str, Any]:
        return {**super().snapshot(), "children": [c.model_dump() for c in self.children]}

    async def resume(self, snapshot: dict[str, Any]) -> NextStep:
        self.children = [ChildOutcome.model_validate(c) for c in snapshot.get("children", [])]
        return await super().resume(snapshot)

    def view(self) -> StrategyView:
        v = super().view()
        if v.phase is not None and v.phase.kind == "tactical":
            v.phase.kind = "delegate"
        n = self.cfg.config.nested
        v.detail = {"inner_strategy": n.inner_strategy, "max_concurrent": n.max_concurrent,
                    "children": [c.model_dump(include={"key", "job_id", "folder", "status",
                                                       "summary", "error"})
                                 for c in self.children]}
        return v

    # -- the coordinator phases ------------------------------------------------------

    def _predefined(self) -> StrategicTodos:
        return self.cfg.nested_todos or self.cfg.strategic_todos

    def _strategic_prompt(self) -> str:
        return "nested"

    def _system_prompt(self, phase: Phase, memory: str, prompt: str = "") -> str:
        n = self.cfg.config.nested
        prompt = render(self.cfg.prompts["nested"], {
            "inner_strategy": n.inner_strategy, "max_concurrent": str(n.max_concurrent),
            "children": self._children_text()})
        return super()._system_prompt(phase, memory, prompt)

    def _children_text(self) -> str:
        if not self.children:
            return "(none yet)"
        return "\n".join(f"- {c.job_id} ({c.folder}/): {c.status}. "
                         f"{(c.summary or c.error or '')[:600]}" for c in self.children)

    # -- delegation --------------------------------------------------------------------

    async def _enter(self, phase: Phase, count: bool = True) -> NextStep:
        if phase.kind != "tactical":
            return await super()._enter(phase, count)
        self.phase = phase
        self.totals.phases += count
        chars = self.cfg.config.nested.instructions_chars
        objective = (await self.port.read_file(layout.INSTRUCTIONS, max(chars, 1)))[:chars]
        n = self.cfg.config.nested
        config = self._child_config(len(phase.todos))
        jobs = [ChildJob(key=f"p{phase.number}-t{t.id}", title=t.content[:200], config=config,
                         instructions=render(self.cfg.prompts["subjob"], {
                             "title": t.content.splitlines()[0][:120] if t.content else "Task",
                             "task": t.content, "objective": objective or "(not given)"}))
                for t in phase.todos]
        self.children = [ChildOutcome(key=j.key, job_id="", folder="", status="running")
                         for j in jobs]
        outcomes = self.children = await self.port.run_children(
            RunChildren(jobs, n.max_concurrent))
        for todo, o in zip(phase.todos, outcomes, strict=True):
            todo.status = "completed" if o.status == "completed" else "cancelled"
            todo.notes = f"[{o.status}] {o.summary or o.error or ''}"[:2000]
            self.todos_completed += o.status == "completed"
            self.add_usage(o.tokens_in, o.tokens_out)
            self.totals.steps += o.steps
            self.totals.tool_calls += o.tool_calls
        phase.tool_calls = sum(o.tool_calls for o in outcomes)
        await self._archive(phase, "completed", "")
        return await self._next_phase(self._strategic_phase(phase.number + 1, "transition"))

    async def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> NextStep:
        """Only a cancel reaches a delegation (each child records its own end)."""
        if self._ph().kind == "tactical":
            self.children = [c.model_copy(update={"status": "cancelled"})
                             if c.status == "running" else c for c in self.children]
        return await super().interrupt(what, reason, status)

    def _archive_extra(self, ph: Phase) -> dict[str, Any]:
        if ph.kind != "tactical":
            return {}
        return {"children": [c.model_dump() for c in self.children]}

    def _child_config(self, count: int) -> dict[str, Any]:
        """The job's config as it named it, with the children's strategy, the parent's
        workspace, none of its deliverables and a share of what is left of the budget."""
        c = self.cfg.config
        source = self.cfg.source if self.cfg.source is not None else self.cfg.name
        budget: dict[str, Any] = {}
        used = self.totals.tokens_in + self.totals.tokens_out
        if c.budget.max_tokens:
            budget["max_tokens"] = max(1, (c.budget.max_tokens - used) // count)
        if c.budget.max_cost_usd:
            spent = cost_of(c.llm, self.totals.tokens_in, self.totals.tokens_out)
            budget["max_cost_usd"] = max(1e-6, (c.budget.max_cost_usd - spent) / count)
        # a child does its todo and ends: it never waits for follow-up instructions
        once = {"follow_up": {"wait_seconds": 0}} if c.follow_up.wait_seconds else {}
        return merge(dict(source) if isinstance(source, dict)
                     else {"extends": source}, {
            "strategy": c.nested.inner_strategy, "nested": {"within_parent": True},
            "deliverables": [],  # the parent's are the parent's to deliver
            **({"budget": budget} if budget else {}), **once})


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on `base`, mapping by mapping (as configs merge)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out
