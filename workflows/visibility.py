"""What people see of a job: the `state` query's object, the web UI's current details, and
what persists without a worker - search attributes and the memo.

    job_state(...)        the `state` query (a live worker answers it)
    details_markdown(s)   current details: markdown the UI renders (☑/☐, a progress bar in a
                          code span, the last error); the same text goes into the memo
    Publisher.publish     every step boundary: current details; when something a person
                          filters or reads by changed (status, phase, current todo, todos
                          done/total, last error, rewind): the search attributes and the
                          memo; tokens and cost alone at most every 30 s (workflow time)

Current details are a query, so the page shows them only while a worker runs; search
attributes (the list view's columns, filters) and the memo (the job page's Memo tab) are
in the server's records and stay after the job ended, with every worker stopped. The
final publish happens before the workflow returns, fails or ends cancelled.

Pure functions of what the orchestrator passes in, plus `Publisher`, which remembers what
it last upserted so an upsert happens only when a value changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeUpdate

with workflow.unsafe.imports_passed_through():
    from switchback.workflows.breakers import Breakers, cost_of
    from switchback.workflows.completion import Completion
    from switchback.workflows.contract import (
        SA_COST,
        SA_LAST_ERROR,
        SA_PHASE,
        SA_PHASE_NUMBER,
        SA_STATUS,
        SA_STRATEGY,
        SA_TODO,
        SA_TODOS,
        SA_TOKENS,
        JobState,
        PhaseView,
        ResolvedConfig,
        StepLine,
        Todo,
        TokenCount,
    )
    from switchback.workflows.contract.job import DeliverablesView
    from switchback.workflows.steering import Steering
    from switchback.workflows.strategies.base import PhaseInfo, StrategyView
    from switchback.workflows.todos import current_index

TOKENS_EVERY = timedelta(seconds=30)  # tokens and cost alone: upserted at most this often
MAX_TODO_CHARS = 160
MAX_ERROR_CHARS = 500
MEMO_BYTES = 1900  # the server logs a warning for memos over 2 KB
_NEVER = object()  # an attribute not upserted by this run yet


@dataclass
class Progress:
    """The orchestrator's own facts a person follows: status, the last steps, the last error."""

    status: str = "starting"
    objective: str = ""
    run: int = 1
    last_error: str | None = None
    last_step: str = ""
    last_rewind: str = ""
    recent: list[StepLine] = field(default_factory=list)  # the last 30 steps
    waiting_until: str = ""  # a completed turn waiting for the next instruction: until when


def job_state(job_id: str, p: Progress, steering: Steering, view: StrategyView | None,
              cfg: ResolvedConfig | None, breakers: Breakers | None,
              completion: Completion | None = None, workspace: str = "") -> JobState:
    s = JobState(job_id=job_id, status=p.status, objective=p.objective, paused=steering.paused,
                 workspace=workspace,
                 run=p.run, last_error=p.last_error, last_step=p.last_step, recent=p.recent,
                 pending_approvals=list(steering.approvals.values()),
                 rejected=list(steering.rejected), last_rewind=p.last_rewind,
                 rewinds_waiting=len(steering.rewinds), turn=steering.turn,
                 instructions_waiting=len(steering.instructions),
                 waiting_until=p.waiting_until)
    if view is None or view.phase is None or cfg is None:
        return s
    ph, t = view.phase, view.totals
    if completion is not None:
        s.unknown_outcomes = list(completion.state.unknown_outcomes)
        s.deliverables = DeliverablesView(by_job=completion.by_job(),
                                          by_model=completion.state.by_model,
                                          required=completion.declared(),
                                          refusals=completion.state.refusals)
    s.strategy, s.strategy_detail = view.strategy, view.detail
    if steering.children:  # a delegation: where each child job is
        s.strategy_detail = {**view.detail, "child_jobs": dict(steering.children)}
    s.phase = PhaseView(number=ph.number, kind=ph.kind, variant=ph.variant, name=ph.title,
                        steps=ph.steps, tokens=TokenCount(tokens_in=ph.tokens_in,
                                                          tokens_out=ph.tokens_out))
    s.todos = ph.todos
    s.current_todo = current_todo(ph)
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


def current_todo(ph: PhaseInfo) -> str:
    """The todo being worked on, "3. Draft ..." ("": none open): the strategy's own word for
    it (`PhaseInfo.current_todo`), else the first pending todo."""
    if ph.current_todo:
        return ph.current_todo[:MAX_TODO_CHARS]
    cur = current_index(ph.todos)
    return "" if cur is None else f"{ph.todos[cur].id}. {ph.todos[cur].content}"[:MAX_TODO_CHARS]


def model_label(label: str, view: StrategyView) -> str:
    """A model call's summary in the web UI: the strategy's label with the current todo,
    e.g. `phase 2 tactical step 3 · todo 2. Draft the GoBD requirement`."""
    todo = current_todo(view.phase) if view.phase else ""
    return f"{label} · todo {todo}"[:200] if todo else label


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
        self._attributes: dict[str, Any] = {}  # name -> value last upserted
        self._facts: tuple[Any, ...] | None = None
        self._tokens = 0
        self._at: datetime | None = None  # when the attributes were last upserted

    def publish(self, s: JobState, search_attributes: bool, text: bool = True) -> None:
        """Current details every time; what persists when what a person reads changed.
        `text`: free text (the todo, the last error) may go into search attributes (not
        when payloads are encrypted: the server keeps search attributes in plain text)."""
        workflow.set_current_details(details_markdown(s))
        tokens, now = s.tokens.tokens_in + s.tokens.tokens_out, workflow.now()
        facts = (s.status, s.phase.number, s.phase.kind, s.strategy, s.current_todo, s.progress,
                 s.last_error, s.last_rewind, tuple(a.call_id for a in s.pending_approvals))
        if facts != self._facts:
            self._facts = facts
            workflow.upsert_memo(memo(s))
        elif not (tokens > self._tokens and self._at and now - self._at >= TOKENS_EVERY):
            return  # tokens and cost alone: search attributes, at most every 30 s
        self._tokens, self._at = tokens, now
        if search_attributes:
            self._upsert(attributes(s, text))

    def _upsert(self, values: dict[str, Any]) -> None:
        keys = {k.name: k for k in (SA_PHASE, SA_PHASE_NUMBER, SA_TOKENS, SA_STATUS, SA_STRATEGY,
                                    SA_TODOS, SA_TODO, SA_COST, SA_LAST_ERROR)}
        updates: list[SearchAttributeUpdate[Any]] = []
        for name, value in values.items():
            if self._attributes.get(name, _NEVER) == value:
                continue
            self._attributes[name] = value
            key = keys[name]
            updates.append(key.value_unset() if value is None else key.value_set(value))
        if updates:
            workflow.upsert_search_attributes(updates)


def attributes(s: JobState, text: bool = True) -> dict[str, Any]:
    """The search attributes of `s` (None: unset; the free-text ones also without `text`)."""
    return {
        SA_PHASE.name: s.phase.kind or "starting", SA_PHASE_NUMBER.name: s.phase.number,
        SA_TOKENS.name: s.tokens.tokens_in + s.tokens.tokens_out, SA_STATUS.name: s.status,
        SA_STRATEGY.name: s.strategy if s.phase.number else None,
        SA_TODOS.name: s.progress if s.todos else None,
        SA_TODO.name: (s.current_todo if text else "") or None, SA_COST.name: s.cost_usd,
        SA_LAST_ERROR.name: ((s.last_error or "")[:MAX_ERROR_CHARS] if text else "") or None,
    }


def memo(s: JobState) -> dict[str, Any]:
    """The memo: the progress (a flat object) and the details markdown, one line per entry
    (the UI shows the memo as JSON), shortened to stay under MEMO_BYTES (the server warns
    about larger memos): fewer todos around the current one, then no last step."""
    progress = {
        "status": s.status, "strategy": s.strategy, "phase": s.phase.number,
        "kind": s.phase.kind, "title": s.phase.name[:80], "todos": s.progress,
        "todo": s.current_todo[:120], "steps": s.steps_total, "tool_calls": s.tool_calls_total,
        "tokens": s.tokens.tokens_in + s.tokens.tokens_out, "cost_usd": s.cost_usd,
        "workspace": s.workspace,
        "as_of": workflow.now().strftime("%Y-%m-%dT%H:%M:%SZ")}
    for window, last_step in ((25, True), (8, True), (8, False), (3, False), (0, False)):
        out = {"progress": progress,
               "details": details_markdown(s, window, last_step, 300).splitlines()}
        if len(json.dumps(out, ensure_ascii=False).encode()) <= MEMO_BYTES:
            break
    return out


def objective_of(instructions: str) -> str:
    """The first heading or line of the instructions."""
    for line in instructions.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:200]
    return ""


MARKS = {"completed": "☑", "cancelled": "☒"}


def details_markdown(s: JobState, window: int = 25, last_step: bool = True,
                     text_chars: int = MAX_ERROR_CHARS) -> str:
    """The job as markdown the web UI renders: status, phase, a progress bar, the todos
    (☑ done, ☐ open, ☒ cancelled - the UI shows `- [x]` literally; at most `window` of them,
    around the current one), totals, last step, approvals waiting, the last rewind and the
    last error (each cut to `text_chars`). A few KB at most."""
    ph = s.phase
    head = f"### {s.status.upper()}"
    if ph.number:
        head += f" · phase {ph.number} ({ph.kind}): {cut(ph.name, 100)}"
    lines = [head, ""]
    if s.waiting_until:
        lines += [f"**Turn {s.turn} completed: waiting for the next instruction** until "
                  f"{s.waiting_until} (More Actions: Send an Update `instruct`, or Send a "
                  "Signal, Custom, named `instruct`, the instruction as JSON text; or "
                  "`starter.py instruct JOB \"...\"`)", ""]
    if s.objective:
        lines += [f"**Job:** {cut(s.objective, 200)}", ""]
    if s.todos:
        lines += [f"`{markdown_bar(s.todos)}` **{s.progress} todos** · step {ph.steps} of the "
                  "phase", ""]
        lines += todo_lines(s.todos, window) + [""]
    lines.append(f"**Steps** {s.steps_total} · **tool calls** {s.tool_calls_total} · **tokens** "
                 f"{s.tokens.tokens_in:,} in / {s.tokens.tokens_out:,} out · "
                 f"**cost** ~${s.cost_usd:.4f}")
    d = s.deliverables
    shown = d.required or d.by_job or d.by_model
    if shown:
        whose = "the job" if d.by_job else "the plan"
        lines += ["", f"**Deliverables** ({whose}): {cut(', '.join(shown), 300)}"
                  + (f" · job_complete refused {d.refusals}x" if d.refusals else "")]
    if s.last_step and last_step:
        lines += ["", f"**Last step:** {cut(s.last_step, text_chars)}"]
    for a in s.pending_approvals:
        lines += ["", f"**Waiting for approval:** `{a.tool}` call `{a.call_id}` "
                  f"{cut(a.arguments, 200)} (send the `approve` update: "
                  f'`{{"call_id": "{a.call_id}", "approved": true}}`)']
    if s.rewinds_waiting:
        lines += ["", f"**Rewind requested** ({s.rewinds_waiting}): it takes effect at the next "
                  "step boundary"]
    if s.last_rewind:
        lines += ["", f"**Last rewind:** {cut(s.last_rewind, text_chars)}"]
    if s.last_error:
        lines += ["", f"> **Last error:** {cut(s.last_error, text_chars)}"]
    return "\n".join(lines)


def todo_lines(todos: list[Todo], window: int) -> list[str]:
    """A markdown list of the todos, at most `window` of them from the current one on."""
    cur = current_index(todos)
    start = 0 if len(todos) <= window else max(0, min(cur if cur is not None else len(todos),
                                                      len(todos) - window))
    lines = [f"- ☑ ... {start} todos before"] if start else []
    for i, t in enumerate(todos[start:start + window], start):
        text = cut(f"{t.id}. {' '.join(t.content.split())}", MAX_TODO_CHARS)
        lines.append(f"- ☐ **{text}** ← current" if i == cur
                     else f"- {MARKS.get(t.status, '☐')} {text}")
    if len(todos) > start + window:
        lines.append(f"- ☐ ... {len(todos) - start - window} more")
    return lines


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def markdown_bar(todos: list[Todo], width: int = 20) -> str:
    done = sum(t.status == "completed" for t in todos)
    filled = round(width * done / len(todos)) if todos else 0
    return "█" * filled + "░" * (width - filled)


def progress_bar(todos: list[Todo], width: int = 20) -> str:
    """The terminal's bar (`starter.py follow`)."""
    if not todos:
        return "-" * width
    done = sum(t.status == "completed" for t in todos)
    filled = round(width * done / len(todos))
    return "#" * filled + "-" * (width - filled)
