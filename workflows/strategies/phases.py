"""Phase alternation's state: a phase (its kind, variant, todos and counts), the snapshot a
continue-as-new carries, and a transition decided during a batch of tool calls
(workflows/strategies/phase_alternation.py; nested's outer loop uses them too)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from switchback.workflows.contract import Todo, layout
from switchback.workflows.contract.config import PhaseSettings, StrategicTodos
from switchback.workflows.prompts import render
from switchback.workflows.strategies import ritual
from switchback.workflows.strategies.base import PhaseRecord, Totals

Kind = Literal["strategic", "tactical"]
Variant = Literal["bootstrap", "transition", "rewind", "wrap_up", "work", "follow_up"]

TITLES = {"bootstrap": "Bootstrap: explore and plan", "transition": "Transition: review and plan",
          "rewind": "Rewind: reconsider the plan", "wrap_up": "Wrap-up: record the state of work",
          "follow_up": "Follow-up: plan the new instruction"}


class Phase(BaseModel):
    number: int
    kind: Kind
    variant: Variant
    title: str
    todos: list[Todo]
    issue: str = ""  # rewind phases: what went wrong
    previous: str = ""  # strategic phases: what the phase before did (ritual.digest)
    loaded: list[str] = []  # deferred tools tool_search loaded in this phase
    evidence: dict[int, list[str]] = {}  # todo id -> files it must change (predefined todos)
    # tool calls that changed a file besides the plan (ritual.PLANNING_FILES), and calls of a
    # tool of the task that wrote none
    writes: int = 0
    changed: list[str] = []  # paths written in the phase (at most ritual.MAX_CHANGED)
    refusals: int = 0  # calls the ritual refused in the phase (ritual.REFUSALS)
    steps: int = 0
    nudges: int = 0
    tool_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class Snapshot(BaseModel):
    """The strategy's state at a phase start: what continue-as-new carries."""

    phase: Phase
    totals: Totals
    history: list[PhaseRecord]
    todos_completed: int
    final_status: Literal["completed", "budget_exhausted"]
    loops: ritual.Loops = ritual.Loops()


class Pending(BaseModel):
    """A transition decided during a batch of tool calls, carried out after it."""

    to: Literal["tactical", "strategic", "rewind"]
    title: str = ""
    todos: list[Todo] = []
    issue: str = ""


def strategic(predefined: StrategicTodos, ps: PhaseSettings, number: int, variant: Variant,
              issue: str = "", before: Phase | None = None, status: str = "") -> Phase:
    """A strategic phase: its predefined todos with their numbers filled in, and what the
    phase `before` did (ritual.digest)."""
    archived = layout.archive_path(number - 1) if number > 1 else "(none yet)"
    todos, evidence = ritual.strategic_todos(
        predefined, "transition" if variant in ("work", "follow_up") else variant,
        {"min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos), "archive": archived})
    previous = "" if before is None else ritual.digest(
        before.number, status, before.todos, before.changed)
    return Phase(number=number, kind="strategic", variant=variant, title=TITLES[variant],
                 issue=issue, todos=todos, evidence=evidence, previous=previous)


def record(ph: Phase, status: str) -> PhaseRecord:
    """A finished phase, for `state`."""
    return PhaseRecord(number=ph.number, kind=ph.kind, variant=ph.variant, status=status,
                       steps=ph.steps, todos_completed=sum(t.status == "completed"
                                                           for t in ph.todos),
                       tokens_in=ph.tokens_in, tokens_out=ph.tokens_out)


def archive_record(ph: Phase, status: str, issue: str) -> dict[str, Any]:
    """archive/phase_<n>.yaml: the phase's todos with their statuses and notes."""
    out: dict[str, Any] = {
        "phase": ph.number, "title": ph.title, "status": status,
        "todos": [t.model_dump() for t in ph.todos],
        "completed": sum(t.status == "completed" for t in ph.todos),
        "steps": ph.steps, "tool_calls": ph.tool_calls,
        "tokens_in": ph.tokens_in, "tokens_out": ph.tokens_out}
    return out | ({"issue": issue} if issue else {})


def system_prompt(template: str, phase: Phase, memory: str, ps: PhaseSettings,
                  tools: list[str]) -> str:
    """A phase's system prompt: its kind's template filled in."""
    return render(template, {
        "phase_number": str(phase.number), "phase_kind": phase.kind,
        "phase_title": phase.title, "workspace_md": memory,
        "min_todos": str(ps.min_todos), "max_todos": str(ps.max_todos),
        "issue": phase.issue or "(none)", "tools": ", ".join(tools)})


def kickoff(template: str, phase: Phase, deliverables: str = "") -> str:
    """A phase's first message: why it started, what the phase before did, the state of the
    deliverables (`deliverables`: ritual.status_note)."""
    archived = (f" The todos of phase {phase.number - 1}, with what was done, are in "
                f"{layout.archive_path(phase.number - 1)}." if phase.number > 1 else "")
    return render(template, {
        "phase_number": str(phase.number), "phase_kind": phase.kind,
        "phase_title": phase.title,
        "issue_note": (f"\n\nThis phase was started because of an issue:\n\n> {phase.issue}\n"
                       f"{archived}" if phase.issue else ""),
        "previous": (f"\n\n{phase.previous}" if phase.previous else "") + deliverables})
