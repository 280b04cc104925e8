"""ReAct: one conversation with the config's tools, no todo ritual; the baseline.

    attempt 1: system prompt (react.md) + kickoff -> model <-> tools ... -> job_complete

- The model gets the workspace tools, the config's domain tools (deferred ones behind
  tool_search) and `job_complete`, which ends the job (`output/completion.json`).
- A turn without a tool call is nudged (prompts/task_nudge.md); after `limits.max_nudges`
  nudges the answer is taken as the job's summary and the job completes.
- A rewind (signal or breaker) starts a new attempt: a fresh conversation whose prompt
  carries the issue; the files of the earlier attempts stay. A wrap-up (budget) is a last
  attempt told to record the state and call job_complete.
- Progress, for the breakers, is the number of workspace writes that succeeded.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from switchback.workflows import guards
from switchback.workflows.completion import DeliverablesChecked
from switchback.workflows.contract import ModelReply, ResolvedConfig, ToolCallInfo, ToolOutcome
from switchback.workflows.prompts import render
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
    job_result,
    nudge_for,
    react_prompt,
)

Variant = Literal["work", "rewind", "wrap_up"]
FINISH = "call job_complete(summary, deliverables, confidence, notes) if the task is done"
QUIET_RETRIES = 2  # new attempts after the model stopped calling tools, at most


class Attempt(BaseModel):
    number: int
    variant: Variant = "work"
    issue: str = ""
    loaded: list[str] = []  # deferred tools tool_search loaded
    steps: int = 0
    nudges: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Snapshot(BaseModel):
    attempt: Attempt
    totals: Totals
    history: list[PhaseRecord]
    writes: int
    final_status: Literal["completed", "budget_exhausted"]


class React(Strategy):
    name = "react"

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        super().__init__(config, port)
        self.attempt = Attempt(number=1)
        self.totals = Totals()
        self.history: list[PhaseRecord] = []
        self.completion: dict[str, Any] | None = None
        self.final_status: Literal["completed", "budget_exhausted"] = "completed"
        self.writes = 0
        self._system = ""

    async def begin(self) -> NextStep:
        return await self._enter(Attempt(number=1))

    def snapshot(self) -> dict[str, Any]:
        return Snapshot(attempt=self.attempt, totals=self.totals, history=self.history,
                        writes=self.writes, final_status=self.final_status).model_dump(mode="json")

    async def resume(self, snapshot: dict[str, Any]) -> NextStep:
        snap = Snapshot.model_validate(snapshot)
        self.totals, self.history, self.writes = snap.totals, snap.history, snap.writes
        self.final_status = snap.final_status
        return await self._enter(snap.attempt, count=False)

    def view(self) -> StrategyView:
        a = self.attempt
        info = PhaseInfo(number=a.number, kind="react", variant=a.variant,
                         title=f"Attempt {a.number}" + (f" ({a.variant})" if a.issue else ""),
                         steps=a.steps, tokens_in=a.tokens_in, tokens_out=a.tokens_out)
        return StrategyView(strategy=self.name, phase=info, totals=self.totals,
                            history=self.history, progress=self.writes,
                            detail={"attempt": a.number, "writes": self.writes,
                                    "issue": a.issue, "loaded_tools": a.loaded},
                            stuck_hint="Try another way; if the task is done, call "
                            "job_complete, and if it cannot be done, call job_complete and "
                            "say why in its notes.")

    async def after_model(self, reply: ModelReply) -> NextStep:
        a = self.attempt
        a.steps += 1
        self.totals.steps += 1
        self.add_usage(reply.usage.prompt_tokens, reply.usage.completion_tokens)
        if reply.tool_calls:
            a.nudges = 0
            return ExecuteTools(guards.screen(reply.tool_calls, self.tools(), "react",
                                              self.cfg))
        a.nudges += 1
        if a.nudges > self.cfg.config.limits.max_nudges:  # the answer is the result
            return await self._quiet(reply, await self.port.deliverables())
        return self._call([nudge_for(self.cfg, reply, self._nudge())])

    async def _quiet(self, reply: ModelReply, found: DeliverablesChecked) -> NextStep:
        """The model stopped calling tools: its answer is the result, unless declared
        deliverables are missing; then a new attempt, a fresh conversation told what is
        missing, up to QUIET_RETRIES times (the orchestrator ends the job `stuck` after
        that): a model stuck in one conversation often does the work in a fresh one."""
        n = self.attempt.number
        if found.problems and n <= QUIET_RETRIES and n < self.cfg.config.limits.max_phases:
            return await self.interrupt("rewind", f"attempt {n} ended without the deliverables: "
                                  f"{'; '.join(found.problems[:20])}. Do the work that makes "
                                  "them so, then call job_complete.")
        self.completion = {"summary": reply.content or "the model stopped calling tools"}
        return await self._complete()

    def owns_tool(self, name: str) -> bool:
        return name == "job_complete"

    def batch_closed(self) -> bool:
        return self.completion is not None

    async def own_tool(self, call: ToolCallInfo) -> ToolOutcome:
        self.completion = dict(call.args or {})  # verified by the orchestrator
        return ToolOutcome(ok=True, summary="Job completion recorded.")

    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep:
        self.totals.tool_calls += len(outcomes)
        for o in outcomes:
            self.attempt.loaded += [t for t in o.tools_added if t not in self.attempt.loaded]
            self.writes += bool(o.ok and o.changed)
        if self.completion is not None:
            return await self._complete()
        return self._call([])

    async def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> NextStep:
        self._record("rewound" if what == "rewind" else "interrupted")
        n = self.attempt.number + 1
        if what in ("rewind", "wrap_up"):
            if what == "wrap_up":
                self.final_status = "budget_exhausted"
            if n > self.cfg.config.limits.max_phases:
                return ReportError(f"the job reached limits.max_phases="
                                   f"{self.cfg.config.limits.max_phases} attempts",
                                   code="phase_limit")
            return await self._enter(Attempt(number=n, variant=what, issue=reason))
        return await self._complete("cancelled" if what == "cancel" else status, reason)

    async def follow_up(self, instruction: str, turn: int) -> NextStep:
        """The next turn: the conversation goes on with the instruction as the user's next
        message (it is at the end of instructions.md too, for a later attempt); the history
        has a record of the attempt per turn."""
        self.completion, self.final_status = None, "completed"
        self.attempt.nudges = self.attempt.steps = 0  # the step breakers count the turn
        return self._call([f"Follow-up instruction (turn {turn}): {instruction}\n\nDo it "
                           "with the tools; call job_complete when it is done."])

    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        self.attempt.tokens_in += tokens_in
        self.attempt.tokens_out += tokens_out
        self.totals.tokens_in += tokens_in
        self.totals.tokens_out += tokens_out

    # -- attempts ----------------------------------------------------------------------

    def tools(self) -> list[str]:
        t = self.cfg.config.tools
        domain = [n for n in t.domain if n not in t.deferred]
        search = ["tool_search"] if t.deferred else []
        return list(dict.fromkeys(t.workspace + search + domain + self.attempt.loaded
                                  + ["job_complete"]))

    async def _enter(self, attempt: Attempt, count: bool = True) -> NextStep:
        self.attempt = a = attempt
        self.totals.phases += count
        memory = await self.port.read_memory()
        self._system = render(self._prompt(), {
            "tools": ", ".join(self.tools()), "workspace_md": memory,
            "issue": a.issue or "(none)"})
        kickoff = render(self.cfg.prompts["react_kickoff"], {
            "phase_number": str(a.number),
            "issue_note": f"\n\nThis attempt was started because of an issue:\n\n> {a.issue}\n"
            if a.issue else ""})
        return self._call([kickoff])

    def _prompt(self) -> str:
        """The system prompt: react.md; react_actions.md for a job that acts only
        (`JobConfig.acts_only`): react.md would tell the model to deliver files it has no tool
        to write."""
        return react_prompt(self.cfg)

    def _nudge(self) -> str:
        """The nudge (prompts/task_nudge.md; a config from before it: the phase nudge)."""
        template = self.cfg.prompts.get("task_nudge")
        return render(template, {"finish": FINISH}) if template else self.cfg.prompts["nudge"]

    def _call(self, user_messages: list[str]) -> CallModel:
        a = self.attempt
        return CallModel(conversation=f"react_{a.number:04d}", system_prompt=self._system,
                         todo_block="", tools=self.tools(), user_messages=user_messages,
                         label=f"attempt {a.number} step {a.steps + 1}")

    def _record(self, status: str) -> None:
        a = self.attempt
        self.history = (self.history + [PhaseRecord(
            number=a.number, kind="react", variant=a.variant, status=status, steps=a.steps,
            todos_completed=0, tokens_in=a.tokens_in, tokens_out=a.tokens_out)])[-20:]

    async def _complete(self, status: str | None = None, reason: str = "") -> NextStep:
        if status is None:
            self._record("completed")
        return await self.complete(job_result(status or self.final_status,
                                              self.completion or {}, reason, self.totals))
