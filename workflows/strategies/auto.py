"""auto: the complexity router (seed: strategic-planning-formalisms.md, 2.2).

    classify (one model call: classify_task(complexity, reasons)) -> the routed strategy runs

- The classification is a conversation of its own (phase 0) with one tool,
  `classify_task`, and the instructions in its system prompt (prompts/classify.md: the
  matrix of classes A complex, B complicated, C routine).
- The class picks a strategy through `auto.routes` (default A -> nested,
  B -> phase_alternation, C -> react); the choice is written to
  archive/classification.json and shown in `state` (`strategy_detail.classification`).
- Then the routed strategy runs as if the job had named it (composition): every call of the
  seam goes to it, it shares this strategy's totals, and `state.strategy` stays `auto`.
- A model that does not classify after the nudges gets class B, said so in the reasons.
  A rewind during the classification classifies again with the issue.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from switchback.workflows import guards
from switchback.workflows.contract import (
    ModelReply,
    ResolvedConfig,
    ToolCallInfo,
    ToolOutcome,
    layout,
)
from switchback.workflows.prompts import render
from switchback.workflows.strategies.base import (
    CallModel,
    ExecuteTools,
    Interrupt,
    NextStep,
    PhaseInfo,
    PhaseRecord,
    Port,
    Strategy,
    StrategyView,
    Totals,
    job_result,
)
from switchback.workflows.strategies.nested import Nested
from switchback.workflows.strategies.phase_alternation import PhaseAlternation
from switchback.workflows.strategies.plan_revise_execute import PlanReviseExecute
from switchback.workflows.strategies.react import React

ROUTES: dict[str, type[Strategy]] = {
    s.name: s for s in (PhaseAlternation, React, PlanReviseExecute, Nested)}
TOOL = "classify_task"
FALLBACK = "B"
INSTRUCTIONS_CHARS = 20_000


class Route(BaseModel):
    complexity: Literal["A", "B", "C"]
    reasons: str
    strategy: str


class Classifying(BaseModel):
    attempt: int = 1
    issue: str = ""
    steps: int = 0
    nudges: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Snapshot(BaseModel):
    route: Route | None
    classifying: Classifying
    totals: Totals
    history: list[PhaseRecord]
    inner: dict[str, Any] | None = None


class Auto(Strategy):
    name = "auto"

    def __init__(self, config: ResolvedConfig, port: Port) -> None:
        super().__init__(config, port)
        self.inner: Strategy | None = None
        self.route: Route | None = None
        self.c = Classifying()
        self.history: list[PhaseRecord] = []  # the classification
        self._system = ""

    # -- before the route: the classification --------------------------------------------

    async def begin(self) -> NextStep:
        self.totals.phases += 1
        return await self._first_call()

    async def _first_call(self) -> CallModel:
        instructions = await self.port.read_file(layout.INSTRUCTIONS, INSTRUCTIONS_CHARS)
        self._system = render(self.cfg.prompts["classify"], {"instructions": instructions})
        note = f"\n\nClassify again because of an issue:\n\n> {self.c.issue}\n" if (
            self.c.issue) else ""
        return self._call([render(self.cfg.prompts["stage_kickoff"], {
            "title": "Classification", "issue_note": note, "finish": f"call {TOOL}"})])

    def _call(self, user_messages: list[str]) -> CallModel:
        c = self.c
        return CallModel(conversation="classify" + (f"_{c.attempt}" if c.attempt > 1 else ""),
                         system_prompt=self._system, todo_block="", tools=[TOOL],
                         user_messages=user_messages, label=f"classify step {c.steps + 1}")

    async def _routed(self, complexity: str, reasons: str) -> NextStep:
        """Record the class, then start the strategy it routes to."""
        cls = "A" if complexity == "A" else "C" if complexity == "C" else "B"
        name = getattr(self.cfg.config.auto.routes, cls)
        self.route = Route(complexity=cls, reasons=reasons, strategy=name)
        self._record("completed")
        inner = ROUTES[name](self.cfg, self.port)
        inner.totals = self.totals
        self.inner = inner
        await self.port.write_output(layout.CLASSIFICATION, self.route.model_dump())
        return await inner.begin()

    def _record(self, status: str) -> None:
        c = self.c
        self.history = (self.history + [PhaseRecord(
            number=0, kind="classify", variant="work", status=status, steps=c.steps,
            todos_completed=0, tokens_in=c.tokens_in, tokens_out=c.tokens_out)])[-5:]

    # -- Strategy: the classification, then the routed strategy ----------------------------

    def snapshot(self) -> dict[str, Any]:
        return Snapshot(route=self.route, classifying=self.c, totals=self.totals,
                        history=self.history, inner=self.inner.snapshot() if self.inner else None
                        ).model_dump(mode="json")

    async def resume(self, snapshot: dict[str, Any]) -> NextStep:
        snap = Snapshot.model_validate(snapshot)
        self.route, self.c, self.history = snap.route, snap.classifying, snap.history
        self.totals = snap.totals
        if self.route is None or snap.inner is None:
            self.c.steps = self.c.nudges = 0
            return await self._first_call()
        inner = self.inner = ROUTES[self.route.strategy](self.cfg, self.port)
        decision = await inner.resume(snap.inner)
        self.totals = inner.totals
        return decision

    def view(self) -> StrategyView:
        route = self.route.model_dump() if self.route else None
        if self.inner is not None:
            v = self.inner.view()
            v.detail = {"classification": route, "routed_to": v.strategy, **v.detail}
            v.strategy, v.history = self.name, (self.history + v.history)[-20:]
            return v
        c = self.c
        info = PhaseInfo(number=0, kind="classify", variant="work", title="Classify the task",
                         steps=c.steps, tokens_in=c.tokens_in, tokens_out=c.tokens_out)
        return StrategyView(strategy=self.name, phase=info, totals=self.totals,
                            history=self.history, progress=0,
                            detail={"classification": None, "routed_to": None},
                            stuck_hint=f"Classify the instructions with {TOOL}.")

    async def after_model(self, reply: ModelReply) -> NextStep:
        if self.inner is not None:
            return await self.inner.after_model(reply)
        c = self.c
        c.steps += 1
        self.totals.steps += 1
        self.add_usage(reply.usage.prompt_tokens, reply.usage.completion_tokens)
        if reply.tool_calls:
            return ExecuteTools(guards.screen(reply.tool_calls, [TOOL], "classification",
                                              self.cfg))
        c.nudges += 1
        if c.nudges <= self.cfg.config.limits.max_nudges:
            return self._call([render(self.cfg.prompts["task_nudge"], {"finish": f"call {TOOL}"})])
        return await self._routed(FALLBACK, f"the model did not call {TOOL} after {c.nudges - 1} "
                            f"nudges; class {FALLBACK} by default. It said: "
                            f"{(reply.content or '')[:300]}")

    def owns_tool(self, name: str) -> bool:
        return self.inner.owns_tool(name) if self.inner is not None else name == TOOL

    async def own_tool(self, call: ToolCallInfo) -> ToolOutcome:
        if self.inner is not None:
            return await self.inner.own_tool(call)
        args = call.args or {}
        self.route = Route(complexity=args.get("complexity") or FALLBACK,
                           reasons=str(args.get("reasons") or ""), strategy="")
        return ToolOutcome(ok=True, summary="Classification recorded.")

    def batch_closed(self) -> bool:
        return self.inner.batch_closed() if self.inner is not None else self.route is not None

    async def after_tools(self, outcomes: list[ToolOutcome]) -> NextStep:
        if self.inner is not None:
            return await self.inner.after_tools(outcomes)
        self.totals.tool_calls += len(outcomes)
        if self.route is None:
            return self._call([])
        return await self._routed(self.route.complexity, self.route.reasons)

    async def follow_up(self, instruction: str, turn: int) -> NextStep:
        """The routed strategy's next turn (classified once, at the start)."""
        if self.inner is not None:
            return await self.inner.follow_up(instruction, turn)
        return await super().follow_up(instruction, turn)

    async def interrupt(self, what: Interrupt, reason: str, status: str = "stuck") -> NextStep:
        if self.inner is not None:
            return await self.inner.interrupt(what, reason, status)
        if what == "rewind":  # classify again, in a fresh conversation
            self._record("rewound")
            self.c = Classifying(attempt=self.c.attempt + 1, issue=reason)
            self.totals.phases += 1
            return await self._first_call()
        status = {"cancel": "cancelled", "wrap_up": "budget_exhausted"}.get(what, status)
        self._record(status)
        return await self.complete(job_result(status, {}, reason, self.totals))

    def add_usage(self, tokens_in: int, tokens_out: int) -> None:
        if self.inner is not None:
            self.inner.add_usage(tokens_in, tokens_out)
            return
        self.c.tokens_in += tokens_in
        self.c.tokens_out += tokens_out
        self.totals.tokens_in += tokens_in
        self.totals.tokens_out += tokens_out
