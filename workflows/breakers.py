"""Circuit breakers: deterministic checks after every model step (seed: formalisms 3.2).

- budget: tokens / estimated cost against the job's budget; warn at the configured
  fractions, wrap up at 100% (a final strategic phase, status `budget_exhausted`).
- repetition: the same tool calls (name + arguments) or near-identical assistant
  text across a window of steps, the same call SAME_CALLS_IN_A_STEP times or more in each
  of two steps in a row, or two calls taking
  turns across twice the window (write the wrong file, todo_complete refused, again) -> 1st
  trip: nudge, 2nd: forced rewind, 3rd: stop (`stuck`).
  Steps whose calls are all declared polling tools are not counted.
- no progress: no todo completed in N steps -> a checkpoint message suggesting
  `todo_rewind` (repeats every N steps without progress).
- step caps: per phase -> forced rewind (a rewind phase over its cap: stop);
  per job -> wrap up like an exhausted budget; the wrap-up phase itself may take
  WRAP_UP_STEPS (12) steps, then the job stops.

Pure: `Breakers.observe` takes the step's facts and returns the trips; the
orchestrator carries out their actions. Its state is a pydantic model, so it
survives continue-as-new and shows in the `state` query.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from typing import Literal

from pydantic import BaseModel

from switchback.workflows.contract.config import BreakerSettings, BudgetSettings, LlmSettings

BUDGET_WARNINGS = (0.8, 0.95)  # shares of the budget at which the model is told what is left
SAME_TEXT = 0.9  # texts this alike (difflib ratio) count as the same for the loop breaker
# copies of one call (name and arguments) in one model answer that, two answers in a row,
# count as a loop at once: on a slow endpoint a window of steps of such answers takes long
# (one such answer alone may be a tool legitimately called 5 times)
SAME_CALLS_IN_A_STEP = 5
WRAP_UP_STEPS = 12  # model steps the final wrap-up phase may take; then the job stops

Action = Literal["note", "rewind", "stop", "wrap_up"]


class Trip(BaseModel):
    breaker: Literal["budget", "repetition", "no_progress", "phase_steps", "job_steps"]
    action: Action
    message: str
    phase: int = 0
    step: int = 0


class BreakerState(BaseModel):
    window: list[str] = []  # signatures of recent steps
    cycle: list[str] = []  # signatures of the last 2 x window steps (two calls taking turns)
    texts: list[str] = []  # assistant texts of recent steps
    repetition_trips: int = 0
    copied: str = ""  # the call the last step made SAME_CALLS_IN_A_STEP times or more
    steps_since_progress: int = 0
    last_progress: int = 0
    budget_warned: list[float] = []
    wrapping_up: bool = False
    trips: list[Trip] = []  # the last 20, newest last
    trip_count: int = 0


class StepFacts(BaseModel):
    phase: int
    phase_steps: int
    phase_variant: str
    job_steps: int
    tool_digests: list[str]
    tool_names: list[str]
    text: str
    progress: int  # todos completed so far in the job
    tokens: int
    cost: float
    hint: str = ""  # what a stuck model should do, in its strategy's tools ("": todo tools)


def cost_of(llm: LlmSettings, tokens_in: int, tokens_out: int) -> float:
    return (tokens_in * llm.price_in_per_mtok + tokens_out * llm.price_out_per_mtok) / 1e6


class Breakers:
    def __init__(self, settings: BreakerSettings, budget: BudgetSettings, max_phase_steps: int,
                 state: BreakerState | None = None) -> None:
        self.cfg = settings
        self.budget = budget
        self.max_phase_steps = max_phase_steps
        self.state = state or BreakerState()

    def observe(self, f: StepFacts) -> list[Trip]:
        """The step's trips, in the order their checks run."""
        trips = [t for t in (self._budget(f), self._steps(f), self._repetition(f),
                             self._progress(f), self._wrap_up(f)) if t is not None]
        for t in trips:
            t.phase, t.step = f.phase, f.job_steps
            self.state.trips = (self.state.trips + [t])[-20:]
            self.state.trip_count += 1
        return trips

    def reset_window(self) -> None:
        self.state.window, self.state.texts, self.state.cycle = [], [], []
        self.state.steps_since_progress, self.state.copied = 0, ""

    def budget_fraction(self, tokens: int, cost: float) -> float:
        fractions = [0.0]
        if self.budget.max_tokens:
            fractions.append(tokens / self.budget.max_tokens)
        if self.budget.max_cost_usd:
            fractions.append(cost / self.budget.max_cost_usd)
        return max(fractions)

    def _budget(self, f: StepFacts) -> Trip | None:
        used = self.budget_fraction(f.tokens, f.cost)
        if used >= 1.0:
            if self.state.wrapping_up:
                return None
            self.state.wrapping_up = True
            return Trip(breaker="budget", action="wrap_up", message=(
                f"The job's budget is used up ({used:.0%}: {f.tokens} tokens, ${f.cost:.4f}). "
                "A final strategic phase now records the state of the work."))
        for level in sorted(BUDGET_WARNINGS, reverse=True):
            if used >= level and level not in self.state.budget_warned:
                self.state.budget_warned += [w for w in BUDGET_WARNINGS if w <= level]
                left = []
                if self.budget.max_tokens:
                    left.append(f"{max(0, self.budget.max_tokens - f.tokens)} tokens")
                if self.budget.max_cost_usd:
                    left.append(f"${max(0.0, self.budget.max_cost_usd - f.cost):.4f}")
                return Trip(breaker="budget", action="note", message=(
                    f"Budget notice: {used:.0%} of the job's budget is used; "
                    f"{' / '.join(left)} left. Finish the essential todos first."))
        return None

    def _steps(self, f: StepFacts) -> Trip | None:
        if self.cfg.max_steps_per_job and f.job_steps >= self.cfg.max_steps_per_job:
            if not self.state.wrapping_up:
                self.state.wrapping_up = True
                return Trip(breaker="job_steps", action="wrap_up", message=(
                    f"The job reached its step cap ({self.cfg.max_steps_per_job} model steps)."))
        if f.phase_steps >= self.max_phase_steps:
            stop = f.phase_variant in ("rewind", "wrap_up")
            return Trip(breaker="phase_steps", action="stop" if stop else "rewind", message=(
                f"Phase {f.phase} used {f.phase_steps} model steps "
                f"(limits.max_steps_per_phase={self.max_phase_steps}) without finishing."))
        return None

    def _wrap_up(self, f: StepFacts) -> Trip | None:
        if f.phase_variant == "wrap_up" and f.phase_steps > WRAP_UP_STEPS:
            return Trip(breaker="budget", action="stop", message=(
                f"the wrap-up phase used its {WRAP_UP_STEPS} steps"))
        return None

    def _repetition(self, f: StepFacts) -> Trip | None:
        if f.tool_names and all(n in self.cfg.exempt_tools for n in f.tool_names):
            return None  # declared polling: legitimate repetition
        n = self.cfg.repetition_window
        s = self.state
        sig = "|".join(sorted(f.tool_digests))
        s.window = (s.window + [sig])[-n:]
        s.texts = (s.texts + [f.text])[-n:]
        s.cycle = (s.cycle + [sig])[-2 * n:] if n > 1 else []
        counted = Counter(d for d, name in zip(f.tool_digests, f.tool_names, strict=False)
                          if name not in self.cfg.exempt_tools)
        copied, copies = max(counted.items(), key=lambda kv: kv[1], default=("", 0))
        copied = copied if copies >= SAME_CALLS_IN_A_STEP else ""
        in_one_step = bool(copied) and copied == s.copied  # two steps in a row
        s.copied = copied
        if len(s.window) < n and not in_one_step:
            return None
        same_calls = in_one_step or (s.window[0] != "" and len(set(s.window)) == 1)
        same_text = not in_one_step and all(len(t) >= 20 for t in s.texts) and all(
            SequenceMatcher(None, s.texts[0], t).ratio() > SAME_TEXT
            for t in s.texts[1:])
        taking_turns = not (same_calls or same_text) and len(s.cycle) == 2 * n and (
            "" not in s.cycle and len(set(s.cycle)) == 2)
        if not (same_calls or same_text or taking_turns):
            return None
        s.repetition_trips += 1
        s.window, s.texts, s.cycle, s.copied = [], [], [], ""
        what = (f"the same tool call {copies} times in one step, twice in a row" if in_one_step
                else "the same tool call" if same_calls
                else "near-identical messages" if same_text
                else "the same two tool calls by turns")
        n = 2 * n if taking_turns else n
        where = "" if in_one_step else f" in the last {n} steps"
        across = "" if in_one_step else f" across {n} steps"
        if s.repetition_trips == 1:
            return Trip(breaker="repetition", action="note", message=(
                f"You repeated {what}{where}. That is not progress: " + (
                    f.hint or "if the current todo is done, call todo_complete; if not, do it "
                    "differently, or call todo_rewind(issue=...) if it cannot work.")))
        if s.repetition_trips == 2:
            return Trip(breaker="repetition", action="rewind", message=(
                f"Loop detected again ({what}{across}): the plan is reconsidered."))
        return Trip(breaker="repetition", action="stop", message=(
            f"Loop detected a third time ({what}{across}): the job stops as stuck."))

    def _progress(self, f: StepFacts) -> Trip | None:
        s = self.state
        if f.progress > s.last_progress:
            s.last_progress, s.steps_since_progress = f.progress, 0
            return None
        s.steps_since_progress += 1
        limit = self.cfg.no_progress_steps
        if limit and s.steps_since_progress % limit == 0:
            if f.hint:
                return Trip(breaker="no_progress", action="note", message=(
                    f"Checkpoint: no progress in the last {s.steps_since_progress} steps. "
                    f"{f.hint}"))
            return Trip(breaker="no_progress", action="note", message=(
                f"Checkpoint: no todo was completed in the last {s.steps_since_progress} "
                "steps. If the current todo is done, call todo_complete. If it cannot be done "
                "as planned, call todo_rewind(issue=...) and say why."))
        return None
