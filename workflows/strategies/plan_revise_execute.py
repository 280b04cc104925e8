"""plan_revise_execute: plan, evaluate, revise below the threshold, then execute step by step.

    plan (round 1) -> evaluate -> [score < threshold, rounds left: revise -> evaluate] ...
      -> step 1 -> step 2 -> ... -> the job completes with the steps' results
    a step fails (step_result "failed", a rewind): the rest of the plan is revised -> ...

- Every stage is a fresh conversation (a new conversation key): memory is the workspace.
- Plan: the workspace tools and `submit_plan(steps, rationale)`; a plan is checked (ids,
  `after` naming earlier steps, `plan_revise_execute.min_steps`-`max_steps`), a bad one
  is refused with a reason the model reads.
- Evaluate: a fresh evaluator with read-only tools calls `submit_evaluation(score,
  reasons)`. At or above `threshold` the plan runs; below, it is revised with the reasons,
  for at most `max_rounds` plans; then the best-scored one runs.
- Step: the plan, the step, its predecessors' results (`after`, capped at `result_chars`),
  the workspace and domain tools and `step_result(status, summary, files)`. "done" runs the
  next step; "failed" revises the rest of the plan (done steps stay) - at most
  `max_replans` times, then the job ends `stuck`. A step answered without tools after the
  nudges is done with that answer. A done naming files not in the workspace is refused
  (`step_incomplete`, at most completion.max_refusals times a step).
- Every stage's prompt holds the task (instructions.md): a job without read_file cannot
  plan, judge or run steps of a task it never saw. A planner or evaluator that answers
  without its tool after the nudges does not end the job: the plan runs unscored, the best
  plan runs, or the task (after a failed step or a rewind: what is left of it) runs as one
  step (`_without_planner`).
- Records a person reads: archive/plan_r<k>.md, archive/evaluation_r<k>.md,
  archive/steps/step_<id>.md and archive/plan.md (the plan as it stands, with results).
- Interrupts: a rewind (signal, breaker) fails the current step with the issue and revises
  the rest (while planning: revises the plan); a wrap-up (budget) is a last conversation
  that records the state and calls job_complete; finish and cancel end the job.
"""

from __future__ import annotations

import fnmatch
from functools import partial
from typing import Any, Literal

from switchback.workflows import guards
from switchback.workflows.contract import (
    ModelReply,
    ResolvedConfig,
    ToolCallInfo,
    ToolOutcome,
    layout,
)
from switchback.workflows.prompts import render
from switchback.workflows.strategies import plan_records as pr
from switchback.workflows.strategies.base import (
    CallModel,
    ExecuteTools,
    Interrupt,
    NextStep,
    PhaseInfo,
    PhaseRecord,
    Port,
    ReportError,
    StrategyView,
    follow_up_issue,
    job_result,
    react_prompt,
)
from switchback.workflows.strategies.plan_records import PlanStep
from switchback.workflows.strategies.plan_stages import (
    FILES_ADVICE,
    FINISH,
    OWN_TOOLS,
    PROMPT,
    READ_ONLY,
    STUCK,
    Planner,
    Snapshot,
    Stage,
)


class PlanReviseExecute(Planner):
    name = "plan_revise_execute"

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        super().__init__(config, port)
        self.history: list[PhaseRecord] = []
        self.completion: dict[str, Any] | None = None
        self.final_status: Literal["completed", "budget_exhausted"] = "completed"
        self.recorded = 0  # the last stage number in `history`
        self._system = ""

    # -- Strategy --------------------------------------------------------------------

    async def begin(self) -> NextStep:
        return await self._enter(self._plan_stage("work"))

    def snapshot(self) -> dict[str, Any]:
        return Snapshot(stage=self._st(), totals=self.totals, history=self.history,
                        plan=self.plan, rounds=self.rounds, replans=self.replans,
                        progress=self.progress, note=self.note,
                        final_status=self.final_status).model_dump(mode="json")

    async def resume(self, snapshot: dict[str, Any]) -> NextStep:
        snap = Snapshot.model_validate(snapshot)
        self.totals, self.history, self.plan, self.rounds = (snap.totals, snap.history,
                                                             snap.plan, snap.rounds)
        self.replans, self.progress, self.note = snap.replans, snap.progress, snap.note
        self.final_status, self.recorded = snap.final_status, snap.stage.number - 1
        return await self._enter(snap.stage, count=False)

    def view(self) -> StrategyView:
        st = self.stage
        info = None if st is None else PhaseInfo(
            number=st.number, kind=st.kind, variant=st.variant, title=st.title, steps=st.steps,
            tokens_in=st.tokens_in, tokens_out=st.tokens_out, todos=pr.todos(self.plan))
        s = self.settings
        detail = {"threshold": s.threshold, "max_rounds": s.max_rounds, "replans": self.replans,
                  "note": self.note, "current_step": st.step if st and st.kind == "step" else None,
                  **pr.plan_detail(self.plan, self.rounds)}
        return StrategyView(strategy=self.name, phase=info, totals=self.totals,
                            history=self.history, progress=self.progress, detail=detail,
                            stuck_hint=STUCK.get(st.kind if st else "", ""))

    async def after_model(self, reply: ModelReply) -> NextStep:
        st = self._st()
        st.steps += 1
        self.totals.steps += 1
        self.add_usage(reply.usage.prompt_tokens, reply.usage.completion_tokens)
        if reply.tool_calls:
            st.nudges = 0
            calls = guards.screen(reply.tool_calls, self.tools(), st.kind, self.cfg)
            return ExecuteTools(calls)
        st.nudges += 1
        limit = self.cfg.config.limits.max_nudges
        if st.nudges <= limit:
            return self._call([render(self.cfg.prompts["task_nudge"], {
                "finish": FINISH[st.kind]})])
        answer = reply.content or "(no summary)"
        if st.kind == "step":  # the answer is the step's result
            return await self._step_finished("done", answer, [])
        if st.kind == "wrap_up":
            self.completion = {"summary": answer}
            return await self._complete()
        pending = self._without_planner(st)  # (the job goes on without the planner)
        if pending is not None:
            return await pending()
        return ReportError(f"the model answered {st.nudges} times in a row without calling a "
                           f"tool in stage {st.number} ({st.title}; limits.max_nudges={limit})",
                           code="no_tool_call")

    def owns_tool(self, name: str) -> bool:
        return name in OWN_TOOLS

    def batch_closed(self) -> bool:
        return self.pending is not None or self.completion is not None

    async def own_tool(self, call: ToolCallInfo) -> ToolOutcome:
        args = call.args or {}
        if call.name == "submit_plan":
            return self._submit_plan(args)
        if call.name == "submit_evaluation":
            r = self._round(self._st().round)
            r.score, r.reasons = float(args.get("score") or 0), str(args.get("reasons") or "")
            self.progress += 1
            self.pending = partial(self._evaluated, r)
            return ToolOutcome(ok=True, summary="Evaluation recorded.")
        if call.name == "step_result":
            status = "failed" if args.get("status") == "failed" else "done"
            summary, files = str(args.get("summary") or ""), [str(f) for f in
                                                               args.get("files") or []]
            if status == "done" and files and self._st().refusals < \
                    self.cfg.config.completion.max_refusals:
                refused = await self._files_not_there(files)
                if refused is not None:
                    return refused
            self.pending = partial(self._step_finished, status, summary, files)
            return ToolOutcome(ok=True, summary="Step result recorded." + (
                " The rest of the plan is revised now." if status == "failed" else ""))
        self.completion = dict(args)  # job_complete (wrap-up)
        return ToolOutcome(ok=True, summary="Job completion recorded.")

    async def _files_not_there(self, files: list[str]) -> ToolOutcome | None:
        """A done step_result naming files that are not in the workspace (or not written by
        this job), refused while refusals are left (completion.max_refusals per step): the
        job's end holds the steps' files to being there, so a step that names a file it did
        not write is told so while it can still mend it. None: every file is there."""
        paths = [f.strip().removeprefix("./") for f in files[:layout.MAX_DELIVERABLES]]
        bad = [f for f in paths if layout.deliverable_problem(f)]
        good = [f for f in paths if f not in bad]
        found = await self.port.deliverables(good, content=False) if good else None
        there = found.delivered if found else []
        missing = bad + [f for f in good if not any(fnmatch.fnmatchcase(d, f) for d in there)]
        if not missing:
            return None
        st, limit = self._st(), self.cfg.config.completion.max_refusals
        st.refusals += 1
        return guards.refusal("step_incomplete", (
            f"step_result refused ({st.refusals} of {limit}): not in the workspace: "
            f"{', '.join(missing[:20])}. {FILES_ADVICE}"))

    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep:
        st = self._st()
        self.totals.tool_calls += len(outcomes)
        for o in outcomes:
            st.loaded += [t for t in o.tools_added if t not in st.loaded]
        if self.completion is not None:
            return await self._complete()
        pending, self.pending = self.pending, None
        return await pending() if pending is not None else self._call([])

    async def follow_up(self, instruction: str, turn: int) -> NextStep:
        """The next turn: a plan stage for the instruction, with the finished plan and its
        results in its prompt (its done steps stay done)."""
        self.completion, self.pending, self.final_status = None, None, "completed"
        return await self._next(self._plan_stage("follow_up", follow_up_issue(instruction,
                                                                              turn)))

    async def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> NextStep:
        st = self._st()
        self.pending = None
        if what == "rewind":
            self._leave("rewound")
            if st.kind == "step":
                p = self._step(st.step)
                p.status, p.result = "failed", f"rewound: {reason}"
                await self._write_step(p)
            return await self._next(self._plan_stage("rewind", reason))
        if what == "wrap_up":
            self.final_status = "budget_exhausted"
            self._leave("interrupted")
            return await self._next(Stage(number=st.number + 1, kind="wrap_up", variant="wrap_up",
                                    title="Wrap-up: record the state of the work", issue=reason))
        status = "cancelled" if what == "cancel" else status
        self._leave(status)
        for p in self.plan:
            if p.status == "pending":
                p.status = "cancelled"
        if self.plan:
            await self._write_current()
        return await self._complete(status, reason)

    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        st = self._st()
        st.tokens_in += tokens_in
        st.tokens_out += tokens_out
        self.totals.tokens_in += tokens_in
        self.totals.tokens_out += tokens_out

    # -- executing ---------------------------------------------------------------------

    async def _next_step(self) -> NextStep:
        nxt = next((p for p in self.plan if p.status == "pending"), None)
        if nxt is None:
            return await self._plan_done()
        return await self._next(Stage(number=self._st().number + 1, kind="step", step=nxt.id,
                                title=f"Step {nxt.id}: {nxt.title}"[:200]))

    async def _step_finished(self, status: str, summary: str, files: list[str]) -> NextStep:
        st, s = self._st(), self.settings
        p = self._step(st.step)
        p.status, p.result, p.files = ("done" if status == "done" else "failed"), summary, files
        if p.status == "done":
            self.progress += 1
            await self._write_step(p)
            return await self._next_step()
        if self.replans >= s.max_replans:
            self._leave("failed")
            await self._write_step(p)
            return await self._complete("stuck", (
                f"step {p.id} failed and the plan was already revised {self.replans} times "
                f"(plan_revise_execute.max_replans): {summary}"))
        self.replans += 1
        await self._write_step(p)
        return await self._next(self._plan_stage("replan", f"Step {p.id} ({p.title}) failed: "
                                                 f"{summary}"), "failed")

    async def _plan_done(self) -> NextStep:
        done = [p for p in self.plan if p.status == "done"]
        files = list(dict.fromkeys(f for p in done for f in p.files))
        self.completion = {"summary": done[-1].result if done else "the plan had no steps",
                           "deliverables": files, "notes": self.note}
        return await self._complete()

    # -- stages ------------------------------------------------------------------------

    async def _next(self, stage: Stage, status: str = "completed") -> NextStep:
        self._leave(status)
        limit = self.cfg.config.limits.max_phases
        if stage.number > limit:
            return ReportError(f"the job reached limits.max_phases={limit} stages",
                               code="phase_limit")
        return await self._enter(stage)

    async def _enter(self, stage: Stage, count: bool = True) -> NextStep:
        self.stage = stage
        self.totals.phases += count
        memory = await self.port.read_memory()
        st, s, prompts = self._st(), self.settings, self.cfg.prompts
        values = {"tools": ", ".join(self.tools()), "workspace_md": memory,
                  "threshold": f"{s.threshold:.2f}", "issue": st.issue or "(none)"}
        if st.kind == "plan":
            values |= {"work_tools": ", ".join(self._work_tools()), "min_steps": str(s.min_steps),
                       "max_steps": str(s.max_steps),
                       "revision": pr.revision_text(self.plan, self.rounds, s.threshold, st.issue)}
        elif st.kind == "evaluate":
            values |= {"round": str(st.round), "plan": pr.plan_text(self._round(st.round).steps)}
        elif st.kind == "step":
            p = self._step(st.step)
            values |= {"plan": pr.plan_text(self.plan, results=True), "step_title":
                       f"{p.id}. {p.title}", "step_detail": p.detail or p.title,
                       "predecessors": pr.predecessors_text(self.plan, p, s.result_chars)}
        self._system = render(react_prompt(self.cfg) if st.kind == "wrap_up"
                              else prompts[PROMPT[st.kind]], values)
        issue_note = f"\n\nThis stage was started because of an issue:\n\n> {st.issue}\n" if (
            st.issue and st.kind != "plan") else ""
        return self._call([render(prompts["stage_kickoff"], {
            "title": st.title, "issue_note": issue_note, "finish": FINISH[st.kind]})])

    def _call(self, user_messages: list[str]) -> CallModel:
        st = self._st()
        return CallModel(conversation=f"pre_{st.number:04d}", system_prompt=self._system,
                         todo_block="", tools=self.tools(), user_messages=user_messages,
                         label=f"{st.kind} {st.number} step {st.steps + 1}")

    def tools(self) -> list[str]:
        st, t = self._st(), self.cfg.config.tools
        if st.kind == "plan":
            names = t.workspace + ["submit_plan"]
        elif st.kind == "evaluate":
            names = [n for n in t.workspace if n in READ_ONLY] + ["submit_evaluation"]
        elif st.kind == "step":
            names = self._work_tools() + st.loaded + ["step_result"]
        else:
            names = t.workspace + ["job_complete"]
        return list(dict.fromkeys(names))

    def _work_tools(self) -> list[str]:
        t = self.cfg.config.tools
        return list(dict.fromkeys(t.workspace + (["tool_search"] if t.deferred else [])
                                  + [n for n in t.domain if n not in t.deferred]))

    # -- records -----------------------------------------------------------------------

    async def _write_step(self, p: PlanStep) -> None:
        """archive/steps/step_<id>.md, then archive/plan.md as it stands."""
        await self.port.write_text(layout.step_path(p.id), pr.step_record(p))
        await self._write_current()

    def _leave(self, status: str) -> None:
        """Record the current stage in `history` (once)."""
        st = self._st()
        if self.recorded >= st.number:
            return
        self.recorded = st.number
        self.history = (self.history + [PhaseRecord(
            number=st.number, kind=st.kind, variant=st.variant, status=status, steps=st.steps,
            todos_completed=int(st.kind == "step" and self._step(st.step).status == "done"),
            tokens_in=st.tokens_in, tokens_out=st.tokens_out)])[-20:]

    async def _complete(self, status: str | None = None, reason: str = "") -> NextStep:
        self._leave(status or "completed")
        return await self.complete(job_result(status or self.final_status,
                                              self.completion or {}, reason, self.totals))

    def _step(self, step_id: int) -> PlanStep:
        return next(p for p in self.plan if p.id == step_id)
