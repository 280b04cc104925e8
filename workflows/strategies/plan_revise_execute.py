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
  nudges is done with that answer. A done naming files not in the workspace is refused; with
  the small profile a failure that only repeats that refusal, in a step whose work ran, is
  the step done without them (`_failed_or_echo`).
- Every stage's prompt holds the task (instructions.md): a job without read_file planned,
  judged and ran steps of a task it never saw (BFCL). A planner or evaluator that answers
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
import re
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from workflows import task_files
from workflows.contract import ModelReply, ResolvedConfig, ToolCallInfo, ToolOutcome, layout
from workflows.contract.config import PlanReviseExecuteSettings
from workflows.prompts import render
from workflows.strategies import plan_records as pr
from workflows.strategies.base import (
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
    plan_calls,
    react_prompt,
)
from workflows.strategies.plan_records import PlanStep, Round
from workflows.strategies.ritual import small_profile

Kind = Literal["plan", "evaluate", "step", "wrap_up"]
Variant = Literal["work", "revision", "replan", "rewind", "wrap_up", "follow_up"]
READ_ONLY = ("read_file", "list_files", "search_files")
OWN_TOOLS = frozenset({"submit_plan", "submit_evaluation", "step_result", "job_complete"})
FINISH = {"plan": "call submit_plan", "evaluate": "call submit_evaluation",
          "step": "call step_result when the step's result exists",
          "wrap_up": "call job_complete with an honest summary of what is done and what is not"}
STUCK = {"plan": "Submit the plan with submit_plan.",
         "evaluate": "Submit your evaluation with submit_evaluation.",
         "step": "Try another way. If the step is done, call step_result(status=\"done\", "
                 "...); if it cannot be done as planned, call step_result(status=\"failed\", "
                 "summary=why).",
         "wrap_up": "Call job_complete with what is done and what is not."}
# a planner that answers without its tool after the nudges: the job goes on without it
# (`_without_planner`), where it failed
PLANNING_GOES_ON = "planning-goes-on"
# a plan needed after a failed step or a rewind whose planner answers without its tool: the
# rest of the task runs as one step (`_without_planner`), where the job failed
REPLANNING_GOES_ON = "replanning-goes-on"
SET_ASIDE = ("replan", "rewind")  # the plan stages that revise a plan set aside
# a done step_result naming files that are not in the workspace is refused (_files_not_there)
STEP_FILES = "step-files-there"
# the small profile: a failed step_result whose summary repeats the step-files refusal, in a
# step whose work ran, is the step done without those files (`_failed_or_echo`)
REFUSAL_ECHO = "refusal-echo"
# what the refusal tells the model to do; an echo of it is told by its first clause
FILES_ADVICE = ("`files` names only the workspace files this step wrote, none when it wrote "
                "none: call step_result again.")
REFUSAL_PARTS = re.compile(r"error( \[step_incomplete\])?:|step_result refused \(\d+ of \d+\):")
ECHO_OWN_WORDS = 6  # an echo's words of its own, before or after the refusal's, at most
PROMPT = {"plan": "plan", "evaluate": "evaluate", "step": "step"}  # wrap_up: react_prompt
TITLES = {"work": "Plan", "revision": "Revise the plan", "replan": "Revise the rest of the plan",
          "rewind": "Rewind: reconsider the plan",
          "follow_up": "Plan the follow-up instruction"}


class Stage(BaseModel):
    """One conversation: a plan, an evaluation, a step or the wrap-up."""

    number: int
    kind: Kind
    variant: Variant = "work"
    title: str
    round: int = 0  # plan and evaluate: the plan's round
    step: int = 0  # step: its id
    issue: str = ""  # what started it (a failed step, a rewind, the budget)
    loaded: list[str] = []  # deferred tools tool_search loaded
    steps: int = 0
    nudges: int = 0
    refusals: int = 0  # step: step_result calls refused for files not in the workspace
    worked: list[str] = []  # step, small profile: the tools its work called (_work_done)
    last_work: str = ""  # step, small profile: what the last of them returned (capped)
    tokens_in: int = 0
    tokens_out: int = 0


class Snapshot(BaseModel):
    stage: Stage
    totals: Totals
    history: list[PhaseRecord]
    plan: list[PlanStep]
    rounds: list[Round]
    replans: int
    progress: int
    note: str
    final_status: Literal["completed", "budget_exhausted"]


class PlanReviseExecute(Strategy):
    name = "plan_revise_execute"

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        super().__init__(config, port)
        self.stage: Stage | None = None
        self.history: list[PhaseRecord] = []
        self.plan: list[PlanStep] = []  # the running plan (empty while planning)
        self.rounds: list[Round] = []  # every submitted plan
        self.replans = 0
        self.progress = 0  # plans, evaluations and steps done: what the breakers watch
        self.note = ""  # how the running plan was chosen
        # decided in a batch of tool calls, carried out after it
        self.pending: Callable[[], Awaitable[NextStep]] | None = None
        self.completion: dict[str, Any] | None = None
        self.final_status: Literal["completed", "budget_exhausted"] = "completed"
        self.recorded = 0  # the last stage number in `history`
        self._system = ""
        self._ran: list[str] = []  # the current batch's calls, in the order they run

    @property
    def settings(self) -> PlanReviseExecuteSettings:
        return self.cfg.config.plan_revise_execute

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
            calls = plan_calls(reply.tool_calls, self.tools(), self.cfg, st.kind,
                               self.port.patched)
            self._ran = [p.call.name for p in calls]
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
        if pending is not None and self.port.patched(PLANNING_GOES_ON):
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
                    self.cfg.config.completion.max_refusals and self.port.patched(STEP_FILES):
                refused = await self._files_not_there(files)
                if refused is not None:
                    return refused
            self.pending = partial(self._step_finished, status, summary, files)
            if status == "failed" and self._echoes_refusal(summary):
                self.pending = partial(self._failed_or_echo, summary, files)
            return ToolOutcome(ok=True, summary="Step result recorded." + (
                " The rest of the plan is revised now." if status == "failed" else ""))
        self.completion = dict(args)  # job_complete (wrap-up)
        return ToolOutcome(ok=True, summary="Job completion recorded.")

    async def _files_not_there(self, files: list[str]) -> ToolOutcome | None:
        """A done step_result naming files that are not in the workspace (or not written by
        this job), refused while refusals are left (completion.max_refusals per step): the
        job's end holds the steps' files to being there, and under BFCL a step named
        `workspace`, a name `ls` returned, and the job ended `stuck` on it with the turn's
        calls made. None: every file is there."""
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
        return ToolOutcome(ok=False, code="step_incomplete", summary=(
            f"Error [step_incomplete]: step_result refused ({st.refusals} of {limit}): not in "
            f"the workspace: {', '.join(missing[:20])}. {FILES_ADVICE}"))

    def _echoes_refusal(self, summary: str) -> bool:
        """The small profile: does a failed step_result's summary only repeat the
        step-files refusal (`_files_not_there`, `repeats_files_refusal`)?"""
        return small_profile(self.cfg) and repeats_files_refusal(summary) and \
            self.port.patched(REFUSAL_ECHO)

    async def _failed_or_echo(self, summary: str, files: list[str]) -> NextStep:
        """A failure that only repeats the refusal of files not in the workspace: a step
        whose work ran (`Stage.worked`) is done without those files, as the refusal asked
        ("none when it wrote none"); one that did no work failed as it said. The job's end
        still holds every deliverable to being there."""
        worked = self._st().worked
        if not worked:
            return await self._step_finished("failed", summary, files)
        return await self._step_finished("done", (
            f"Done by the step's calls of {', '.join(worked[:20])}; the last returned: "
            f"{self._st().last_work} (Its step_result said failed only by repeating the "
            "refusal of files not in the workspace: taken as done without them.)"), [])

    def _work_done(self, outcomes: list[ToolOutcome]) -> list[tuple[str, ToolOutcome]]:
        """The batch's calls that did work: a tool of the task (`tools.domain`, `deferred`)
        that ran, or a call that changed a file of the work (not memory: as
        `completion.record_outcome` counts work)."""
        task = self.cfg.config.tools.of_the_task()
        return [(name, o) for name, o in zip(self._ran, outcomes, strict=False)
                if o.ok and name not in OWN_TOOLS and (
                    name in task or any(map(task_files.work_file, o.changed)))]

    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep:
        st = self._st()
        self.totals.tool_calls += len(outcomes)
        for o in outcomes:
            st.loaded += [t for t in o.tools_added if t not in st.loaded]
        if st.kind == "step" and small_profile(self.cfg) and (work := self._work_done(outcomes)):
            st.worked = list(dict.fromkeys(st.worked + [name for name, _ in work]))
            st.last_work = " ".join(work[-1][1].summary.split())[:300]
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

    # -- planning ----------------------------------------------------------------------

    def _submit_plan(self, args: dict[str, Any]) -> ToolOutcome:
        s, executing = self.settings, bool(self.plan)
        taken = {p.id for p in self.plan if p.status in ("done", "failed")}
        steps, why = pr.parse_plan(args, taken, s.min_steps, s.max_steps)
        if why:
            return ToolOutcome(ok=False, code="plan_rejected", summary=(
                f"Plan rejected: {why}. Fix it and call submit_plan again."))
        r = Round(round=len(self.rounds) + 1, steps=steps,
                  kind="replan" if executing else "revision" if self.rounds else "plan",
                  rationale=str(args.get("rationale") or ""))
        self.rounds.append(r)
        self.progress += 1
        self.pending = partial(self._replanned if executing else self._to_evaluation, r)
        return ToolOutcome(ok=True, summary=f"Plan recorded ({len(steps)} steps). " + (
            "Its next step starts now." if executing else "An evaluator scores it now."))

    def _without_planner(self, st: Stage) -> Callable[[], Awaitable[NextStep]] | None:
        """A plan or evaluate stage whose model answered without its tool after the nudges:
        how the job goes on without it (None: it fails, as a stage that makes no call does).
        An evaluation: the plan runs unscored. A revision: the best-scored plan runs (as after
        `max_rounds`). No plan yet, or none for a follow-up instruction: the task, or the
        instruction, runs as one step. A revision of the rest after a failed step or a
        rewind: the rest of the task runs as one step (patch `replanning-goes-on`; bounded
        by `max_replans`, the repetition breaker's third trip, `limits.max_phases`). Under BFCL
        the 1.5B model answered a revision with text four times in five of ten cases, and
        the job failed with a plan in hand; a breaker's rewind failed the job the same way."""
        tool = "submit_evaluation" if st.kind == "evaluate" else "submit_plan"
        why = f"the model answered {st.nudges} times without calling {tool}"
        if st.kind == "evaluate":
            return partial(self._unscored, self._round(st.round), why)
        if st.variant == "revision" and any(r.score is not None for r in self.rounds):
            return partial(self._best_runs, why)
        if (not self.plan and not self.rounds or st.variant == "follow_up"
                or st.variant in SET_ASIDE and self.port.patched(REPLANNING_GOES_ON)):
            return partial(self._one_step, why)
        return None

    async def _unscored(self, r: Round, why: str) -> NextStep:
        verdict = f"not scored ({why}): the plan runs as it is"
        await self.port.write_text(layout.evaluation_path(r.round),
                                   pr.evaluation_record(r, self.settings.threshold, verdict))
        return await self._run_plan(r, verdict)

    def _best(self) -> Round:
        """The best-scored plan submitted before execution (the latest of equals)."""
        return max(reversed([x for x in self.rounds if x.kind != "replan"
                             and x.score is not None]), key=_score)

    async def _best_runs(self, why: str) -> NextStep:
        best = self._best()
        return await self._run_plan(best, f"no revision came ({why}): the best plan, round "
                                          f"{best.round} ({_score(best):.2f}), runs")

    async def _one_step(self, why: str) -> NextStep:
        """The task, the follow-up instruction, or what is left of the task after a failed
        step or a rewind, as a plan of one step after the done ones."""
        st = self._st()
        title, detail = "The task", "Do the whole task below as one step."
        if st.variant == "follow_up":
            title, detail = ("The follow-up instruction", "Do what the latest follow-up "
                             "instruction (at the end of the task below) asks.")
        elif st.variant in SET_ASIDE:
            if self.plan:
                title, detail = "The rest of the task", (
                    "Do what is left of the task below as one step: the steps done so far "
                    "and their results are in the plan above.")
            detail += (" The plan was set aside because: "
                       f"{' '.join(st.issue.split())[:300] or '(no reason given)'}")
        step = PlanStep(id=max((p.id for p in self.plan), default=0) + 1, title=title,
                        detail=detail)
        r = Round(round=len(self.rounds) + 1, steps=[step], kind="replan" if self.plan
                  else "plan", rationale=f"No plan came ({why}): the workflow's plan of one "
                  "step")
        self.rounds.append(r)
        self.progress += 1
        if self.plan:  # (it writes the round's record)
            return await self._replanned(r, f"The plan of round {r.round}: {r.rationale}.")
        await self.port.write_text(layout.plan_path(r.round), pr.round_record(
            r, st.issue if st.variant in SET_ASIDE else ""))
        return await self._run_plan(r, r.rationale)

    async def _run_plan(self, chosen: Round, verdict: str) -> NextStep:
        """`chosen` becomes the running plan, its first step starts."""
        self.plan = [p.model_copy() for p in chosen.steps]
        self.note = f"The plan of round {chosen.round}: {verdict}."
        await self._write_current()
        return await self._next_step()

    async def _to_evaluation(self, r: Round) -> NextStep:
        await self.port.write_text(layout.plan_path(r.round), pr.round_record(r, self._st().issue))
        return await self._next(Stage(number=self._st().number + 1, kind="evaluate",
                                      round=r.round, title=f"Evaluate the plan (round {r.round})"))

    async def _evaluated(self, r: Round) -> NextStep:
        s = self.settings
        assert r.score is not None
        planned = [x for x in self.rounds if x.kind != "replan"]
        chosen: Round | None = r
        if r.score >= s.threshold:
            verdict = "accepted, the plan runs"
        elif len(planned) < s.max_rounds:
            verdict, chosen = "below the threshold, the plan is revised", None
        else:
            chosen = self._best()
            verdict = (f"below the threshold after {len(planned)} rounds (max_rounds): the "
                       f"best plan, round {chosen.round} ({chosen.score:.2f}), runs")
        await self.port.write_text(layout.evaluation_path(r.round),
                                   pr.evaluation_record(r, s.threshold, verdict))
        if chosen is None:
            return await self._next(self._plan_stage("revision"))
        return await self._run_plan(chosen, verdict)

    async def _replanned(self, r: Round, note: str = "") -> NextStep:
        for p in self.plan:
            if p.status == "pending":
                p.status = "dropped"
        self.plan += [p.model_copy() for p in r.steps]
        self.note = note or f"Revised in round {r.round}: {self._st().issue[:300]}"
        await self.port.write_text(layout.plan_path(r.round), pr.round_record(r, self._st().issue))
        await self._write_current()
        return await self._next_step()

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

    def _plan_stage(self, variant: Variant, issue: str = "") -> Stage:
        number = self.stage.number + 1 if self.stage else 1
        return Stage(number=number, kind="plan", variant=variant, title=TITLES[variant],
                     round=len(self.rounds) + 1, issue=issue)

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

    async def _write_current(self) -> None:
        await self.port.write_text(layout.CURRENT_PLAN,
                                   pr.current_record(self.plan, self.rounds, self.note))

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

    def _st(self) -> Stage:
        assert self.stage is not None, "strategy used before begin()"
        return self.stage

    def _step(self, step_id: int) -> PlanStep:
        return next(p for p in self.plan if p.id == step_id)

    def _round(self, number: int) -> Round:
        return next(r for r in self.rounds if r.round == number)


def _score(plan: Round) -> float:
    """A scored plan's score (the best one runs)."""
    return plan.score or 0.0


def repeats_files_refusal(summary: str) -> bool:
    """Does a step's failure only repeat the refusal of its files (`_files_not_there`), at
    most `ECHO_OWN_WORDS` words of its own before or after it, rather than say why the step
    failed? Under BFCL the 1.5B model, refused for naming `workspace` (a name `ls` returned),
    failed the step with the refusal's own text as its summary, and three revisions planned
    and failed the same step so until the job's time ran out (bfcl-fix-8-pre, base_1)."""
    said, advice = _plain(summary), _plain(FILES_ADVICE)
    first = advice.split(",")[0]  # "files names only the workspace files this step wrote"
    at = said.find(first)
    if at < 0:
        return False
    lead = REFUSAL_PARTS.sub(" ", said[:at].split("not in the workspace:")[0])
    own_after = [w for w in said[at + len(first):].split() if w not in advice.split()]
    return len(lead.split()) <= ECHO_OWN_WORDS and len(own_after) <= ECHO_OWN_WORDS


def _plain(text: str) -> str:
    return " ".join(text.replace("`", "").split()).lower()
