"""What people see of a running job: the `state` query's object, the web UI's current
details (markdown, every step) and search attributes (on phase and status changes).

A mixin of AgentJob: it reads the orchestrator's and the strategy's state and
changes nothing but what is published.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.breakers import cost_of
    from workflows.live_state import (
        SA_PHASE,
        SA_PHASE_NUMBER,
        SA_STATUS,
        SA_TOKENS,
        JobState,
        PhaseView,
        StepLine,
        TokenCount,
        details_markdown,
        progress_bar,
        trip_view,
    )


class Visibility:
    def _state(self) -> JobState:
        s = JobState(job_id=workflow.info().workflow_id, status=self.status,
                     objective=self.objective, paused=self.paused, run=self.runs,
                     last_error=self.last_error,
                     last_step=self.last_step, recent=self.recent,
                     pending_approvals=list(self.approvals.values()))
        if self.strategy is None or self.strategy.phase is None or self.cfg is None:
            return s
        ph, t = self.strategy.phase, self.strategy.totals
        s.phase = PhaseView(number=ph.number, kind=ph.kind, variant=ph.variant, name=ph.title,
                            steps=ph.steps, tokens=TokenCount(tokens_in=ph.tokens_in,
                                                              tokens_out=ph.tokens_out))
        s.todos = ph.todos
        s.progress = f"{sum(x.status == 'completed' for x in ph.todos)}/{len(ph.todos)}"
        s.steps_total, s.tool_calls_total = t.steps, t.tool_calls
        s.tokens = TokenCount(tokens_in=t.tokens_in, tokens_out=t.tokens_out)
        s.cost_usd = round(cost_of(self.cfg.config.llm, t.tokens_in, t.tokens_out), 6)
        s.phases = [r.model_dump() for r in self.strategy.history]
        last = self.strategy.history[-1] if self.strategy.history else None
        if last and last.tokens_in + last.tokens_out:
            s.efficiency = round(last.todos_completed * 1000 / (last.tokens_in + last.tokens_out),
                                 4)
        if self.breakers:
            bs = self.breakers.state
            s.budget_used = round(self.breakers.budget_fraction(
                t.tokens_in + t.tokens_out, s.cost_usd), 4)
            s.breakers = {"trips": trip_view(bs.trips), "trip_count": bs.trip_count,
                          "repetition_trips": bs.repetition_trips,
                          "steps_since_progress": bs.steps_since_progress,
                          "wrapping_up": bs.wrapping_up}
        return s

    def _record_step(self) -> None:
        assert self.strategy
        ph, t = self.strategy.phase, self.strategy.totals
        if ph is None or not self.last_step or (self.recent and self.recent[-1].step == t.steps):
            return
        done = sum(x.status == "completed" for x in ph.todos)
        self.recent = (self.recent + [StepLine(
            step=t.steps, phase=ph.number, kind=ph.kind, progress=f"{done}/{len(ph.todos)}",
            bar=progress_bar(ph.todos), tokens=t.tokens_in + t.tokens_out,
            calls=self.last_step.split(": ", 1)[-1])])[-30:]

    def _publish(self) -> None:
        """Current details every step; search attributes when phase or status change."""
        s = self._state()
        workflow.set_current_details(details_markdown(s))
        key = (s.phase.number, s.status)
        if self.cfg is None or not self.cfg.config.search_attributes or key == self._published:
            return
        self._published = key
        workflow.upsert_search_attributes([
            SA_PHASE.value_set(s.phase.kind or "starting"),
            SA_PHASE_NUMBER.value_set(s.phase.number),
            SA_TOKENS.value_set(s.tokens.tokens_in + s.tokens.tokens_out),
            SA_STATUS.value_set(s.status)])


