"""What people see of a job: the `state` query's object, the web UI's current details
(markdown, every step) and search attributes (on phase and status changes).

Pure functions of what the orchestrator passes in, plus `Publisher`, which remembers
what it last upserted so a search attribute changes only when its value does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.breakers import Breakers, cost_of
    from workflows.contract import (
        SA_PHASE,
        SA_PHASE_NUMBER,
        SA_STATUS,
        SA_TOKENS,
        JobState,
        PhaseView,
        ResolvedConfig,
        StepLine,
        Todo,
        TokenCount,
    )
    from workflows.steering import Steering
    from workflows.strategies.base import StrategyView


@dataclass
class Progress:
    """The orchestrator's own facts a person follows: status, the last steps, the last error."""

    status: str = "starting"
    objective: str = ""
    run: int = 1
    last_error: str | None = None
    last_step: str = ""
    recent: list[StepLine] = field(default_factory=list)  # the last 30 steps


def job_state(job_id: str, p: Progress, steering: Steering, view: StrategyView | None,
              cfg: ResolvedConfig | None, breakers: Breakers | None) -> JobState:
    s = JobState(job_id=job_id, status=p.status, objective=p.objective, paused=steering.paused,
                 run=p.run, last_error=p.last_error, last_step=p.last_step, recent=p.recent,
                 pending_approvals=list(steering.approvals.values()),
                 rejected=list(steering.rejected))
    if view is None or view.phase is None or cfg is None:
        return s
    ph, t = view.phase, view.totals
    s.strategy, s.strategy_detail = view.strategy, view.detail
    if steering.children:  # a delegation: where each child job is
        s.strategy_detail = {**view.detail, "child_jobs": dict(steering.children)}
    s.phase = PhaseView(number=ph.number, kind=ph.kind, variant=ph.variant, name=ph.title,
                        steps=ph.steps, tokens=TokenCount(tokens_in=ph.tokens_in,
                                                          tokens_out=ph.tokens_out))
    s.todos = ph.todos
    s.progress = f"{sum(x.status == 'completed' for x in ph.todos)}/{len(ph.todos)}"
    s.steps_total, s.tool_calls_total = t.steps, t.tool_calls
    s.tokens = TokenCount(tokens_in=t.tokens_in, tokens_out=t.tokens_out)
    s.cost_usd = round(cost_of(cfg.config.llm, t.tokens_in, t.tokens_out), 6)
    s.phases = [r.model_dump() for r in view.history]
    last = view.history[-1] if view.history else None
    if last and last.tokens_in + last.tokens_out:
        s.efficiency = round(last.todos_completed * 1000 / (last.tokens_in + last.tokens_out), 4)
    if breakers:
        bs = breakers.state
        s.budget_used = round(breakers.budget_fraction(t.tokens_in + t.tokens_out, s.cost_usd), 4)
        s.breakers = {"trips": [trip.model_dump() for trip in bs.trips],
                      "trip_count": bs.trip_count, "repetition_trips": bs.repetition_trips,
                      "steps_since_progress": bs.steps_since_progress,
                      "wrapping_up": bs.wrapping_up}
    return s


def record_step(p: Progress, view: StrategyView) -> None:
    """Add the last model step to `p.recent` (what `starter.py follow` prints), once."""
    ph, t = view.phase, view.totals
    if ph is None or not p.last_step or (p.recent and p.recent[-1].step == t.steps):
        return
    done = sum(x.status == "completed" for x in ph.todos)
    line = StepLine(step=t.steps, phase=ph.number, kind=ph.kind,
                    progress=f"{done}/{len(ph.todos)}", bar=progress_bar(ph.todos),
                    tokens=t.tokens_in + t.tokens_out, calls=p.last_step.split(": ", 1)[-1])
    p.recent = (p.recent + [line])[-30:]


class Publisher:
    def __init__(self) -> None:
        self._published: tuple[int, str] | None = None

    def publish(self, s: JobState, search_attributes: bool) -> None:
        """Current details every time; search attributes when phase or status change."""
        workflow.set_current_details(details_markdown(s))
        key = (s.phase.number, s.status)
        if not search_attributes or key == self._published:
            return
        self._published = key
        workflow.upsert_search_attributes([
            SA_PHASE.value_set(s.phase.kind or "starting"),
            SA_PHASE_NUMBER.value_set(s.phase.number),
            SA_TOKENS.value_set(s.tokens.tokens_in + s.tokens.tokens_out),
            SA_STATUS.value_set(s.status)])


def objective_of(instructions: str) -> str:
    """The first heading or line of the instructions."""
    for line in instructions.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:200]
    return ""


def details_markdown(s: JobState) -> str:
    bar = progress_bar(s.todos)
    lines = [f"**{s.status.upper()}** · phase {s.phase.number} ({s.phase.kind}): {s.phase.name}",
             "", f"`{bar}` {s.progress} todos", ""]
    for t in s.todos:
        mark = {"completed": "x", "cancelled": "-"}.get(t.status, " ")
        lines.append(f"- [{mark}] {t.id}. {t.content}")
    lines += ["", f"steps {s.steps_total} · tool calls {s.tool_calls_total} · tokens "
              f"{s.tokens.tokens_in} in / {s.tokens.tokens_out} out · ~${s.cost_usd:.4f}"]
    if s.last_step:
        lines.append(f"last step: {s.last_step}")
    for a in s.pending_approvals:
        lines.append(f"**waiting for approval**: `{a.tool}` call `{a.call_id}` {a.arguments}")
    if s.last_error:
        lines.append(f"last error: {s.last_error}")
    return "\n".join(lines)


def progress_bar(todos: list[Todo], width: int = 20) -> str:
    if not todos:
        return "-" * width
    done = sum(t.status == "completed" for t in todos)
    filled = round(width * done / len(todos))
    return "#" * filled + "-" * (width - filled)
