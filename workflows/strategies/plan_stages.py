"""plan_revise_execute's plan stages (workflows/strategies/plan_revise_execute.py runs the
steps): the stages and what a continued run carries, and `Planner`, which takes a plan,
has it evaluated and revised, and chooses the plan that runs - also when the planner or
the evaluator answers without its tool (`_without_planner`: a job with a plan in hand, or a
task that can run as one step, does not fail because a revision never came)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from switchback.workflows import guards
from switchback.workflows.contract import ResolvedConfig, ToolOutcome, layout
from switchback.workflows.contract.config import PlanReviseExecuteSettings
from switchback.workflows.strategies import plan_records as pr
from switchback.workflows.strategies.base import NextStep, PhaseRecord, Port, Strategy, Totals
from switchback.workflows.strategies.plan_records import PlanStep, Round

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
SET_ASIDE = ("replan", "rewind")  # the plan stages that revise a plan set aside
# what the step_incomplete refusal tells the model to do
FILES_ADVICE = ("`files` names only the workspace files this step wrote, none when it wrote "
                "none: call step_result again.")
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


class Planner(Strategy):
    """The plan state and the plan stages; the strategy runs the plan's steps."""

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        super().__init__(config, port)
        self.stage: Stage | None = None
        self.plan: list[PlanStep] = []  # the running plan (empty while planning)
        self.rounds: list[Round] = []  # every submitted plan
        self.replans = 0
        self.progress = 0  # plans, evaluations and steps done: what the breakers watch
        self.note = ""  # how the running plan was chosen
        # decided in a batch of tool calls, carried out after it
        self.pending: Callable[[], Awaitable[NextStep]] | None = None

    @property
    def settings(self) -> PlanReviseExecuteSettings:
        return self.cfg.config.plan_revise_execute

    @abstractmethod
    async def _next(self, stage: Stage, status: str = "completed") -> NextStep:
        """Leave the current stage with `status`, enter `stage`."""

    @abstractmethod
    async def _next_step(self) -> NextStep:
        """The running plan's next pending step, or the plan's end."""

    # -- planning ----------------------------------------------------------------------

    def _submit_plan(self, args: dict[str, Any]) -> ToolOutcome:
        s, executing = self.settings, bool(self.plan)
        taken = {p.id for p in self.plan if p.status in ("done", "failed")}
        steps, why = pr.parse_plan(args, taken, s.min_steps, s.max_steps)
        if why:
            return guards.refusal("plan_rejected", f"Plan rejected: {why}. Fix it and call "
                                  "submit_plan again.")
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
        rewind: the rest of the task runs as one step (bounded
        by `max_replans`, the repetition breaker's third trip, `limits.max_phases`). A job
        with a plan in hand does not fail because a revision of it never came."""
        tool = "submit_evaluation" if st.kind == "evaluate" else "submit_plan"
        why = f"the model answered {st.nudges} times without calling {tool}"
        if st.kind == "evaluate":
            return partial(self._unscored, self._round(st.round), why)
        if st.variant == "revision" and any(r.score is not None for r in self.rounds):
            return partial(self._best_runs, why)
        if (not self.plan and not self.rounds or st.variant == "follow_up"
                or st.variant in SET_ASIDE):
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

    def _plan_stage(self, variant: Variant, issue: str = "") -> Stage:
        number = self.stage.number + 1 if self.stage else 1
        return Stage(number=number, kind="plan", variant=variant, title=TITLES[variant],
                     round=len(self.rounds) + 1, issue=issue)

    async def _write_current(self) -> None:
        await self.port.write_text(layout.CURRENT_PLAN,
                                   pr.current_record(self.plan, self.rounds, self.note))

    def _st(self) -> Stage:
        assert self.stage is not None, "strategy used before begin()"
        return self.stage

    def _round(self, number: int) -> Round:
        return next(r for r in self.rounds if r.round == number)


def _score(plan: Round) -> float:
    """A scored plan's score (the best one runs)."""
    return plan.score or 0.0
